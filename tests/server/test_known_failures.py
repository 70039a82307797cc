"""Known causes answer a 4xx/5xx without a traceback (issue 23, findings 12 and 13): a database
outage 503 with Retry-After (and the health check says so), a full data disk 507, a JSON number
of 400 digits and a 30 MB cell a clear error quoting a bounded prefix, and a prediction file too
wide is refused from its bytes before it is parsed."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from dragdl.db.session import make_engine, make_session_factory
from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.tables import rows_to_table
from dragdl.engine.payloads import ColumnInfo
from dragdl.server.services.prediction import PredictionInputError
from dragdl.server.services.table_rows import read_csv_rows
from dragdl.server.settings import Settings


def unreachable(url: str, tmp_path: Path) -> str:
    """The same kind of database, where none answers: a refused port, a file that cannot open."""
    if make_url(url).get_backend_name() == "postgresql":
        return make_url(url).set(port=1).render_as_string(hide_password=False)
    return f"sqlite:///{tmp_path / 'gone' / 'dragdl.db'}"


def test_a_database_outage_answers_503_and_the_health_check_says_so(
    user_client: TestClient, app: FastAPI, db_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert user_client.get("/api/health").json() == {
        "status": "ok",
        "version": user_client.get("/api/health").json()["version"],
        "database": "ok",
    }
    working = app.state.sessions
    outage = make_engine(unreachable(db_url, tmp_path))
    app.state.sessions = make_session_factory(outage)
    try:
        for response in (user_client.get("/api/graphs"), user_client.post("/api/graphs", json={"name": "g"})):
            assert response.status_code == 503, response.text
            assert response.headers["Retry-After"] == "5"
            assert "database is unavailable" in response.json()["detail"]
        health = user_client.get("/api/health")
        assert health.status_code == 503 and health.json()["database"] == "unavailable"
    finally:
        app.state.sessions = working
        outage.dispose()
    assert user_client.get("/api/health").status_code == 200
    assert "Traceback" not in caplog.text


@pytest.fixture
def full_disk(user_client: TestClient, settings: Settings) -> Iterator[Path]:
    """A 1 MB tmpfs where uploads are written (`datasets/` of the data dir; needs root: mount)."""
    folder = settings.data_dir / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.mark.usefixtures("full_disk")
def test_an_upload_on_a_full_disk_answers_507(user_client: TestClient) -> None:
    data = b"x,y\n" + b"1,2\n" * 400_000  # 1.6 MB: more than the disk holds
    response = user_client.post("/api/datasets", files=[("files", ("big.csv", data))])
    assert response.status_code == 507, response.text
    assert "disk is full" in response.json()["detail"]
    assert user_client.get("/api/datasets").json()["count"] == 0
    small = user_client.post("/api/datasets", files=[("files", ("small.csv", b"x,y\n1,2\n3,4\n"))])
    assert small.status_code == 201, small.text  # the refused upload left nothing behind


SCHEMA = [ColumnInfo(name="x", kind="number"), ColumnInfo(name="c", kind="category", categories=("a", "b"))]


def test_a_json_number_of_400_digits_is_not_a_number_naming_row_and_column() -> None:
    with pytest.raises(DatasetError) as raised:
        rows_to_table([{"x": 1.0, "c": "a"}, {"x": 10**400, "c": "a"}], SCHEMA)
    assert raised.value.message.startswith("row 2, column 'x': '1000")
    assert "(401 characters) is not a number" in raised.value.message


def test_an_error_about_a_30_mb_cell_quotes_a_bounded_prefix() -> None:
    with pytest.raises(DatasetError) as raised:
        rows_to_table([{"x": 1.0, "c": "z" * 30_000_000}], SCHEMA)
    assert "(30000000 characters) is not one of the values seen in training" in raised.value.message
    assert len(raised.value.message) < 300


def test_a_prediction_file_too_wide_is_refused_before_it_is_parsed() -> None:
    columns = 200_000
    line = ",".join("0" for _ in range(columns)).encode() + b"\n"
    data = ",".join(f"c{i}" for i in range(columns)).encode() + b"\n" + line * 25
    started = time.perf_counter()
    with pytest.raises(PredictionInputError) as raised:
        read_csv_rows(data, "wide.csv", ["c0"])
    assert time.perf_counter() - started < 1.0
    assert raised.value.message.startswith("wide.csv: 200000 columns is above the limit of 10000")
    tall = b"c0,c1\n" + b"1,2\n" * 1_500_000
    with pytest.raises(PredictionInputError) as raised:
        read_csv_rows(tall, "tall.csv", ["c0"])
    assert "is above the limit of 2000000 cells" in raised.value.message


def test_a_nul_character_in_a_name_is_a_400_on_every_database(user_client: TestClient) -> None:
    """PostgreSQL cannot store NUL in text (SQLite can): a 400 naming the character, never a 500."""
    empty = {"version": 1, "name": "g", "nodes": [], "edges": []}
    saved = user_client.post("/api/graphs", json={"name": "g\x00h", "graph": empty})
    if saved.status_code == 201:  # SQLite stores it; the graph is there, as sent
        assert user_client.get(f"/api/graphs/{saved.json()['id']}").json()["name"] == "g\x00h"
    else:
        assert saved.status_code == 400, saved.text
        assert "NUL character" in saved.json()["detail"]
    assert user_client.post("/api/graphs", json={"name": "plain", "graph": empty}).status_code == 201
