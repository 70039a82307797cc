"""Sign-up, login and logout (session cookie), the current user, personal API tokens."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, Response, status

from dragdl.server.auth import SESSION_COOKIE
from dragdl.server.deps import CurrentUser, SessionDep, SettingsDep
from dragdl.server.errors import SIGNED_IN_ERRORS, error_responses
from dragdl.server.schemas.auth import ApiTokenCreate, ApiTokenCreated, ApiTokenPublic
from dragdl.server.schemas.users import Credentials, UserCreate, UserPublic
from dragdl.server.services import users as service
from dragdl.server.settings import Settings

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
        }
    ),
)
def login(
    body: Credentials, request: Request, response: Response, db: SessionDep, settings: SettingsDep
) -> UserPublic:
    """Check the password and set the HTTP-only session cookie `dragdl_session`."""
    _require_accounts(settings)
    user = service.check_credentials(db, body.username, body.password)
    if user is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, _WRONG_CREDENTIALS)
    _set_session_cookie(response, request, settings, service.start_session(db, settings, user))
    return UserPublic.model_validate(user)


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
