"""The catalog in the user's language: node, parameter, port and choice texts per language.

The params models hold the English texts (Field titles and descriptions); `i18n_zh` maps each
English text to its Chinese one, so a text shared by several nodes is translated once. Enum
choices get readable labels (`x-enum-labels`, aligned with `enum`) in every language.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from functools import cache
from typing import Any, Literal

from dragdl.engine.nodes.i18n_zh import ZH
from dragdl.engine.nodes.registry import catalog

Language = Literal["en", "zh"]

CHOICE_LABELS: dict[str, str] = {
    "mnist-5k": "MNIST (5,000 digits)",
    "digits": "Digits (1,797 small digits)",
    "auto": "Automatic",
    "grayscale": "Grayscale",
    "rgb": "Colour (RGB)",
    "MNIST": "MNIST",
    "FashionMNIST": "Fashion-MNIST",
    "CIFAR10": "CIFAR-10",
    "dataset": "Measured on your data",
    "imagenet": "ImageNet",
    "custom": "Custom",
    "bilinear": "Bilinear",
    "nearest": "Nearest",
    "bicubic": "Bicubic",
    "same": "Same size",
    "valid": "No padding",
    "resnet18": "ResNet-18",
    "resnet34": "ResNet-34",
    "resnet50": "ResNet-50",
    "vgg11": "VGG-11",
    "vgg16": "VGG-16",
    "mobilenet_v3_small": "MobileNet-V3 small",
    "mobilenet_v3_large": "MobileNet-V3 large",
    "efficientnet_b0": "EfficientNet-B0",
    "densenet121": "DenseNet-121",
    "sgd": "SGD",
    "adam": "Adam",
    "adamw": "AdamW",
    "none": "None (constant)",
    "step": "Step",
    "cosine": "Cosine",
    "onecycle": "One-cycle",
    "val_loss": "Validation loss",
    "val_accuracy": "Validation accuracy",
    "val_mae": "Validation MAE",
    "val_rmse": "Validation RMSE",
    "val_r2": "Validation R²",
    "mse": "Mean squared error (MSE)",
    "mae": "Mean absolute error (MAE)",
    "huber": "Huber",
    "cpu": "CPU",
    "cuda": "GPU (CUDA)",
    "fp32": "fp32 (full precision)",
    "bf16": "bf16 (mixed precision)",
    "contiguous": "Contiguous (default)",
    "channels_last": "Channels last",
    "iris": "Iris (flowers, 3 classes)",
    "wine": "Wine (3 cultivars)",
    "breast_cancer": "Breast cancer (2 classes)",
    "diabetes": "Diabetes (a value)",
    "file": "File on the server",
    "uploaded": "Uploaded dataset",
    "mean": "Mean",
    "median": "Median",
    "most_frequent": "Most frequent",
    "keep": "Keep",
    "drop": "Drop",
    "refuse": "Refuse (an error)",
    "max": "Maximum",
    "zeros": "Zeros",
    "wrap": "Wrap around",
    "builtin": "Built-in set",
    "seq-mnist": "Sequential MNIST (28 steps of 28)",
    "waves": "Noisy waves (3 shapes)",
    "waves-frequency": "Noisy waves (their frequency)",
    "shapes": "Synthetic shapes (6 classes)",
    "x": "x axis",
    "y": "y axis",
    "z": "z axis",
    "input": "Input transform (x, y, z)",
    "feature": "Feature transform (all channels)",
}
"""English label of each enum value; a value missing here (a number) is shown as it is."""

DOWNLOADS_OFF = "Downloading is turned off here: the files must already be in the cache."
"""Shown on a download switch (`x-download` in its params model) where downloads are not allowed."""


def choice_label(value: object) -> str:
    return CHOICE_LABELS.get(value, str(value)) if isinstance(value, str) else str(value)


def _schemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every property schema of a params schema, with its anyOf variants and referenced $defs."""
    for prop in schema.get("properties", {}).values():
        yield prop
        yield from prop.get("anyOf", [])
    yield from schema.get("$defs", {}).values()


def _choices(schema: dict[str, Any]) -> list[Any]:
    """The values a (sub)schema allows by name: its enum, or its one const ('auto' of int | 'auto')."""
    return list(schema["enum"]) if "enum" in schema else [schema["const"]] if "const" in schema else []


def visible_texts(entry: dict[str, Any]) -> Iterator[str]:
    """The English texts of one catalog entry that users see (what a translation must cover)."""
    yield entry["title"]
    yield entry["description"]
    for port in (*entry["inputs"], *entry["outputs"]):
        if port["label"]:
            yield port["label"]
    for prop in entry["params_schema"].get("properties", {}).values():
        yield prop["title"]
        yield prop["description"]
        if prop.get("x-download"):
            yield DOWNLOADS_OFF
    for schema in _schemas(entry["params_schema"]):
        for value in _choices(schema):
            if isinstance(value, str):
                yield choice_label(value)


def _translate(text: str, lang: Language) -> str:
    return ZH.get(text, text) if lang == "zh" else text


def localize_entry(entry: dict[str, Any], lang: Language, downloads: bool) -> dict[str, Any]:
    """`entry` in `lang`; without `downloads`, download switches are locked off, saying why."""
    out = copy.deepcopy(entry)
    out["title"] = _translate(out["title"], lang)
    out["description"] = _translate(out["description"], lang)
    for port in (*out["inputs"], *out["outputs"]):
        port["label"] = _translate(port["label"], lang)
    for prop in out["params_schema"].get("properties", {}).values():
        # Built-in params all have both (tests/engine/nodes/test_catalog.py); another module's may not.
        for key in ("title", "description"):
            if key in prop:
                prop[key] = _translate(prop[key], lang)
        if prop.get("x-download") and not downloads:
            prop["readOnly"] = True
            prop["x-locked"] = {"value": False, "reason": _translate(DOWNLOADS_OFF, lang)}
    for schema in _schemas(out["params_schema"]):
        if "enum" in schema or "const" in schema:
            schema["x-enum-labels"] = [_translate(choice_label(value), lang) for value in _choices(schema)]
    return out


@cache
def localized_catalog(lang: Language, downloads: bool = True) -> list[dict[str, Any]]:
    """The whole catalog with its texts in `lang` (computed once per language)."""
    return [localize_entry(entry, lang, downloads) for entry in catalog()]
