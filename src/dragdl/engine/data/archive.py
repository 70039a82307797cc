"""Safe extraction of user-supplied zip archives.

A dataset zip comes from whoever uploads it, so every member is checked before anything is
written: no absolute paths, no `..`, no symlinks, bounded file count, total size and compression
ratio. Extraction goes to a temporary sibling of the destination that is renamed into place only
when every member has been written, so a rejected archive leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from dragdl.engine.data.base import DatasetError

_CHUNK = 1 << 20
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class ArchiveLimits:
    """Bounds on what one archive may expand to."""

    max_files: int = 200_000
    max_total_bytes: int = 4 * 1024**3
    max_ratio: float = 200.0
    ratio_min_bytes: int = 64 * 1024
    """Members smaller than this skip the ratio check: they cannot be a bomb, and tiny files of
    zeros (padding, empty metadata) legitimately compress far beyond any sane ratio."""


def file_digest(path: Path) -> str:
    """sha256 of a file's content, read in chunks so large archives do not fill memory."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _member_parts(info: zipfile.ZipInfo, field: str | None) -> tuple[str, ...]:
    name = info.filename
    # Archives made on Windows may use backslashes; treat them as separators so that
    # `a\..\..\x` cannot slip past the `..` check.
    normalized = name.replace("\\", "/")
    if normalized.startswith("/") or _DRIVE.match(normalized):
        raise DatasetError(f"zip member {name!r} has an absolute path", field=field)
    if "\x00" in normalized:
        raise DatasetError(f"zip member {name!r} has a NUL byte in its name", field=field)
    parts = tuple(part for part in PurePosixPath(normalized).parts if part not in ("", "."))
    if ".." in parts:
        raise DatasetError(f"zip member {name!r} points outside the archive ('..' in its path)", field=field)
    # Unix zips keep st_mode in the high 16 bits; many writers set only permission bits, so only
    # a present file-type field other than file or folder is suspicious.
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        raise DatasetError(f"zip member {name!r} is a symbolic link, which is not allowed", field=field)
    if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        raise DatasetError(f"zip member {name!r} is not a regular file or folder", field=field)
    return parts


def check_members(
    archive: zipfile.ZipFile, limits: ArchiveLimits, field: str | None = None
) -> list[tuple[zipfile.ZipInfo, tuple[str, ...]]]:
    """Vet every member before extraction; return (member, relative path parts) pairs."""
    members: list[tuple[zipfile.ZipInfo, tuple[str, ...]]] = []
    files = 0
    total = 0
    for info in archive.infolist():
        parts = _member_parts(info, field)
        if not parts:
            continue
        members.append((info, parts))
        if info.is_dir():
            continue
        files += 1
        if files > limits.max_files:
            raise DatasetError(f"zip archive has more than {limits.max_files} files", field=field)
        total += info.file_size
        if total > limits.max_total_bytes:
            raise DatasetError(
                f"zip archive expands to more than {limits.max_total_bytes} bytes "
                f"(limit reached at member {info.filename!r})",
                field=field,
            )
        if info.file_size >= limits.ratio_min_bytes:
            ratio = info.file_size / max(info.compress_size, 1)
            if ratio > limits.max_ratio:
                raise DatasetError(
                    f"zip member {info.filename!r} has a compression ratio of {ratio:.0f} "
                    f"(limit {limits.max_ratio:.0f}); this looks like a zip bomb",
                    field=field,
                )
    return members


def _copy_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, budget: int) -> int:
    """Stream one member to `target`; never trust the sizes declared in the archive header."""
    written = 0
    with archive.open(info) as src, target.open("xb") as dst:
        while chunk := src.read(_CHUNK):
            written += len(chunk)
            if written > info.file_size or written > budget:
                raise DatasetError(f"zip member {info.filename!r} expands beyond its declared size")
            dst.write(chunk)
    return written


def safe_extract(
    zip_path: Path, dest_dir: Path, limits: ArchiveLimits | None = None, field: str | None = None
) -> Path:
    """Extract `zip_path` into `dest_dir` (which must not exist yet) after vetting every member.

    Raises DatasetError naming the offending member. If another process created `dest_dir`
    meanwhile (two extractions of the same content-keyed cache entry), that copy is kept.
    """
    limits = limits or ArchiveLimits()
    if dest_dir.exists():
        raise DatasetError(f"extraction target {dest_dir} already exists", field=field)
    dest_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        archive = zipfile.ZipFile(zip_path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DatasetError(f"{zip_path} is not a readable zip archive: {exc}", field=field) from exc
    tmp = Path(tempfile.mkdtemp(prefix=".extract-", dir=dest_dir.parent))
    try:
        with archive:
            members = check_members(archive, limits, field)
            budget = limits.max_total_bytes
            root = tmp.resolve()
            for info, parts in members:
                target = tmp.joinpath(*parts)
                # Belt and braces after the name checks: the final path must stay inside tmp.
                if not target.resolve().is_relative_to(root):
                    raise DatasetError(
                        f"zip member {info.filename!r} points outside the archive", field=field
                    )
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                budget -= _copy_member(archive, info, target, budget)
        try:
            os.rename(tmp, dest_dir)
        except OSError:
            if not dest_dir.is_dir():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except DatasetError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if exc.field is None:
            exc.field = field
        raise
    except (zipfile.BadZipFile, zlib.error, RuntimeError, NotImplementedError, OSError, EOFError) as exc:
        # RuntimeError: encrypted member; NotImplementedError: unsupported compression method.
        shutil.rmtree(tmp, ignore_errors=True)
        raise DatasetError(f"cannot extract {zip_path}: {exc}", field=field) from exc
    return dest_dir
