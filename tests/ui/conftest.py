"""A real `dragdl serve` on a free loopback port and a headless Chromium, for the browser tests.

The web UI must be built first (`make frontend`, or `npm ci && npm run build` in frontend/): the
server serves it from src/dragdl/server/static/. Chromium is Debian's (`apt-get install chromium`);
DRAGDL_CHROMIUM names another binary.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ..servers import dragdl_serve

REPO = Path(__file__).resolve().parents[2]
STATIC_INDEX = REPO / "src" / "dragdl" / "server" / "static" / "index.html"
ARTIFACTS = REPO / "test-artifacts" / "ui"
CHROMIUM = os.environ.get("DRAGDL_CHROMIUM", "/usr/bin/chromium")


@contextmanager
def _serve(tmp_path_factory: pytest.TempPathFactory, *extra: str) -> Iterator[str]:
    if not STATIC_INDEX.is_file():
        pytest.fail(f"the web UI is not built ({STATIC_INDEX} is missing): run `make frontend`")
    data_dir = tmp_path_factory.mktemp("dragdl-ui-data")
    log_path = tmp_path_factory.mktemp("dragdl-ui-log") / "server.log"
    with dragdl_serve(data_dir, log_path, *extra) as url:
        yield url


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Single-user mode: no sign-in."""
    with _serve(tmp_path_factory, "--no-auth") as url:
        yield url


@pytest.fixture(scope="session")
def auth_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """With accounts: the browser signs up first."""
    with _serve(tmp_path_factory) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: `apt-get install chromium` or set DRAGDL_CHROMIUM")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield instance
        instance.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


VIEWPORT = {"width": 1440, "height": 900}


@pytest.fixture
def page(browser: Any, server_url: str, artifacts: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser context on the shared server; any console error fails the test, and a failed
    test leaves a screenshot. Parametrized indirectly with a language ("zh"), the web UI starts in
    it. Modules that need another context define their own `page`."""
    context = browser.new_context(viewport=VIEWPORT, base_url=server_url)
    language = getattr(request, "param", None)
    if language is not None:
        context.add_init_script(f"localStorage.setItem('dragdl.language', '{language}');")
    page = context.new_page()
    page.set_default_timeout(30_000)
    problems: list[str] = []

    def on_console(message: Any) -> None:
        if message.type == "error":
            problems.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
    yield page
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        page.screenshot(path=artifacts / f"failed-{request.node.name}.png")
    context.close()
    assert not problems, f"the browser console reported errors: {problems}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Remember each phase's outcome on the test, so the page fixture can keep a failure screenshot."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report
