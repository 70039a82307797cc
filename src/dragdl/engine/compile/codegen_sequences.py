"""The data part of an exported script for a sequence graph (the `sequence` input type).

It reimplements `inputs/sequences.py` for the sets a script can read (the built-in ones, whose
sequences all have one length, so no batch is padded and the network is called without lengths, as
the engine calls it): `load_dataset()` is the dataset node's own code; the operators (`OpNode.codegen`,
modules of the carried `data/sequence_ops.py`) run on whole splits, the deterministic ones once; a
Standardize features is fitted on the training steps as the deterministic operators before it leave
them (at most 20,000 sequences, drawn from SEED); operators from the first random one run per
training sample in every epoch, each sample from its own seed, as the engine's loader runs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dragdl.engine.compile import codegen_template as tpl
from dragdl.engine.compile.codegen_format import statement
from dragdl.engine.compile.codegen_inputs import (
    RESERVED,
    DataPart,
    ScriptOp,
    ScriptWriter,
    comment,
    fit_prints,
    identifiers,
    register_script_writer,
)
from dragdl.engine.compile.codegen_tasks import TARGET_LABELS
from dragdl.engine.data import sequence_ops
from dragdl.engine.data.pipeline import FIT_MAX_IMAGES
from dragdl.engine.inputs.sequences import SEQUENCES
from dragdl.engine.nodes.ops_sequence import FITTED_NAMES

if TYPE_CHECKING:
    from dragdl.engine.compile.codegen import Writer

TYPES = """
Batches = Iterator[tuple[torch.Tensor, torch.Tensor]]
"""

STDLIB_IMPORTS = (
    "import argparse",
    "import math",
    "from collections.abc import Callable, Iterator",
    "from functools import partial",
    "from pathlib import Path",
)
THIRD_PARTY_IMPORTS = ("import numpy as np", "import torch", "from torch import nn")

LOAD_HEAD = '''
# --- Data -----------------------------------------------------------------------------
def load_dataset() -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray | None]:
    """Sequences as float32 (N, T, F), each one's class index (or its number when there
    are no classes), the class names and the official test part (or None)."""
'''

TRAINING_STEPS = f'''
def training_steps(
    values: np.ndarray, train_idx: np.ndarray, ops: list[nn.Module]
) -> torch.Tensor:
    """The steps of the training sequences after `ops`, as (S, F): what a
    standardization is fitted on. Measured on at most {FIT_MAX_IMAGES:,} sequences, a
    sample drawn from SEED."""
    if len(train_idx) > {FIT_MAX_IMAGES:_}:
        rng = np.random.default_rng(derive_seed(SEED, 3))
        train_idx = np.sort(rng.choice(train_idx, size={FIT_MAX_IMAGES:_}, replace=False))
    with torch.no_grad():
        x = nn.Sequential(*ops)(torch.from_numpy(values[train_idx]))
    return x.reshape(-1, x.shape[-1])
'''

PREPARE = '''
def prepare(
    values: np.ndarray, targets: np.ndarray, indices: np.ndarray, ops: nn.Module
) -> tuple[torch.Tensor, torch.Tensor]:
    """The sequences of a split through `ops`, all at once (not every epoch)."""
    x, y = torch.from_numpy(values[indices]), torch.from_numpy(targets[indices])
    if len(indices) == 0:
        return x, y
    with torch.no_grad():
        return ops(x), y
'''

TRANSFORMS_HEAD = '''
def build_transforms(
    values: np.ndarray, train_idx: np.ndarray
) -> tuple[nn.Sequential, nn.Sequential, nn.Sequential]:
    """The operators of the training sequences before the first random one (run once)
    and from it on (run per sample, every epoch), and those of evaluation (the
    deterministic ones)."""
'''

AUGMENTED_BATCHES = '''
def augmented_batches(
    x_all: torch.Tensor, y_all: torch.Tensor, ops: nn.Module, epoch: int
) -> Batches:
    """Training batches of one epoch: order and augmentation drawn from (SEED, epoch).

    Every sequence is transformed from its own seed, so augmentation does not depend on
    the batching; torch's global generator (dropout uses it) is put back afterwards.
    """
    n = len(y_all)
    order = torch.randperm(
        n, generator=torch.Generator().manual_seed(derive_seed(SEED, epoch, 0))
    ).tolist()
    gen = torch.Generator().manual_seed(derive_seed(SEED, epoch, 1))
    seeds = torch.randint(0, 2**62, (n,), generator=gen).tolist()
    for start in range(0, n, BATCH_SIZE):
        rows = order[start : start + BATCH_SIZE]
        state = torch.get_rng_state()
        x = []
        with torch.no_grad():
            for position, row in enumerate(rows, start):
                torch.default_generator.manual_seed(seeds[position])
                x.append(ops(x_all[row]))
        torch.set_rng_state(state)
        yield torch.stack(x), y_all[rows]
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

MAIN_SPLITS = """    train_head, train_tail, eval_ops = build_transforms(values, train_idx)
    val = prepare(values, targets, val_idx, eval_ops)
    test = prepare(values, targets, test_idx, eval_ops)
    train_x, train_y = prepare(values, targets, train_idx, train_head)
