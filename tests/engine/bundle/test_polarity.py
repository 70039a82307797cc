"""Ink polarity: a bundle records the paper of its training images (MNIST: light strokes on black),
and an upload with the opposite paper (a digit written in dark ink on white) is inverted before
prediction, and says so. Bundles written before the field existed are never inverted."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import torch
from PIL import Image

from dragdl.engine.bundle import ImageInput, load_bundle
from dragdl.engine.inputs.image_decode import background_of, dataset_background

from .conftest import Trained, split_test_indices


def png(image: torch.Tensor) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(image[0].numpy()).save(buffer, format="PNG")
    return buffer.getvalue()


def dark_on_light(trained: Trained, per_class: int) -> tuple[list[ImageInput], list[int]]:
    """MNIST test digits of every class that the model gets right as they are, saved as dark ink on
    white paper, with their labels."""
    bundle = load_bundle(trained.out)
    chosen: dict[int, list[torch.Tensor]] = {}
    for index in split_test_indices(trained.plan):
        image, label = trained.plan.source.image(int(index)), int(trained.plan.source.labels[index])
        group = chosen.setdefault(label, [])
        if len(group) < per_class and bundle.predict(png(image))[0].index == label:
            group.append(image)
    assert len(chosen) == 10 and all(len(group) == per_class for group in chosen.values())
    pairs = [(png(255 - image), label) for label, group in sorted(chosen.items()) for image in group]
    return [data for data, _ in pairs], [label for _, label in pairs]


def test_the_manifest_records_the_training_images_paper(trained: Trained) -> None:
    data = json.loads((trained.out / "model.json").read_text())
    assert data["input"]["background"] == "dark"
    assert data["preprocessing"]["background"] == "dark"


def test_a_dark_on_light_mnist_digit_is_inverted_and_predicted_as_the_original(trained: Trained) -> None:
    uploads, expected = dark_on_light(trained, 3)
    bundle = load_bundle(trained.out)
    predictions = bundle.predict(uploads)
    assert [p.index for p in predictions] == expected
    assert all(p.inverted for p in predictions)
    # Without the inversion the same uploads are mostly misclassified: the hint is needed.
    kept = [
        bundle.ranked(row) for row in bundle.probabilities([bundle.preprocess(u, False) for u in uploads])
    ]
    wrong = sum(p.index != e for p, e in zip(kept, expected, strict=True))
    assert wrong > len(expected) // 2, f"only {wrong} of {len(expected)} misclassified without inversion"


def test_images_with_the_training_paper_are_left_alone_and_inversion_can_be_forced(trained: Trained) -> None:
    images, probabilities = trained.eval_batch()
    bundle = load_bundle(trained.out)
    (same,) = bundle.predict(png(images[0]))
    assert not same.inverted and same.index == int(probabilities[0].argmax())
    forced, inverted = bundle.prepare(png(images[0]), True)
    assert inverted and torch.equal(forced, bundle.preprocess(png(255 - images[0]), False))


def test_a_bundle_without_the_field_never_inverts(trained: Trained, tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(trained.out, old, ignore=shutil.ignore_patterns("checkpoints"))
    manifest = json.loads((old / "model.json").read_text())
    del manifest["input"]["background"], manifest["preprocessing"]["background"]
    (old / "model.json").write_text(json.dumps(manifest))
    uploads, _ = dark_on_light(trained, 1)
    bundle = load_bundle(old)
    assert bundle.manifest.input.background is None
    assert not any(p.inverted for p in bundle.predict(uploads))


def test_background_rules() -> None:
    black = torch.zeros((1, 28, 28), dtype=torch.uint8)
    white = torch.full((3, 40, 30), 250, dtype=torch.uint8)
    assert background_of(black) == "dark" and background_of(white) == "light"
    framed = white.clone()
    framed[:, 5:-5, 5:-5] = 0  # dark ink filling the middle: the paper is still light
    assert background_of(framed) == "light"
    assert dataset_background([black] * 19 + [white[:1]]) == "dark"
    assert dataset_background([black] * 5 + [white] * 5) == "mixed"
    assert dataset_background([]) == "mixed"
