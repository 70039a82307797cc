"""The data part of an exported script for an image graph (the `images` input type).

`load_dataset()` is the dataset node's own code; the operators (`OpNode.codegen`) become
torchvision `v2.Compose` pipelines in `build_transforms`, with uint8 images converted to floats
where the engine converts them and a Normalize "dataset" measured on the training images
(`channel_stats`). Without random operators every split is prepared once; with them the training
images are transformed anew per epoch, each from its own seed (`codegen_template.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dragdl.engine.compile import codegen_template as tpl
from dragdl.engine.compile.codegen_format import statement
from dragdl.engine.compile.codegen_inputs import (
    DataPart,
    ScriptOp,
    ScriptWriter,
    comment,
    identifiers,
    register_script_writer,
)
from dragdl.engine.inputs.images import IMAGES

if TYPE_CHECKING:
    from dragdl.engine.compile.codegen import Writer

TO_FLOAT = "v2.ToDtype(torch.float32, scale=True)"
"""The engine's uint8 -> float32 in [0, 1] conversion (`data/stages.py: to_float`)."""
FITTED_MARKER = "DATASET_MEAN"
"""Operators whose code names this are fitted on the training images (Normalize, preset "dataset")."""


class ImageScript(ScriptWriter):
    def data(self, writer: Writer) -> DataPart:
        body = writer.dataset_body()
        data = tpl.LOAD_DATASET_HEAD + body + "\n\n" + writer.blocks.split
        data += "\n" + tpl.SEEDS
        ops, helpers = writer.operators()
        if any(FITTED_MARKER in op.code for op in ops):
            data += "\n" + tpl.CHANNEL_STATS
        augmented = any(op.random for op in ops)
        data += "\n" + tpl.PREPARE + "\n\n" + _transforms(ops)
        data += "\n" + (tpl.AUGMENTED_BATCHES if augmented else tpl.SHUFFLED_BATCHES)
        b = writer.blocks
        main = b.main_head + (b.main_augmented if augmented else b.main_precomputed) + b.main_summary
        return DataPart(
            stdlib_imports=tpl.STDLIB_IMPORTS,
            third_party_imports=tpl.THIRD_PARTY_IMPORTS,
            types=tpl.TYPES,
            data=data,
            main=main,
            samples="images",
            helpers=tuple(helpers),
        )


def _compose(name: str, codes: list[str]) -> str:
    """`name = v2.Compose([...])` in build_transforms, one operator per line from two on (the
    trailing comma keeps ruff format from joining them)."""
    if len(codes) < 2:
        return statement(f"{name} = ", f"v2.Compose([{', '.join(codes)}])", 4)
    items = [statement("", code, 12, tail=",") for code in codes]
    return "\n".join([f"    {name} = v2.Compose(", "        [", *items, "        ]", "    )"])


def _with_float(ops: list[ScriptOp], at_end: bool = True) -> list[str]:
    """Operator code with the uint8 -> float conversion where the engine does it: before the first
    operator that needs floats, else (when `at_end`) after the last."""
    at = next((i for i, op in enumerate(ops) if op.needs_float), None)
    codes = [op.code for op in ops]
    if at is None:
        return [*codes, TO_FLOAT] if at_end else codes
    return [*codes[:at], TO_FLOAT, *codes[at:]]


def _transforms(ops: list[ScriptOp]) -> str:
    names = identifiers([op.node_id for op in ops])
    lines = [tpl.TRANSFORMS_HEAD.strip("\n")]
    resolved: list[ScriptOp] = []
    for op in ops:
        if FITTED_MARKER not in op.code:
            resolved.append(op)
            continue
        # channel_stats converts to float at the end itself.
        before = _with_float([o for o in resolved if not o.random], at_end=False)
        name = names[op.node_id]
        lines.append(
            comment(
                f"{op.node_id} normalizes with statistics of the training images as they reach "
                "it, after the deterministic operators before it.",
                4,
            )
        )
        lines.append(
            statement(
                "DATASET_MEAN, DATASET_STD = ",
                f"channel_stats(images, train_idx, [{', '.join(before)}])",
                4,
            )
        )
        lines.append(statement(f"{name} = ", op.code, 4))
        resolved.append(ScriptOp(op.node_id, name, op.random, op.needs_float))
    order = ", ".join(op.node_id for op in ops) or "none"
    if any(op.random for op in ops):
        lines.append(comment(f"Operators in graph order: {order}; random ones on training images only.", 4))
        lines.append(_compose("train_transform", _with_float(resolved)))
        deterministic = [op for op in resolved if not op.random]
        lines.append(_compose("eval_transform", _with_float(deterministic)))
        lines.append("    return train_transform, eval_transform")
    else:
        lines.append(
            comment(
                f"Operators in graph order: {order}. None is random, so training and evaluation "
                "images get the same transforms.",
                4,
            )
        )
        lines.append(_compose("transform", _with_float(resolved)))
        lines.append("    return transform, transform")
    return "\n".join(lines) + "\n"


register_script_writer(IMAGES.name, ImageScript())