"""

MAIN_PRECOMPUTED = """    train_batches = partial(shuffled_batches, train_x, train_y)
"""

MAIN_AUGMENTED = """    # Random operators: the training sequences are transformed anew in every epoch.
    train_batches = partial(augmented_batches, train_x, train_y, train_tail)
"""

_NAMES = frozenset(
    {"values", "targets", "train_head", "train_tail", "eval_ops", "training_steps", "prepare"}
    | {*FITTED_NAMES, "derive_seed", "SEED"}
    | {name for name in dir(sequence_ops) if not name.startswith("__")}
)
"""Names build_transforms sees: an operator's variable (named after its node) avoids them."""


class SequenceScript(ScriptWriter):
    def data(self, writer: Writer) -> DataPart:
        body = writer.dataset_body()
        ops, helpers = writer.operators()
        targets, target_helpers = writer.task_targets(TARGET_LABELS)
        data = LOAD_HEAD + body + "\n\n" + writer.blocks.split + "\n" + tpl.DERIVE_SEED
        if target_helpers:
            data += "\n" + target_helpers
        if any(FITTED_NAMES[0] in op.code for op in ops):
            data += "\n" + TRAINING_STEPS
        data += "\n" + PREPARE + "\n\n" + _transforms(ops)
        random = any(op.random for op in ops)
        data += "\n" + (AUGMENTED_BATCHES if random else tpl.SHUFFLED_BATCHES)
        summary = fit_prints(writer.blocks.main_summary.replace(" images", " sequences"))
        main = MAIN_HEAD + targets + MAIN_SPLITS + (MAIN_AUGMENTED if random else MAIN_PRECOMPUTED)
        return DataPart(
            stdlib_imports=STDLIB_IMPORTS,
            third_party_imports=THIRD_PARTY_IMPORTS,
            types=TYPES,
            data=data,
            main=main + summary,
            samples="sequences",
            helpers=tuple(helpers),
        )


def _sequential(name: str, codes: list[str]) -> str:
    """`name = nn.Sequential(...)`, one operator per line from two on."""
    if len(codes) < 2:
        return statement(f"{name} = ", f"nn.Sequential({', '.join(codes)})", 4)
    items = [statement("", code, 8, tail=",") for code in codes]
    return "\n".join([f"    {name} = nn.Sequential(", *items, "    )"])


def _transforms(ops: list[ScriptOp]) -> str:
    """build_transforms: each operator built once (a fitted one after measuring its statistics), then
    the three pipelines."""
    names = identifiers([op.node_id for op in ops], RESERVED | _NAMES)
    mean, std = FITTED_NAMES
    lines = [TRANSFORMS_HEAD.strip("\n")]
    for i, op in enumerate(ops):
        if mean in op.code:
            before = [names[o.node_id] for o in ops[:i] if not o.random]
            lines.append(
                comment(
                    f"{op.node_id} standardizes with statistics of the training steps as they reach "
                    "it, after the deterministic operators before it.",
                    4,
                )
            )
            steps = f"training_steps(values, train_idx, [{', '.join(before)}])"
            lines.append(statement(f"{mean}, {std} = ", f"feature_stats({steps})", 4))
        lines.append(statement(f"{names[op.node_id]} = ", op.code, 4))
    first_random = next((i for i, op in enumerate(ops) if op.random), len(ops))
    order = ", ".join(op.node_id for op in ops) or "none"
    lines.append(comment(f"Operators in graph order: {order}; random ones on training sequences only.", 4))
    lines.append(_sequential("train_head", [names[op.node_id] for op in ops[:first_random]]))
    lines.append(_sequential("train_tail", [names[op.node_id] for op in ops[first_random:]]))
    lines.append(_sequential("eval_ops", [names[op.node_id] for op in ops if not op.random]))
    lines.append("    return train_head, train_tail, eval_ops")
    return "\n".join(lines) + "\n"


register_script_writer(SEQUENCES.name, SequenceScript())
