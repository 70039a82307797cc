"""The web UI works under its Content-Security-Policy: the editor (@xyflow/react), the monitor
(ECharts, server-sent events) and the prediction page, in-browser ONNX inference included
(WebAssembly), raise no `securitypolicyviolation` and log no CSP refusal."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from .canvas import drop
from .test_monitor_predict import VIEWPORT, api, digit_png, digits_graph

pytestmark = pytest.mark.ui

_WATCH_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (event) => {
  window.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""


def _finished_model(server_url: str) -> tuple[str, str]:
    """(task id, model id) of a small digits task trained over the API."""
    task = api(server_url, "POST", "/api/tasks", {"graph": digits_graph(), "name": "CSP digits"})
    deadline = time.monotonic() + 240
    while (status := api(server_url, "GET", f"/api/tasks/{task['id']}")["status"]) != "SUCCEEDED":
        assert status not in ("FAILED", "STOPPED"), f"the task ended {status}"
        assert time.monotonic() < deadline, "the task did not finish in time"
        time.sleep(0.5)
    models = api(server_url, "GET", "/api/models")["data"]
    return task["id"], next(m["id"] for m in models if m["task_id"] == task["id"])


def test_the_ui_runs_under_its_content_security_policy(
    browser: Any, server_url: str, artifacts: Path, tmp_path: Path
) -> None:
    task_id, model_id = _finished_model(server_url)
    context = browser.new_context(viewport=VIEWPORT, base_url=server_url)
    context.add_init_script(_WATCH_VIOLATIONS)
    page = context.new_page()
    page.set_default_timeout(30_000)
    refusals: list[str] = []
    page.on(
        "console",
        lambda message: refusals.append(message.text) if "Content Security Policy" in message.text else None,
    )
    violations: list[str] = []

    def visit(path: str) -> None:
        response = page.goto(path)
        assert response is not None
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]

    def collect() -> None:
        violations.extend(page.evaluate("window.__cspViolations"))

    try:
        visit("/editor")
        drop(page, "dataset.builtin", 150, 50)
        drop(page, "layer.Conv2d", 370, 50)
        page.locator(".react-flow__node").nth(1).wait_for()
        collect()

        visit(f"/tasks/{task_id}")
        page.locator(".monitor[data-status='SUCCEEDED']").wait_for()
        page.wait_for_function(
            "() => document.querySelector('[data-chart=\"loss\"] .echart').dataset.points > 0"
        )
        page.get_by_role("tab", name="Results").click()
        page.locator('[data-chart="confusion"] canvas').first.wait_for()
        collect()

        visit(f"/models/{model_id}")
        page.locator(".predict").wait_for()
        digit_png(tmp_path / "digit.png", 7)
        page.set_input_files('input[data-input="images"]', str(tmp_path / "digit.png"))
        page.locator('.prediction[data-input="digit.png"] [data-chart="pie"] canvas').first.wait_for()
        page.locator('[data-action="browser-inference"]').click()
        page.locator('[data-browser-status="ready"]').wait_for(timeout=90_000)
        page.locator('.prediction[data-input="digit.png"] .agreement__value').wait_for()
        collect()
        page.screenshot(path=artifacts / "csp-predict-browser.png")
    finally:
        context.close()
    assert violations == [] and refusals == [], (violations, refusals)
