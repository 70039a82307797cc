"""A dummy input type for the conformance test, written as a third party would: one module.

`vector`: each sample is a fixed-length vector of D numbers (a feature embedding, a sensor reading).
The module follows docs/architecture.md's recipe "Adding an input type" and nothing else:

1. the `InputType` (`Vectors`, instance `VECTORS`), registered by the caller with one
   `register_input_type(VECTORS)` line;
2. its dataset node `dataset.vectors` (a built-in synthetic set: three Gaussian clusters, generated
   from a seed), registered by its `@register` decorator as every node family is;
3. prediction from `.vec` files (JSON: a list of vectors, or one vector) through `decode_file`;
4. its exported script's data part: a `ScriptWriter` registered for the type's name, whose loader
   hands over the targets as class labels (`TARGET_LABELS`), so every kind's blocks write them.

Nothing else in DragDL names it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, Field
from torch import Tensor

from dragdl.engine.compile import codegen_template as tpl
from dragdl.engine.compile.codegen_inputs import DataPart, ScriptWriter, register_script_writer
from dragdl.engine.compile.codegen_tasks import TARGET_LABELS
from dragdl.engine.data.base import DataContext, DatasetError, DatasetInfo, Source
from dragdl.engine.data.batches import TensorBatches
from dragdl.engine.data.pipeline import Pipeline
from dragdl.engine.data.splits import Splits
from dragdl.engine.inputs.base import BatchSettings, InputType, Prepared, RequestLimits, Shape, source_as
from dragdl.engine.inputs.sections import InputSpec
from dragdl.engine.nodes.base import DatasetNode
from dragdl.engine.nodes.registry import register

if TYPE_CHECKING:
    from dragdl.engine.compile.codegen import Writer

CLASSES = ("red", "green", "blue")
MAX_FILE_BYTES = 4 * 2**20


def make_vectors(count: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` float32 vectors of `dim` numbers around three cluster centres, and each one's cluster.
    The script's loader repeats these numpy calls in this order (PCG64 is the same everywhere)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 3.0, size=(len(CLASSES), dim))
    labels = rng.integers(0, len(CLASSES), size=count)
    values = centres[labels] + rng.normal(0.0, 1.0, size=(count, dim))
    return values.astype(np.float32), labels.astype(np.int64)


class VectorSource(Source):
    def __init__(self, values: np.ndarray, labels: np.ndarray) -> None:
        self.values = values
        self.labels = labels
        self.info = DatasetInfo(
            classes=CLASSES, channels=0, size=None, count=len(labels), shape=(values.shape[1],)
        )


class Vectors(InputType):
    name: ClassVar[str] = "vector"
    title: ClassVar[str] = "Vectors"
    export_input_name: ClassVar[str] = "vector"
    sample_files: ClassVar[tuple[str, ...]] = (".vec",)

    def edge_label(self, shape: Shape) -> str:
        return f"{shape[0]}-vector" if len(shape) == 1 else super().edge_label(shape)

    def sample_shape(self, info: DatasetInfo) -> Shape:
        assert info.shape is not None and len(info.shape) == 1
        return info.shape

    def summary(self, info: DatasetInfo) -> dict[str, Any]:
        return {"channels": 0, "size": None}

    def pipeline(
        self, source: Source, splits: Splits, prepared: Prepared, settings: BatchSettings
    ) -> Pipeline:
        vectors = source_as(source, VectorSource, self.name)
        values = torch.from_numpy(vectors.values)
        targets = torch.from_numpy(np.asarray(settings.targets))

        def part(indices: np.ndarray, shuffle: bool) -> TensorBatches | None:
            if len(indices) == 0:
                return None
            rows = torch.from_numpy(indices)
            return TensorBatches(values[rows], targets[rows], settings.batch_size, shuffle, settings.seed)

        train = part(splits.train, True)
        assert train is not None
        return Pipeline(
            train=train,
            val=part(splits.val, False),
            test=part(splits.test, False),
            stages=(),
            input_shape=(vectors.values.shape[1],),
        )

    def decode_file(self, name: str, data: bytes, spec: InputSpec, limits: RequestLimits) -> list[Tensor]:
        """A `.vec` file: JSON, one vector or a list of them, each of the network's D numbers."""
        if len(data) > MAX_FILE_BYTES:
            raise DatasetError(f"{name}: larger than {MAX_FILE_BYTES} bytes", code="file_too_large")
        try:
            parsed = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise DatasetError(f"{name}: not JSON ({exc})", code="bad_file") from None
        rows = parsed if isinstance(parsed, list) and parsed and isinstance(parsed[0], list) else [parsed]
        if len(rows) > limits.max_samples:
            raise DatasetError(
                f"{name}: {len(rows)} vectors, more than the {limits.max_samples} a request may hold",
                code="too_many_samples",
            )
        dim = spec.network_input[0]
        samples = []
        for number, row in enumerate(rows, 1):
            ok = isinstance(row, list) and len(row) == dim
            if ok and all(isinstance(v, int | float) and not isinstance(v, bool) for v in row):
                ok = all(math.isfinite(v) for v in row)
            else:
                ok = False
            if not ok:
                raise DatasetError(f"{name}: vector {number} is not a list of {dim} numbers", code="bad_file")
            samples.append(torch.tensor(row, dtype=torch.float32))
        return samples


