"""The input-type contract: what a kind of data (images, tables, sequences) owns from upload to answer.

An input type is to the data what a task kind (`engine/tasks/`) is to the target. Its dataset nodes
name it (`DatasetNode.input_type`, as a train node names its kind), its name is the type of the
port its data travels on, and every layer that depends on the kind of data asks it instead of
testing for one: validation (the edge label), the compiler (operators fitted before the network),
the run (batches), bundles (the input section of model.json, decoding a prediction request),
exports (input name, dynamic axes, a check batch) and the server (upload detection, previews).

Adding an input type is one module here, registered in `registry.py`, plus its dataset node
(docs/architecture.md, "Adding an input type").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
import torch
from torch import Tensor

from dragdl.engine.data.base import DatasetInfo, Source
from dragdl.engine.data.batch import INPUT, Batch, Collate, stack
from dragdl.engine.data.pipeline import Pipeline
from dragdl.engine.data.splits import Splits
from dragdl.engine.data.stages import OpStage
from dragdl.engine.inputs.sections import EvalTransform, InputSpec, Preprocessing, PreprocessStep

Shape = tuple[int | None, ...]
"""A per-sample shape: (C, H, W) images, (F,) features, (T, F) sequences. None = unknown."""

Fitted = dict[str, dict[str, Any]]
"""What operators learned on the training split, by node id (JSON: it goes into model.json)."""


def format_shape(shape: Shape) -> str:
    return "x".join("?" if dim is None else str(dim) for dim in shape)


@dataclass(frozen=True)
class Prepared:
    """A graph's data operators as its input type runs them, after `InputType.prepare`.

    `operators` are the runtime objects the operator nodes built (`OpStage` for image operators,
    `TableStep` for table operators, ...), in pipeline order; each input type knows its own.
    `fitted` is what operators learned while preparing (before the network is built: a one-hot's
    width is the number of categories it saw); None when nothing was fitted then.
    """

    operators: tuple[Any, ...] = ()
    fitted: Fitted | None = None


@dataclass(frozen=True)
class BundleFacts:
    """What a finished run tells its input type for the bundle (`InputType.bundle_fields`)."""

    source: Source
    info: DatasetInfo
    network_input: Sequence[int | None]
    """One sample's shape entering the network."""
    operators: Sequence[Any]
    """The graph's data operators (`Prepared.operators`), in pipeline order."""
    fitted: Mapping[str, Mapping[str, Any]]
    """What operators learned, by node id: before the network (`Prepared.fitted`) or in the
    pipeline (an image Normalize's statistics)."""


@dataclass(frozen=True)
class BatchSettings:
    """How the run batches its data: the train node's settings that reach the pipeline."""

    batch_size: int
    seed: int
    device: torch.device
    targets: np.ndarray = field(repr=False)
    """The task kind's training target per sample."""


@dataclass(frozen=True)
class RequestLimits:
    """What the files of one prediction request may hold once decoded (`InputType.decode_file`)."""

    max_samples: int = 1_000
    """Samples a file may hold (the server passes what is left of its request's allowance)."""
    max_values: int = 8_000_000
    """Numbers one file's samples may hold in all (32 MB of float32)."""


