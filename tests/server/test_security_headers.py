"""Every answer carries the security headers: a CSP that keeps the UI out of other sites' frames and
loads nothing from elsewhere (the API docs pages get their CDN), nosniff, a same-origin referrer."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from dragdl.server.app import create_app
from dragdl.server.frontend import STATIC_DIR
from dragdl.server.settings import Settings


def test_pages_assets_and_api_answers_carry_the_security_headers(tmp_path: Path) -> None:
    settings = Settings.from_env(tmp_path, auth_enabled=False)
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        asset = next((STATIC_DIR / "assets").glob("*.js")).name
        for path in ("/", "/editor", f"/assets/{asset}", "/api/health", "/api/nowhere", "/openapi.json"):
            response = client.get(path)
            assert response.headers["x-content-type-options"] == "nosniff", path
            assert response.headers["referrer-policy"] == "same-origin", path
            assert response.headers["x-frame-options"] == "DENY", path
            policy = response.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy, path
            assert "script-src 'self' 'wasm-unsafe-eval'" in policy, path
            assert "http" not in policy, f"{path}: the UI loads nothing from elsewhere"
        docs = client.get("/docs")
        assert docs.status_code == 200
        policy = docs.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "https://cdn.jsdelivr.net" in policy
        assert "cdn.jsdelivr.net" in docs.text  # what the policy has to allow
