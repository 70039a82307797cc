"""The canvas editor in a real browser against a real server: build a CNN by dragging nodes from
the palette, connect ports, see an illegal connection refused and a shape error marked on its node,
fix it, undo and redo, save, view the generated code, and switch language.

Screenshots go to test-artifacts/ui/.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .canvas import (
    api_json,
    drag_edge,
    drop,
    edges_through_nodes,
    field,
    node,
    open_editor,
    open_template,
    select,
    viewport_zoom,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "dragdl" / "examples"
"""The templates the server ships (one JSON graph each)."""

pytestmark = pytest.mark.ui

VIEWPORT = {"width": 1280, "height": 800}


@pytest.fixture
def page(browser: Any, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser context on the test's server: `auth_server_url` if it asks for it."""
    name = "auth_server_url" if "auth_server_url" in request.fixturenames else "server_url"
    context = browser.new_context(viewport=VIEWPORT, base_url=request.getfixturevalue(name))
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    # Signed out, the browser logs the server's 401 answers (who am I, a wrong password) itself.
    expected = "status of 401" if name == "auth_server_url" else None
    page.on(
        "console",
        lambda message: (
            message.type == "error"
            and not (expected and expected in message.text)
            and problems.append(message.text)
        ),
    )
    page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
    yield page
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        page.screenshot(path=artifacts / f"failed-{request.node.name}.png")
    context.close()
    assert not problems, f"the browser console reported errors: {problems}"


def click_pane(page: Any) -> None:
    """Click an empty spot of the canvas: nodes are deselected and keyboard focus leaves the form."""
    page.locator(".react-flow__pane").click(position={"x": 700, "y": 240})


def edge_label(page: Any, shape: str) -> Any:
    """The label of the edges whose source outputs `shape`; "16x28x28" is printed with times signs."""
    return page.locator(".dedge__label").filter(has_text=shape.replace("x", "\N{MULTIPLICATION SIGN}"))


def unsaved(page: Any) -> Any:
    """The Save button while the open graph has changes not saved on the server."""
    return page.get_by_role("button", name=re.compile(r"^Save \(Ctrl\+S\) · Unsaved changes"))


def wait_status(page: Any, text: str) -> None:
    from playwright.sync_api import expect

    expect(page.locator(".toolbar .status")).to_have_text(text, timeout=30_000)


