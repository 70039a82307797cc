"""Trained-model bundles: model.safetensors + model.json, prediction, ONNX and TorchScript exports."""

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
from dragdl.engine.bundle.image import ImageError, ImageInput
from dragdl.engine.bundle.spec import MANIFEST_NAME, Manifest
from dragdl.engine.bundle.writer import write_bundle

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
