"""The batch pipeline: precompute vs per-sample equivalence, random ops in training only, fitting, order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch import Tensor, nn
from torchvision.transforms import v2

from dragdl.engine.data.base import ImageSource, TensorSource
from dragdl.engine.data.batch import INPUT, TARGET, Batch
from dragdl.engine.data.pipeline import (
    LoaderBatches,
    OpStage,
    Pipeline,
    TensorBatches,
    build_pipeline,
)
from dragdl.engine.data.splits import Splits, split_indices
from dragdl.engine.data.stages import FittedTransform, NonFiniteError

CPU = torch.device("cpu")


def make_source(n: int = 90, size: int = 12, channels: int = 3) -> TensorSource:
    gen = torch.Generator().manual_seed(1)
    images = torch.randint(0, 256, (n, channels, size, size), generator=gen, dtype=torch.uint8)
    labels = np.arange(n) % 3
    return TensorSource(images, labels, ("a", "b", "c"))


class FileLikeSource(ImageSource):
    """Same images, but only one at a time (as a folder of files would give them)."""

    def __init__(self, inner: TensorSource) -> None:
        self.inner = inner
        self.info = inner.info
        self.labels = inner.labels

    def image(self, index: int) -> Tensor:
        return self.inner.image(index).clone()


class AddNoise(nn.Module):
    """A random op: adds uniform noise drawn from torch's global generator (as v2 ops do)."""

    def forward(self, x: Tensor) -> Tensor:
        return x + torch.rand(x.shape) * 0.1


class Mark(nn.Module):
    """A random op with a visible effect: sets the top-left pixel to 1000."""

    def forward(self, x: Tensor) -> Tensor:
        x = x.clone()
        x[..., 0, 0] = 1000.0
        return x


class MeanStd(FittedTransform):
    """A fittable normalize, as the Normalize op with preset "dataset" builds."""

    def __init__(self) -> None:
        super().__init__()
        self.mean = torch.zeros(1)
        self.std = torch.ones(1)
        self.seen: Tensor | None = None

    def fit(self, images: Tensor) -> None:
        self.seen = images
        self.mean = images.mean(dim=(0, 2, 3)).view(-1, 1, 1)
        self.std = images.std(dim=(0, 2, 3)).view(-1, 1, 1)

    def state(self) -> dict[str, Any]:
        return {"mean": self.mean.flatten().tolist(), "std": self.std.flatten().tolist()}

    def load(self, state: dict[str, Any]) -> None:
        self.mean = torch.tensor(state["mean"]).view(-1, 1, 1)
        self.std = torch.tensor(state["std"]).view(-1, 1, 1)

    def forward(self, x: Tensor) -> Tensor:
        return (x - self.mean) / self.std


def deterministic_stages() -> list[OpStage]:
    return [
        OpStage("resize", v2.Resize((8, 8), antialias=True), random=False, needs_float=False),
        OpStage("norm", v2.Normalize([0.5, 0.4, 0.3], [0.2, 0.25, 0.3]), random=False, needs_float=True),
    ]


def splits_of(source: ImageSource) -> Splits:
    return split_indices(source.labels, 0.2, 0.2, seed=0)


def all_batches(p: Pipeline, epoch: int = 0) -> dict[str, list[Batch]]:
    out = {}
    for name in ("train", "val", "test"):
        src = getattr(p, name)
        out[name] = list(src.batches(epoch)) if src is not None else []
    return out


def pair(batch: Batch) -> tuple[Tensor, Tensor]:
    return batch[INPUT], batch[TARGET]


def assert_same_batches(a: Pipeline, b: Pipeline, epoch: int = 0) -> None:
    ba, bb = all_batches(a, epoch), all_batches(b, epoch)
    for name in ba:
        assert len(ba[name]) == len(bb[name]), name
        for a_batch, b_batch in zip(ba[name], bb[name], strict=True):
            (xa, ya), (xb, yb) = pair(a_batch), pair(b_batch)
            assert set(a_batch) == set(b_batch) == {INPUT, TARGET}
            assert xa.dtype == xb.dtype == torch.float32
            assert torch.equal(ya, yb), name
            torch.testing.assert_close(xa, xb, rtol=0, atol=1e-6)