def test_build_a_cnn_on_the_canvas(page: Any, artifacts: Path) -> None:
    from playwright.sync_api import expect

    page.goto("/editor")
    # The first catalog request imports the engine (torch): give it time.
    expect(page.locator(".palette__group")).to_have_count(5, timeout=60_000)
    expect(page.locator(".canvas__empty")).to_be_visible()
    page.get_by_label("Search nodes").fill("pool")
    # Image, sequence, point and global pools, and the recurrent layers whose help mentions pooling.
    expect(page.locator(".palette__item")).to_have_count(10)
    expect(page.locator(".palette__group")).to_have_count(1)
    page.get_by_label("Search nodes").fill("")
    page.screenshot(path=artifacts / "01-empty-editor.png")

    # Two rows of the network, dropped from the palette away from the canvas edges (dragging a
    # connection near an edge pans the view), and Resize in between.
    drop(page, "dataset.builtin", 150, 50)
    drop(page, "layer.Conv2d", 370, 50)
    drop(page, "layer.MaxPool2d", 590, 50)
    drop(page, "layer.Flatten", 150, 330)
    drop(page, "layer.Linear", 370, 330)
    drop(page, "train.Classifier", 590, 330)
    drop(page, "op.Resize", 370, 185)
    expect(page.locator(".react-flow__node")).to_have_count(7)
    expect(node(page, "conv2d-1")).to_contain_text("Filters (output channels)")
    # The palette works from the keyboard too: Enter adds a node at a free spot of the canvas.
    page.locator('.palette__item[data-type="layer.ReLU"]').focus()
    page.keyboard.press("Enter")
    expect(page.locator(".react-flow__node")).to_have_count(8)
    page.keyboard.press("Delete")  # the new node is selected
    expect(page.locator(".react-flow__node")).to_have_count(7)

    for source, target in [
        ("builtin-1", "conv2d-1"),
        ("conv2d-1", "maxpool2d-1"),
        ("maxpool2d-1", "flatten-1"),
        ("flatten-1", "linear-1"),
        ("linear-1", "classifier-1"),
    ]:
        drag_edge(page, source, target)
    expect(page.locator(".react-flow__edge")).to_have_count(5)
    expect(node(page, "resize-1").locator(".dnode__badge")).to_be_visible()  # nothing feeds it yet
    page.screenshot(path=artifacts / "02-nodes-connected.png")

    # Layers output tensors; Resize takes images: refused, with the reason shown while hovering...
    drag_edge(page, "conv2d-1", "resize-1", release=False)
    hint = page.locator(".connection-hint")
    expect(hint).to_have_text("Conv2d outputs tensor; Resize accepts images.")
    page.screenshot(path=artifacts / "03-refused-connection-hint.png")
    page.mouse.up()
    # ...and after letting go.
    expect(page.locator(".toast")).to_contain_text("Conv2d outputs tensor; Resize accepts images.")
    expect(page.locator(".react-flow__edge")).to_have_count(5)
    page.screenshot(path=artifacts / "04-refused-connection-toast.png")
    # A second edge into a single input is refused too.
    drag_edge(page, "builtin-1", "maxpool2d-1")
    expect(page.locator(".toast").last).to_contain_text("takes a single input")
    expect(page.locator(".react-flow__edge")).to_have_count(5)

    select(page, "resize-1")
    page.keyboard.press("Delete")
    expect(page.locator(".react-flow__node")).to_have_count(6)
    wait_status(page, "Valid")
    expect(edge_label(page, "16x28x28")).to_be_visible()
    expect(page.locator(".dedge__label").filter(has_text="10")).to_have_count(1)
    page.screenshot(path=artifacts / "05-valid-graph.png")

    # A pooling window larger than the feature map: a shape error on that node and field.
    select(page, "conv2d-1")
    field(page, "padding").locator("select").select_option(label="No padding")
    field(page, "kernel_size").locator("input").fill("15")
    wait_status(page, "Valid")
    expect(edge_label(page, "16x14x14")).to_be_visible()
    select(page, "maxpool2d-1")
    field(page, "kernel_size").locator("input").fill("16")
    wait_status(page, "1 problem")
    badge = node(page, "maxpool2d-1").locator(".dnode__badge")
    expect(badge).to_have_text("1")
    inline_error = field(page, "kernel_size").locator(".field__error")
    expect(inline_error).to_contain_text("too small for this kernel_size")
    expect(page.locator(".problems__list")).to_contain_text("MaxPool2d: input 16x14x14 is too small")
    badge.hover()
    expect(page.locator(".dnode__tip")).to_contain_text("too small for this kernel_size")
    page.screenshot(path=artifacts / "06-shape-error.png")

    page.wait_for_timeout(1100)  # edits of one field within a second are one undo step
    field(page, "kernel_size").locator("input").fill("2")
    wait_status(page, "Valid")
    expect(badge).to_have_count(0)
    expect(edge_label(page, "16x7x7")).to_be_visible()
    page.screenshot(path=artifacts / "07-shape-error-fixed.png")

    # Undo brings the error back, redo fixes it again.
    click_pane(page)
    page.keyboard.press("Control+z")
    wait_status(page, "1 problem")
    page.keyboard.press("Control+Shift+z")
    wait_status(page, "Valid")

    # Copy and paste a node, then delete the copy; undo the delete and the paste.
    select(page, "conv2d-1")
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    expect(node(page, "conv2d-2")).to_be_visible()
    page.keyboard.press("Delete")
    expect(page.locator(".react-flow__node")).to_have_count(6)
    page.keyboard.press("Control+z")
    expect(node(page, "conv2d-2")).to_be_visible()
    page.keyboard.press("Control+z")
    expect(page.locator(".react-flow__node")).to_have_count(6)
    page.get_by_role("button", name="Redo (Ctrl+Shift+Z)").click()
    expect(node(page, "conv2d-2")).to_be_visible()
    page.get_by_role("button", name="Undo (Ctrl+Z)").click()
    expect(page.locator(".react-flow__node")).to_have_count(6)

    # Auto-layout puts the chain in columns, left to right.
    page.get_by_role("button", name="Auto-layout").click()
    x_of = {n: node(page, n).bounding_box()["x"] for n in ("builtin-1", "conv2d-1", "classifier-1")}
    assert x_of["builtin-1"] < x_of["conv2d-1"] < x_of["classifier-1"]

    # Nothing is lost on reload.
    page.reload()
    expect(page.locator(".react-flow__node")).to_have_count(6)
    wait_status(page, "Valid")

    # Save to the server, then the generated PyTorch script.
    page.get_by_label("Graph name").fill("UI smoke CNN")
    page.get_by_role("button", name=re.compile(r"^Save \(Ctrl\+S\)")).click()
    expect(page.locator(".toast").last).to_contain_text("as version 1")
    page.get_by_role("button", name="View code").click()
    expect(page.locator(".code-view")).to_contain_text("import torch", timeout=30_000)
    page.screenshot(path=artifacts / "08-generated-code.png")
    page.keyboard.press("Escape")


