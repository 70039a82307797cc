"""Sequence datasets on the server: uploads of each layout recognised by the sequence input type,
their description and bounded preview, `dataset.sequence` reading them by id (validated through the
API, trained with run_graph), and hostile files refused with the file and line and nothing left.
The shared hostile corpus (`hostile/corpus.py`) holds the small hostile sequence files; the
10^7-row CSV is built here, once."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session
from tests.engine.data.sequence_samples import series_set, ts_text

from dragdl.db.models import User
from dragdl.server.settings import Settings

from ..graphs import chain
from .hostile.corpus import Part, bitmaps, make_zip, npy
from .test_datasets import created, nothing_left, upload


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """SQLite only: nothing here depends on the database engine."""
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


def two_class_ts(count: int = 12, steps: int | list[int] = 24, features: int = 1, seed: int = 0) -> bytes:
    """Learnable series: class 'up' rises, 'down' falls (with noise)."""
    sizes = [steps] * count if isinstance(steps, int) else steps
    series = series_set(count, features, sizes, seed)
    labels = []
    for index, one in enumerate(series):
        up = index % 2 == 0
        ramp = np.linspace(-2, 2, len(one), dtype=np.float32)[:, None]
        one += ramp if up else -ramp
        labels.append("up" if up else "down")
    return ts_text(series, labels, ["down", "up"]).encode()


def sequence_graph(node: dict[str, Any]) -> dict[str, Any]:
    return chain(
        "Uploaded sequences",
        [
            ("data", node["type"], node["params"]),
            ("std", "op.StandardizeFeatures", {}),
            ("gru", "layer.GRU", {"hidden_size": 8}),
            ("last", "layer.LastStep", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": 1, "batch_size": 4, "device": "cpu"}),
        ],
    )


def test_a_ts_file_uploads_as_a_sequence_set_with_a_preview(
    user_client: TestClient, settings: Settings
) -> None:
    body = created(upload(user_client, [("Ramps.ts", two_class_ts())]))
    assert body["kind"] == "sequence" and body["name"] == "Ramps"
    assert body["node"] == {
        "type": "dataset.sequence",
        "params": {"source": "uploaded", "dataset_id": body["id"]},
    }
    assert [(c["name"], c["count"]) for c in body["classes"]] == [("down", 6), ("up", 6)]
    assert (
        body["count"] == 12 and body["channels"] == 0 and body["size"] is None and body["size_stats"] is None
    )
    assert body["sequence"] == {
        "format": "ts",
        "features": 1,
        "length": {"min": 24, "max": 24, "mean": 24.0},
        "equal_length": True,
        "test_count": None,
        "targets": None,
    }
    stored = settings.datasets_dir / body["id"] / "data"
    assert [p.name for p in stored.iterdir()] == ["Ramps.ts"]
    assert not (settings.datasets_dir / body["id"] / "incoming").exists()

    detail = user_client.get(f"/api/datasets/{body['id']}").json()
    assert [c["samples"] for c in detail["classes"]] == [[], []]  # no thumbnails: series instead
    series = detail["series"]
    assert [(g["name"], g["index"], len(g["samples"])) for g in series["groups"]] == [
        ("down", 0, 3),
        ("up", 1, 3),
    ]
    first = series["groups"][1]["samples"][0]
    assert first["sample"] == 0 and first["length"] == 24
    assert len(first["values"]) == 1 and len(first["values"][0]) == 24
    assert first["values"][0][-1] > first["values"][0][0]  # an 'up' ramp rises
    assert series["features"] == 1 and series["features_shown"] == 1 and series["max_points"] == 200
    stats = series["feature_stats"]
    assert len(stats) == 1 and stats[0]["min"] < stats[0]["mean"] < stats[0]["max"] and stats[0]["std"] > 0
    listed = user_client.get("/api/datasets").json()["data"][0]
    assert "series" not in listed and listed["sequence"]["format"] == "ts"


def test_a_zipped_train_test_pair_of_multivariate_unequal_series(user_client: TestClient) -> None:
    lengths = list(np.random.default_rng(1).integers(10, 40, 16))
    pair = make_zip(
        {
            "Motion/Motion_TRAIN.ts": two_class_ts(16, lengths, features=3),
            "Motion/Motion_TEST.ts": two_class_ts(6, 30, features=3, seed=2),
            "__MACOSX/Motion/._Motion_TRAIN.ts": b"resource fork",
        }
    )
    body = created(upload(user_client, [("motion.zip", pair)]))
    summary = body["sequence"]
    assert body["kind"] == "sequence" and body["count"] == 22
    assert summary["features"] == 3 and summary["equal_length"] is False and summary["test_count"] == 6
    assert summary["length"]["min"] == min(lengths) and summary["length"]["max"] == max(max(lengths), 30)
    detail = user_client.get(f"/api/datasets/{body['id']}").json()
    sample = detail["series"]["groups"][0]["samples"][0]
    assert len(sample["values"]) == 3 and len(sample["values"][0]) == sample["length"]


def test_class_folders_of_csvs_and_npy_arrays_upload_as_sequences(user_client: TestClient) -> None:
    rng = np.random.default_rng(0)
    members = {}
    for label in ("walk", "run", "sit"):
        for i in range(3):
            rows = rng.normal(size=(int(rng.integers(5, 9)), 2))
            members[f"act/{label}/{i}.csv"] = (
                "x,y\n" + "\n".join(f"{a:.3f},{b:.3f}" for a, b in rows)
            ).encode()
    body = created(upload(user_client, [("act.zip", make_zip(members))]))
    assert body["kind"] == "sequence" and body["sequence"]["format"] == "csv_folders"
    assert [(c["name"], c["count"]) for c in body["classes"]] == [("run", 3), ("sit", 3), ("walk", 3)]

    # Loose X.npy with numeric targets: a regression set, its targets described, no classes.
    values = rng.normal(size=(20, 15)).astype(np.float32)
    targets = np.linspace(0.5, 9.5, 20)
    arrays = created(upload(user_client, [("X.npy", npy(values)), ("y.npy", npy(targets))]))
    assert arrays["kind"] == "sequence" and arrays["classes"] == [] and arrays["count"] == 20
    assert arrays["sequence"]["targets"] == {
        "min": 0.5,
        "max": 9.5,
        "mean": 5.0,
        "std": pytest.approx(float(targets.std()), rel=1e-3),
    }
    groups = user_client.get(f"/api/datasets/{arrays['id']}").json()["series"]["groups"]
    plotted = [s["target"] for g in groups for s in g["samples"]]
    assert len(groups) == 10 and plotted == sorted(plotted) and all(g["name"] is None for g in groups)

    # Loose bitmaps are still an image set: the sequence type claims only its own layouts.
    assert created(upload(user_client, [("cat.npy", bitmaps()), ("dog.npy", bitmaps())]))["kind"] == "bitmaps"


def test_the_preview_is_bounded_however_large_the_set(user_client: TestClient) -> None:
    # Its largest: 10 classes shown, 3 series each, 4 features of 200 points (of 1,000 steps).
    rng = np.random.default_rng(0)
    series = [np.round(rng.normal(size=(1000, 12)), 3).astype(np.float32) for _ in range(90)]
    series[0][::111, 0] = np.arange(10) * 100.0  # steps 0, 111, ... 999 of the first series
    classes = [f"c{i:02d}" for i in range(30)]
    text = ts_text(series, [classes[i % 30] for i in range(90)], classes)
    body = created(upload(user_client, [("wide.ts", text.encode())]))
    preview = user_client.get(f"/api/datasets/{body['id']}").json()["series"]
    assert [len(group["samples"]) for group in preview["groups"]] == [3] * 10
    assert preview["features_shown"] == 4 and len(preview["feature_stats"]) == 12
    for group in preview["groups"]:
        for sample in group["samples"]:
            assert len(sample["values"]) == 4 and all(len(v) == 200 for v in sample["values"])
    first = preview["groups"][0]["samples"][0]["values"][0]
    assert (first[0], first[-1]) == (0.0, 900.0)  # the first and the last step are plotted
    assert len(json.dumps(preview)) < 200_000


def test_an_uploaded_sequence_set_validates_and_trains_through_dataset_sequence(
    user_client: TestClient, other_client: TestClient, settings: Settings, db_session: Session, tmp_path: Path
) -> None:
    from dragdl.engine.nodes.registry import get_node_type
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.reporter import ListReporter
    from dragdl.server.services.data_context import data_context_for

    body = created(upload(user_client, [("Ramps.ts", two_class_ts(24))]))
    graph = sequence_graph(body["node"])
    result = user_client.post("/api/graphs/validate", json=graph).json()
    assert result["ok"], result["errors"]
    assert result["shapes"]["data"] == "24 x 1 seq"
    other = other_client.post("/api/graphs/validate", json=graph).json()
    assert [(e["node_id"], e["field"], e["message"]) for e in other["errors"]] == [
        ("data", "dataset_id", f"dataset {body['id']} not found")
    ]
    images = created(upload(user_client, [("cat.npy", bitmaps()), ("dog.npy", bitmaps())]))
    wrong = user_client.post(
        "/api/graphs/validate",
        json=sequence_graph({**body["node"], "params": {"source": "uploaded", "dataset_id": images["id"]}}),
    ).json()
    message = f"dataset {images['id']} is not a sequence set (bitmaps); open it with the node its Datasets"
    assert (wrong["errors"][0]["field"], wrong["errors"][0]["message"]) == (
        "dataset_id",
        f"{message} page entry names",
    )

    user = db_session.get(User, user_client.user["id"])  # type: ignore[attr-defined]
    assert user is not None
    ctx = data_context_for(db_session, settings, user)
    params = get_node_type("dataset.sequence").params_model.model_validate(body["node"]["params"])
    assert len(get_node_type("dataset.sequence").open(params, ctx)) == 24  # type: ignore[attr-defined]
    run = run_graph(graph, ctx, tmp_path / "run", ListReporter())
    assert run.status == "succeeded" and run.epochs_completed == 1
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert 0.0 <= report["test"]["test_accuracy"] <= 1.0


def ten_million_rows() -> bytes:
    """A zip of class folders whose first CSV has 10^7 rows of 4 random digits (about 50 MB, 23 MB
    zipped: a compression ratio far under the zip-bomb limit, so only the row limit can refuse it)."""
    digits = np.random.default_rng(0).integers(48, 58, (10_000_000, 5), dtype=np.uint8)
    digits[:, 4] = ord("\n")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("a/long.csv", digits.tobytes())
        archive.writestr("b/short.csv", b"1\n2\n3\n")
    return out.getvalue()


@pytest.mark.slow
def test_a_ten_million_row_csv_is_refused_at_the_row_limit_without_a_trace(
    user_client: TestClient, settings: Settings, db_session: Session
) -> None:
    settings.datasets_dir.mkdir(parents=True, exist_ok=True)  # made by the first upload anyway
    before = sorted(p.name for p in settings.data_dir.rglob("*"))
    response = upload(user_client, [("rows.zip", ten_million_rows())])
    assert response.status_code == 413, response.text
    assert response.json()["detail"] == (
        "a/long.csv, line 100,002: more than 100,001 lines (time steps and a header), the limit"
    )
    nothing_left(user_client, settings, db_session)
    assert sorted(p.name for p in settings.data_dir.rglob("*")) == before


def test_hostile_sequence_files_write_nothing_outside_their_folder(
    user_client: TestClient, settings: Settings, db_session: Session
) -> None:
    """Besides the corpus (run by test_datasets.py): the data dir holds after a refused upload what it
    held before, and a zip-slip's target does not exist."""
    from .hostile.corpus import hostile_cases

    settings.datasets_dir.mkdir(parents=True, exist_ok=True)  # made by the first upload anyway
    before = sorted(p.name for p in settings.data_dir.rglob("*"))
    for case in hostile_cases():
        if not case.id.startswith(("ts-", "sequence-")):
            continue
        files: list[Part] = case.files
        response = upload(user_client, files)
        assert response.status_code == case.status, (case.id, response.text)
        assert case.message in response.json()["detail"], (case.id, response.text)
        nothing_left(user_client, settings, db_session)
        assert sorted(p.name for p in settings.data_dir.rglob("*")) == before, case.id
        assert not (settings.datasets_dir / "P_TEST.ts").exists()


