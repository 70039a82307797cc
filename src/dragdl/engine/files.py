"""File helpers every layer of the engine may use (it imports nothing of the engine)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def save_atomic(write: Callable[[Path], None], target: Path) -> None:
    """Call `write(tmp_path)` then rename onto `target`, so readers never see half a file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
