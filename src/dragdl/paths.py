"""Where DragDL keeps its data: `~/.dragdl` unless `DRAGDL_DATA_DIR` or `--data-dir` says otherwise."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any


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


# An absolute or home-relative path: not the tail of a URL or of a relative path, nor a division in a
# formula ("x/255"), and ending before quotes, brackets and separators.
_SERVER_PATH = re.compile(r"(?<![\w.:/~\\)\]-])~?/[\w.~-][^\s'\"`,;()<>\[\]{}]*")
_TRAILING = ".:"
"""Sentence punctuation after a path ("Looked in: /a/b.pth.") is not part of it."""


def hide_server_paths(text: str, data_dir: Path) -> str:
    """`text` as a user who is not an administrator may see it: paths inside the data dir relative
    to it (`datasets/<id>/data/cat/1.png`, `cache/weights`), any other server path replaced by
    "a server file". Engine messages name absolute paths (caches, other users' files, the layout of
    the machine); what the user may act on is inside their data."""
    roots = [data_dir, data_dir.resolve()]

    def rewrite(match: re.Match[str]) -> str:
        raw = match.group(0)
        stripped = raw.rstrip(_TRAILING)
        trail = raw[len(stripped) :]
        path = Path(stripped).expanduser()
        for root in roots:
            if path.is_relative_to(root):
                inside = path.relative_to(root).as_posix()
                return ("the data folder" if inside == "." else inside) + trail
        return "a server file" + trail

    return _SERVER_PATH.sub(rewrite, text)


def hide_in(value: Any, data_dir: Path) -> Any:
    """`hide_server_paths` on every string inside `value` (JSON-like: dicts, lists)."""
    if isinstance(value, str):
        return hide_server_paths(value, data_dir)
    if isinstance(value, dict):
        return {key: hide_in(item, data_dir) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [hide_in(item, data_dir) for item in value]
    return value
