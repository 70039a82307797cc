"""The UCR/UEA time-series archive's `.ts` format, read line by line within `SequenceLimits`.

A file is header lines, `@data`, then one series per line (`#` starts a comment)::

    @problemName BasicMotions
    @timeStamps false
    @missing false
    @univariate false
    @dimensions 6
    @equalLength true
    @seriesLength 100
    @classLabel true Standing Running Walking Badminton
    @data
    0.1,0.2,...:0.5,0.1,...:...:Standing

Dimensions are separated by `:`, values by `,`, and the class label (`@classLabel true a b ...`) or
the numeric target (`@targetLabel true`) comes last. `?` (or NaN) is a missing value, filled by
linear interpolation within its series. Every dimension of one series has the same length; series
may differ in length unless `@equalLength true` says otherwise. Timestamped series (`(t, value)`
pairs) are refused. The archive ships each problem as `<name>_TRAIN.ts` and `<name>_TEST.ts`:
`open_ts` on a folder holding such a pair keeps the TEST rows as the predefined test split.

Every error names the file and line: a header declaring sizes over the limits, a file that ends
before `@data` or in the middle of a series, a line with the wrong number of dimensions or steps,
a label not declared in `@classLabel`, a number that is not one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.sequences import (
    SequenceLimits,
    SequenceSource,
    check_finite,
    ends_with_newline,
    fill_missing,
    iter_lines,
)

MAX_HEADER_LINES = 10_000
"""Header, comment and blank lines allowed beside the series (counted in the file's line limit)."""
_FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass
class _Header:
    univariate: bool | None = None
    dimensions: int | None = None
    equal_length: bool = False
    series_length: int | None = None
    classes: tuple[str, ...] | None = None
    """Declared by `@classLabel true ...`; None when the series carry no class label."""
    numeric_target: bool = False
    labels_optional: bool = False
    """Series without a label are accepted (a prediction request's file: `read_ts_series`)."""

    @property
    def labeled(self) -> bool:
        return self.classes is not None or self.numeric_target


@dataclass
class _Parsed:
    """One file's series before padding: what `open_ts` needs to merge a TRAIN/TEST pair."""

    path: Path
    series: list[np.ndarray] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    targets: list[float] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    classes: tuple[str, ...] | None = None
    values: int = 0


def open_ts(root: Path, limits: SequenceLimits | None = None) -> SequenceSource:
    """A `.ts` file, or a folder holding one or a `*_TRAIN.ts`/`*_TEST.ts` pair (the TEST series
    become the predefined test split)."""
    limits = limits or SequenceLimits()
    if root.is_file():
        return _source([_parse(root, limits, 0)], limits)
    files = sorted(path for path in root.rglob("*") if path.suffix.lower() == ".ts" and path.is_file())
    if len(files) == 1:
        return _source([_parse(files[0], limits, 0)], limits)
    train = [path for path in files if path.stem.upper().endswith("_TRAIN")]
    test = [path for path in files if path.stem.upper().endswith("_TEST")]
    if len(files) != 2 or len(train) != 1 or len(test) != 1:
        found = ", ".join(path.name for path in files[:5]) or "none"
        raise DatasetError(
            f"{root.name}: expected one .ts file or a <name>_TRAIN.ts and <name>_TEST.ts pair, found {found}",
            field="path",
        )
    first = _parse(train[0], limits, 0)
    return _source([first, _parse(test[0], limits, first.values)], limits)


def read_ts(path: Path, limits: SequenceLimits | None = None) -> SequenceSource:
    """One `.ts` file as a SequenceSource."""
    limits = limits or SequenceLimits()
    return _source([_parse(path, limits, 0)], limits)


def read_ts_series(path: Path, limits: SequenceLimits | None = None) -> list[tuple[np.ndarray, str]]:
    """Every series of one `.ts` file with the line it came from, for prediction: the file may declare
    no labels (`@classLabel false`, no `@targetLabel`), and the labels of one that does are not used."""
    parsed = _parse(path, limits or SequenceLimits(), 0, labels_optional=True)
    return list(zip(parsed.series, parsed.names, strict=True))


def _source(parts: list[_Parsed], limits: SequenceLimits) -> SequenceSource:
    first = parts[0]
    series = [s for part in parts for s in part.series]
    features = {s.shape[1] for s in series}
    if len(features) > 1:
        raise DatasetError(
            f"{parts[-1].path.name}: its series have {series[-1].shape[1]} dimensions, "
            f"{first.path.name}'s have {series[0].shape[1]}",
            code="shape_mismatch",
        )
    lengths = np.asarray([len(s) for s in series], dtype=np.int64)
    count, steps, width = len(series), int(lengths.max()), features.pop()
    limits.check_size(", ".join(part.path.name for part in parts), count, steps, width)
    values = np.zeros((count, steps, width), dtype=np.float32)
    for index, one in enumerate(series):
        values[index, : len(one)] = one
    names = [name for part in parts for name in part.names]
    test = np.arange(len(first.series), count) if len(parts) > 1 else None
    if first.classes is None:
        if any(part.classes is not None for part in parts):
            raise DatasetError(f"{parts[-1].path.name}: declares class labels, {first.path.name} does not")
        targets = np.asarray([t for part in parts for t in part.targets], dtype=np.float64)
        return SequenceSource(values, lengths, targets=targets, test_indices=test, names=names)
    known = {name: i for i, name in enumerate(first.classes)}
    labels = []
    for part in parts:
        if part.classes is None:
            raise DatasetError(f"{part.path.name}: has no class labels, {first.path.name} does")
        for label, name in zip(part.labels, part.names, strict=True):
            if label not in known:
                raise DatasetError(
                    f"{name}: the label {label!r} is not one of {first.path.name}'s classes "
                    f"({', '.join(first.classes)})",
                    code="label_unknown",
                )
            labels.append(known[label])
    return SequenceSource(
        values, lengths, labels=np.asarray(labels), classes=first.classes, test_indices=test, names=names
    )


def _parse(path: Path, limits: SequenceLimits, used: int, labels_optional: bool = False) -> _Parsed:
    """Read the file's series; `used` values are already held by an earlier file of the set."""
    header = _Header(labels_optional=labels_optional)
    parsed = _Parsed(path)
    parsed.values = used
    in_data = False
    number = 0
    # A last line without a newline may have been cut short: its errors say so.
    last = -1 if ends_with_newline(path) else _count_lines(path) + 1
    for number, line in enumerate(iter_lines(path, limits.max_sequences + MAX_HEADER_LINES, limits), 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        where = f"{path.name}, line {number}"
        if in_data:
            _series(text, where, header, parsed, limits, cut=number == last)
        elif not text.startswith("@"):
            raise DatasetError(f"{where}: expected a header line (@name value) or @data, found {text[:40]!r}")
        elif _header_line(text, where, header, limits):
            in_data = True
            parsed.classes = header.classes
    if not in_data:
        raise DatasetError(
            f"{path.name}, line {number + 1}: the file ends before @data (truncated, or not a .ts file)",
            code="truncated",
        )
    if not parsed.series:
        raise DatasetError(f"{path.name}, line {number + 1}: no series after @data", code="dataset_empty")
    return parsed


def _count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 20), b""))


