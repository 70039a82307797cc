"""Importance with few trials (issue 19, finding 9): the sweep detail says from how many complete
trials the importance was computed and from how many it starts to mean something, so the page can
say when there are too few."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session
from tests.server.test_sweep_bounds import LR, settled_sweep

from dragdl.server.services.sweep_importance import meaningful_trials


def _detail(client: TestClient, app: FastAPI, sweep_id: str) -> dict[str, object]:
    assert client.get(f"/api/sweeps/{sweep_id}").status_code == 200  # starts the computation
    assert app.state.importance.wait_idle(120)
    body: dict[str, object] = client.get(f"/api/sweeps/{sweep_id}").json()
    return body


def test_four_trials_of_two_params_are_too_few_to_mean_anything(
    user_client: TestClient, db_session: Session, app: FastAPI
) -> None:
    owner = user_client.user["id"]  # type: ignore[attr-defined]
    search = {"train": {**LR, "momentum": {"type": "float", "low": 0.0, "high": 0.9}}}
    sweep_id = settled_sweep(
        db_session, owner, search, 4, lambda n: {"train.lr": 0.01 + n / 100, "train.momentum": n / 10}
    )
    body = _detail(user_client, app, sweep_id)
    assert body["importance_trials"] == 4
    assert body["importance_min_trials"] == meaningful_trials(2) == 10


def test_many_trials_of_many_params_need_more_and_reach_it(
    user_client: TestClient, db_session: Session, app: FastAPI
) -> None:
    owner = user_client.user["id"]  # type: ignore[attr-defined]
    names = ("momentum", "weight_decay", "gamma")
    search = {"train": {**LR, **{name: {"type": "float", "low": 0.0, "high": 0.5} for name in names}}}
    sweep_id = settled_sweep(
        db_session,
        owner,
        search,
        24,
        lambda n: {"train.lr": 0.01 + (n % 7) / 100, **{f"train.{name}": (n % 5) / 10 for name in names}},
    )
    body = _detail(user_client, app, sweep_id)
    assert body["importance_min_trials"] == 20  # 5 per searched param beats the floor of 10
    assert body["importance_trials"] == 24 and body["importance"]
