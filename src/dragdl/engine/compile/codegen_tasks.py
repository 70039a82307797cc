"""The task kinds' blocks of an exported training script, by kind name.

What a script does with its targets is the train node's task kind's: the split, the loss, the
metrics and which way early stopping looks, the report, the network's answer in target units, the
kind's own settings, and the lines of `main()` that turn what an input type loads into targets
(per `TargetForm`). Each
kind's blocks are one `TaskBlocks` in a module of their own (`codegen_classification.py`,
`codegen_regression.py`), registered with one `register_task_blocks` line. The kind chooses them
(`TaskKind.script_blocks`): `engine/tasks` sits below `compile`, so it can only choose among them,
as an input type chooses its data writer (`codegen_inputs.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from dragdl.engine.tasks.base import TaskKind

TargetForm = Literal["column", "labels"]
"""How an input type's script loader hands over the targets, so that a kind writes its target
lines once per form, not once per input type (a new input type that loads one of these forms
exports with every kind):

- "column": `target`, a table column's raw values (numbers or text), one per row; the lines leave
  `labels` or `targets` as the kind needs, `classes`, the split indices and `y_all` (a tensor).
- "labels": `labels`, an int64 class index per sample into `classes` (or the sample's number when
  `classes` is empty), and `official_test` (indices or None); the lines leave `targets` (an array)
  and the split indices.
"""
TARGET_COLUMN: TargetForm = "column"
TARGET_LABELS: TargetForm = "labels"


@dataclass(frozen=True)
class TaskBlocks:
    """The blocks of a script that depend on the train node's task kind.

    Every block is formatted as `ruff format` writes it (88 columns), like `codegen_template.py`,
    whose kind-free blocks (device, batches, early stopping's bookkeeping) they share.
    """

    figure: str
    """What the script's docstring promises to reach as the engine does ("test accuracy")."""
    settings: Callable[[Any], list[str]]
    """The configuration lines of the kind's own params (its loss), from the train node's params
    (an instance of the kind's `TrainSettings` subclass)."""
    split: str
    """`split_indices`, the kind's split (stratified by class, plain random, ...)."""
    net_init: str
    """`Net.__init__` up to its layers: its signature, `super().__init__()` and what the network
    keeps besides its layers (a regressor's target scale)."""
    evaluate: str
    train_head: str
    train_loop: str
    train_metrics: str
    improved: str
    """Early stopping: whether `score` beats `best_score` for the monitored metric."""
    report: str
    """Definitions `main()` calls after training (print_report, save_weights)."""
    main_head: str
    """The image writer's `main()` from its start to the split and prepared val and test parts."""
    main_precomputed: str
    main_augmented: str
    main_summary: str
    """What main() prints about the data (the classes, the range of the targets)."""
    main_tail: str
    output_scaling: str = ""
    loss_expression: str = ""
    """The training loss as `train_loop` computes it (`criterion(logits, y)` in its line
    `loss = criterion(logits, y)`): where the writer adds the terms a network's layers add to the loss
    (`LayerNode.adds_loss`: a T-Net's orthogonality) as the engine's `with_added_losses` does. Empty:
    a graph with such layers cannot be exported with this kind (`codegen_unsupported` on the layer)."""
    """Appended to the expression `forward` returns: the network's answer in target units
    (`z * std + mean`); empty when the outputs are used as they are (logits)."""
    targets: Mapping[TargetForm, str] = field(default_factory=dict)
    """Per target form (`TargetForm`: how an input type's loader hands over the targets), the lines of
    `main()` that turn them into the kind's targets and the split indices; the input type's writer
    places them. A kind without lines for a form cannot be exported with the input types that use it."""
    target_helpers: Mapping[TargetForm, str] = field(default_factory=dict)
    """Per target form, definitions those lines call (a column's `class_labels`)."""

    def target_lines(self, form: TargetForm, task: TaskKind) -> tuple[str, str]:
        """`targets` and `target_helpers` of `form`; NotImplementedError naming the kind and the
        form when the kind has no lines for it."""
        lines = self.targets.get(form)
        if lines is None:
            raise NotImplementedError(
                f"the {task.title.lower()} kind has no script lines for targets given as {form}"
            )
        return lines, self.target_helpers.get(form, "")


BLOCKS: dict[str, TaskBlocks] = {}


def register_task_blocks(kind: str, blocks: TaskBlocks) -> TaskBlocks:
    """Make `blocks` the script blocks of the task kind named `kind` (one line per kind)."""
    known = BLOCKS.get(kind)
    if known is not None and known is not blocks:
        raise ValueError(f"task kind {kind!r} already has script blocks")
    BLOCKS[kind] = blocks
    return blocks


def task_blocks(task: TaskKind) -> TaskBlocks:
    """The blocks `task` chooses (`TaskKind.script_blocks`); NotImplementedError when it has none."""
    blocks = task.script_blocks(BLOCKS)
    if not isinstance(blocks, TaskBlocks):
        raise TypeError(f"task kind {task.name}: script blocks must be TaskBlocks, not {blocks!r}")
    return blocks
