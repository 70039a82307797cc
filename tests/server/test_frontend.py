"""The built web UI is served beside the API without changing any API answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dragdl.server.frontend import serve_frontend


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    build = tmp_path / "static"
    (build / "assets").mkdir(parents=True)
    (build / "index.html").write_text("<!doctype html><title>app</title>", encoding="utf-8")
    (build / "assets" / "index-abc123.js").write_text("console.log(1)", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("no", encoding="utf-8")
    app = FastAPI()

    @app.get("/api/ping")
    def ping() -> dict[str, str]:
        return {"pong": "yes"}

    assert serve_frontend(app, build)
    return TestClient(app)


def test_pages_of_the_app_get_index_html(client: TestClient) -> None:
    for path in ("/", "/editor", "/tasks/42"):
        response = client.get(path)
        assert response.status_code == 200, path
        assert "<title>app</title>" in response.text
        assert response.headers["cache-control"] == "no-cache"


def test_assets_are_served_and_cached_for_good(client: TestClient) -> None:
    response = client.get("/assets/index-abc123.js")
    assert response.status_code == 200
    assert response.text == "console.log(1)"
    assert "immutable" in response.headers["cache-control"]


def test_api_answers_are_unchanged(client: TestClient) -> None:
    assert client.get("/api/ping").json() == {"pong": "yes"}
    missing = client.get("/api/nope")
    assert missing.status_code == 404
    assert missing.json() == {"detail": "Not Found"}
    assert client.post("/editor").status_code in (404, 405)


def test_files_outside_the_build_are_not_served(client: TestClient) -> None:
    assert client.get("/../secret.txt").text != "no"
    assert client.get("/%2e%2e/secret.txt").text != "no"


def test_without_a_build_nothing_is_added(tmp_path: Path) -> None:
    app = FastAPI()
    assert not serve_frontend(app, tmp_path / "missing")
    assert TestClient(app).get("/").status_code == 404


def test_a_missing_asset_is_a_404_not_the_page(client: TestClient) -> None:
    """A tab left open across an upgrade asks for the old build's scripts: HTML would run as JavaScript."""
    for path in ("/assets/index-old999.js", "/favicon-old.png", "/assets/a.css"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert "<title>app</title>" not in response.text


def test_while_the_build_is_replaced_pages_answer_503_not_500(tmp_path: Path) -> None:
    build = tmp_path / "static"
    build.mkdir()
    (build / "index.html").write_text("<!doctype html><title>app</title>", encoding="utf-8")
    app = FastAPI()
    assert serve_frontend(app, build)
    (build / "index.html").unlink()  # `npm run build` empties the folder before writing it again
    response = TestClient(app).get("/editor")
    assert response.status_code == 503 and response.headers["retry-after"] == "2"
