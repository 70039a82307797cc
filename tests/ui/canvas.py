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
