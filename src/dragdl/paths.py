"""Where DragDL keeps its data: `~/.dragdl` unless `DRAGDL_DATA_DIR` or `--data-dir` says otherwise."""

from __future__ import annotations

import os
from pathlib import Path


def default_data_dir() -> Path:
    configured = os.environ.get("DRAGDL_DATA_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".dragdl"