def _flag(value: str, where: str, tag: str) -> bool:
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise DatasetError(f"{where}: {tag} must be true or false, got {value!r}")


def _size(value: str, where: str, tag: str, limit: int, what: str) -> int:
    try:
        size = int(value)
    except ValueError:
        raise DatasetError(f"{where}: {tag} must be a whole number, got {value!r}") from None
    if size < 1:
        raise DatasetError(f"{where}: {tag} must be at least 1, got {size}")
    SequenceLimits.check(f"{where} ({tag})", what, size, limit)
    return size


def _header_line(text: str, where: str, header: _Header, limits: SequenceLimits) -> bool:
    """Apply one header line; True for `@data`."""
    tag, _, rest = text.partition(" ")
    tag, rest = tag.lower(), rest.strip()
    words = rest.split()
    first = words[0] if words else ""
    if tag == "@data":
        if header.classes is not None and header.numeric_target:
            raise DatasetError(f"{where}: the header declares both @classLabel and @targetLabel")
        if not header.labeled and not header.labels_optional:
            raise DatasetError(
                f"{where}: the header declares neither @classLabel true nor @targetLabel true, so the "
                "series carry nothing to learn",
                code="labels_missing",
            )
        return True
    if tag == "@timestamps" and _flag(first, where, "@timeStamps"):
        raise DatasetError(f"{where}: timestamped series ((time, value) pairs) are not supported")
    if tag == "@univariate":
        header.univariate = _flag(first, where, "@univariate")
    elif tag == "@dimensions":
        header.dimensions = _size(first, where, "@dimensions", limits.max_features, "dimensions")
    elif tag == "@equallength":
        header.equal_length = _flag(first, where, "@equalLength")
    elif tag == "@serieslength":
        header.series_length = _size(first, where, "@seriesLength", limits.max_steps, "time steps")
    elif tag == "@classlabel" and _flag(first, where, "@classLabel"):
        names = tuple(words[1:])
        if not names:
            raise DatasetError(f"{where}: @classLabel true must list the class names")
        if len(set(names)) != len(names):
            raise DatasetError(f"{where}: @classLabel lists a class twice")
        header.classes = names
    elif tag == "@targetlabel":
        header.numeric_target = _flag(first, where, "@targetLabel")
    # @problemName, @missing and tags of later versions of the format change nothing here.
    return False


