"""Uploaded datasets: check an upload, store it under `datasets/<id>/`, describe it, preview it.

Layout of one dataset: `datasets/<id>/data/` holds what the engine reader takes (class folders,
`labels.csv` with its images, or `<class>.npy` files) and `datasets/<id>/thumbs/` caches preview PNGs.
An upload is checked completely before its row is written; whatever goes wrong, the caller removes
`datasets/<id>/`, so a refused upload leaves neither files nor a row behind.

The engine (and with it torch) is imported inside the functions: the server starts without it.
Reading and describing what was uploaded (a table's parse, a sequence set's or an image set's
decoding) runs in the server's CPU pool (`services/cpu_pool.py`), never in the server's process.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from dragdl.db.models import Dataset, Task, TaskStatus, User
from dragdl.server.services.access import reachable_by
from dragdl.server.services.cpu_pool import CpuPool
from dragdl.server.services.input_uploads import (
    SEQUENCE_KIND,
    SEQUENCE_NODE,
    TABLE_KIND,
    Claimed,
    claim,
    claim_loose,
    describe_claimed,
)
from dragdl.server.services.limits import check_dataset_room, lock_user
from dragdl.server.services.uploads import ReceivedFile, UploadError, tree_size
from dragdl.server.settings import Settings

THUMBNAIL_SIDE = 128
MAX_UPLOAD_FILES = 1000
"""Files in one request (a zip, or one .npy per class)."""
MAX_ARCHIVE_FILES = 200_000
MAX_ARCHIVE_BYTES = 8 * 1024**3
MAX_ARCHIVE_RATIO = 200.0
MAX_IMAGE_PIXELS = 40_000_000
"""The engine's DEFAULT_PIXEL_LIMIT, repeated here so that reading it needs no torch import."""
TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".xlsx")
"""engine.data.tables.TABLE_SUFFIXES and an Excel workbook (not imported: that module loads torch)."""
UPLOADED_NODE = "dataset.uploaded"
"""The node type that reads an uploaded image dataset by its id."""
TABLE_NODE = "dataset.table"
"""The node type that reads an uploaded table (source "uploaded"), with the column to predict."""


class DatasetInUse(Exception):
    def __init__(self, task_ids: list[str]) -> None:
        super().__init__(f"used by running or queued task(s) {', '.join(task_ids)}")
        self.task_ids = task_ids


@dataclass(frozen=True)
class Ingested:
    kind: str
    reader_path: Path
    info: dict[str, Any]
    size_bytes: int


def dataset_dir(settings: Settings, dataset_id: str) -> Path:
    return settings.datasets_dir / dataset_id


def data_root(settings: Settings, dataset_id: str) -> Path:
    return dataset_dir(settings, dataset_id) / "data"


# --- queries ------------------------------------------------------------------------------------


def list_datasets(db: Session, user: User) -> list[Dataset]:
    return list(
        db.scalars(select(Dataset).where(Dataset.owner_id == user.id).order_by(Dataset.created_at.desc()))
    )


def get_dataset(db: Session, user: User, dataset_id: str) -> Dataset | None:
    """The dataset if the user may reach it (owner or administrator), else None: ids of others are
    not revealed."""
    return db.scalar(select(Dataset).where(Dataset.id == dataset_id, reachable_by(Dataset.owner_id, user)))


def dataset_node(row: Dataset) -> dict[str, Any]:
    """The graph node that reads the dataset, ready to drop on the canvas: a table's predicts its
    last column until the user picks another target."""
    if row.kind == TABLE_KIND:
        return {"type": TABLE_NODE, "params": {"source": "uploaded", "dataset_id": row.id}}
    if row.kind == SEQUENCE_KIND:
        # What the description says the node needs beside the id (a recording's label column,
        # window and stride: InputType.describe_upload's node_params).
        extra = row.info.get("node_params") if isinstance(row.info, dict) else None
        params = {**(extra if isinstance(extra, dict) else {}), "source": "uploaded", "dataset_id": row.id}
        return {"type": SEQUENCE_NODE, "params": params}
    return {"type": UPLOADED_NODE, "params": {"dataset_id": row.id}}


def tasks_using(db: Session, row: Dataset) -> list[str]:
    """Ids of the owner's QUEUED or RUNNING tasks whose graph reads this dataset (only the owner's
    graphs can: the others do not see it). Any dataset node that names it by `dataset_id` reads it."""
    tasks = db.execute(
        select(Task.id, Task.graph_snapshot).where(
            Task.owner_id == row.owner_id, Task.status.in_((TaskStatus.QUEUED, TaskStatus.RUNNING))
        )
    )
    using = []
    for task_id, graph in tasks:
        nodes = graph.get("nodes", []) if isinstance(graph, dict) else []
        if any(
            isinstance(node, dict)
            and str(node.get("type", "")).startswith("dataset.")
            and isinstance(node.get("params"), dict)
            and node["params"].get("dataset_id") == row.id
            for node in nodes
        ):
            using.append(task_id)
    return using


