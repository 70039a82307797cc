"""Train/val/test splits: stratified by class, by ratio, reproducible from a seed."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Splits:
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray


def split_indices(
    labels: np.ndarray,
    val_ratio: float,
    test_ratio: float,
    seed: int,
    predefined_test: np.ndarray | None = None,
) -> Splits:
    """Split indices per class so every split keeps the class proportions.

    With a predefined test partition (an official test set) only train/val are split, and
    `val_ratio` is taken of the remaining images.
    """
    if not (0 <= val_ratio < 1 and 0 <= test_ratio < 1 and val_ratio + test_ratio < 1):
        raise ValueError(
            f"split ratios must be in [0, 1) and sum below 1, got val={val_ratio}, test={test_ratio}"
        )
    labels = np.asarray(labels, dtype=np.int64)
    rng = np.random.default_rng(seed)
    pool = np.arange(len(labels))
    test_parts: list[np.ndarray] = []
    if predefined_test is not None:
        is_test = np.zeros(len(labels), dtype=bool)
        is_test[predefined_test] = True
        test_parts.append(np.sort(np.asarray(predefined_test, dtype=np.int64)))
        pool = pool[~is_test]
        test_ratio = 0.0
    train_parts: list[np.ndarray] = []
    val_parts: list[np.ndarray] = []
    for cls in np.unique(labels[pool]):
        members = pool[labels[pool] == cls]
        members = members[rng.permutation(len(members))]
        n_test = round(len(members) * test_ratio)
        n_val = round(len(members) * val_ratio)
        test_parts.append(members[:n_test])
        val_parts.append(members[n_test : n_test + n_val])
        train_parts.append(members[n_test + n_val :])

    def joined(parts: list[np.ndarray]) -> np.ndarray:
        return np.sort(np.concatenate(parts)).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)

    return Splits(train=joined(train_parts), val=joined(val_parts), test=joined(test_parts))
