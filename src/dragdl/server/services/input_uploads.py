"""Uploads that an input type claims: the engine's input types are asked, in their registered order,
whether received data is theirs (`InputType.detect_upload`), and the one that claims it describes
it (`InputType.describe_upload`). Images take, last, any unpacked upload no other type claims; a
table, one file sent on its own.

Loose files (not a zip) are offered as a folder of hard links under their own names, so asking
costs no copy and leaves the received files as they were for the image path when no type claims
them. The engine is imported inside the functions: the server starts without torch.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dragdl.server.services.uploads import ReceivedFile

if TYPE_CHECKING:
    from dragdl.engine.inputs.base import InputType

TABLE_KIND = "table"
"""engine.inputs.table_upload.TABLE_KIND (not imported: that module loads torch)."""
SEQUENCE_KIND = "sequence"
"""engine.inputs.sequence_upload.SEQUENCE_KIND (not imported: that module loads torch)."""
SEQUENCE_NODE = "dataset.sequence"
"""The node type that reads an uploaded sequence set (source "uploaded")."""
_IGNORED = ("__MACOSX",)


@dataclass(frozen=True)
class Claimed:
    """An upload an input type recognised: its stored kind and the type that reads and describes it."""

    kind: str
    input_type: InputType
    options: Mapping[str, str] = field(default_factory=dict)
    """The upload form's other fields, as sent (a recording's label_column, window and stride)."""
    renamed: Mapping[str, str] = field(default_factory=dict)
    """Files offered under a stand-in name, by that name: the uploader's name (not usable as a file)."""


def claim(root: Path, options: Mapping[str, str] | None = None, loose: bool = False) -> Claimed | None:
    """The first registered input type that recognises `root` as its own, with the kind it gives;
    types that take what the others leave (`InputType.upload_fallback`) are asked last, and not at
    all for `loose` files (what is not an archive: the upload's own checks name what is wrong);
    types that take only loose files (`upload_loose_only`: a table) are asked only for those.
    `options` are the upload form's other fields, as sent."""
    from dragdl.engine.inputs.registry import all_input_types

    given = dict(options or {})
    types = [t for t in all_input_types() if loose or not t.upload_loose_only]
    last = [] if loose else [t for t in types if t.upload_fallback]
    ordered = [t for t in types if not t.upload_fallback] + last
    for input_type in ordered:
        kind = input_type.detect_upload(root, given)
        if kind is not None:
            return Claimed(kind, input_type, given)
    return None


def claim_loose(
    files: list[ReceivedFile], directory: Path, root: Path, options: Mapping[str, str] | None = None
) -> Claimed | None:
    """Offer loose files (no archive) to the input types under their own names; the one that claims
    them gets them as `root`. None, with nothing changed, when no type does or a name is unusable
    as a file name (the image path then reports it), except for a file sent alone, which is offered
    as `upload<suffix>` (a table's name is not its data; `Claimed.renamed` gives its own back)."""
    names = [received.filename for received in files]
    renamed: dict[str, str] = {}
    if len(files) == 1 and not _usable(names[0]):
        suffix = Path(names[0]).suffix.lower()
        stand_in = f"upload{suffix if suffix[1:].isalnum() and len(suffix) <= 16 else ''}"
        renamed, names = {stand_in: names[0]}, [stand_in]
    if len(set(names)) != len(names) or not all(_usable(name) for name in names):
        return None
    offered = directory / "offered"
    offered.mkdir()
    for received, name in zip(files, names, strict=True):
        try:
            os.link(received.path, offered / name)
        except OSError:  # a file system without hard links: a copy, as good if slower
            shutil.copyfile(received.path, offered / name)
    claimed = claim(offered, options, loose=True)
    if claimed is None:
        shutil.rmtree(offered)
        return None
    os.replace(offered, root)
    shutil.rmtree(directory / "incoming", ignore_errors=True)
    return replace(claimed, renamed=renamed)


def describe_claimed(claimed: Claimed, root: Path) -> dict[str, Any]:
    """The claiming type's description of `root` (what a zip carries beside the data, such as
    macOS's `__MACOSX` folder, is removed first: readers that search folders would find it)."""
    for name in _IGNORED:
        shutil.rmtree(root / name, ignore_errors=True)
    return claimed.input_type.describe_upload(claimed.kind, root, claimed.options)


def _usable(name: str) -> bool:
    return (
        bool(name)
        and not name.startswith(".")
        and len(name) <= 200
        and name.isprintable()
        and "/" not in name
        and "\\" not in name
    )
