"""Sign-up, login and logout (session cookie), the current user, personal API tokens."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, Response, status
from starlette.concurrency import run_in_threadpool

from dragdl.db.models import User
from dragdl.server.auth import SESSION_COOKIE, authenticate
from dragdl.server.deps import CurrentUser, SessionDep, SettingsDep
from dragdl.server.errors import SIGNED_IN_ERRORS, error_responses
from dragdl.server.schemas.auth import ApiTokenCreate, ApiTokenCreated, ApiTokenPublic, SessionPublic
from dragdl.server.schemas.users import Credentials, UserCreate, UserPublic
from dragdl.server.services import users as service
from dragdl.server.settings import Settings
from dragdl.server.throttle import LoginThrottle, PasswordGate

router = APIRouter(prefix="/api/auth", tags=["auth"])

_WRONG_CREDENTIALS = "wrong username or password"


def _require_accounts(settings: Settings) -> None:
    if not settings.auth_enabled:
        raise HTTPException(
            status.HTTP_400_BAD_REQUEST, "this server runs in single-user mode (--no-auth): no sign-in needed"
        )


def _set_session_cookie(response: Response, request: Request, settings: Settings, raw: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        raw,
        max_age=settings.session_days * 24 * 3600,
        path="/",
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


@router.post(
    "/signup",
    operation_id="signup",
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(
        described={
            400: "The body cannot be parsed, or the server runs in single-user mode.",
            403: "Sign-up is closed on this server.",
            409: "The username is taken.",
        }
    ),
)
def signup(
    body: UserCreate, request: Request, response: Response, db: SessionDep, settings: SettingsDep
) -> UserPublic:
    """Create an account and sign it in. The first account of a server becomes its administrator."""
    _require_accounts(settings)
    if not settings.allow_signup:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, "sign-up is closed on this server: ask an administrator"
        )
    try:
        user = service.create_user(db, body)
    except service.UsernameTaken:
        raise HTTPException(status.HTTP_409_CONFLICT, f"username {body.username!r} is taken") from None
    _set_session_cookie(response, request, settings, service.start_session(db, settings, user))
    return UserPublic.model_validate(user)


@router.post(
    "/login",
    operation_id="login",
    responses=error_responses(
        described={
            400: "The body cannot be parsed, or the server runs in single-user mode.",
            401: "Wrong username or password.",
            429: "Too many failed sign-ins for this account or from this address, or too many sign-ins "
            "at once; `Retry-After` says when to try again.",
        }
    ),
)
async def login(body: Credentials, request: Request, response: Response, settings: SettingsDep) -> UserPublic:
    """Check the password and set the HTTP-only session cookie `dragdl_session`."""
    _require_accounts(settings)
    throttle: LoginThrottle = request.app.state.login_throttle
    gate: PasswordGate = request.app.state.password_gate
    address = request.client.host if request.client else ""
    throttle.check(body.username, address)
    async with gate.turn():
        throttle.check(body.username, address)  # again: failures may have arrived while waiting
        signed_in = await run_in_threadpool(_sign_in, request, settings, body)
    if signed_in is None:
        throttle.failed(body.username, address)
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, _WRONG_CREDENTIALS)
    throttle.succeeded(body.username)
    user, raw = signed_in
    _set_session_cookie(response, request, settings, raw)
    return UserPublic.model_validate(user)


def _sign_in(request: Request, settings: Settings, body: Credentials) -> tuple[User, str] | None:
    """The user and a new session token, or None for wrong credentials (one thread-pool trip)."""
    with request.app.state.sessions() as db:
        user = service.check_credentials(db, body.username, body.password)
        if user is None:
            return None
        return user, service.start_session(db, settings, user)


@router.post(
    "/logout", operation_id="logout", status_code=status.HTTP_204_NO_CONTENT, responses=SIGNED_IN_ERRORS
)
def logout(request: Request, response: Response, user: CurrentUser, db: SessionDep) -> None:
    """End the browser session (API tokens stay valid until deleted)."""
    raw = request.cookies.get(SESSION_COOKIE)
    if raw:
        service.end_session(db, raw)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")


@router.get("/me", operation_id="getCurrentUser", responses=SIGNED_IN_ERRORS)
def me(user: CurrentUser) -> UserPublic:
    return UserPublic.model_validate(user)


@router.get("/session", operation_id="getSession", responses=error_responses(400, 403))
def session(request: Request, db: SessionDep, settings: SettingsDep) -> SessionPublic:
    """Who is signed in, if anyone. Answers 200 with `signed_in: false` rather than 401, so that the
    web UI's probe before its sign-in page is not logged by the browser as a failed request; every
    route that needs a user still answers 401 without one."""
    try:
        user: UserPublic | None = UserPublic.model_validate(authenticate(request, db, settings))
    except HTTPException as exc:
        if exc.status_code != status.HTTP_401_UNAUTHORIZED:
            raise
        user = None
    return SessionPublic(signed_in=user is not None, user=user, single_user=not settings.auth_enabled)


@router.post(
    "/tokens",
    operation_id="createApiToken",
    status_code=status.HTTP_201_CREATED,
    responses={**SIGNED_IN_ERRORS, **error_responses(400)},
)
def create_token(body: ApiTokenCreate, user: CurrentUser, db: SessionDep) -> ApiTokenCreated:
    """A personal API token for the CLI or SDK; the token is in this answer only."""
    token, raw = service.create_token(db, user, body)
    return ApiTokenCreated(**ApiTokenPublic.model_validate(token).model_dump(), token=raw)


@router.get("/tokens", operation_id="listApiTokens", responses=SIGNED_IN_ERRORS)
def list_tokens(user: CurrentUser, db: SessionDep) -> list[ApiTokenPublic]:
    return [ApiTokenPublic.model_validate(token) for token in service.list_tokens(db, user)]


@router.delete(
    "/tokens/{token_id}",
    operation_id="deleteApiToken",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={**SIGNED_IN_ERRORS, **error_responses(404)},
)
def delete_token(token_id: str, user: CurrentUser, db: SessionDep) -> None:
    token = service.get_token(db, user, token_id)
    if token is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no API token {token_id!r}")
    service.delete_token(db, token)