def test_shell_navigation_and_language(page: Any, artifacts: Path) -> None:
    from playwright.sync_api import expect

    page.goto("/tasks")
    expect(page.get_by_role("heading", name="Tasks")).to_be_visible(timeout=60_000)
    page.get_by_role("link", name="Datasets").click()
    expect(page).to_have_url(f"{page.url.split('/datasets')[0]}/datasets")
    page.get_by_role("button", name="中文").click()
    expect(page.get_by_role("link", name="编辑器")).to_be_visible()
    page.get_by_role("link", name="编辑器").click()
    # The editor's chunk and the server's first catalog (which imports the engine) on a cold server.
    expect(page.get_by_role("button", name="模板", exact=True)).to_be_visible(timeout=60_000)
    page.reload()
    expect(page.get_by_role("link", name="数据集")).to_be_visible()  # the choice is remembered
    page.screenshot(path=artifacts / "09-chinese-editor.png")
    page.get_by_role("button", name="EN", exact=True).click()
    expect(page.get_by_role("link", name="Editor")).to_be_visible()
    page.goto("/no-such-page")
    expect(page.get_by_text("This page does not exist.")).to_be_visible()


def test_sign_up_then_edit(page: Any, auth_server_url: str, artifacts: Path) -> None:
    from playwright.sync_api import expect

    page.goto("/editor")
    expect(page.get_by_role("heading", name="Sign in to DragDL")).to_be_visible(timeout=60_000)
    page.get_by_label("Username").fill("ada")
    page.get_by_label("Password").fill("short")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Wrong user name or password.")
    page.get_by_role("button", name="No account yet? Create one").click()
    page.get_by_label("Password").fill("correct horse battery")
    page.screenshot(path=artifacts / "10-sign-up.png")
    page.get_by_role("button", name="Create account").click()
    expect(page.locator(".topbar__username")).to_have_text("ada")
    drop(page, "dataset.builtin", 200, 120)
    expect(node(page, "builtin-1")).to_be_visible()
    wait_status(page, "1 problem")  # signed in, validation answers: no train node yet
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in to DragDL")).to_be_visible()


def test_the_account_page_shows_limits_and_an_administrator_changes_them(page: Any, artifacts: Path) -> None:
    from playwright.sync_api import expect

    # Single-user mode: the local user is the administrator, so the page also lists the accounts.
    page.goto("/editor")
    page.locator(".topbar__username").click()
    expect(page.get_by_role("heading", name="Account")).to_be_visible(timeout=60_000)
    expect(page.locator("[data-meter=Datasets]")).to_contain_text(" of 20 GiB")
    expect(page.get_by_role("progressbar", name="Task artifacts: 0% of the quota used")).to_be_visible()
    cpus = page.get_by_label("CPUs per task: local")
    cpus.fill("-2")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("CPUs per task of local must be a number")).to_be_visible()
    cpus.fill("6")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Saved the limits of local")).to_be_visible()
    page.reload()
    limits = page.locator(".account-limits")
    expect(limits).to_contain_text("CPUs per task6")
    expect(page.get_by_label("CPUs per task: local")).to_have_value("6")
    page.get_by_role("button", name="中文").click()
    expect(page.get_by_role("heading", name="账户")).to_be_visible()
    page.screenshot(path=artifacts / "11-account-chinese.png", full_page=True)
    page.get_by_label("每任务 CPU 数: local").fill("")  # back to the server default for the other tests
    page.get_by_role("button", name="保存").click()
    expect(limits).to_contain_text("每个任务的 CPU 数4")
    page.get_by_role("button", name="EN", exact=True).click()


def test_an_edit_made_just_before_a_reload_is_not_lost(page: Any) -> None:
    """The draft is written as the page goes away, not only by the autosave timer."""
    from playwright.sync_api import expect

    open_editor(page)
    open_template(page, "Sketcher CNN")
    wait_status(page, "Valid")
    select(page, "train")
    field(page, "epochs").locator("input").fill("7")
    page.reload()  # at once: well inside the autosave delay
    select(page, "train")
    expect(field(page, "epochs").locator("input")).to_have_value("7")


