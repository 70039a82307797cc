"""Who may reach a row by its id: its owner, and administrators (who look after every account).

Lists stay per user; fetching, changing or deleting by id goes through `reachable_by`, and a row
that is not reachable answers 404 like one that does not exist, so ids of others are not revealed.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, true

from dragdl.db.models import User


def reachable_by(owner_column: Any, user: User) -> ColumnElement[bool]:
    """A WHERE clause: `owner_column` is the user's id, or anything for an administrator."""
    if user.is_admin:
        return true()
    clause: ColumnElement[bool] = owner_column == user.id
    return clause
