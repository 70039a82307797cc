"""Who is calling: session cookie, API token, or the single user of `--no-auth` mode."""

from __future__ import annotations

from fastapi import HTTPException, Request, status
from sqlalchemy import select
from sqlalchemy.orm import Session

from dragdl.server.db.models import User
from dragdl.server.settings import Settings

SINGLE_USER = "local"


def authenticate(request: Request, db: Session, settings: Settings) -> User:
    """Return the calling user or raise 401."""
    if not settings.auth_enabled:
        user = db.scalar(select(User).where(User.username == SINGLE_USER))
        if user is None:
            user = User(username=SINGLE_USER, password_hash="!", is_admin=True)
            db.add(user)
            db.commit()
        return user
    raise HTTPException(status.HTTP_401_UNAUTHORIZED, "not signed in", headers={"WWW-Authenticate": "Bearer"})