def test_epochs_changed_in_the_train_dialog_stay_in_the_editor(page: Any) -> None:
    """The Train dialog edits the open graph: the panel shows the new value and the next save keeps it."""
    from playwright.sync_api import expect

    open_editor(page)
    open_template(page, "Sketcher CNN")
    wait_status(page, "Valid")
    page.locator('[data-action="train"]').click()
    page.get_by_label("Epochs").fill("3")
    page.locator('[data-action="start-training"]').click()
    expect(page).to_have_url(re.compile(r"/tasks/"))
    task_id = page.url.rsplit("/", 1)[1]
    api_json(page, "POST", f"/api/tasks/{task_id}/stop")  # only its graph matters here

    page.get_by_role("link", name="Editor").click()
    select(page, "train")
    expect(field(page, "epochs").locator("input")).to_have_value("3")
    expect(unsaved(page)).to_have_count(0)
    page.get_by_role("button", name=re.compile(r"^Save \(Ctrl\+S\)")).click()
    expect(page.locator(".toast").last).to_contain_text("as version")
    graph = api_json(page, "GET", "/api/graphs")["data"][0]
    saved = api_json(page, "GET", f"/api/graphs/{graph['id']}")["graph"]
    assert [n["params"]["epochs"] for n in saved["nodes"] if n["id"] == "train"] == [3]


def test_view_code_shows_the_open_graph_without_saving_it(page: Any) -> None:
    from playwright.sync_api import expect

    open_editor(page)
    open_template(page, "Sketcher CNN")
    page.get_by_label("Graph name").fill("Code without saving")
    page.get_by_role("button", name=re.compile(r"^Save \(Ctrl\+S\)")).click()
    expect(page.locator(".toast").last).to_contain_text("as version 1")
    graph_id = next(
        g["id"] for g in api_json(page, "GET", "/api/graphs")["data"] if g["name"] == "Code without saving"
    )
    select(page, "conv1")
    field(page, "out_channels").locator("input").fill("24")
    expect(unsaved(page)).to_be_visible()

    page.get_by_role("button", name="View code").click()
    expect(page.locator(".code-view")).to_contain_text("import torch", timeout=30_000)
    expect(page.locator(".code-view")).to_contain_text("24")  # the open graph, not the saved one
    page.keyboard.press("Escape")
    assert len(api_json(page, "GET", f"/api/graphs/{graph_id}/versions")) == 1
    expect(unsaved(page)).to_be_visible()


def _class_zip() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, value in (("dark", 20), ("light", 230)):
            for k in range(6):
                image = io.BytesIO()
                Image.new("L", (28, 28), value + k).save(image, format="PNG")
                zf.writestr(f"shades/{name}/{k}.png", image.getvalue())
    return out.getvalue()


def test_use_in_editor_asks_before_changing_the_open_graph_and_undo_restores_it(page: Any) -> None:
    from playwright.sync_api import expect

    open_editor(page)
    open_template(page, "Sketcher CNN")
    wait_status(page, "Valid")
    upload = page.request.post(
        "/api/datasets",
        headers={"X-Requested-With": "dragdl-web"},
        multipart={
            "name": "UI shades",
            "files": {"name": "shades.zip", "mimeType": "application/zip", "buffer": _class_zip()},
        },
    )
    assert upload.ok, upload.text()

    page.get_by_role("link", name="Datasets").click()
    page.get_by_role("button", name="Use in editor: UI shades").click()
    question = page.locator("dialog[open]")
    expect(question).to_contain_text("Sketcher CNN")
    question.get_by_role("button", name="Cancel").click()
    expect(page).to_have_url(re.compile(r"/datasets$"))

    page.get_by_role("button", name="Use in editor: UI shades").click()
    page.locator("dialog[open] [data-confirm]").click()
    expect(node(page, "uploaded-1")).to_contain_text("UI shades", timeout=30_000)
    expect(node(page, "data")).to_have_count(0)
    expect(page.locator(".react-flow__edge")).to_have_count(15)

    click_pane(page)
    page.keyboard.press("Control+z")
    expect(node(page, "data")).to_be_visible()
    expect(node(page, "uploaded-1")).to_have_count(0)
    expect(page.locator(".react-flow__edge")).to_have_count(15)
    page.keyboard.press("Control+y")  # redo, as Ctrl+Shift+Z does
    expect(node(page, "uploaded-1")).to_be_visible()


