"""Trained-model bundles: model.safetensors + model.json, prediction, ONNX and TorchScript exports.

The names below are imported on first use (PEP 562): `dragdl run` writes a bundle through
`bundle.writer` alone, and should not import prediction and the exporters on its way.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dragdl.engine.bundle.bundle import (
        Bundle,
        BundleError,
        ClassScore,
        Prediction,
        bundle_dir,
        load_bundle,
        read_manifest,
    )
    from dragdl.engine.bundle.export import EXPORT_FORMATS, ExportError, ExportFormat, export_bundle
    from dragdl.engine.bundle.spec import MANIFEST_NAME, Manifest
    from dragdl.engine.bundle.writer import write_bundle
    from dragdl.engine.inputs.image_decode import ImageError, ImageInput

_HOMES = {
    "Bundle": "bundle",
    "BundleError": "bundle",
    "ClassScore": "bundle",
    "Prediction": "bundle",
    "bundle_dir": "bundle",
    "load_bundle": "bundle",
    "read_manifest": "bundle",
    "EXPORT_FORMATS": "export",
    "ExportError": "export",
    "ExportFormat": "export",
    "export_bundle": "export",
    "ImageError": "dragdl.engine.inputs.image_decode",
    "ImageInput": "dragdl.engine.inputs.image_decode",
    "MANIFEST_NAME": "spec",
    "Manifest": "spec",
    "write_bundle": "writer",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # A home is a module of this package, or (for names that moved out of it) a full module name.
    return getattr(import_module(home if "." in home else f"{__name__}.{home}"), name)


__all__ = [
    "EXPORT_FORMATS",
    "MANIFEST_NAME",
    "Bundle",
    "BundleError",
    "ClassScore",
    "ExportError",
    "ExportFormat",
    "ImageError",
    "ImageInput",
    "Manifest",
    "Prediction",
    "bundle_dir",
    "export_bundle",
    "load_bundle",
    "read_manifest",
    "write_bundle",
]