def delete_dataset(db: Session, settings: Settings, row: Dataset) -> None:
    """Remove the row, then the files; refuse (DatasetInUse) while a queued or running task reads it."""
    using = tasks_using(db, row)
    if using:
        raise DatasetInUse(using)
    db.delete(row)
    db.commit()
    shutil.rmtree(dataset_dir(settings, row.id), ignore_errors=True)


def create_dataset(
    db: Session,
    settings: Settings,
    user: User,
    dataset_id: str,
    files: list[ReceivedFile],
    name: str | None,
    pool: CpuPool,
    options: Mapping[str, str] | None = None,
) -> Dataset:
    """Check and store an upload whose files were received into `datasets/<id>/incoming/`, read in
    `pool` (PoolBusy when it has no room for one more).

    The dataset must fit in the user's dataset quota as unpacked; the user's row stays locked from
    that check to the commit, so concurrent uploads cannot both take the last room.
    """
    ingested = ingest(settings, dataset_id, files, pool, options)
    lock_user(db, user)
    try:
        check_dataset_room(db, settings, user, ingested.size_bytes)
    except UploadError:
        db.rollback()
        raise
    row = Dataset(
        id=dataset_id,
        owner_id=user.id,
        name=(name or default_name(files)).strip()[:200] or dataset_id,
        kind=ingested.kind,
        path=ingested.reader_path.relative_to(settings.data_dir).as_posix(),
        info=ingested.info,
        size_bytes=ingested.size_bytes,
    )
    db.add(row)
    db.commit()
    return row


def default_name(files: list[ReceivedFile]) -> str:
    if len(files) == 1:
        return Path(files[0].filename).stem
    return ", ".join(Path(f.filename).stem for f in files[:5]) + (" ..." if len(files) > 5 else "")


# --- ingestion ----------------------------------------------------------------------------------


def ingest(
    settings: Settings,
    dataset_id: str,
    files: list[ReceivedFile],
    pool: CpuPool,
    options: Mapping[str, str] | None = None,
) -> Ingested:
    """Put the upload in place under `datasets/<id>/data` and describe it, reading it in `pool`;
    UploadError if unusable. `options`, the form's other fields, may make an input type claim files
    that are otherwise another's (a lone CSV with a label column and window is a recording)."""
    from dragdl.engine.data.base import DatasetError

    directory = dataset_dir(settings, dataset_id)
    root = data_root(settings, dataset_id)
    if not files:
        raise UploadError("no file received: send a .zip or .npy files in the 'files' field")
    names = {Path(f.filename).suffix.lower() for f in files}
    if not any(_is_zip(f) for f in files):
        claimed = claim_loose(files, directory, root, options)
        if claimed is not None:
            return _ingest_claimed(claimed, directory, root, files, pool)
    tables = [f.filename for f in files if Path(f.filename).suffix.lower() in TABLE_SUFFIXES]
    if tables:
        listed = ", ".join(tables[:5]) + (" ..." if len(tables) > 5 else "")
        raise UploadError(
            f"a table is uploaded on its own, one file per dataset ({len(files)} files were sent with "
            f"{listed}): upload each table as its own dataset"
        )
    try:
        if names == {".npy"}:
            _place_bitmaps(files, root)
        elif len(files) == 1 and _is_zip(files[0]):
            _extract(files[0], directory, root)
        elif any(_is_zip(f) for f in files):
            raise UploadError("send one .zip archive per upload, without other files")
        else:
            odd = next(f.filename for f in files if Path(f.filename).suffix.lower() != ".npy")
            raise UploadError(
                f"{odd!r} is neither a .zip archive, a .npy bitmap file nor a table (.csv, .tsv, .parquet, "
                ".xlsx) (upload a zip of class folders, a zip with a CSV and its images, one .npy per class, "
                "or one table file)",
                status_code=415,
            )
        shutil.rmtree(directory / "incoming", ignore_errors=True)
        claimed = claim(root, options)
    except DatasetError as exc:
        raise UploadError(_relative(exc.message, directory, root, files)) from None
    if claimed is None:  # a type taking what the others leave (images) claims any folder
        raise UploadError("no input type reads this upload", status_code=415)
    return _ingest_claimed(claimed, directory, root, files, pool)


_STATUS = {"too_large": 413, "file_type": 415}
"""The answer to a description's error, by its code: a limit exceeded, or not the type's file."""


def _ingest_claimed(
    claimed: Claimed, directory: Path, root: Path, files: list[ReceivedFile], pool: CpuPool
) -> Ingested:
    """An upload an input type recognised, described by that type; a limit it exceeds is a 413."""
    from dragdl.engine.data.base import DatasetError

    try:
        info = pool.run(describe_claimed, claimed, root)
    except DatasetError as exc:
        status = _STATUS.get(exc.code, 400)
        message = exc.message
        for stand_in, name in claimed.renamed.items():
            message = message.replace(stand_in, name)
        raise UploadError(_relative(message, directory, root, files), status) from None
    if info.get("file") in claimed.renamed:  # the uploader's name for a file offered as a stand-in
        info["file"] = claimed.renamed[info["file"]]
    # The file the reader takes, when not the folder (an image listing's CSV).
    reader_file = info.pop("reader_file", None)
    reader_path = root / reader_file if isinstance(reader_file, str) else root
    return Ingested(kind=claimed.kind, reader_path=reader_path, info=info, size_bytes=tree_size(root))


