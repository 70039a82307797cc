"""A bundle zip (the web UI's Bundle download) opened by the CLI as a bundle folder.

The zip may come from anywhere, so it is unpacked as a dataset zip is (engine.data.archive): no
absolute or `..` member names, no links, a bounded number of files and bytes, into a temporary
folder removed when the command ends.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import zipfile
from pathlib import Path

from dragdl.cli_common import EXIT_USAGE, fail

MAX_BUNDLE_FILES = 16
MAX_BUNDLE_BYTES = 4 * 1024**3
"""Larger than any bundle's weights DragDL trains (a ResNet-50 is about 100 MB)."""


def is_bundle_zip(path: Path) -> bool:
    return path.is_file() and zipfile.is_zipfile(path)


def unpacked_bundle(path: Path) -> Path:
    """The folder holding the zip's model.json (at its top, or in its one folder), unpacked into a
    temporary folder; a zip that is unsafe or holds no bundle ends the command naming the file."""
    from dragdl.engine.bundle.spec import MANIFEST_NAME
    from dragdl.engine.data.archive import ArchiveLimits, safe_extract
    from dragdl.engine.data.base import DatasetError

    scratch = Path(tempfile.mkdtemp(prefix="dragdl-bundle-"))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    limits = ArchiveLimits(max_files=MAX_BUNDLE_FILES, max_total_bytes=MAX_BUNDLE_BYTES)
    try:
        folder = safe_extract(path, scratch / "bundle", limits)
    except DatasetError as exc:
        fail(f"{path}: not a usable bundle zip ({exc.message})", EXIT_USAGE)
    if (folder / MANIFEST_NAME).is_file():
        return folder
    inner = [p for p in folder.iterdir() if p.is_dir()]
    if len(inner) == 1 and (inner[0] / MANIFEST_NAME).is_file():
        return inner[0]
    fail(
        f"{path}: no {MANIFEST_NAME} in this zip (a bundle zip holds model.json and model.safetensors)",
        EXIT_USAGE,
    )
