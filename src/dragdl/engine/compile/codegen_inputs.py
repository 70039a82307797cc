"""The input types' writers of an exported script's data part, by input type name.

The generic writer (`codegen.py`) writes what every script shares: the configuration, the network,
the training loop and the task kind's blocks. What depends on the kind of data (reading the
dataset, the operators, batching, and the part of `main()` that prepares the splits) is written by
the dataset's input type, which names its writer (`InputType.script_writer`). The writers live here
in `compile/`, one module per input type (`codegen_images.py`, `codegen_tables.py`,
`codegen_sequences.py`), each registering itself with one `register_script_writer` line: they call
the node types' code generation, and `engine/inputs` sits below `nodes` and `compile`, so it can
only choose among them.
"""

from __future__ import annotations

import keyword
import textwrap
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch import nn

from dragdl.engine.analysis.validate import Analysis
from dragdl.engine.compile.codegen_format import WIDTH
from dragdl.engine.data.base import DataContext, Source
from dragdl.engine.graph.spec import Graph

if TYPE_CHECKING:
    from dragdl.engine.compile.codegen import Writer


RESERVED = frozenset(
    {"x", "self", "torch", "nn", "np", "v2", "images", "train_idx", "transform", "train_transform"}
    | {"eval_transform", "DATASET_MEAN", "DATASET_STD", "channel_stats", "super"}
    | set(dir(nn.Module))
)
"""Names a node's identifier avoids (`identifiers`): the script's own."""


def identifiers(node_ids: list[str], reserved: frozenset[str] = RESERVED) -> dict[str, str]:
    """A distinct Python identifier per node id ('conv-1' -> conv_1, '2' -> n2, 'train' -> train_)."""
    names: dict[str, str] = {}
    taken = set(reserved)
    for node_id in node_ids:
        name = node_id.replace("-", "_")
        if name[0].isdigit():
            name = f"n{name}"
        if keyword.iskeyword(name) or name in reserved:
            name += "_"
        candidate, n = name, 2
        while candidate in taken:
            candidate, n = f"{name}_{n}", n + 1
        taken.add(candidate)
        names[node_id] = candidate
    return names


def comment(text: str, indent: int) -> str:
    prefix = " " * indent + "# "
    return textwrap.fill(text, WIDTH, initial_indent=prefix, subsequent_indent=prefix)


def fit_prints(text: str) -> str:
    """`print(<one argument>)` lines made longer than the script's width by a word put in (a sample
    called "sequences" rather than "images"), split as `ruff format` splits them."""
    lines = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        indent = line[: len(line) - len(body)]
        if len(line) > WIDTH and body.startswith("print(") and body.endswith(")"):
            lines += [f"{indent}print(", f"{indent}    {body[6:-1]}", f"{indent})"]
        else:
            lines.append(line)
    return "\n".join(lines)


@dataclass(frozen=True)
class ScriptOp:
    """An operator node as the script writes it: its expression and how the pipeline runs it."""

    node_id: str
    code: str
    random: bool
    needs_float: bool


@dataclass(frozen=True)
class DataPart:
    """An input type's part of the script, in the order the script shows it."""

    stdlib_imports: tuple[str, ...]
    third_party_imports: tuple[str, ...]
    types: str
    """Type aliases after the configuration (`Batches`, ...)."""
    data: str
    """The data section: loading, split, operators and batches."""
    main: str
    """`main()` from its start to the line before the model is built: it leaves `train_idx`,
    `val_idx`, `test_idx`, `val`, `test`, `train_batches` and the kind's `classes` or `targets`."""
    samples: str
    """What the script's messages call a sample: "images", "rows", "sequences"."""
    helpers: tuple[str, ...] = ()
    """Definitions carried before the data section (a module of DragDL's own)."""


class ScriptWriter(ABC):
    """Writes one input type's data part of a training script."""

    def compile(
        self, graph: Graph | dict[str, object], ctx: DataContext, analysis: Analysis
    ) -> tuple[Analysis, Source | None]:
        """The analysis the script is written from, and the opened source when the writer needs
        one. The default keeps validation's analysis and opens nothing; an input type whose
        shapes depend on what operators learn (a table's one-hot widths) compiles the graph."""
        return analysis, None

    @abstractmethod
    def data(self, writer: Writer) -> DataPart:
        """The data part of the graph `writer` writes (its structure, analysis and node code)."""


WRITERS: dict[str, ScriptWriter] = {}


def register_script_writer(input_type: str, writer: ScriptWriter) -> ScriptWriter:
    """Make `writer` write the data part of `input_type`'s scripts (one line per input type)."""
    known = WRITERS.get(input_type)
    if known is not None and known is not writer:
        raise ValueError(f"input type {input_type!r} already has a script writer")
    WRITERS[input_type] = writer
    return writer
