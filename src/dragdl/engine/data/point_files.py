"""Point cloud files read with numpy alone, within `PointLimits`: `.npy`, `.xyz`/`.pts`/`.txt` text,
`.off` meshes (their vertices) and `.ply` files, ASCII or binary (their vertex element).

Each reader takes the file's bytes and its name, checks the counts its header declares against the
limits before allocating, and raises DatasetError naming the file (and the line) of what it cannot
use: a `.ply` declaring 10^9 vertices is refused from its header, a binary `.ply` shorter than its
header says and a truncated `.off` are named as such, and `.npy` files are read with
`allow_pickle=False`, so nothing is ever unpickled.

Each returns float32 (N, C) with x, y, z first (an `.npy` may hold (K, N, C), several clouds).
"""

from __future__ import annotations

import io
import re

import numpy as np

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.points import XYZ, PointLimits

TEXT_SUFFIXES = (".xyz", ".pts", ".txt")
_SPLIT = re.compile(rb"[\s,;]+")
_PLY_TYPES = {
    "char": "i1",
    "int8": "i1",
    "uchar": "u1",
    "uint8": "u1",
    "short": "i2",
    "int16": "i2",
    "ushort": "u2",
    "uint16": "u2",
    "int": "i4",
    "int32": "i4",
    "uint": "u4",
    "uint32": "u4",
    "float": "f4",
    "float32": "f4",
    "double": "f8",
    "float64": "f8",
}
_PLY_HEADER_LINES = 200


def _bad(name: str, message: str, line: int | None = None) -> DatasetError:
    where = f"{name}, line {line}" if line is not None else name
    return DatasetError(f"{where}: {message}", code="bad_file")


def _finite(name: str, values: np.ndarray) -> np.ndarray:
    if not np.isfinite(values).all():
        raise _bad(name, "holds NaN or infinite coordinates")
    return values.astype(np.float32, copy=False)


def read_npy(name: str, data: bytes, limits: PointLimits) -> np.ndarray:
    """(N, C) or (K, N, C) numbers; an object array is refused unread (it would need unpickling)."""
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as exc:
        if "pickle" in str(exc):
            raise _bad(name, "holds pickled objects, which are never loaded; save plain numbers") from None
        raise _bad(name, f"not a readable .npy array ({exc})") from None
    except (OSError, EOFError) as exc:
        raise _bad(name, f"not a readable .npy array ({exc})") from None
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "iuf" or array.ndim not in (2, 3):
        raise _bad(name, "must hold numbers shaped (N, C) or (K, N, C): N points of C >= 3 channels")
    limits.check(name, "points", int(np.prod(array.shape[:-1])), limits.max_points)
    return _finite(name, array)


def _lines(name: str, data: bytes, limits: PointLimits) -> list[bytes]:
    lines = data.splitlines()
    limits.check(name, "lines", len(lines), limits.max_points + _PLY_HEADER_LINES)
    return lines


def _row(name: str, text: bytes, number: int) -> list[float]:
    try:
        return [float(value) for value in _SPLIT.split(text.strip()) if value]
    except ValueError:
        raise _bad(name, f"{text[:40].decode(errors='replace')!r} is not a row of numbers", number) from None


def read_text(name: str, data: bytes, limits: PointLimits) -> np.ndarray:
    """One point a line, its numbers separated by spaces, commas or semicolons; blank lines and `#`
    comments skipped, and a first line holding only the count of points (some .pts files)."""
    rows: list[list[float]] = []
    first: int | None = None
    for number, text in enumerate(_lines(name, data, limits), 1):
        if not text.strip() or text.lstrip().startswith(b"#"):
            continue
        row = _row(name, text, number)
        if not rows and first is None and len(row) == 1:
            first = number
            continue
        if len(row) < XYZ or (rows and len(row) != len(rows[0])):
            width = len(rows[0]) if rows else "3 or more"
            raise _bad(name, f"{len(row)} numbers, but each point needs {width}", number)
        rows.append(row)
    if not rows:
        raise _bad(name, "holds no points")
    return _finite(name, np.asarray(rows, dtype=np.float64))


def read_off(name: str, data: bytes, limits: PointLimits) -> np.ndarray:
    """An OFF mesh's vertices, (V, 3). The header is `OFF` then `V F E` (on the same line or the
    next, as some ModelNet files have it); faces are not read."""
    lines = [(n, t.strip()) for n, t in enumerate(_lines(name, data, limits), 1)]
    lines = [(n, t) for n, t in lines if t and not t.startswith(b"#")]
    if not lines or not lines[0][1].startswith(b"OFF"):
        raise _bad(name, "an .off file starts with OFF", 1)
    number, head = lines[0]
    rest = head[3:].strip()
    position = 1
    if not rest:
        if len(lines) < 2:
            raise _bad(name, "ends before the counts of vertices and faces", number)
        number, rest = lines[1]
        position = 2
    counts = _row(name, rest, number)
    if len(counts) < 2 or any(c < 0 or c != int(c) for c in counts):
        raise _bad(name, "the counts of vertices and faces must be whole numbers", number)
    vertices = int(counts[0])
    limits.check(name, "vertices", vertices, limits.max_points)
    body = lines[position : position + vertices]
    if len(body) < vertices:
        raise _bad(name, f"truncated: its header declares {vertices:,} vertices, it holds {len(body):,}")
    rows = []
    for number, text in body:
        row = _row(name, text, number)
        if len(row) < XYZ:
            raise _bad(name, f"a vertex needs x, y and z, this line has {len(row)} numbers", number)
        rows.append(row[:XYZ])
    if not rows:
        raise _bad(name, "holds no vertices")
    return _finite(name, np.asarray(rows, dtype=np.float64))


