"""Exports of a bundle's network: ONNX (browsers, other runtimes) and TorchScript (C++/mobile).

Every export is checked before it is recorded: the exported file is reloaded and run on a check
batch, and the largest difference to PyTorch's logits is written into model.json with it.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from torch import Tensor

from dragdl.engine.bundle.bundle import Bundle, BundleError, load_bundle
from dragdl.engine.bundle.spec import MANIFEST_NAME, ONNX_NAME, TORCHSCRIPT_NAME, ExportInfo
from dragdl.engine.bundle.writer import write_manifest

log = logging.getLogger(__name__)

ExportFormat = Literal["onnx", "torchscript"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("onnx", "torchscript")
DEFAULT_OPSET = 18
"""The dynamo exporter's lowest opset; onnxruntime-web runs it."""
MAX_ABS_DIFF = 1e-4
_EXTERNAL_DATA_BYTES = 1_500_000_000
"""ONNX protobufs stop at 2 GB; larger weights go to a side file."""


class ExportError(BundleError):
    """An export failed or its result differs from PyTorch."""


def export_bundle(
    bundle_dir: str | Path,
    format: ExportFormat,
    *,
    opset: int = DEFAULT_OPSET,
    exporter: Literal["auto", "dynamo", "legacy"] = "auto",
) -> Path:
    """Write model.onnx or model.torchscript.pt next to model.json and record it there.

    `exporter` picks the ONNX exporter: "auto" tries torch.export (dynamo) and falls back to the
    TorchScript-based one when the network cannot be captured.
    """
    if format not in EXPORT_FORMATS:
        raise ExportError(f"unknown export format {format!r} (choose one of {', '.join(EXPORT_FORMATS)})")
    bundle = load_bundle(bundle_dir)
    example = check_batch(bundle, 2)
    if format == "onnx":
        info = _export_onnx(bundle, example, opset, exporter)
    else:
        info = _export_torchscript(bundle, example)
    bundle.manifest.exports[format] = info
    write_manifest(bundle.path / MANIFEST_NAME, bundle.manifest)
    return bundle.path / info.file


def check_batch(bundle: Bundle, n: int, seed: int = 0) -> Tensor:
    """`n` plausible network inputs, as the bundle's input type makes them (noise images through
    the bundle's preprocessing, standard normal features, ...)."""
    gen = torch.Generator().manual_seed(seed)
    return bundle.input_type.check_batch(bundle.manifest.input, n, gen, bundle.preprocess)