def test_new_asks_in_the_page_not_with_the_browsers_box(page: Any) -> None:
    from playwright.sync_api import expect

    native: list[str] = []
    page.on("dialog", lambda dialog: (native.append(dialog.message), dialog.dismiss()))
    open_editor(page)
    drop(page, "layer.ReLU", 300, 200)
    expect(page.locator(".react-flow__node")).to_have_count(1)
    page.get_by_role("button", name="New", exact=True).click()
    page.locator("dialog[open]").get_by_role("button", name="Cancel").click()
    expect(page.locator(".react-flow__node")).to_have_count(1)
    page.get_by_role("button", name="New", exact=True).click()
    page.locator("dialog[open] [data-confirm]").click()
    expect(page.locator(".react-flow__node")).to_have_count(0)
    page.keyboard.press("Control+z")
    expect(page.locator(".react-flow__node")).to_have_count(1)
    assert native == []


def test_a_template_asks_before_replacing_unsaved_work(page: Any) -> None:
    from playwright.sync_api import expect

    open_editor(page)
    open_template(page, "Sketcher CNN")
    count = page.locator(".react-flow__node").count()
    drop(page, "layer.ReLU", 300, 200)
    expect(page.locator(".react-flow__node")).to_have_count(count + 1)
    page.get_by_role("button", name="Templates", exact=True).click()
    card = page.locator(".templates__card").filter(
        has=page.get_by_role("heading", name="Sketcher CNN", exact=True)
    )
    card.get_by_role("button", name="Open").click()
    page.locator("dialog[open]").get_by_role("button", name="Cancel").click()
    expect(page.locator(".react-flow__node")).to_have_count(count + 1)
    open_template(page, "Sketcher CNN", replace=True)
    expect(page.locator(".react-flow__node")).to_have_count(count)


def test_dropped_nodes_land_where_they_are_dropped(page: Any) -> None:
    from playwright.sync_api import expect

    open_editor(page)
    # An empty canvas as "New" leaves it (a fit it asked for used to wait for the first drop).
    open_template(page, "Sketcher CNN")
    page.get_by_role("button", name="New", exact=True).click()
    page.locator("dialog[open] [data-confirm]").click()
    expect(page.locator(".canvas__empty")).to_be_visible()
    page.wait_for_timeout(500)  # the view as New leaves it, any animation over
    zoom = viewport_zoom(page)
    canvas = page.locator(".canvas").bounding_box()
    points = {"builtin-1": (260, 180), "conv2d-1": (560, 420)}
    drop(page, "dataset.builtin", *points["builtin-1"])
    expect(node(page, "builtin-1")).to_be_visible()
    drop(page, "layer.Conv2d", *points["conv2d-1"])
    expect(node(page, "conv2d-1")).to_be_visible()
    page.wait_for_timeout(500)  # a fit-view animation, if one started, would be under way by now
    boxes = {}
    for node_id, (x, y) in points.items():
        box = node(page, node_id).bounding_box()
        boxes[node_id] = box
        sx, sy = canvas["x"] + x, canvas["y"] + y
        assert box["x"] <= sx <= box["x"] + box["width"], (node_id, box, sx)
        assert box["y"] <= sy <= box["y"] + box["height"], (node_id, box, sy)
    a, b = boxes["builtin-1"], boxes["conv2d-1"]
    assert a["x"] + a["width"] < b["x"] or a["y"] + a["height"] < b["y"], "the nodes overlap"
    assert viewport_zoom(page) == zoom


def test_templates_open_laid_out_readably(page: Any, artifacts: Path) -> None:
    """Each template opens as a flowing chain: readable zoom, no edge drawn across a node."""
    from playwright.sync_api import expect

    open_editor(page)
    names = page.evaluate("() => fetch('/api/graphs/templates').then((r) => r.json())")
    shipped = sorted(path.stem for path in EXAMPLES.glob("*.json"))
    assert sorted(template["id"] for template in names) == shipped
    for index, template in enumerate(names):
        open_template(page, template["name"], replace=index > 0)
        expect(page.locator(".react-flow__node")).to_have_count(len(template["graph"]["nodes"]))
        page.wait_for_timeout(600)  # the fit animation (200 ms) is over
        zoom = viewport_zoom(page)
        page.screenshot(path=artifacts / f"template-{template['id']}.png")
        assert zoom >= 0.6, f"{template['name']}: zoom {zoom:.2f}"
        assert edges_through_nodes(page) == [], template["name"]