def _relative(message: str, directory: Path, root: Path, files: list[ReceivedFile]) -> str:
    """Engine messages name absolute server paths; the uploader knows the names inside the upload."""
    for received in files:
        message = message.replace(str(received.path), repr(received.filename).strip("'"))
    message = message.replace(f"{root}{os.sep}", "").replace(str(root), "the upload")
    return message.replace(f"{directory}{os.sep}", "").replace(str(directory), "the upload")


def _is_zip(received: ReceivedFile) -> bool:
    import zipfile

    name = received.filename.lower()
    if name.endswith(".xlsx"):  # a zip too, but a table: the table input type reads it
        return False
    return name.endswith(".zip") or zipfile.is_zipfile(received.path)


def _place_bitmaps(files: list[ReceivedFile], root: Path) -> None:
    from dragdl.engine.data.base import DatasetError

    root.mkdir(parents=True)
    for received in files:
        stem = Path(received.filename).stem
        if not stem or stem.startswith(".") or len(stem) > 100 or not stem.isprintable():
            raise DatasetError(
                f"{received.filename!r} is not a usable class name (the file name is the class)"
            )
        target = root / f"{stem}.npy"
        if target.exists():
            raise DatasetError(f"two files are named {received.filename!r}: each class needs its own file")
        os.replace(received.path, target)


def _extract(received: ReceivedFile, directory: Path, root: Path) -> None:
    from dragdl.engine.data.archive import ArchiveLimits, safe_extract

    limits = ArchiveLimits(
        max_files=MAX_ARCHIVE_FILES, max_total_bytes=MAX_ARCHIVE_BYTES, max_ratio=MAX_ARCHIVE_RATIO
    )
    extracted = safe_extract(received.path, directory / "extracted", limits)
    received.path.unlink()
    visible = [entry for entry in extracted.iterdir() if not _hidden(entry.name)]
    # Zipping a folder gives one top-level folder; its content is the dataset. A lone folder
    # holding only files is the images of a single class, which the folder reader reports.
    top = visible[0] if len(visible) == 1 and visible[0].is_dir() and not visible[0].is_symlink() else None
    if top is not None and any(entry.is_dir() or _data_file(entry) for entry in top.iterdir()):
        os.replace(top, root)
        shutil.rmtree(extracted)
    else:
        os.replace(extracted, root)


def _hidden(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"


def _data_file(path: Path) -> bool:
    return path.suffix.lower() in (".csv", ".npy", ".ts") and not _hidden(path.name)


# --- thumbnails ---------------------------------------------------------------------------------


def thumbnail(settings: Settings, row: Dataset, class_index: int, sample: int) -> bytes | None:
    """A PNG of at most THUMBNAIL_SIDE px for one sample of a class; None when there is no such sample."""
    classes: list[list[str]] = row.info.get("samples", [])
    if not 0 <= class_index < len(classes) or not 0 <= sample < len(classes[class_index]):
        return None
    cache = dataset_dir(settings, row.id) / "thumbs" / f"{class_index}-{sample}.png"
    if cache.is_file():
        return cache.read_bytes()
    ref = classes[class_index][sample]
    root = data_root(settings, row.id)
    png = _bitmap_png(root, row.info["classes"][class_index], int(ref)) if row.kind == "bitmaps" else None
    if png is None and row.kind != "bitmaps":
        png = _image_png(root, ref)
    if png is None:
        return None
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
    tmp.write_bytes(png)
    os.replace(tmp, cache)
    return png


def _image_png(root: Path, ref: str) -> bytes | None:
    from PIL import Image

    path = (root / ref).resolve()
    if not path.is_relative_to(root.resolve()) or not path.is_file():
        return None
    with Image.open(path) as img:
        if img.size[0] * img.size[1] > MAX_IMAGE_PIXELS:
            return None
        img.draft("RGB", (THUMBNAIL_SIDE, THUMBNAIL_SIDE))  # JPEG: decode at a reduced scale
        picture = img.convert("RGBA" if "A" in img.mode or "transparency" in img.info else "RGB")
    picture.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE))
    return _png(picture)


def _bitmap_png(root: Path, class_name: str, row_index: int) -> bytes | None:
    import math

    import numpy as np
    from PIL import Image

    path = root / f"{class_name}.npy"
    if not path.is_file():
        return None
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    if not 0 <= row_index < len(array):
        return None
    side = math.isqrt(array.shape[1])
    picture = Image.fromarray(np.array(array[row_index], dtype=np.uint8).reshape(side, side), mode="L")
    picture.thumbnail((THUMBNAIL_SIDE, THUMBNAIL_SIDE))
    return _png(picture)


def _png(picture: Any) -> bytes:
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=True)
    return out.getvalue()
