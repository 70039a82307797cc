"""Trained models: the rows the runner registers, their bundle files, exports and training script.

A model row points at a bundle folder (`model.json` + `model.safetensors`, usually a task's
`artifacts/<task_id>`). ONNX and TorchScript files are exported into that folder on first request
and served from there afterwards. torch and the engine are imported inside the functions.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from dragdl.db.models import Model, Sweep, SweepTrial, User
from dragdl.server.services.access import reachable_by
from dragdl.server.settings import Settings

DownloadFormat = Literal["bundle", "onnx", "torchscript", "script"]
DOWNLOAD_FORMATS: tuple[DownloadFormat, ...] = ("bundle", "onnx", "torchscript", "script")
BUNDLE_FILES = ("model.json", "model.safetensors")
EXPORT_FILES = {"onnx": "model.onnx", "torchscript": "model.torchscript.pt"}
"""The names engine.bundle.spec gives the exports (not imported here: that package loads torch)."""

_export_locks: dict[str, threading.Lock] = {}
_export_locks_guard = threading.Lock()


class ModelFilesError(Exception):
    """The model's files are missing, damaged or cannot be converted; the message says which."""

    def __init__(self, message: str, status_code: int = 409) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


def list_models(
    db: Session, user: User, *, task_id: str | None = None, trials: bool = False
) -> tuple[list[Model], int]:
    """The user's models, newest first, and how many sweep-trial models were left out.

    Every trial of a sweep leaves a model; only the one registered as the sweep's best is listed
    unless `trials` (or a `task_id`: that task's model is asked for by name) says otherwise.
    """
    where = [Model.owner_id == user.id]
    if task_id is not None:
        where.append(Model.task_id == task_id)
    rows = list(db.scalars(select(Model).where(*where).order_by(Model.created_at.desc())))
    if trials or task_id is not None:
        return rows, 0
    trial_tasks = (
        select(SweepTrial.task_id)
        .join(Sweep)
        .where(Sweep.owner_id == user.id, SweepTrial.task_id.is_not(None))
    )
    in_trials = set(db.scalars(trial_tasks))
    registered = set(db.scalars(select(Sweep.best_model_id).where(Sweep.owner_id == user.id)))
    kept = [row for row in rows if row.task_id not in in_trials or row.id in registered]
    return kept, len(rows) - len(kept)


def get_model(db: Session, user: User, model_id: str) -> Model | None:
    """The model if the user may reach it (owner or administrator), else None."""
    return db.scalar(select(Model).where(Model.id == model_id, reachable_by(Model.owner_id, user)))


def bundle_folder(settings: Settings, row: Model) -> Path:
    """The model's bundle folder; ModelFilesError when it is gone or lies outside the data dir."""
    data_dir = settings.data_dir.resolve()
    folder = (data_dir / row.path).resolve()
    if not folder.is_relative_to(data_dir):
        raise ModelFilesError(f"model {row.id}: its files are not under the data dir")
    missing = [name for name in BUNDLE_FILES if not (folder / name).is_file()]
    if missing:
        raise ModelFilesError(f"model {row.id}: {', '.join(missing)} missing from its folder", 410)
    return folder


def available_exports(settings: Settings, row: Model) -> list[str]:
    """Export formats already on disk (the others are produced on first download)."""
    folder = settings.data_dir / row.path
    return [fmt for fmt, name in EXPORT_FILES.items() if (folder / name).is_file()]


def delete_model(db: Session, settings: Settings, row: Model) -> None:
    """Remove the row. A task's artifacts folder stays with its task (logs, report, checkpoints);
    a model that belongs to no task has its folder removed with it."""
    folder = (settings.data_dir / row.path).resolve()
    standalone = row.task_id is None and folder.is_relative_to(settings.artifacts_dir.resolve())
    db.delete(row)
    db.commit()
    if standalone:
        shutil.rmtree(folder, ignore_errors=True)


