"""The task kinds' blocks of an exported training script, by kind name.

What a script does with its targets is the train node's task kind's: the split, the loss, the
metrics and which way early stopping looks, the report, the network's answer in target units, the
kind's own settings, and the lines of `main()` that turn what an input type loads into targets. Each
kind's blocks are one `TaskBlocks` in a module of their own (`codegen_classification.py`,
`codegen_regression.py`), registered with one `register_task_blocks` line. The kind chooses them
(`TaskKind.script_blocks`): `engine/tasks` sits below `compile`, so it can only choose among them,
as an input type chooses its data writer (`codegen_inputs.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dragdl.engine.tasks.base import TaskKind


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
    """Appended to the expression `forward` returns: the network's answer in target units
    (`z * std + mean`); empty when the outputs are used as they are (logits)."""
    targets: Mapping[str, str] = field(default_factory=dict)
    """Per input type name, the lines of `main()` that turn what the type's loader returned into
    the kind's targets and the split indices (a table's `y_all`, a sequence set's `targets`); the
    type's writer places them. An input type without an entry cannot be exported with this kind."""
    target_helpers: Mapping[str, str] = field(default_factory=dict)
    """Per input type name, definitions those lines call (a table's `class_labels`)."""

    def target_lines(self, input_type: str, task: TaskKind) -> tuple[str, str]:
        """`targets` and `target_helpers` of `input_type`; NotImplementedError naming the kind and
        the type when the kind has no lines for it."""
        lines = self.targets.get(input_type)
        if lines is None:
            raise NotImplementedError(
                f"the {task.title.lower()} kind has no script lines for {input_type} data"
            )
        return lines, self.target_helpers.get(input_type, "")


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
