"""Validation warnings through the API (issue 19, finding 4): a warning leaves the graph valid and
comes back beside the errors with its severity."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from tests.engine.analysis.test_table_targets import graph, penguin_table


def test_a_warning_is_served_with_its_severity_and_the_graph_stays_valid(
    admin_client: TestClient, tmp_path: Path
) -> None:
    table = penguin_table(tmp_path / "penguins.csv")
    body = admin_client.post("/api/graphs/validate", json=graph(table, "body_mass_g")).json()
    assert body["ok"] is True, body
    [warning] = body["errors"]
    assert warning["severity"] == "warning" and warning["code"] == "classes_look_like_values"
    assert warning["node_id"] == "train" and warning["details"]["suggest"] == "regression"

    refused = admin_client.post(
        "/api/graphs/validate", json=graph(table, "species", missing_targets="refuse")
    )
    errors = refused.json()["errors"]
    assert refused.json()["ok"] is False and [e["severity"] for e in errors] == ["error"]
