"""Accounts, sessions, API tokens, the CSRF rule, single-user mode and the administrators' user API."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from dragdl.db.models import ApiToken, LoginSession, User, utcnow
from dragdl.server.app import create_app
from dragdl.server.auth import SESSION_COOKIE
from dragdl.server.settings import Settings

from .conftest import CSRF_HEADERS, PASSWORD, MakeClient

SQLITE_ONLY = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


def _signup(client: TestClient, username: str, password: str = PASSWORD) -> TestClient:
    response = client.post("/api/auth/signup", json={"username": username, "password": password})
    assert response.status_code == 201, response.text
    return client


def test_first_account_becomes_admin_and_later_ones_do_not(
    client: TestClient, anon_client: TestClient
) -> None:
    first = client.post("/api/auth/signup", json={"username": "first", "password": PASSWORD})
    assert first.status_code == 201 and first.json()["is_admin"] is True
    second = anon_client.post("/api/auth/signup", json={"username": "second", "password": PASSWORD})
    assert second.status_code == 201 and second.json()["is_admin"] is False


def test_signup_sets_a_session_cookie_that_is_http_only_and_lax(
    client: TestClient, db_session: Session
) -> None:
    response = client.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD})
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=")
    assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower() and "Max-Age=1209600" in cookie
    raw = client.cookies[SESSION_COOKIE]
    stored = db_session.scalars(select(LoginSession)).one()
    assert stored.token_hash == hashlib.sha256(raw.encode()).hexdigest() != raw
    assert client.get("/api/auth/me").json()["username"] == "alice"


def test_login_logout_and_me(client: TestClient, anon_client: TestClient) -> None:
    _signup(anon_client, "alice")
    assert client.get("/api/auth/me").status_code == 401
    login = client.post("/api/auth/login", json={"username": "alice", "password": PASSWORD})
    assert login.status_code == 200 and login.json()["username"] == "alice"
    assert client.get("/api/auth/me").json()["username"] == "alice"
    assert client.post("/api/auth/logout", headers=CSRF_HEADERS).status_code == 204
    assert client.get("/api/auth/me").status_code == 401


def test_the_session_probe_answers_200_signed_in_or_not(client: TestClient, anon_client: TestClient) -> None:
    # The web UI asks before showing its sign-in page: "not signed in" is an answer, not an error
    # (a 401 is logged in the browser's console); the routes that need a user keep their 401.
    nobody = client.get("/api/auth/session")
    assert nobody.status_code == 200
    assert nobody.json() == {"signed_in": False, "user": None, "single_user": False}
    assert client.get("/api/auth/me").status_code == 401
    _signup(anon_client, "alice")
    client.post("/api/auth/login", json={"username": "alice", "password": PASSWORD})
    signed_in = client.get("/api/auth/session").json()
    assert signed_in["signed_in"] is True and signed_in["user"]["username"] == "alice"
    assert signed_in["single_user"] is False
    client.cookies.clear()
    client.cookies.set("dragdl_session", "expired-or-forged")
    assert client.get("/api/auth/session").json()["signed_in"] is False


def test_wrong_password_and_unknown_user_get_the_same_answer(client: TestClient) -> None:
    _signup(client, "alice")
    wrong = client.post("/api/auth/login", json={"username": "alice", "password": "not the password"})
    unknown = client.post("/api/auth/login", json={"username": "nobody", "password": "not the password"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json() == {"detail": "wrong username or password"}


def test_usernames_are_unique_regardless_of_case(client: TestClient, anon_client: TestClient) -> None:
    _signup(client, "alice")
    taken = anon_client.post("/api/auth/signup", json={"username": "Alice", "password": PASSWORD})
    assert taken.status_code == 409 and "taken" in taken.json()["detail"]
    assert (
        anon_client.post("/api/auth/login", json={"username": "ALICE", "password": PASSWORD}).status_code
        == 200
    )


@pytest.mark.parametrize(
    ("username", "password", "field"),
    [
        ("ab", PASSWORD, "username"),
        ("x" * 65, PASSWORD, "username"),
        ("bad name", PASSWORD, "username"),
        ("al/ice", PASSWORD, "username"),
        ("alice", "short", "password"),
    ],
)
@SQLITE_ONLY
def test_signup_rules_name_the_field(client: TestClient, username: str, password: str, field: str) -> None:
    response = client.post("/api/auth/signup", json={"username": username, "password": password})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", field]


@SQLITE_ONLY
def test_garbage_bodies_are_4xx_not_500(client: TestClient) -> None:
    assert client.post("/api/auth/signup", content=b"\xff\x00").status_code == 422
    assert client.post("/api/auth/login", json=[1]).status_code == 422
    assert client.post("/api/auth/login", json={"username": 5, "password": None}).status_code == 422
    assert client.get("/api/auth/me", headers={"Authorization": "Basic abc"}).status_code == 401
    assert client.get("/api/auth/me", headers={"Authorization": "Bearer"}).status_code == 401
    assert client.get("/api/auth/me", headers={"Cookie": f"{SESSION_COOKIE}=forged"}).status_code == 401


@SQLITE_ONLY
def test_signup_can_be_closed(tmp_path: Path, db_url: str) -> None:
    settings = Settings(data_dir=tmp_path / "data", database_url=db_url, allow_signup=False)
    with TestClient(create_app(settings)) as client:
        response = client.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD})
        assert response.status_code == 403 and "closed" in response.json()["detail"]


def test_expired_session_is_refused_and_removed(client: TestClient, db_session: Session) -> None:
    _signup(client, "alice")
    db_session.execute(update(LoginSession).values(expires_at=utcnow() - timedelta(seconds=1)))
    db_session.commit()
    response = client.get("/api/auth/me")
    assert response.status_code == 401 and "expired" in response.json()["detail"]
    db_session.expire_all()
    assert db_session.scalars(select(LoginSession)).all() == []


def test_api_tokens_are_shown_once_stored_hashed_and_revocable(
    user_client: TestClient, anon_client: TestClient, db_session: Session
) -> None:
    created = user_client.post("/api/auth/tokens", json={"name": "laptop"})
    assert created.status_code == 201
    body = created.json()
    raw = body["token"]
    assert raw.startswith("dgl_") and body["prefix"] == raw[:12]
    stored = db_session.get(ApiToken, body["id"])
    assert stored is not None and stored.token_hash == hashlib.sha256(raw.encode()).hexdigest()

    listed = user_client.get("/api/auth/tokens").json()
    assert [t["name"] for t in listed] == ["laptop"] and "token" not in listed[0]

    bearer = {"Authorization": f"Bearer {raw}"}
    me = anon_client.get("/api/auth/me", headers=bearer)
    assert me.status_code == 200 and me.json()["username"] == "alice"
    # Bearer requests need no CSRF header, whatever the body.
    assert anon_client.post("/api/auth/tokens", content=b"{}", headers=bearer).status_code == 422

    assert user_client.delete(f"/api/auth/tokens/{body['id']}").status_code == 204
    assert anon_client.get("/api/auth/me", headers=bearer).status_code == 401
    assert user_client.delete(f"/api/auth/tokens/{body['id']}").status_code == 404


def test_token_use_is_recorded(make_client: MakeClient, db_session: Session) -> None:
    client = make_client("carol", auth="token")
    assert client.get("/api/auth/me").status_code == 200
    token = db_session.scalars(select(ApiToken)).one()
    assert token.last_used_at is not None


def test_cookie_changes_need_json_multipart_or_x_requested_with(client: TestClient) -> None:
    _signup(client, "alice")
    # A form post as another site could send it: refused even with the cookie.
    form = client.post("/api/auth/tokens", data={"name": "x"})
    assert form.status_code == 403 and "CSRF" in form.json()["detail"]
    plain = client.post("/api/auth/tokens", content=b'{"name": "x"}', headers={"Content-Type": "text/plain"})
    assert plain.status_code == 403
    assert client.post("/api/auth/tokens", json={"name": "json"}).status_code == 201
    token_id = client.get("/api/auth/tokens").json()[0]["id"]
    assert client.delete(f"/api/auth/tokens/{token_id}").status_code == 403
    assert client.delete(f"/api/auth/tokens/{token_id}", headers=CSRF_HEADERS).status_code == 204


def test_admins_list_users_and_set_quotas_and_roles(
    admin_client: TestClient, user_client: TestClient, other_client: TestClient
) -> None:
    users = admin_client.get("/api/users").json()
    assert users["count"] == 3 and [u["username"] for u in users["data"]] == ["root", "alice", "bob"]
    alice = user_client.user["id"]  # type: ignore[attr-defined]

    quota = admin_client.patch(f"/api/users/{alice}", json={"max_running_tasks": 5})
    assert quota.status_code == 200 and quota.json()["max_running_tasks"] == 5
    # Omitted fields stay; an explicit null returns to the server default.
    promoted = admin_client.patch(f"/api/users/{alice}", json={"is_admin": True}).json()
    assert promoted["is_admin"] is True and promoted["max_running_tasks"] == 5
    reset = admin_client.patch(f"/api/users/{alice}", json={"max_running_tasks": None}).json()
    assert reset["max_running_tasks"] is None and reset["is_admin"] is True
    assert user_client.get("/api/users").status_code == 200  # alice is an admin now

    assert other_client.get("/api/users").status_code == 403
    assert other_client.patch(f"/api/users/{alice}", json={"is_admin": False}).status_code == 403
    assert admin_client.patch(f"/api/users/{alice}", json={"max_running_tasks": -1}).status_code == 422
    assert admin_client.patch(f"/api/users/{alice}", json={"password_hash": "x"}).status_code == 422
    assert admin_client.patch("/api/users/999999", json={"is_admin": True}).status_code == 404
    assert admin_client.patch(f"/api/users/{2**40}", json={"is_admin": True}).status_code == 422


def test_the_last_admin_cannot_be_demoted(admin_client: TestClient) -> None:
    root = admin_client.user["id"]  # type: ignore[attr-defined]
    response = admin_client.patch(f"/api/users/{root}", json={"is_admin": False})
    assert response.status_code == 409 and "last administrator" in response.json()["detail"]


@SQLITE_ONLY
def test_single_user_mode_is_the_local_admin(settings: Settings) -> None:
    app = create_app(replace(settings, auth_enabled=False))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        me = client.get("/api/auth/me").json()
        assert me["username"] == "local" and me["is_admin"] is True
        probe = client.get("/api/auth/session").json()
        assert probe["single_user"] is True and probe["signed_in"] is True
        assert probe["user"]["username"] == "local"
        assert client.post("/api/auth/tokens", json={"name": "cli"}).status_code == 201
        refused = client.post("/api/auth/login", json={"username": "local", "password": "!"})
        assert refused.status_code == 400 and "single-user" in refused.json()["detail"]
        # No credentials stand behind a request here: a page elsewhere must not be able to drive it.
        form = client.post("/api/auth/tokens", data={"name": "x"})
        assert form.status_code == 403 and "CSRF" in form.json()["detail"]
        assert client.post("/api/auth/tokens", files={"name": ("n", b"x")}).status_code == 403
        assert client.post("/api/auth/tokens", content=b"x", headers=CSRF_HEADERS).status_code == 422
        rebound = TestClient(app, base_url="http://attacker.example").get("/api/auth/me")
        assert rebound.status_code == 403 and "loopback" in rebound.json()["detail"]
        assert TestClient(app, base_url="http://localhost:8000").get("/api/auth/me").status_code == 200


@SQLITE_ONLY
def test_the_local_user_cannot_log_in_and_does_not_block_the_first_admin(settings: Settings) -> None:
    with TestClient(create_app(replace(settings, auth_enabled=False)), base_url="http://[::1]") as client:
        assert client.get("/api/auth/me").status_code == 200
    with TestClient(create_app(settings)) as client:
        assert client.post("/api/auth/login", json={"username": "local", "password": "!"}).status_code == 401
        first = client.post("/api/auth/signup", json={"username": "alice", "password": PASSWORD})
        assert first.json()["is_admin"] is True


def test_deleting_a_user_ends_its_sessions(user_client: TestClient, db_session: Session) -> None:
    user = db_session.scalars(select(User).where(User.username == "alice")).one()
    db_session.delete(user)
    db_session.commit()
    assert user_client.get("/api/auth/me").status_code == 401


def test_no_auth_is_refused_off_loopback(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from dragdl.cli import app as cli

    result = CliRunner().invoke(cli, ["serve", "--no-auth", "--host", "0.0.0.0", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "--no-auth" in result.output and "loopback" in result.output