def download_name(row: Model, suffix: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", row.name).strip("-.") or f"model-{row.id}"
    return f"{stem[:80]}{suffix}"


def bundle_zip(settings: Settings, row: Model) -> Path:
    """A temporary zip of model.json + model.safetensors (the caller deletes it after sending)."""
    folder = bundle_folder(settings, row)
    handle, name = tempfile.mkstemp(prefix="dragdl-bundle-", suffix=".zip")
    os.close(handle)
    path = Path(name)
    try:
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for file in BUNDLE_FILES:
                archive.write(folder / file, arcname=file)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path


def _export_lock(model_id: str) -> threading.Lock:
    with _export_locks_guard:
        return _export_locks.setdefault(model_id, threading.Lock())


def export_file(settings: Settings, row: Model, fmt: Literal["onnx", "torchscript"]) -> Path:
    """The ONNX or TorchScript file, exported (and checked against PyTorch) on first request.

    An export older than the weights is made again. Concurrent requests for one model wait for a
    single export.
    """
    folder = bundle_folder(settings, row)
    target = folder / EXPORT_FILES[fmt]
    with _export_lock(row.id):
        weights = (folder / "model.safetensors").stat().st_mtime_ns
        if target.is_file() and target.stat().st_mtime_ns >= weights:
            return target
        from dragdl.engine.bundle import BundleError, ExportError, export_bundle

        try:
            return export_bundle(folder, fmt)
        except ExportError as exc:
            raise ModelFilesError(hide_paths(exc.message, folder), 422) from None
        except BundleError as exc:
            raise ModelFilesError(hide_paths(exc.message, folder)) from None


def manifest(settings: Settings, row: Model) -> dict[str, Any]:
    """model.json as stored: classes, input spec, preprocessing and exports, for clients that run
    the model themselves (the browser runs the ONNX export)."""
    file = bundle_folder(settings, row) / BUNDLE_FILES[0]
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelFilesError(f"model {row.id}: model.json cannot be read ({type(exc).__name__})") from None
    if not isinstance(data, dict) or data.get("format") != "dragdl.bundle":
        raise ModelFilesError(f"model {row.id}: model.json is not a DragDL bundle manifest")
    return data


SCRIPT_REFUSED = "cannot write the training script"


def training_script(db: Session, settings: Settings, row: Model) -> str:
    """The standalone training script of the model's graph; the owner's uploaded datasets are read
    by path."""
    folder = bundle_folder(settings, row)
    from dragdl.engine.bundle import BundleError, read_manifest
    from dragdl.engine.compile.codegen import generate_script
    from dragdl.engine.graph.errors import GraphInvalid
    from dragdl.engine.nodes.uploaded import inline_uploaded
    from dragdl.server.services.data_context import check_graph_policy, data_context_for

    try:
        manifest = read_manifest(folder)
    except BundleError as exc:
        raise ModelFilesError(hide_paths(exc.message, folder)) from None
    owner = db.get(User, row.owner_id)
    assert owner is not None  # the foreign key deletes models with their owner
    from dragdl.server.services.graphs import GraphRejected

    # The graph's problems answered as every graph refusal is (GraphRejected: a 422 listing each
    # problem's code and node), so the web UI words them in the reader's language.
    refused = check_graph_policy(manifest.graph, owner)
    if refused:  # trained under an older policy, or by an administrator since demoted
        raise GraphRejected(SCRIPT_REFUSED, list(refused))
    ctx = data_context_for(db, settings, owner)
    try:
        # The script trains in what the run chose for its "auto" precision and memory format.
        return generate_script(inline_uploaded(manifest.graph, ctx), ctx, fast_path=manifest.trained_with)
    except GraphInvalid as exc:
        raise GraphRejected(SCRIPT_REFUSED, list(exc.errors)) from None
    except NotImplementedError as exc:  # a graph the generator does not write yet (tables, regression)
        raise ModelFilesError(f"cannot write the training script: {exc}", 422) from None


def hide_paths(message: str, folder: Path) -> str:
    """Messages from the engine name server paths; the client knows the model, not the folder."""
    return message.replace(f"{folder}{os.sep}", "").replace(str(folder), "the model folder")