@pytest.mark.parametrize("file_like", [False, True])
def test_precomputed_batches_equal_per_sample_processing(file_like: bool) -> None:
    inner = make_source()
    source: ImageSource = FileLikeSource(inner) if file_like else inner
    splits = splits_of(source)
    fast = build_pipeline(source, splits, deterministic_stages(), 16, seed=3, device=CPU, num_workers=0)
    slow = build_pipeline(
        source, splits, deterministic_stages(), 16, seed=3, device=CPU, num_workers=0, memory_budget=0
    )
    assert isinstance(fast.train, TensorBatches) and isinstance(fast.test, TensorBatches)
    assert isinstance(slow.train, LoaderBatches) and isinstance(slow.test, LoaderBatches)
    assert_same_batches(fast, slow, epoch=2)
    # Both equal the prediction-time transform applied image by image.
    first_test = int(splits.test[0])
    first = all_batches(fast)["test"][0][INPUT][0]
    torch.testing.assert_close(first, fast.eval_transform(inner.image(first_test)), rtol=0, atol=1e-6)
    assert fast.input_shape == (3, 8, 8)


def test_images_end_as_float_without_any_float_stage() -> None:
    source = make_source()
    stages = [OpStage("resize", v2.Resize((6, 6)), random=False, needs_float=False)]
    p = build_pipeline(source, splits_of(source), stages, 8, seed=0, device=CPU)
    x, y = pair(next(p.train.batches(0)))
    assert x.dtype == torch.float32 and float(x.min()) >= 0.0 and float(x.max()) <= 1.0
    assert y.dtype == torch.int64
    assert p.eval_transform(source.image(0)).dtype == torch.float32


def test_random_stages_apply_to_training_batches_only() -> None:
    source = make_source()
    stages = [
        OpStage("resize", v2.Resize((8, 8)), random=False, needs_float=False),
        OpStage("mark", Mark(), random=True, needs_float=True),
        OpStage("norm", v2.Normalize([0.5] * 3, [0.25] * 3), random=False, needs_float=True),
    ]
    p = build_pipeline(source, splits_of(source), stages, 16, seed=0, device=CPU, num_workers=0)
    marked = (1000.0 - 0.5) / 0.25
    for x, _ in map(pair, p.train.batches(0)):
        assert torch.all(x[:, :, 0, 0] == marked)
    for split in (p.val, p.test):
        assert split is not None
        for x, _ in map(pair, split.batches(0)):
            assert not torch.any(x[:, :, 0, 0] == marked)
    assert float(p.eval_transform(source.image(0))[0, 0, 0]) != marked
    # Evaluation still sees the deterministic op after the random one: a fully precomputed tensor.
    assert isinstance(p.val, TensorBatches)


def test_augmentation_depends_only_on_seed_and_epoch() -> None:
    source = make_source()
    splits = splits_of(source)

    def stages() -> list[OpStage]:
        return [OpStage("noise", AddNoise(), random=True, needs_float=True)]

    in_process = build_pipeline(source, splits, stages(), 16, seed=5, device=CPU, num_workers=0)
    workers = build_pipeline(source, splits, stages(), 16, seed=5, device=CPU, num_workers=1)
    try:
        a = list(in_process.train.batches(1))
        b = list(workers.train.batches(1))
        for (xa, ya), (xb, yb) in zip(map(pair, a), map(pair, b), strict=True):
            assert torch.equal(xa, xb) and torch.equal(ya, yb)
        # Skipping consumed batches continues the epoch exactly (a resumed run).
        rest = list(workers.train.batches(1, skip=2))
        assert len(rest) == len(a) - 2
        for (xa, _), (xr, _) in zip(map(pair, a[2:]), map(pair, rest), strict=True):
            assert torch.equal(xa, xr)
        # Another epoch: another order and other noise.
        other = list(in_process.train.batches(2))
        assert not torch.equal(a[0][INPUT], other[0][INPUT])
        # In-process augmentation leaves the global generator (dropout's) alone.
        torch.manual_seed(7)
        expected = torch.rand(3)
        torch.manual_seed(7)
        list(in_process.train.batches(3))
        assert torch.equal(torch.rand(3), expected)
    finally:
        workers.close()


