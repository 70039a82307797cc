"""graph -> a readable, standalone PyTorch training script (no DragDL needed to run it).

The script is made of the node types' own code (`codegen()` of the dataset, operator and layer
nodes) and fixed blocks from `codegen_template.py` and the task kind's blocks that reimplement the
engine's split, seeding, data preparation and training loop, so that on the same seed (on CPU) it
reaches the same test figures as `dragdl run`. It is laid out as `ruff format` would write it (see
`codegen_format.py`).

`Writer` writes what every script shares (configuration, network, training loop); the train node's
task kind chooses its blocks (`codegen_tasks.py`: split, loss, metrics, report, targets) and the
dataset's input type the writer of the data part (`codegen_inputs.py`).
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from functools import partial
from typing import Any, NoReturn

from dragdl.engine.analysis.validate import Analysis, analyze
from dragdl.engine.compile import (  # noqa: F401  (registrations)
    codegen_classification,
    codegen_images,
    codegen_points,
    codegen_regression,
    codegen_sequences,
    codegen_tables,
)
from dragdl.engine.compile import codegen_template as tpl
from dragdl.engine.compile.codegen_format import (
    WIDTH,
    expression,
    ordered_imports,
    reflow,
    statement,
    string_literal,
)
from dragdl.engine.compile.codegen_inputs import (
    WRITERS,
    DataPart,
    ScriptOp,
    ScriptWriter,
    fit_prints,
    identifiers,
)
from dragdl.engine.compile.codegen_tasks import TargetForm, TaskBlocks, task_blocks
from dragdl.engine.data.base import DataContext, Source
from dragdl.engine.graph.errors import GraphError, GraphInvalid, NodeError
from dragdl.engine.graph.spec import Graph
from dragdl.engine.models.families import ScriptHelper
from dragdl.engine.nodes.base import DatasetNode, LayerNode, ModelNode, OpNode, format_shape
from dragdl.engine.tasks.settings import TrainSettings

_SCHEDULE_NOTES = {
    "step": "Multiply the learning rate by GAMMA every STEP_SIZE epochs.",
    "cosine": "Anneal the learning rate to 0 over the whole run, stepped every batch.",
    "onecycle": "One cycle over the whole run, stepped every batch: warm up to LR, then anneal.",
}


GENERIC_STDLIB_IMPORTS = ("import math",)
"""What the blocks every script holds use (the training loop's `math.ceil`), whatever its input
type's writer imports."""
GENERIC_THIRD_PARTY_IMPORTS = ("import numpy as np", "import torch", "from torch import nn")


def generate_script(
    graph: dict[str, Any] | Graph, ctx: DataContext, fast_path: dict[str, Any] | None = None
) -> str:
    """The training script of a valid graph. Raises GraphInvalid with every error otherwise, or with
    a `codegen_unsupported` error on a node that cannot be exported yet (a model node's
    weights_path, an input type or a dataset source without a script).

    `fast_path` is what a run of the graph chose for its "auto" precision and memory format
    (report.json's `fast_path`): the script then trains in that configuration, as the run did."""
    analysis = analyze(graph, ctx)
    if analysis.errors:
        raise GraphInvalid(analysis.errors)
    data_writer = _data_writer(analysis)
    analysis, source = data_writer.compile(graph, ctx, analysis)
    writer = Writer(analysis, ctx, fast_path, source)
    return writer.script(data_writer.data(writer))


def _data_writer(analysis: Analysis) -> ScriptWriter:
    """The writer the dataset's input type chooses for its data part."""
    dataset_id = analysis.structure.dataset_id
    assert dataset_id is not None  # a valid graph has its dataset
    info = analysis.structure.nodes[dataset_id]
    assert isinstance(info.kind, DatasetNode)
    try:
        writer = info.kind.input_type.script_writer(WRITERS)
    except NotImplementedError as exc:
        raise GraphInvalid(
            [GraphError(code="codegen_unsupported", message=f"{info.label}: {exc}", node_id=dataset_id)]
        ) from exc
    if not isinstance(writer, ScriptWriter):
        raise TypeError(
            f"{info.kind.input_type.name}: a script writer must be a ScriptWriter, not {writer!r}"
        )
    return writer


def blocks(helpers: list[str]) -> list[str]:
    """Each definition block once (two nodes may carry the same module), without outer blank lines."""
    return [block.strip("\n") for block in dict.fromkeys(helpers)]


def _call(attribute: str, values: list[str]) -> str:
    return f"{attribute}({', '.join(values)})"


def _fast_path_settings(config: TrainSettings, fast_path: dict[str, Any] | None) -> tuple[str, str, str, str]:
    """PRECISION and MEMORY_FORMAT of the script, with their comments: the train node's values, an
    "auto" replaced by what the run measured (fp16 is CUDA's "auto" rule, so it stays "auto")."""
    precision, layout = config.precision, config.memory_format
    probed = fast_path is not None and len(fast_path.get("measurements") or ()) > 1
    measured = (
        "measured by the DragDL run of this graph" if probed else "what the DragDL run of this graph chose"
    )
    precision_note = '"auto" (GPU: bf16 or fp16; CPU: fp32), "fp32", "bf16"'
    layout_note = '"auto": channels_last on a GPU, else contiguous'
    if fast_path is not None and precision == "auto" and fast_path["precision"] in ("fp32", "bf16"):
        precision, precision_note = fast_path["precision"], measured
    if fast_path is not None and layout == "auto":
        layout, layout_note = fast_path["memory_format"], measured
    return precision, layout, precision_note, layout_note


class Writer:
    """Writes a script's shared parts; the input type's `ScriptWriter` asks it for node code."""

    def __init__(
        self,
        analysis: Analysis,
        ctx: DataContext,
        fast_path: dict[str, Any] | None = None,
        source: Source | None = None,
    ) -> None:
        self.analysis = analysis
        self.source = source
        """The opened dataset, when the input type's writer compiled the graph (`ScriptWriter.compile`)."""
        self.fast_path = fast_path
        self.structure = analysis.structure
        self.ctx = ctx
        assert self.structure.dataset_id is not None and self.structure.train_id is not None
        config = self.structure.nodes[self.structure.train_id].params
        assert isinstance(config, TrainSettings)
        self.config = config
        self.blocks = self._task_blocks()
        """What depends on the task kind: the targets, split, loss, metrics and report."""
        self.imports: set[str] = set()
        self.transfer: str | None = None
        """The Net attribute of the model node, whose param_groups() the optimizer takes."""

    def _task_blocks(self) -> TaskBlocks:
        task, train_id = self.structure.task, self.structure.train_id
        assert task is not None and train_id is not None  # a valid graph trains
        try:
            return task_blocks(task)
        except NotImplementedError as exc:
            self.unsupported(train_id, exc)

    def task_targets(self, form: TargetForm) -> tuple[str, str]:
        """The kind's lines of main() for targets loaded in `form` and the definitions they call
        (`TaskBlocks.target_lines`), or `codegen_unsupported` on the train node."""
        task, train_id = self.structure.task, self.structure.train_id
        assert task is not None and train_id is not None
        try:
            return self.blocks.target_lines(form, task)
        except NotImplementedError as exc:
            self.unsupported(train_id, exc)

    def unsupported(self, node_id: str, exc: NotImplementedError) -> NoReturn:
        """A node the script cannot be written for: `codegen_unsupported` on it, with the reason."""
        label = self.structure.nodes[node_id].label
        raise GraphInvalid(
            [GraphError(code="codegen_unsupported", message=f"{label}: {exc}", node_id=node_id)]
        ) from exc

    def node_code(self, node_id: str, codegen: Callable[..., str], *args: Any) -> str:
        try:
            return codegen(*args)
        except NotImplementedError as exc:
            self.unsupported(node_id, exc)
        except NodeError as exc:
            raise GraphInvalid([exc.to_graph_error(node_id)]) from exc

    # -- sections --------------------------------------------------------------------------------

    def script(self, part: DataPart) -> str:
        """The whole script around the input type's data part."""
        b = self.blocks
        network = self._network()  # before the imports: model nodes add some
        train = fit_prints(self._train().replace(" training images,", f" training {part.samples},"))
        if self._loss_layers():
            train = tpl.WITH_ADDED_LOSSES.strip("\n") + "\n\n\n" + train.strip("\n")
        parts = [
            self._docstring(),
            self._imports(part.stdlib_imports, part.third_party_imports),
            self._config(uses_data_dir="DATA_DIR" in part.data) + part.types,
            *blocks(list(part.helpers)),
            part.data,
            network,
            tpl.DEVICE + "\n" + b.evaluate,
            train,
            b.report + part.main + b.main_tail,
        ]
        head, *rest = (p.strip("\n") for p in parts)
        return head + "\n\n" + rest[0] + "\n\n" + "\n\n\n".join(rest[1:]) + "\n"

    def _docstring(self) -> str:
        graph = self.analysis.graph
        title = f"{' '.join(graph.name.split())}: a PyTorch training script exported by DragDL."
        paragraphs = [textwrap.fill(title, WIDTH)]
        for paragraph in graph.description.split("\n\n"):
            if paragraph.strip():
                paragraphs.append(textwrap.fill(" ".join(paragraph.split()), WIDTH))
        figure = self.blocks.figure
        paragraphs.append(
            textwrap.fill(
                "It trains as `dragdl run` does: the same split, operators, initial weights and "
                f"per-epoch seeds, so on the CPU it reaches the same {figure}.",
                WIDTH,
            )
        )
        paragraphs.append("    python train.py [--epochs N] [--out model.safetensors]")
        text = "\n\n".join(paragraphs).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
        return f'"""{text}\n"""\n'

    def _imports(self, stdlib_imports: tuple[str, ...], third_imports: tuple[str, ...]) -> str:
        # The input type's imports, and those of the blocks every script has (the training loop's).
        stdlib = set(stdlib_imports) | set(GENERIC_STDLIB_IMPORTS)
        third = set(third_imports) | set(GENERIC_THIRD_PARTY_IMPORTS)
        for line in self.imports:
            top = line.split()[1].split(".")[0]
            (stdlib if top in sys.stdlib_module_names else third).add(line)
        return "\n".join(ordered_imports(stdlib)) + "\n\n" + "\n".join(ordered_imports(third)) + "\n"

    def _config(self, uses_data_dir: bool) -> str:
        c = self.config
        precision, memory_format, precision_note, layout_note = _fast_path_settings(c, self.fast_path)
        optimizer = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW"}[c.optimizer]
        batch_note = ""
        if c.workers > 1:
            # The workers split every batch and average their gradients: one process with the
            # whole batch takes the same steps.
            batch_note = f"  # DragDL trains it with {c.workers} workers, each a share; the same steps"
        lines: list[str] = [
            "# --- Configuration, from the train node " + "-" * 47,
            f"EPOCHS = {c.epochs}  # passes over the training split (--epochs overrides)",
            f"BATCH_SIZE = {c.batch_size}{batch_note}",
            f"LR = {c.lr!r}  # {optimizer} learning rate"
            + (" (the peak of the one-cycle schedule)" if c.schedule == "onecycle" else ""),
        ]
        if c.optimizer == "sgd":
            lines.append(f"MOMENTUM = {c.momentum!r}")
        lines.append(f"WEIGHT_DECAY = {c.weight_decay!r}")
        if c.schedule == "step":
            lines.append(f"STEP_SIZE = {c.step_size}  # epochs between learning-rate decays")
            lines.append(f"GAMMA = {c.gamma!r}  # decay factor")
        lines += self.blocks.settings(c)
        if c.early_stopping:
            lines.append(f"PATIENCE = {c.patience}  # epochs without improvement before stopping")
            lines.append(f"MONITOR = {string_literal(c.monitor)}  # the metric early stopping watches")
        lines += [
            f"SEED = {c.seed}  # the split, initial weights, batch order and augmentation follow it",
            f"VAL_SPLIT = {c.val_split!r}  # share of the samples held out for validation",
            f"TEST_SPLIT = {c.test_split!r}  # share held out for the test (if no official one)",
            f'DEVICE = {string_literal(c.device)}  # "auto" (CUDA when available), "cpu" or "cuda"',
            f"PRECISION = {string_literal(precision)}  # {precision_note}",
            f"MEMORY_FORMAT = {string_literal(memory_format)}  # {layout_note}",
        ]
        if uses_data_dir:
            lines.append("# The data dir the graph was exported with: relative dataset paths and caches.")
            lines.append(statement("DATA_DIR = ", f"Path({string_literal(str(self.ctx.data_dir))})"))
        return "\n".join(lines) + "\n"

    def dataset_body(self) -> str:
        """The dataset node's own code (`DatasetNode.codegen`) as the body of the script's loader."""
        assert self.structure.dataset_id is not None
        info = self.structure.nodes[self.structure.dataset_id]
        kind = info.kind
        assert isinstance(kind, DatasetNode) and info.params is not None
        return self.body(self.node_code(self.structure.dataset_id, kind.codegen, info.params))

    def operators(self) -> tuple[list[ScriptOp], list[str]]:
        """The operator nodes in pipeline order, each its own expression (`OpNode.codegen`), and the
        definitions their code calls (a module of DragDL's own, carried whole)."""
        ops, helpers = [], []
        for node_id in self.structure.pipeline:
            info = self.structure.nodes[node_id]
            kind = info.kind
            assert isinstance(kind, OpNode) and info.params is not None
            shape = self.analysis.shapes[self.structure.inputs[node_id][0]]
            code = self.node_code(node_id, kind.codegen, info.params, shape)
            ops.append(ScriptOp(node_id, expression(code), kind.random, kind.needs_float))
            helpers += self.script_helpers(kind.script_helpers(info.params))
        return ops, helpers

    def body(self, code: str) -> str:
        """A dataset's code as a function body: its top-level imports go to the script's top."""
        kept: list[str] = []
        after_import = False
        for line in code.strip("\n").splitlines():
            if line.startswith(("import ", "from ")):
                self.imports.add(line)
                after_import = True
            elif line.strip() or not after_import:  # the blank line after the imports goes too
                kept.append(line)
                after_import = False
        return reflow("\n".join(kept), 4)

    def _network(self) -> str:
        """class Net: one attribute per layer node (named after it), forward in graph order."""
        s = self.structure
        layers = [nid for nid in s.order if s.nodes[nid].kind.category in ("layer", "model")]
        names = identifiers(layers)
        init: list[str] = []
        calls: list[tuple[str, Callable[[list[str]], str]]] = []
        helpers: list[str] = []
        for node_id in layers:
            info = s.nodes[node_id]
            kind = info.kind
            if isinstance(kind, LayerNode) and kind.inline:
                calls.append((node_id, kind.forward_code))
                continue
            in_shapes = [self.analysis.shapes[source] for source in s.inputs[node_id]]
            ctx = self.analysis.shape_context(node_id)
            if isinstance(kind, ModelNode):
                code = self.node_code(node_id, kind.codegen, info.params, in_shapes[0], ctx)
                helpers += self._model_helpers(kind.script_helpers(info.params))
                self.transfer = names[node_id]
            else:
                assert isinstance(kind, LayerNode)
                code = self.node_code(node_id, kind.codegen, info.params, in_shapes, ctx)
                helpers += self.script_helpers(kind.script_helpers(info.params))
            attribute = f"self.{names[node_id]}"
            init.append(statement(f"{attribute} = ", expression(code), 8))
            calls.append((node_id, partial(_call, attribute)))
        argument, forward = self._forward(layers, calls, names)
        defined = [block + "\n\n" for block in blocks(helpers)]
        lines = [
            "# --- Network " + "-" * 74,
            *defined,
            "class Net(nn.Module):",
            '    """The layer nodes: one attribute each, named after the node id."""',
            "",
            *self._net_init(init),
            "",
            f"    def forward(self, {argument}: torch.Tensor) -> torch.Tensor:",
            *self._net_return(forward),
        ]
        return "\n".join(lines) + "\n"

    def _net_init(self, init: list[str]) -> list[str]:
        return [*self.blocks.net_init.split("\n"), *init]

    def _net_return(self, forward: list[str]) -> list[str]:
        *body, last = forward
        return [*body, last + self.blocks.output_scaling]

    def _model_helpers(self, family_helpers: tuple[ScriptHelper, ...]) -> list[str]:
        """The script definitions (and their imports) a model node's code calls: the transfer
        model's, then its backbone family's."""
        self.imports.update(tpl.TRANSFER_IMPORTS)
        return [tpl.TRANSFER, *self.script_helpers(family_helpers)]

    def script_helpers(self, helpers: tuple[ScriptHelper, ...]) -> list[str]:
        """The definitions a node's code calls; their imports go to the script's top."""
        for helper in helpers:
            self.imports.update(helper.imports)
        return [helper.code for helper in helpers if helper.code]

    def _forward(
        self, layers: list[str], calls: list[tuple[str, Callable[[list[str]], str]]], names: dict[str, str]
    ) -> tuple[str, list[str]]:
        """The forward argument and body. A value used once, by the very next line, stays in `x`;
        any other value gets the name of its node (`stem_relu`), so skip connections read plainly."""
        s = self.structure
        assert s.network_input is not None and s.train_id is not None
        wanted = {*layers, s.train_id}
        following: dict[str | None, str] = {None: layers[0]}
        following.update(zip(layers, [*layers[1:], s.train_id], strict=True))

        def variable(value: str, position: str | None) -> str:
            consumers = [t for t in s.outputs[value] if t in wanted]
            if consumers == [following[position]]:
                return "x"
            return "images" if position is None else names[value]

        value_name = {s.network_input: variable(s.network_input, None)}
        body = []
        for node_id, call in calls:
            value_name[node_id] = variable(node_id, node_id)
            code = call([value_name[source] for source in s.inputs[node_id]])
            line = statement(f"{value_name[node_id]} = ", code, 8)
            comment = f"  # {format_shape(self.analysis.shapes[node_id])}"
            body.append(line + comment if "\n" not in line and len(line + comment) <= WIDTH else line)
        body.append(f"        return {value_name[s.inputs[s.train_id][0]]}")
        return value_name[s.network_input], body

    def _loss_layers(self) -> list[str]:
        """The layer nodes whose modules add a term of their own to the training loss."""
        s = self.structure
        return [
            node_id
            for node_id in s.order
            if isinstance(kind := s.nodes[node_id].kind, LayerNode)
            and s.nodes[node_id].params is not None
            and kind.adds_loss(s.nodes[node_id].params)
        ]

    def _train_loop(self) -> str:
        """The kind's training loop, its loss with the layers' own terms when the network has any."""
        loop, expression = self.blocks.train_loop, self.blocks.loss_expression
        layers = self._loss_layers()
        if not layers:
            return loop
        line = f"loss = {expression}"
        if not expression or loop.count(line) != 1:
            self.unsupported(
                layers[0],
                NotImplementedError(
                    "the task kind's exported script does not say where its training loss is computed "
                    "(TaskBlocks.loss_expression), so this layer's own loss term cannot be added to it"
                ),
            )
        return loop.replace(line, f"loss = with_added_losses({expression}, model)")

    def _train(self) -> str:
        c = self.config
        optimizer = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW"}[c.optimizer]
        momentum = "momentum=MOMENTUM, " if c.optimizer == "sgd" else ""
        params = "model.parameters()" if self.transfer is None else f"model.{self.transfer}.param_groups(LR)"
        arguments = f"{params}, lr=LR, {momentum}weight_decay=WEIGHT_DECAY, fused=fused"
        lines = [self.blocks.train_head.strip("\n")]
        if self.transfer is not None:
            lines.append("    # The pretrained backbone learns at a fraction of LR (not at all when frozen).")
        lines.append(statement("optimizer = ", f"torch.optim.{optimizer}({arguments})", 4))
        lines.append(tpl.TRAIN_SETUP.rstrip("\n"))
        max_lr = "LR" if self.transfer is None else "peaks"
        schedule = {
            "step": "StepLR(optimizer, step_size=STEP_SIZE, gamma=GAMMA)",
            "cosine": "CosineAnnealingLR(optimizer, T_max=max(1, epochs * steps_per_epoch))",
            "onecycle": f"OneCycleLR(optimizer, max_lr={max_lr}, total_steps=max(1, epochs * steps_per_epoch)"
            + (", cycle_momentum=False)" if c.optimizer == "sgd" and c.momentum == 0 else ")"),
        }.get(c.schedule)
        if schedule is not None:
            lines.append(f"    # {_SCHEDULE_NOTES[c.schedule]}")
            if max_lr == "peaks" and c.schedule == "onecycle":
                lines.append("    # Each parameter group peaks at its own rate: the backbone's is lower.")
                lines.append('    peaks = [group["lr"] for group in optimizer.param_groups]')
            lines.append(statement("scheduler = ", f"torch.optim.lr_scheduler.{schedule}", 4))
        if c.early_stopping:
            lines.append(tpl.EARLY_STOPPING_INIT.rstrip("\n"))
        text = "\n".join(lines) + "\n" + self._train_loop()
        if c.schedule in ("cosine", "onecycle"):
            text += "            scheduler.step()\n"
        text += self.blocks.train_metrics
        if c.schedule == "step":
            text += "        scheduler.step()\n"
        text += tpl.EPOCH_PRINT
        if c.early_stopping:
            text += self.blocks.improved + tpl.EARLY_STOPPING_CHECK
        return text
