"""Small sequence files for tests, written the way their real producers write them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


def series_set(count: int, features: int, lengths: Sequence[int] | int, seed: int = 0) -> list[np.ndarray]:
    """`count` random float32 (T_i, F) series, with values short enough to round-trip as text."""
    rng = np.random.default_rng(seed)
    sizes = [lengths] * count if isinstance(lengths, int) else list(lengths)
    return [np.round(rng.normal(size=(t, features)), 4).astype(np.float32) for t in sizes]


def ts_text(
    series: Sequence[np.ndarray],
    labels: Sequence[str | float],
    classes: Sequence[str] | None = None,
    *,
    equal_length: bool | None = None,
    extra_header: Sequence[str] = (),
) -> str:
    """A .ts file as sktime's writer makes it; `classes` None means numeric targets."""
    features = series[0].shape[1]
    equal = len({len(s) for s in series}) == 1 if equal_length is None else equal_length
    head = [
        "# written by tests/engine/data/sequence_samples.py",
        "@problemName Sample",
        "@timeStamps false",
        "@missing false",
        f"@univariate {'true' if features == 1 else 'false'}",
        f"@dimensions {features}",
        f"@equalLength {'true' if equal else 'false'}",
    ]
    if equal:
        head.append(f"@seriesLength {len(series[0])}")
    head.append(f"@classLabel true {' '.join(classes)}" if classes is not None else "@targetLabel true")
    head.extend(extra_header)
    head.append("@data")
    rows = [
        ":".join(",".join(repr(float(v)) for v in s[:, f]) for f in range(features)) + f":{label}"
        for s, label in zip(series, labels, strict=True)
    ]
    return "\n".join(head + rows) + "\n"


def write_ts(path: Path, *args: object, **kwargs: object) -> Path:
    path.write_text(ts_text(*args, **kwargs))  # type: ignore[arg-type]
    return path


def write_csv(path: Path, rows: np.ndarray, header: Sequence[str] | None = None) -> Path:
    lines = [",".join(header)] if header is not None else []
    lines += [",".join(repr(float(v)) for v in row) for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