def read_ply(name: str, data: bytes, limits: PointLimits) -> np.ndarray:
    """A PLY file's vertices, (V, C): x, y, z, then the vertex's other number properties (a normal,
    a colour) in the file's order. ASCII and binary (either byte order); the vertex element must come
    first, or after elements without list properties."""
    if not data.startswith(b"ply"):
        raise _bad(name, "a .ply file starts with ply", 1)
    end = data.find(b"end_header")
    if end < 0:
        raise _bad(name, "its header never ends (no end_header line)")
    newline = data.find(b"\n", end)
    body_start = len(data) if newline < 0 else newline + 1
    header = data[:end].decode("ascii", errors="replace").splitlines()
    if len(header) > _PLY_HEADER_LINES:
        raise _bad(name, f"a header of more than {_PLY_HEADER_LINES} lines")
    fmt = ""
    elements: list[tuple[str, int, list[tuple[str, str]]]] = []  # (name, count, [(property, type)])
    for number, line in enumerate(header, 1):
        words = line.split()
        if not words or words[0] in ("ply", "comment", "obj_info"):
            continue
        if words[0] == "format" and len(words) >= 2:
            fmt = words[1]
        elif words[0] == "element" and len(words) == 3 and words[2].isdigit():
            elements.append((words[1], int(words[2]), []))
        elif words[0] == "property" and elements and len(words) >= 3:
            kind = "list" if words[1] == "list" else words[1]
            if kind != "list" and kind not in _PLY_TYPES:
                raise _bad(name, f"unknown property type {kind!r}", number)
            elements[-1][2].append((words[-1], kind))
        else:
            raise _bad(name, f"cannot read the header line {line[:40]!r}", number)
    if fmt not in ("ascii", "binary_little_endian", "binary_big_endian"):
        raise _bad(name, f"unknown format {fmt!r} (ascii, binary_little_endian or binary_big_endian)")
    skipped = 0
    for element, count, props in elements:
        limits.check(name, f"{element} entries", count, limits.max_points)
        if element == "vertex":
            break
        if any(kind == "list" for _, kind in props) and fmt != "ascii":
            raise _bad(name, f"the element {element!r} before the vertices has list properties")
        skipped += count if fmt == "ascii" else count * _dtype(props, fmt).itemsize
    else:
        raise _bad(name, "declares no vertex element")
    names = [prop for prop, _ in props]
    if len(set(names)) != len(names):
        raise _bad(name, "its vertex element names a property twice")
    if any(kind == "list" for _, kind in props) or not {"x", "y", "z"} <= set(names):
        raise _bad(name, "its vertices need number properties x, y and z (and no lists)")
    order = ["x", "y", "z"] + [n for n in names if n not in ("x", "y", "z")]
    if fmt == "ascii":
        lines = data[body_start:].splitlines()[skipped : skipped + count]
        if len(lines) < count:
            raise _bad(name, f"truncated: its header declares {count:,} vertices, it holds {len(lines):,}")
        first = len(header) + 2 + skipped
        rows = [_row(name, text, first + i) for i, text in enumerate(lines)]
        if any(len(row) != len(names) for row in rows):
            bad = next(i for i, row in enumerate(rows) if len(row) != len(names))
            raise _bad(name, f"a vertex needs {len(names)} numbers", first + bad)
        table = np.asarray(rows, dtype=np.float64)
        columns = [table[:, names.index(n)] for n in order]
    else:
        dtype = _dtype(props, fmt)
        start, needed = body_start + skipped, count * dtype.itemsize
        if len(data) - start < needed:
            raise _bad(
                name,
                f"shorter than its header says: {count:,} vertices need {needed:,} bytes, "
                f"{max(0, len(data) - start):,} follow the header",
            )
        records = np.frombuffer(data, dtype=dtype, count=count, offset=start)
        columns = [records[n].astype(np.float64) for n in order]
    if count == 0:
        raise _bad(name, "holds no vertices")
    return _finite(name, np.stack(columns, axis=1))


def _dtype(props: list[tuple[str, str]], fmt: str) -> np.dtype:
    order = "<" if fmt == "binary_little_endian" else ">"
    return np.dtype([(prop, order + _PLY_TYPES[kind]) for prop, kind in props])