def comparison_batches(bundle: Bundle, example: Tensor, axes: dict[int, str]) -> list[Tensor]:
    """What an export is compared with PyTorch on besides the traced `example`: one of its samples, and
    a new check batch of 3, cut to three quarters of the traced size along every dynamic axis but the
    batch (a sequence's time), so an export that froze the traced length fails the comparison."""
    other = check_batch(bundle, 3, seed=1)
    for axis in sorted(axes):
        if axis > 0 and other.shape[axis] > 1:
            other = other.narrow(axis, 0, max(1, other.shape[axis] * 3 // 4))
    return [example[:1], other]


def _input_shape(example: Tensor, names: _Names) -> list[int | str]:
    """The exported input's shape, an axis of any size named ('batch', 'time')."""
    return [names.axes.get(axis, size) for axis, size in enumerate(example.shape)]


@dataclass(frozen=True)
class _Names:
    """The exported graph's input and output names, and what the output means, per model kind."""

    input: str
    output: str
    meaning: str
    axes: dict[int, str]
    """The input's axes that may vary in size (the batch, and any the input type leaves open)."""


def _names(bundle: Bundle) -> _Names:
    input_type, task = bundle.input_type, bundle.task
    axes = input_type.dynamic_axes(bundle.manifest.input.network_input)
    return _Names(input_type.export_input_name, task.export_output_name, task.export_output_meaning, axes)


def _export_onnx(bundle: Bundle, example: Tensor, opset: int, exporter: str) -> ExportInfo:
    import onnx

    # Exported into a scratch folder first: a half-written or failing export never replaces a good
    # one, and an external weights file keeps the name the .onnx file refers to.
    scratch = Path(tempfile.mkdtemp(prefix=".export-", dir=bundle.path))
    try:
        tmp = scratch / ONNX_NAME
        model = bundle.model.cpu()
        nbytes = sum(t.numel() * t.element_size() for t in model.state_dict().values())
        names = _names(bundle)
        used = _export_with_fallback(
            bundle, model, example, tmp, opset, exporter, nbytes > _EXTERNAL_DATA_BYTES, names
        )
        try:
            onnx.checker.check_model(str(tmp))
            diff = _onnx_max_diff(bundle, tmp, example, names)
        except Exception as exc:  # onnx and onnxruntime raise their own exception types
            raise ExportError(
                f"{bundle.path / ONNX_NAME}: the exported model does not load ({exc})"
            ) from None
        if diff > MAX_ABS_DIFF:
            raise ExportError(
                f"{bundle.path / ONNX_NAME}: ONNX outputs differ from PyTorch "
                f"by {diff:.3g} (> {MAX_ABS_DIFF})"
            )
        for item in scratch.iterdir():
            os.replace(item, bundle.path / item.name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return ExportInfo(
        file=ONNX_NAME,
        format="onnx",
        input_name=names.input,
        output_name=names.output,
        outputs=names.meaning,
        input_shape=_input_shape(example, names),
        opset=opset,
        exporter=f"torch.onnx ({used})",
        max_abs_diff=diff,
        preprocessing=bundle.manifest.preprocessing,
    )


def _export_with_fallback(
    bundle: Bundle,
    model: torch.nn.Module,
    example: Tensor,
    path: Path,
    opset: int,
    exporter: str,
    external: bool,
    names: _Names,
) -> str:
    errors: list[str] = []
    for choice in ("dynamo", "legacy"):
        if exporter not in ("auto", choice):
            continue
        try:
            _run_onnx_exporter(model, example, path, opset, choice == "dynamo", external, names)
            return choice
        except Exception as exc:  # the exporters raise many unrelated types; all mean "not exportable"
            first = str(exc).splitlines()[0] if str(exc) else ""
            errors.append(f"{choice}: {type(exc).__name__}: {first}")
            log.info("ONNX export with the %s exporter failed: %s", choice, exc)
    raise ExportError(f"{bundle.path / ONNX_NAME}: ONNX export failed ({'; '.join(errors)})")


def _run_onnx_exporter(
    model: torch.nn.Module,
    example: Tensor,
    path: Path,
    opset: int,
    dynamo: bool,
    external: bool,
    names: _Names,
) -> None:
    with warnings.catch_warnings():
        # The TorchScript-based exporter is deprecated upstream; it is only our fallback.
        warnings.simplefilter("ignore", category=DeprecationWarning)
        warnings.simplefilter("ignore", category=FutureWarning)
        if dynamo:
            dims = {axis: torch.export.Dim(name, min=1) for axis, name in names.axes.items()}
            torch.onnx.export(
                model,
                (example,),
                str(path),
                input_names=[names.input],
                output_names=[names.output],
                opset_version=opset,
                dynamo=True,
                dynamic_shapes=(dims,),
                external_data=external,
                verbose=False,
            )
        else:
            torch.onnx.export(
                model,
                (example,),
                str(path),
                input_names=[names.input],
                output_names=[names.output],
                opset_version=opset,
                dynamo=False,
                dynamic_axes={names.input: names.axes, names.output: {0: "batch"}},
            )


def _onnx_max_diff(bundle: Bundle, path: Path, example: Tensor, names: _Names) -> float:
    import onnxruntime as ort  # type: ignore[import-untyped]

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    diff = 0.0
    # Batch sizes (and lengths along the input type's other dynamic axes) other than the traced ones
    # prove that those axes really are dynamic.
    for batch in comparison_batches(bundle, example, names.axes):
        (out,) = session.run([names.output], {names.input: batch.numpy()})
        diff = max(diff, float(np.abs(out - bundle.logits(batch).numpy()).max()))
    return diff


def _export_torchscript(bundle: Bundle, example: Tensor) -> ExportInfo:
    path = bundle.path / TORCHSCRIPT_NAME
    tmp = path.with_name(f".{path.name}.tmp")
    model = bundle.model.cpu()
    with warnings.catch_warnings():
        # torch.jit is deprecated upstream but still the format C++ and mobile runtimes load.
        warnings.simplefilter("ignore", category=FutureWarning)
        try:
            with torch.no_grad():
                traced = torch.jit.trace(model, example)  # type: ignore[no-untyped-call]
            traced.save(str(tmp))
            reloaded = torch.jit.load(str(tmp))  # type: ignore[no-untyped-call]
        except Exception as exc:  # tracing raises whatever the traced code raises
            tmp.unlink(missing_ok=True)
            raise ExportError(f"{path}: TorchScript export failed ({type(exc).__name__}: {exc})") from None
    diff = 0.0
    with torch.no_grad():
        for batch in comparison_batches(bundle, example, _names(bundle).axes):
            diff = max(diff, float((reloaded(batch) - bundle.logits(batch)).abs().max()))
    if diff > MAX_ABS_DIFF:
        tmp.unlink(missing_ok=True)
        raise ExportError(f"{path}: TorchScript logits differ from PyTorch by {diff:.3g} (> {MAX_ABS_DIFF})")
    os.replace(tmp, path)
    names = _names(bundle)
    return ExportInfo(
        file=path.name,
        format="torchscript",
        input_name=names.input,
        output_name=names.output,
        outputs=names.meaning,
        input_shape=_input_shape(example, names),
        exporter="torch.jit.trace",
        max_abs_diff=diff,
        preprocessing=bundle.manifest.preprocessing,
    )