def _series(
    text: str, where: str, header: _Header, parsed: _Parsed, limits: SequenceLimits, cut: bool
) -> None:
    hint = " (the file ends in the middle of this line: it looks truncated)" if cut else ""
    segments = text.split(":")
    if header.labeled and len(segments) < 2:
        code = "truncated" if cut else "row_invalid"
        raise DatasetError(f"{where}: no label after the values{hint}", code=code)
    label = segments.pop().strip() if header.labeled else ""
    expected = header.dimensions or (1 if header.univariate else None)
    if expected is None and parsed.series:
        expected = parsed.series[0].shape[1]
    if expected is not None and len(segments) != expected:
        raise DatasetError(
            f"{where}: {len(segments)} dimensions where {expected} are expected{hint}",
            code="truncated" if cut else "row_invalid",
        )
    SequenceLimits.check(where, "dimensions", len(segments), limits.max_features)
    dims = [
        _values(segment, f"{where}, dimension {d + 1}", limits, hint) for d, segment in enumerate(segments)
    ]
    steps = len(dims[0])
    for d, values in enumerate(dims[1:], 2):
        if len(values) != steps:
            raise DatasetError(
                f"{where}: dimension {d} has {len(values)} values, dimension 1 has {steps}{hint}"
            )
    declared = header.series_length if header.equal_length else None
    if header.equal_length and declared is None and parsed.series:
        declared = len(parsed.series[0])
    if declared is not None and steps != declared:
        raise DatasetError(
            f"{where}: {steps} steps, but @equalLength true and the series have {declared}{hint}",
            code="truncated" if cut else "length_mismatch",
        )
    parsed.values += steps * len(dims)
    SequenceLimits.check(where, "values in all", parsed.values, limits.max_values)
    series = fill_missing(np.stack(dims, axis=1), where)
    if header.classes is not None:
        if label not in header.classes:
            raise DatasetError(
                f"{where}: the label {label!r} is not declared in @classLabel "
                f"({', '.join(header.classes)}){hint}",
                code="label_unknown",
            )
        parsed.labels.append(label)
    elif header.numeric_target:
        try:
            target = float(label)
        except ValueError:
            raise DatasetError(
                f"{where}: the target {label!r} is not a number{hint}", code="target_not_numeric"
            ) from None
        if not np.isfinite(target):
            raise DatasetError(
                f"{where}: the target {label!r} is not a finite number", code="target_not_numeric"
            )
        parsed.targets.append(target)
    parsed.series.append(series)
    parsed.names.append(where)
    # Counted as the series come, so the line past the limit is the one named.
    SequenceLimits.check(where, "series", len(parsed.series), limits.max_sequences)


def _values(segment: str, where: str, limits: SequenceLimits, hint: str) -> np.ndarray:
    SequenceLimits.check(where, "time steps", segment.count(",") + 1, limits.max_steps)
    tokens = segment.replace("?", "nan").split(",")
    try:
        values = np.asarray(tokens, dtype=np.float64)
    except ValueError:
        bad = next(i for i, token in enumerate(tokens) if not _is_number(token))
        raise DatasetError(
            f"{where}, value {bad + 1}: {tokens[bad].strip()[:40]!r} is not a number{hint}",
            code="value_invalid",
        ) from None
    if (np.abs(values) > _FLOAT32_MAX).any():
        raise DatasetError(f"{where}: a value is too large for float32", code="value_invalid")
    out = values.astype(np.float32)
    check_finite(out, where)
    return out


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True
