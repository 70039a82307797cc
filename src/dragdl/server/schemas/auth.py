"""The session probe and personal API tokens."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from dragdl.server.schemas.users import UserPublic


class ApiTokenCreate(BaseModel):
    name: str = Field(min_length=1, max_length=100, description="What the token is for, e.g. 'laptop CLI'.")


class ApiTokenPublic(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: str
    name: str
    prefix: str = Field(description="The first characters of the token, to recognise it.")
    created_at: datetime
    last_used_at: datetime | None


class ApiTokenCreated(ApiTokenPublic):
    token: str = Field(description="The token itself; shown only in this answer, never again.")


class SessionPublic(BaseModel):
    signed_in: bool = Field(description="False: no valid session cookie or API token came with the request.")
    user: UserPublic | None = Field(description="Who is signed in; null when nobody is.")
    single_user: bool = Field(
        description="The server runs in single-user mode (--no-auth): no accounts, nobody signs in or out."
    )
