"""Accounts, login sessions and personal API tokens."""

from __future__ import annotations

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from dragdl.db.models import ApiToken, LoginSession, User, utcnow
from dragdl.server.auth import (
    TOKEN_PREFIX,
    UNUSABLE_PASSWORD,
    burn_password_check,
    digest,
    hash_password,
    new_secret,
    session_expiry,
    verify_password,
)
from dragdl.server.schemas.auth import ApiTokenCreate
from dragdl.server.schemas.users import UserCreate, UserUpdate
from dragdl.server.services.access import reachable_by
from dragdl.server.settings import Settings


class UsernameTaken(Exception):
    pass


class LastAdmin(Exception):
    pass


def get_by_username(db: Session, username: str) -> User | None:
    """Usernames are unique regardless of case: 'Alice' cannot sign up next to 'alice'."""
    return db.scalar(select(User).where(func.lower(User.username) == username.lower()))


def create_user(db: Session, body: UserCreate, *, admin: bool | None = None) -> User:
    """A new account; `admin=None` makes the first account with a password an administrator.

    Counting the accounts is not enough when first sign-ups arrive together: each sees none. The
    first account also claims `founder`, a unique column, so the database lets only one of them in;
    the others are stored again as ordinary accounts.
    """
    if get_by_username(db, body.username) is not None:
        raise UsernameTaken(body.username)
    first = admin is None and _no_accounts_yet(db)
    password_hash = hash_password(body.password)
    if first:
        try:
            return _insert(db, body.username, password_hash, admin=True, founder=True)
        except IntegrityError:  # another first sign-up claimed it (or took the name)
            pass
    return _insert(db, body.username, password_hash, admin=bool(admin), founder=None)


def _no_accounts_yet(db: Session) -> bool:
    others = db.scalar(select(func.count()).select_from(User).where(User.password_hash != UNUSABLE_PASSWORD))
    return others == 0


def _insert(db: Session, username: str, password_hash: str, *, admin: bool, founder: bool | None) -> User:
    user = User(username=username, password_hash=password_hash, is_admin=admin, founder=founder)
    db.add(user)
    try:
        db.commit()
    except IntegrityError as exc:
        db.rollback()
        if founder:
            raise
        raise UsernameTaken(username) from exc  # the same name signed up concurrently
    return user


def check_credentials(db: Session, username: str, password: str) -> User | None:
    user = get_by_username(db, username)
    if user is None:
        burn_password_check(password)
        return None
    return user if verify_password(user.password_hash, password) else None


def start_session(db: Session, settings: Settings, user: User) -> str:
    """A new login session; returns the raw token for the cookie (only its digest is stored)."""
    db.execute(
        delete(LoginSession).where(LoginSession.user_id == user.id, LoginSession.expires_at <= utcnow())
    )
    raw = new_secret()
    db.add(LoginSession(token_hash=digest(raw), user_id=user.id, expires_at=session_expiry(settings)))
    db.commit()
    return raw


def end_session(db: Session, raw: str) -> None:
    db.execute(delete(LoginSession).where(LoginSession.token_hash == digest(raw)))
    db.commit()


def create_token(db: Session, user: User, body: ApiTokenCreate) -> tuple[ApiToken, str]:
    raw = TOKEN_PREFIX + new_secret()
    token = ApiToken(user_id=user.id, name=body.name, token_hash=digest(raw), prefix=raw[:12])
    db.add(token)
    db.commit()
    return token, raw


def list_tokens(db: Session, user: User) -> list[ApiToken]:
    query = select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.created_at.desc())
    return list(db.scalars(query))


def get_token(db: Session, user: User, token_id: str) -> ApiToken | None:
    """A token of the user's own; administrators may revoke anyone's."""
    return db.scalar(select(ApiToken).where(ApiToken.id == token_id, reachable_by(ApiToken.user_id, user)))


def delete_token(db: Session, token: ApiToken) -> None:
    db.delete(token)
    db.commit()


def list_users(db: Session, offset: int, limit: int) -> tuple[list[User], int]:
    count = db.scalar(select(func.count()).select_from(User)) or 0
    users = db.scalars(select(User).order_by(User.id).offset(offset).limit(limit))
    return list(users), count


def get_user(db: Session, user_id: int) -> User | None:
    return db.get(User, user_id)


def update_user(db: Session, user: User, body: UserUpdate) -> User:
    changes = body.model_dump(exclude_unset=True)
    if "is_admin" in changes and changes["is_admin"] is None:
        del changes["is_admin"]
    if changes.get("is_admin") is False and user.is_admin:
        admins = db.scalar(select(func.count()).select_from(User).where(User.is_admin.is_(True)))
        if (admins or 0) <= 1:
            raise LastAdmin(user.username)
    for name, value in changes.items():
        setattr(user, name, value)
    db.commit()
    return user
