"""Where DragDL keeps its data: `~/.dragdl` unless `DRAGDL_DATA_DIR` or `--data-dir` says otherwise."""

from __future__ import annotations

import os
from pathlib import Path


def default_data_dir() -> Path:
    configured = os.environ.get("DRAGDL_DATA_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".dragdl"


PRIVATE_UMASK = 0o077
"""What `dragdl serve` runs under: the files it and its Ray workers create are the owner's alone."""


def make_private_dir(path: Path) -> Path:
    """Create `path` readable by its owner only, and tighten it when it already exists (older
    versions created it 0755): the data dir holds the database, every user's data and their models."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path