class InputType(ABC):
    name: ClassVar[str]
    """The port type its data travels on and its stored name: "images", "table", "sequence"."""
    title: ClassVar[str]
    """How people call it: "Images", "Table", "Sequences"."""
    export_input_name: ClassVar[str]
    """The input's name in exported graphs (ONNX, TorchScript)."""
    samples_name: ClassVar[str] = "samples"
    """What one counts of it, in the plural: "images", "rows", "sequences" (`dragdl validate`)."""

    # -- ports and shapes ------------------------------------------------------------------------

    def edge_label(self, shape: Shape) -> str:
        """How the canvas prints a sample of this type on an edge: 1x28x28, 13 features, 28 x 28 seq."""
        return format_shape(shape)

    @abstractmethod
    def sample_shape(self, info: DatasetInfo) -> Shape:
        """One sample's shape as the dataset node outputs it: (C, H, W), (F,), (T, F)."""

    def describe_sample(self, shape: Shape) -> str:
        """One sample in words, from its shape (`sample_shape`): "1 channel(s), size 28x28",
        "28 steps x 28 features"."""
        return format_shape(shape)

    def summary(self, info: DatasetInfo) -> dict[str, Any]:
        """What validation results say of the dataset beside its classes and count
        (payloads.DatasetSummary's other fields): by default one sample's shape, in numbers and in
        words, and what its samples are called."""
        shape = self.sample_shape(info)
        return {
            "channels": info.channels,
            "size": None,
            "shape": list(shape),
            "sample": self.describe_sample(shape),
            "samples_name": self.samples_name,
        }

    # -- training --------------------------------------------------------------------------------

    def prepare(self, source: Source, operators: Sequence[Any], train_rows: np.ndarray) -> Prepared:
        """Operators ready for the pipeline; an input type whose operators must learn on the training
        rows before the network can be built (their output width depends on it) fits them here."""
        return Prepared(tuple(operators))

    @abstractmethod
    def pipeline(
        self, source: Source, splits: Splits, prepared: Prepared, settings: BatchSettings
    ) -> Pipeline:
        """Batches of every split: what `run` trains and evaluates on."""

    def collate(self) -> Collate:
        """How per-sample dicts become a batch (default: each key stacked)."""
        return stack

    # -- bundles ---------------------------------------------------------------------------------

    def bundle_fields(self, facts: BundleFacts) -> dict[str, Any]:
        """This input type's fields of model.json: `input`, `eval_transforms` and `preprocessing`
        (`inputs/sections.py`), and any section of its own.

        The default describes a (network_input) tensor prepared by the deterministic operators,
        which a bundle rebuilds from the catalog: clients without DragDL cannot repeat them."""
        transforms = [_eval_transform(op, facts.fitted) for op in facts.operators if _deterministic(op)]
        return {
            "input": InputSpec(channels=1, size=None, network_input=list(facts.network_input)),
            "eval_transforms": transforms,
            "preprocessing": Preprocessing(
                channels=1,
                size=None,
                steps=[PreprocessStep(op=t.type, params=t.params, fitted=t.fitted) for t in transforms],
                portable=False,
                input_shape=list(facts.network_input),
            ),
        }

    # -- exports ---------------------------------------------------------------------------------

    def dynamic_axes(self, network_input: Sequence[int | None]) -> dict[int, str]:
        """The exported input's axes that may vary: the batch, and any per-sample axis of unknown size."""
        return {0: "batch"}

    def check_batch(
        self, spec: InputSpec, n: int, generator: torch.Generator, preprocess: Callable[[Tensor], Tensor]
    ) -> Tensor:
        """`n` plausible network inputs for comparing an export with PyTorch: by default standard
        normal values of the network's input shape (standardized features are of that scale), 32
        along an axis of any size. `preprocess` turns a raw sample into a network input."""
        dims = [32 if dim is None else dim for dim in spec.network_input]
        return torch.randn((n, *dims), generator=generator)

    # -- answers ---------------------------------------------------------------------------------

    def model_fields(self, manifest: Mapping[str, Any]) -> dict[str, Any]:
        """What a model row keeps of a bundle of this type, beside its task (listing models reads no
        bundle): e.g. a table model's input columns and target."""
        return {}

    # -- exported scripts ------------------------------------------------------------------------

    def script_writer(self, writers: Mapping[str, object]) -> object:
        """What writes this type's data part of an exported training script (reading the dataset,
        the operators, batching), chosen from `writers`, the code generator's by input type name.

        The writers live in `compile/` (`codegen_<type>.py`): they call the nodes' own code, and this
        package sits below `nodes` and `compile`. An input type may answer another type's writer or
        one of its own; without one it cannot be exported, and NotImplementedError says so (the code
        generator reports it as `codegen_unsupported` on the dataset node)."""
        writer = writers.get(self.name)
        if writer is None:
            raise NotImplementedError(f"{self.title} cannot be exported as a training script yet")
        return writer

    # -- prediction ------------------------------------------------------------------------------

    predicts_from: ClassVar[Literal["files", "rows"]] = "files"
    """What a prediction request carries: uploaded files, or rows of named values (tables)."""
    sample_files: ClassVar[tuple[str, ...]] = ()
    """The file suffixes `decode_file` reads. Empty: the type's files take a path of its own (images:
    the micro-batched image path, with the paper's inversion and pixel limits)."""

    def decode_file(self, name: str, data: bytes, spec: InputSpec, limits: RequestLimits) -> list[Tensor]:
        """The raw samples an uploaded file holds (before the evaluation operators), each as the dataset
        would have held it; a file may hold several. Raises DatasetError naming the file (and the line)
        of what cannot be used, within `limits`."""
        raise NotImplementedError(f"{self.title} models do not read uploaded sample files")

    def predict_batch(self, samples: Sequence[Tensor]) -> Batch:
        """Prepared samples of one request as the network's batch (default: stacked)."""
        return {INPUT: torch.stack(list(samples))}

    # -- uploads ---------------------------------------------------------------------------------

    upload_fallback: ClassVar[bool] = False
    """Whether this type takes, as a last guess, unpacked uploads that no other type claims (images:
    any folder is class folders to its reader, which says what is wrong). The server asks the other
    types first, and offers loose files (not an archive) only to the others."""
    upload_loose_only: ClassVar[bool] = False
    """Whether this type claims only files sent as they are, never an archive's content (a table is
    uploaded on its own)."""

    def detect_upload(self, root: Path, options: Mapping[str, str] | None = None) -> str | None:
        """The stored kind of an uploaded dataset (`datasets.kind`) when `root`, the received file or
        folder once unpacked, holds data this type reads; None when it does not. The server asks each
        registered type in turn (`upload_fallback` types last), so a type claims only layouts
        that are unmistakably its own (a `.ts` file, `X.npy` with labels), or that the upload's
        `options` (its form's other fields, as sent: a recording's `label_column`, `window` and
        `stride`) say are its own. Checks nothing: `describe_upload` reports what is wrong."""
        return None

    def describe_upload(
        self, kind: str, root: Path, options: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """What the server stores of an upload this type detected as `kind`, read whole within the
        type's limits: `format`, `classes`, `counts` and `count` (as for images), whatever the type's
        preview needs, bounded in size (a few samples, statistics), `node_params`, the params its
        dataset node needs beside the dataset's id, if any (a recording's label column, window and
        stride), and `reader_file`, the file under `root` its reader takes when not `root` itself (an
        image listing's CSV; the server keeps it as the dataset's path, not in its description).
        Raises DatasetError naming the file and line, or the option, that cannot be used."""
        raise NotImplementedError(f"{self.title} uploads are not read")


T = TypeVar("T")


def source_as(source: Source, kind: type[T], input_name: str) -> T:
    """`source` as the kind of source an input type reads; a TypeError naming both otherwise."""
    if not isinstance(source, kind):
        raise TypeError(f"a {input_name} input needs a {kind.__name__}, not {type(source).__name__}")
    return source


def operators_as(operators: Sequence[Any], kind: type[T], input_name: str) -> list[T]:
    """`operators` as the kind of operator an input type runs; a TypeError naming both otherwise."""
    found = list(operators)
    for operator in found:
        if not isinstance(operator, kind):
            raise TypeError(f"a {input_name} input takes {kind.__name__}s, not {type(operator).__name__}")
    return found


def _deterministic(operator: Any) -> bool:
    return not bool(getattr(operator, "random", False))


def _eval_transform(operator: OpStage, fitted: Mapping[str, Mapping[str, Any]]) -> EvalTransform:
    """An operator as a bundle keeps it: its node type, params and input shape, and what it learned."""
    learned = fitted.get(operator.node_id)
    return EvalTransform(
        node_id=operator.node_id,
        type=operator.type,
        params=dict(operator.params),
        in_shape=list(operator.in_shape),
        needs_float=operator.needs_float,
        fitted=dict(learned) if learned is not None else None,
    )