def test_image_and_table_nodes_name_the_node_that_reads_a_sequence_set(user_client: TestClient) -> None:
    dataset_id = created(upload(user_client, [("Ramps.ts", two_class_ts())]))["id"]
    image = chain(
        "Images",
        [
            ("data", "dataset.uploaded", {"dataset_id": dataset_id}),
            ("flatten", "layer.Flatten", {}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": 1}),
        ],
    )
    table = chain(
        "Table",
        [
            ("data", "dataset.table", {"source": "uploaded", "dataset_id": dataset_id}),
            ("fc", "layer.Linear", {"out_features": "auto"}),
            ("train", "train.Classifier", {"epochs": 1}),
        ],
    )
    expected = f"dataset {dataset_id} is a sequence set: open it with a Sequences node (source 'uploaded')"
    for graph in (image, table):
        errors = user_client.post("/api/graphs/validate", json=graph).json()["errors"]
        assert (errors[0]["node_id"], errors[0]["field"], errors[0]["message"]) == (
            "data",
            "dataset_id",
            expected,
        ), graph["name"]


def recording_csv(rows: int = 600, seed: int = 0) -> bytes:
    """Three sensors recorded a row per step: 'walk' stretches swing slowly, 'run' ones fast."""
    rng = np.random.default_rng(seed)
    lines = ["ax,ay,az,activity"]
    for row in range(rows):
        activity = "walk" if (row // 100) % 2 == 0 else "run"
        speed = 0.2 if activity == "walk" else 1.5
        values = np.sin(speed * row + np.arange(3)) + rng.normal(0, 0.05, 3)
        lines.append(",".join(f"{v:.4f}" for v in values) + f",{activity}")
    return ("\n".join(lines) + "\n").encode()


def upload_recording(client: TestClient, data: bytes, **options: str) -> Any:
    return client.post("/api/datasets", files=[("files", ("walk.csv", data))], data=options)


def test_a_csv_recording_uploaded_with_its_window_is_cut_into_sequences_and_trains(
    user_client: TestClient, settings: Settings, db_session: Session, tmp_path: Path
) -> None:
    """A lone CSV sent with a label column, window and stride is a recording: stored as a sequence
    set of windows, described and previewed as one, and its Datasets page node (which carries the
    label column, window and stride) validates and trains; sent without them it is a table."""
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.reporter import ListReporter
    from dragdl.server.services.data_context import data_context_for

    body = created(
        upload_recording(user_client, recording_csv(), label_column="activity", window="32", stride="16")
    )
    assert (body["kind"], body["count"], [c["name"] for c in body["classes"]]) == (
        "sequence",
        36,
        ["run", "walk"],
    )
    assert body["node"] == {
        "type": "dataset.sequence",
        "params": {
            "label_column": "activity",
            "window": 32,
            "stride": 16,
            "source": "uploaded",
            "dataset_id": body["id"],
        },
    }
    detail = user_client.get(f"/api/datasets/{body['id']}").json()
    assert detail["sequence"]["features"] == 3 and detail["sequence"]["length"]["min"] == 32
    graph = sequence_graph(body["node"])
    result = user_client.post("/api/graphs/validate", json=graph).json()
    assert result["ok"], result["errors"]
    assert result["shapes"]["data"] == "32 x 3 seq"
    assert result["dataset"]["sample"] == "32 steps x 3 features"

    user = db_session.get(User, user_client.user["id"])  # type: ignore[attr-defined]
    assert user is not None
    run = run_graph(graph, data_context_for(db_session, settings, user), tmp_path / "run", ListReporter())
    assert run.status == "succeeded" and run.epochs_completed == 1

    table = created(upload_recording(user_client, recording_csv()))
    assert table["kind"] == "table" and table["count"] == 600


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"window": "32"}, "a recording needs its label column: send label_column with window and stride"),
        (
            {"label_column": "activity", "window": "0"},
            "window ('0') must be a whole number from 1 to 100,000",
        ),
        (
            {"label_column": "activity", "stride": "x"},
            "stride ('x') must be a whole number from 1 to 100,000",
        ),
        (
            {"label_column": "mood", "window": "32"},
            "walk.csv: no column 'mood' (columns: ax, ay, az, activity)",
        ),
        ({"label_column": "activity", "window": "700"}, "walk.csv: 600 rows, fewer than one window of 700"),
    ],
)
def test_a_recordings_unusable_options_are_a_400_naming_them(
    user_client: TestClient, settings: Settings, db_session: Session, options: dict[str, str], message: str
) -> None:
    response = upload_recording(user_client, recording_csv(), **options)
    assert response.status_code == 400, response.text
    assert response.json()["detail"] == message
    nothing_left(user_client, settings, db_session)
