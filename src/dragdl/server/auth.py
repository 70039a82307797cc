"""Who is calling: session cookie, API token, or the single user of `--no-auth` mode.

- Browser: `POST /api/auth/login` sets the HTTP-only, SameSite=Lax cookie `dragdl_session`. The cookie
  holds a random token; the `login_sessions` table holds only its SHA-256, so a leaked database does not
  leak sessions.
- CLI/SDK: `Authorization: Bearer <token>` with a personal API token (also stored as SHA-256).
- Single-user mode (`auth_enabled=False`, loopback only): every request is the local administrator;
  requests must name a loopback host, and changes must be JSON or carry `X-Requested-With`.

CSRF: a mutating request (anything but GET/HEAD/OPTIONS) authenticated by the cookie must carry
`Content-Type: application/json`, a multipart body, or an `X-Requested-With` header. A page on another
site cannot send JSON or a custom header without a CORS preflight, which this server never grants; it
can post a multipart form, but SameSite=Lax keeps the cookie off cross-site POSTs, so the rule is a
second, cheap line of defence. The browser client should send `X-Requested-With` on every request.
Bearer requests are not concerned: a browser never adds that header by itself.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from fastapi import HTTPException, Request, status
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from dragdl.db.models import ApiToken, LoginSession, User, utcnow
from dragdl.server.settings import LOOPBACK_HOSTS, Settings

SINGLE_USER = "local"
SESSION_COOKIE = "dragdl_session"
TOKEN_PREFIX = "dgl_"
UNUSABLE_PASSWORD = "!"
"""The password hash of accounts nobody can log in to (the single-user mode's local user)."""
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_TOUCH_EVERY = timedelta(minutes=1)

_hasher = PasswordHasher()  # argon2id, RFC 9106 low-memory profile


@cache
def _dummy_hash() -> str:
    """Verified against when the username is unknown, so both failures take the same time."""
    return _hasher.hash(secrets.token_hex(16))


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    if password_hash == UNUSABLE_PASSWORD:
        password_hash = _dummy_hash()  # same time as a real check, and it cannot match
    try:
        return _hasher.verify(password_hash, password) and password_hash != _dummy_hash()
    except (VerificationError, InvalidHashError):
        return False


def burn_password_check(password: str) -> None:
    """Spend the time of one verification (for unknown usernames)."""
    verify_password(_dummy_hash(), password)


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def as_utc(moment: datetime) -> datetime:
    """SQLite returns naive datetimes even for timezone-aware columns; every stored time is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _unauthorized(message: str) -> HTTPException:
    return HTTPException(status.HTTP_401_UNAUTHORIZED, message, headers={"WWW-Authenticate": "Bearer"})


def authenticate(request: Request, db: Session, settings: Settings) -> User:
    """Return the calling user or raise 401 (403 for a cookie request failing the CSRF rule)."""
    if not settings.auth_enabled:
        _check_single_user_request(request)
        return single_user(db)
    header = request.headers.get("authorization")
    if header is not None:
        return _from_bearer(header, db)
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        user = _from_cookie(cookie, db)
        check_csrf(request)
        return user
    raise _unauthorized("not signed in: log in, or send 'Authorization: Bearer <API token>'")


def check_csrf(request: Request) -> None:
    if request.method in SAFE_METHODS or request.headers.get("x-requested-with"):
        return
    content_type = _content_type(request)
    if content_type == "application/json":
        return
    if content_type == "multipart/form-data":
        return
    raise HTTPException(
        status.HTTP_403_FORBIDDEN,
        "cookie-authenticated changes need 'Content-Type: application/json', a multipart body, "
        "or an 'X-Requested-With' header (CSRF protection)",
    )


def _check_single_user_request(request: Request) -> None:
    """Single-user mode has no credentials, so any web page could otherwise drive it.

    The Host header must name a loopback address (a DNS-rebinding page sends its own host name), and a
    change must be JSON or carry `X-Requested-With`, which a cross-site page cannot send without a CORS
    preflight. Multipart is not enough here: no SameSite cookie stands behind it.
    """
    if (request.url.hostname or "") not in LOOPBACK_HOSTS:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"single-user mode answers loopback host names only ({', '.join(LOOPBACK_HOSTS)}), "
            f"not {request.url.hostname!r}",
        )
    if request.method in SAFE_METHODS or request.headers.get("x-requested-with"):
        return
    if _content_type(request) == "application/json":
        return
    raise HTTPException(
        status.HTTP_403_FORBIDDEN,
        "changes need 'Content-Type: application/json' or an 'X-Requested-With' header (CSRF protection)",
    )


def _content_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def _from_bearer(header: str, db: Session) -> User:
    scheme, _, raw = header.partition(" ")
    raw = raw.strip()
    if scheme.lower() != "bearer" or not raw:
        raise _unauthorized("malformed Authorization header: expected 'Bearer <API token>'")
    found = db.execute(
        select(ApiToken, User)
        .join(User, User.id == ApiToken.user_id)
        .where(ApiToken.token_hash == digest(raw))
    ).first()
    if found is None:
        raise _unauthorized("invalid or revoked API token")
    token, user = found
    now = utcnow()
    if token.last_used_at is None or now - as_utc(token.last_used_at) > _TOUCH_EVERY:
        token.last_used_at = now  # at most one write a minute per token
        db.commit()
    return user


def _from_cookie(raw: str, db: Session) -> User:
    found = db.execute(
        select(LoginSession, User)
        .join(User, User.id == LoginSession.user_id)
        .where(LoginSession.token_hash == digest(raw))
    ).first()
    if found is None:
        raise _unauthorized("session ended: log in again")
    session, user = found
    if as_utc(session.expires_at) <= utcnow():
        db.delete(session)
        db.commit()
        raise _unauthorized("session expired: log in again")
    return user


def single_user(db: Session) -> User:
    """The administrator every request is in single-user mode, created on first use."""
    user = db.scalar(select(User).where(User.username == SINGLE_USER))
    if user is not None:
        return user
    try:
        user = User(username=SINGLE_USER, password_hash=UNUSABLE_PASSWORD, is_admin=True)
        db.add(user)
        db.commit()
        return user
    except IntegrityError:  # a concurrent first request created it
        db.rollback()
        return db.scalars(select(User).where(User.username == SINGLE_USER)).one()


def session_expiry(settings: Settings) -> datetime:
    return utcnow() + timedelta(days=settings.session_days)
