"""The canvas editor in a real browser against a real server: build a CNN by dragging nodes from
the palette, connect ports, see an illegal connection refused and a shape error marked on its node,
fix it, undo and redo, save, view the generated code, and switch language.

Screenshots go to test-artifacts/ui/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .canvas import drag_edge, drop, field, node, select

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
    expect(page.locator(".palette__item")).to_have_count(4)  # AdaptiveAvg, Avg, GlobalAvg, Max
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
    expect(node(page, "conv2d-1")).to_contain_text("Out Channels")
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
    field(page, "padding").locator("select").select_option(label="valid")
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
    expect(page.get_by_role("button", name="模板", exact=True)).to_be_visible()
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
    expect(page.get_by_role("alert")).to_have_text("wrong username or password")
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