def test_train_order_is_a_reproducible_permutation_keeping_the_last_partial_batch() -> None:
    source = make_source(n=100)
    splits = splits_of(source)
    p = build_pipeline(source, splits, deterministic_stages(), 16, seed=0, device=CPU)
    n = len(splits.train)
    assert p.train.num_samples == n and len(p.train) == -(-n // 16)
    labels = torch.cat([b[TARGET] for b in p.train.batches(0)])
    assert len(labels) == n
    assert sorted(labels.tolist()) == sorted(source.labels[splits.train].tolist())
    again = torch.cat([b[TARGET] for b in p.train.batches(0)])
    other_epoch = torch.cat([b[TARGET] for b in p.train.batches(1)])
    assert torch.equal(labels, again)
    assert not torch.equal(labels, other_epoch)
    # Evaluation keeps the split's order.
    assert p.test is not None
    test_labels = torch.cat([b[TARGET] for b in p.test.batches(0)])
    assert test_labels.tolist() == source.labels[splits.test].tolist()


def test_fittable_is_fitted_on_training_images_after_preceding_deterministic_stages() -> None:
    source = make_source()
    splits = splits_of(source)
    norm = MeanStd()
    stages = [
        OpStage("resize", v2.Resize((8, 8)), random=False, needs_float=False),
        OpStage("noise", AddNoise(), random=True, needs_float=True),
        OpStage("norm", norm, random=False, needs_float=True),
    ]
    p = build_pipeline(source, splits, stages, 16, seed=0, device=CPU, num_workers=0)
    images = source.images()
    assert images is not None
    expected = v2.functional.to_dtype(
        v2.Resize((8, 8))(images[torch.from_numpy(splits.train)]), torch.float32, scale=True
    )
    assert norm.seen is not None
    torch.testing.assert_close(norm.seen, expected)
    torch.testing.assert_close(norm.mean.flatten(), expected.mean(dim=(0, 2, 3)))
    assert p.fitted["norm"]["mean"] == pytest.approx(expected.mean(dim=(0, 2, 3)).tolist())
    assert set(p.fitted["norm"]) == {"mean", "std"}
    # Evaluation batches use the fitted statistics.
    assert p.val is not None
    val_x = torch.cat([b[INPUT] for b in p.val.batches(0)])
    raw_val = v2.functional.to_dtype(
        v2.Resize((8, 8))(images[torch.from_numpy(splits.val)]), torch.float32, scale=True
    )
    torch.testing.assert_close(val_x, (raw_val - norm.mean) / norm.std)


def test_empty_splits_give_no_batch_source() -> None:
    source = make_source()
    splits = Splits(train=np.arange(60), val=np.zeros(0, dtype=np.int64), test=np.arange(60, 90))
    p = build_pipeline(source, splits, [], 16, seed=0, device=CPU)
    assert p.val is None and p.test is not None and p.test.num_samples == 30


class Log(nn.Module):
    """What a Lambda `log(x)` computes: -inf for every black pixel."""

    def forward(self, x: Tensor) -> Tensor:
        return torch.log(x)


@pytest.mark.parametrize("where", ["precomputed", "in workers", "in process", "one file at a time"])
def test_an_op_that_produces_nan_or_inf_names_the_op_and_the_image(where: str) -> None:
    images = torch.full((30, 1, 6, 6), 200, dtype=torch.uint8)
    images[17, 0, 2, 3] = 0  # one black pixel in one image
    source: ImageSource = TensorSource(images, np.arange(30) % 3, ("a", "b", "c"))
    stages = [OpStage("lg", Log(), random=False, needs_float=True, label="lg (Lambda)")]
    if where != "precomputed":  # after a random op, the Lambda runs per sample while training
        stages.insert(0, OpStage("flip", v2.RandomVerticalFlip(), random=True, needs_float=False))
    if where == "one file at a time":
        source = FileLikeSource(source)  # type: ignore[arg-type]
    splits = Splits(np.arange(30), np.zeros(0, np.int64), np.zeros(0, np.int64))
    workers = 1 if where == "in workers" else 0
    with pytest.raises(NonFiniteError) as err:
        pipeline = build_pipeline(source, splits, stages, 8, seed=0, device=CPU, num_workers=workers)
        try:
            list(pipeline.train.batches(0))
        finally:
            pipeline.close()
    # The node id comes back from a DataLoader worker too, which re-raises from text only.
    assert err.value.node_id == "lg"
    assert err.value.message.startswith("the operator lg (Lambda) produced 1 infinite values for image 17")
    assert str(err.value).startswith("node lg: ")