VECTORS = Vectors()


class VectorParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    count: int = Field(600, ge=30, le=100_000, title="Vectors", description="How many to generate.")
    dim: int = Field(8, ge=1, le=1024, title="Numbers per vector")
    seed: int = Field(0, ge=0, le=2**31 - 1, title="Seed")


@register
class VectorDataset(DatasetNode[VectorParams]):
    type = "dataset.vectors"
    title = "Vectors"
    description = "Vectors of D numbers in three clusters (red, green, blue), generated from a seed."
    params_model = VectorParams
    input_type: ClassVar[InputType] = VECTORS

    def describe(self, params: VectorParams, ctx: DataContext) -> DatasetInfo:
        return DatasetInfo(classes=CLASSES, channels=0, size=None, count=params.count, shape=(params.dim,))

    def open(self, params: VectorParams, ctx: DataContext) -> VectorSource:
        return VectorSource(*make_vectors(params.count, params.dim, params.seed))

    def codegen(self, params: VectorParams) -> str:
        return f"""# {params.count} vectors of {params.dim} numbers around three cluster centres.
rng = np.random.default_rng({params.seed})
centres = rng.normal(0.0, 3.0, size=({len(CLASSES)}, {params.dim}))
labels = rng.integers(0, {len(CLASSES)}, size={params.count})
values = centres[labels] + rng.normal(0.0, 1.0, size=({params.count}, {params.dim}))
return values.astype(np.float32), labels.astype(np.int64), {list(CLASSES)!r}, None
"""


# --- the exported script's data part --------------------------------------------------------------

STDLIB_IMPORTS = (
    "import argparse",
    "from collections.abc import Callable, Iterator",
    "from functools import partial",
    "from pathlib import Path",
)

LOAD_HEAD = '''
# --- Data -----------------------------------------------------------------------------
def load_dataset() -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray | None]:
    """Vectors as float32 (N, D), each one's class index, the class names and the official
    test part (or None)."""
'''

MAIN_HEAD = """

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\\n\\n")[0])
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--out", type=Path, default=Path("model.safetensors"))
    args = parser.parse_args()
    device = pick_device()

    values, labels, classes, official_test = load_dataset()
"""

MAIN_SPLITS = """    x_all, y_all = torch.from_numpy(values), torch.from_numpy(targets)
    val = (x_all[val_idx], y_all[val_idx])
    test = (x_all[test_idx], y_all[test_idx])
    train_batches = partial(shuffled_batches, x_all[train_idx], y_all[train_idx])
"""


class VectorScript(ScriptWriter):
    def data(self, writer: Writer) -> DataPart:
        targets, helpers = writer.task_targets(TARGET_LABELS)
        data = LOAD_HEAD + writer.dataset_body() + "\n\n" + writer.blocks.split + "\n" + tpl.DERIVE_SEED
        if helpers:
            data += "\n" + helpers
        data += "\n" + tpl.SHUFFLED_BATCHES
        summary = writer.blocks.main_summary.replace(" images", " vectors")
        return DataPart(
            stdlib_imports=STDLIB_IMPORTS,
            third_party_imports=("import numpy as np", "import torch", "from torch import nn"),
            types="\nBatches = Iterator[tuple[torch.Tensor, torch.Tensor]]\n",
            data=data,
            main=MAIN_HEAD + targets + MAIN_SPLITS + summary,
            samples="vectors",
        )


register_script_writer(VECTORS.name, VectorScript())


def vec_file(vectors: Sequence[Sequence[float]]) -> bytes:
    """A `.vec` file holding `vectors`."""
    return json.dumps([list(map(float, v)) for v in vectors]).encode()
