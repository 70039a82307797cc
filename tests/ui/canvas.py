"""Canvas helpers shared by the browser tests: find nodes, drop palette entries, draw edges."""

from __future__ import annotations

from typing import Any


def node(page: Any, node_id: str) -> Any:
    return page.locator(f'.react-flow__node[data-id="{node_id}"]')


def drop(page: Any, kind: str, x: int, y: int) -> None:
    """Drag a palette entry onto the canvas; (x, y) is where the pointer lets go, in the canvas."""
    page.drag_and_drop(f'.palette__item[data-type="{kind}"]', ".canvas", target_position={"x": x, "y": y})


def centre(box: dict[str, float]) -> tuple[float, float]:
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def drag_edge(page: Any, source: str, target: str, *, release: bool = True) -> None:
    start = centre(node(page, source).locator(".react-flow__handle.source").bounding_box())
    end = centre(node(page, target).locator(".react-flow__handle.target").bounding_box())
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=12)
    if release:
        page.mouse.up()


def select(page: Any, node_id: str) -> None:
    node(page, node_id).locator(".dnode__header").click()
    page.locator(f'.props__node[data-node="{node_id}"]').wait_for()


def field(page: Any, name: str) -> Any:
    return page.locator(f'.props .field[data-field="{name}"]')


def open_editor(page: Any) -> None:
    """The editor with its palette loaded (the first catalog request imports torch: give it time)."""
    from playwright.sync_api import expect

    page.goto("/editor")
    expect(page.locator(".palette__group")).to_have_count(5, timeout=60_000)


def open_template(page: Any, name: str, replace: bool = False) -> None:
    """Open a shipped template from the Templates dialog; `replace`: the canvas holds unsaved work,
    so the page asks first, and this confirms."""
    page.get_by_role("button", name="Templates", exact=True).click()
    card = page.locator(".templates__card").filter(has=page.get_by_role("heading", name=name, exact=True))
    card.get_by_role("button", name="Open").click()
    if replace:
        page.locator("dialog[open] [data-confirm]").click()
    page.locator("dialog").wait_for(state="detached")


def viewport_zoom(page: Any) -> float:
    """The canvas's zoom, read from the transform React Flow puts on its viewport."""
    return float(
        page.evaluate(
            """() => new DOMMatrix(getComputedStyle(
                document.querySelector('.react-flow__viewport')).transform).a"""
        )
    )


def api_json(page: Any, method: str, path: str) -> Any:
    """A request with the page's session (and the CSRF header browser calls send)."""
    response = page.request.fetch(path, method=method, headers={"X-Requested-With": "dragdl-web"})
    assert response.ok, f"{method} {path}: {response.status} {response.text()}"
    return response.json() if response.text() else None


# Every point along each drawn edge, in screen pixels, that falls inside a node other than the
# edge's own two ends (shrunk by 2 px: a path may touch a border where it enters its port).
EDGES_THROUGH_NODES = """() => {
    const draft = JSON.parse(localStorage.getItem('dragdl.editor.draft'));
    const ends = new Map(draft.edges.map((e) => [e.id, [e.source, e.target]]));
    const boxes = [...document.querySelectorAll('.react-flow__node')].map((el) => {
        const r = el.getBoundingClientRect();
        const id = el.dataset.id;
        return { id, left: r.left + 2, right: r.right - 2, top: r.top + 2, bottom: r.bottom - 2 };
    });
    const hits = [];
    for (const g of document.querySelectorAll('.react-flow__edge')) {
        const id = g.dataset.id;
        const [source, target] = ends.get(id) ?? [];
        const path = g.querySelector('path.react-flow__edge-path');
        const matrix = path.getScreenCTM();
        const length = path.getTotalLength();
        for (let d = 0; d <= length; d += 4) {
            const at = path.getPointAtLength(d);
            const p = new DOMPoint(at.x, at.y).matrixTransform(matrix);
            for (const b of boxes) {
                if (b.id === source || b.id === target) continue;
                if (p.x > b.left && p.x < b.right && p.y > b.top && p.y < b.bottom) {
                    hits.push(`${id} crosses ${b.id}`);
                    break;
                }
            }
        }
    }
    return [...new Set(hits)];
}"""


def edges_through_nodes(page: Any) -> list[str]:
    return list(page.evaluate(EDGES_THROUGH_NODES))
