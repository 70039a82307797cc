"""graph -> a readable, standalone PyTorch training script (no DragDL needed to run it).

The script is made of the node types' own code (`codegen()` of the dataset, operator and layer
nodes) and fixed blocks from `codegen_template.py` that reimplement the engine's split, seeding,
data preparation and training loop, so that on the same seed (on CPU) it reaches the same test
accuracy as `dragdl run`. It is laid out as `ruff format` would write it (see `codegen_format.py`).
"""

from __future__ import annotations

import keyword
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from torch import nn

from dragdl.engine.analysis.validate import Analysis, analyze
from dragdl.engine.compile import codegen_tables as tables
from dragdl.engine.compile import codegen_template as tpl
from dragdl.engine.compile.codegen_format import WIDTH, expression, reflow, statement, string_literal
from dragdl.engine.compile.codegen_regression import REGRESSION
from dragdl.engine.data.base import DataContext
from dragdl.engine.data.tables import TableSource
from dragdl.engine.graph.errors import GraphError, GraphInvalid, NodeError
from dragdl.engine.graph.spec import Graph
from dragdl.engine.models.families import ScriptHelper
from dragdl.engine.nodes.base import DatasetNode, LayerNode, ModelNode, OpNode, format_shape
from dragdl.engine.nodes.tables import TableOpNode, TableParams
from dragdl.engine.nodes.tables import _table_file as table_file
from dragdl.engine.tasks.settings import RegressionConfig, TrainConfig

TO_FLOAT = "v2.ToDtype(torch.float32, scale=True)"
"""The engine's uint8 -> float32 in [0, 1] conversion (`data/stages.py: to_float`)."""
FITTED_MARKER = "DATASET_MEAN"
"""Operators whose code names this are fitted on the training images (Normalize, preset "dataset")."""
_SCHEDULE_NOTES = {
    "step": "Multiply the learning rate by GAMMA every STEP_SIZE epochs.",
    "cosine": "Anneal the learning rate to 0 over the whole run, stepped every batch.",
    "onecycle": "One cycle over the whole run, stepped every batch: warm up to LR, then anneal.",
}
_RESERVED = frozenset(
    {"x", "self", "torch", "nn", "np", "v2", "images", "train_idx", "transform", "train_transform"}
    | {"eval_transform", "DATASET_MEAN", "DATASET_STD", "channel_stats", "super"}
    | set(dir(nn.Module))
)


def generate_script(
    graph: dict[str, Any] | Graph, ctx: DataContext, fast_path: dict[str, Any] | None = None
) -> str:
    """The training script of a valid graph. Raises GraphInvalid with every error otherwise, or with
    a `codegen_unsupported` error on a node that cannot be exported yet (a model node's
    weights_path).

    `fast_path` is what a run of the graph chose for its "auto" precision and memory format
    (report.json's `fast_path`): the script then trains in that configuration, as the run did."""
    analysis = analyze(graph, ctx)
    if analysis.errors:
        raise GraphInvalid(analysis.errors)
    dataset_id = analysis.structure.dataset_id
    if dataset_id is not None and analysis.structure.nodes[dataset_id].kind.type == "dataset.table":
        # A One-hot's width is the categories of the training rows: compile as the engine does
        # (fitting the operators) for the network's exact shapes. Tables are small.
        from dragdl.engine.compile.plan import compile_graph

        plan = compile_graph(graph, ctx)
        assert isinstance(plan.source, TableSource)
        return _Writer(plan.analysis, ctx, fast_path).table_script(plan.source.target)
    return _Writer(analysis, ctx, fast_path).script()


@dataclass(frozen=True)
class _Op:
    node_id: str
    code: str
    random: bool
    needs_float: bool


def identifiers(node_ids: list[str], reserved: frozenset[str] = _RESERVED) -> dict[str, str]:
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


def _blocks(helpers: list[str]) -> list[str]:
    """Each definition block once (two nodes may carry the same module), without outer blank lines."""
    return [block.strip("\n") for block in dict.fromkeys(helpers)]


def _merged(lines: set[str]) -> set[str]:
    """One `from <module> import ...` line per module, as isort writes it: a carried module's
    `from torch import Tensor, nn` and the script's `from torch import nn` become one line, names in
    isort's order (constants, classes, then the rest)."""
    names: dict[str, set[str]] = {}
    merged = set()
    for line in lines:
        if not line.startswith("from "):
            merged.add(line)
            continue
        module, listed = line.removeprefix("from ").split(" import ", 1)
        names.setdefault(module, set()).update(name.strip() for name in listed.split(","))
    for module, imported in names.items():
        merged.add(f"from {module} import {', '.join(sorted(imported, key=_isort_name))}")
    return merged


def _isort_name(name: str) -> tuple[int, str]:
    bare = name.split(" as ")[0]
    kind = 0 if bare.isupper() and len(bare) > 1 else 1 if bare[:1].isupper() else 2
    return kind, bare


def _call(attribute: str, values: list[str]) -> str:
    return f"{attribute}({', '.join(values)})"


def _compose(name: str, codes: list[str]) -> str:
    """`name = v2.Compose([...])` in build_transforms, one operator per line from two on (the
    trailing comma keeps ruff format from joining them)."""
    if len(codes) < 2:
        return statement(f"{name} = ", f"v2.Compose([{', '.join(codes)}])", 4)
    items = [statement("", code, 12, tail=",") for code in codes]
    return "\n".join([f"    {name} = v2.Compose(", "        [", *items, "        ]", "    )"])


def _comment(text: str, indent: int) -> str:
    prefix = " " * indent + "# "
    return textwrap.fill(text, WIDTH, initial_indent=prefix, subsequent_indent=prefix)


def _with_float(ops: list[_Op], at_end: bool = True) -> list[str]:
    """Operator code with the uint8 -> float conversion where the engine does it: before the first
    operator that needs floats, else (when `at_end`) after the last."""
    at = next((i for i, op in enumerate(ops) if op.needs_float), None)
    codes = [op.code for op in ops]
    if at is None:
        return [*codes, TO_FLOAT] if at_end else codes
    return [*codes[:at], TO_FLOAT, *codes[at:]]


def _fast_path_settings(
    config: TrainConfig | RegressionConfig, fast_path: dict[str, Any] | None
) -> tuple[str, str, str, str]:
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


class _Writer:
    def __init__(self, analysis: Analysis, ctx: DataContext, fast_path: dict[str, Any] | None = None) -> None:
        self.analysis = analysis
        self.fast_path = fast_path
        self.structure = analysis.structure
        self.ctx = ctx
        assert self.structure.dataset_id is not None and self.structure.train_id is not None
        config = self.structure.nodes[self.structure.train_id].params
        assert isinstance(config, TrainConfig | RegressionConfig)
        self.config = config
        self.regression = isinstance(config, RegressionConfig)
        self.blocks = REGRESSION if self.regression else tpl.CLASSIFICATION
        """What depends on the kind: a Regressor's float targets, random split, loss and metrics."""
        self.imports: set[str] = set()
        self.transfer: str | None = None
        """The Net attribute of the model node, whose param_groups() the optimizer takes."""
        self.op_helpers: list[str] = []
        """Definitions the operators' code calls (a module of DragDL's own, carried whole),
        written before the data section."""

    def _node_code(self, node_id: str, codegen: Callable[..., str], *args: Any) -> str:
        try:
            return codegen(*args)
        except NotImplementedError as exc:
            label = self.structure.nodes[node_id].label
            raise GraphInvalid(
                [GraphError(code="codegen_unsupported", message=f"{label}: {exc}", node_id=node_id)]
            ) from exc
        except NodeError as exc:
            raise GraphInvalid([exc.to_graph_error(node_id)]) from exc

    # -- sections --------------------------------------------------------------------------------

    def script(self) -> str:
        body = self._dataset_body()
        data = tpl.LOAD_DATASET_HEAD + body + "\n\n" + self.blocks.split
        data += "\n" + tpl.SEEDS
        ops = self._ops()
        fitted = any(FITTED_MARKER in op.code for op in ops)
        if fitted:
            data += "\n" + tpl.CHANNEL_STATS
        augmented = any(op.random for op in ops)
        data += "\n" + tpl.PREPARE + "\n\n" + self._transforms(ops)
        data += "\n" + (tpl.AUGMENTED_BATCHES if augmented else tpl.SHUFFLED_BATCHES)
        b = self.blocks
        main = b.main_head + (b.main_augmented if augmented else b.main_precomputed)
        main += b.main_summary + b.main_tail
        network = self._network()  # before the imports: model nodes add some
        parts = [
            self._docstring(),
            self._imports(),
            self._config(uses_data_dir="DATA_DIR" in body) + tpl.TYPES,
            *_blocks(self.op_helpers),
            data,
            network,
            tpl.DEVICE + "\n" + b.evaluate,
            self._train(),
            b.report + main,
        ]
        head, *rest = (part.strip("\n") for part in parts)
        return head + "\n\n" + rest[0] + "\n\n" + "\n\n\n".join(rest[1:]) + "\n"

    def table_script(self, target: str) -> str:
        """The script of a table graph: load_table, the operators' fit/transform functions and
        build_features in place of the image loading and transforms."""
        s = self.structure
        assert s.dataset_id is not None
        params = s.nodes[s.dataset_id].params
        assert isinstance(params, TableParams)
        if params.source == "uploaded":
            params = params.model_copy(update={"source": "file", "path": self._uploaded_file(params)})
        code = self._node_code(s.dataset_id, tables.dataset_code, params, target)
        body = self._body(code)
        ops = []
        for node_id in s.pipeline:
            info = s.nodes[node_id]
            assert info.params is not None and isinstance(info.kind, TableOpNode)
            ops.append(tables.TableOp(node_id, info.kind, info.params))
            self._node_code(node_id, tables.step_code, ops[-1])  # codegen_unsupported
        names = identifiers([op.node_id for op in ops], _RESERVED | tables.reserved())
        data = tables.LOAD_TABLE_HEAD + body + "\n"
        if "read_column(" in body:
            data += "\n" + tables.READ_COLUMN
        data += "\n" + self.blocks.split + "\n" + tpl.DERIVE_SEED + "\n" + tables.COMMON
        helpers = tables.helpers(ops)
        data += "\n\n" + (helpers + "\n\n\n" if helpers else "") + tables.FEATURES.strip("\n")
        data += "\n\n\n" + tables.build_features(ops, names)
        if not self.regression:
            data += "\n" + tables.CLASS_LABELS
        data += "\n" + tables.SHUFFLED_BATCHES
        b = self.blocks
        targets = tables.REGRESSION_TARGETS if self.regression else tables.CLASSIFICATION_TARGETS
        summary = b.main_summary.replace(" images", " rows")
        main = tables.MAIN_HEAD + targets + tables.MAIN_SPLITS + summary + b.main_tail
        network = self._network()
        parts = [
            self._docstring(),
            self._imports(tables.STDLIB_IMPORTS, tables.THIRD_PARTY_IMPORTS),
            self._config(uses_data_dir="DATA_DIR" in body) + tables.TYPES,
            data,
            network,
            tpl.DEVICE + "\n" + b.evaluate,
            self._train().replace(" training images,", " training rows,"),
            b.report + main,
        ]
        head, *rest = (part.strip("\n") for part in parts)
        return head + "\n\n" + rest[0] + "\n\n" + "\n\n\n".join(rest[1:]) + "\n"

    def _uploaded_file(self, params: TableParams) -> str:
        """The file of an uploaded table, where it is stored (relative to the data dir when under it:
        the script reads it as DATA_DIR / path). compile_graph has opened it already."""
        entry = self.ctx.uploaded[params.dataset_id or ""]
        folder = entry.path if entry.path.is_absolute() else self.ctx.data_dir / entry.path
        path = table_file(folder, "dataset_id").resolve()
        data_dir = self.ctx.data_dir.resolve()
        return str(path.relative_to(data_dir)) if path.is_relative_to(data_dir) else str(path)

    def _docstring(self) -> str:
        graph = self.analysis.graph
        title = f"{' '.join(graph.name.split())}: a PyTorch training script exported by DragDL."
        paragraphs = [textwrap.fill(title, WIDTH)]
        for paragraph in graph.description.split("\n\n"):
            if paragraph.strip():
                paragraphs.append(textwrap.fill(" ".join(paragraph.split()), WIDTH))
        figure = "test MAE, RMSE and R²" if self.regression else "test accuracy"
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

    def _imports(
        self,
        stdlib_imports: tuple[str, ...] = tpl.STDLIB_IMPORTS,
        third_imports: tuple[str, ...] = tpl.THIRD_PARTY_IMPORTS,
    ) -> str:
        stdlib, third = set(stdlib_imports), set(third_imports)
        for line in self.imports:
            top = line.split()[1].split(".")[0]
            (stdlib if top in sys.stdlib_module_names else third).add(line)

        def ordered(lines: set[str]) -> list[str]:
            # isort's order: plain imports, then from-imports, each by module name.
            return sorted(_merged(lines), key=lambda s: (s.startswith("from"), s.split()[1].lower(), s))

        return "\n".join(ordered(stdlib)) + "\n\n" + "\n".join(ordered(third)) + "\n"

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
        if isinstance(c, RegressionConfig):
            lines.append(f'LOSS = {string_literal(c.loss)}  # "mse", "mae" or "huber"')
            lines.append(f"HUBER_DELTA = {c.huber_delta!r}  # where Huber turns from squared to absolute")
            lines.append(f"SCALE_TARGET = {c.scale_target}  # learn the target standardized")
        else:
            lines.append(f"LABEL_SMOOTHING = {c.label_smoothing!r}")
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

    def _dataset_body(self) -> str:
        assert self.structure.dataset_id is not None
        info = self.structure.nodes[self.structure.dataset_id]
        kind = info.kind
        assert isinstance(kind, DatasetNode) and info.params is not None
        code = self._node_code(self.structure.dataset_id, kind.codegen, info.params)
        return self._body(code)

    def _body(self, code: str) -> str:
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

    def _ops(self) -> list[_Op]:
        ops = []
        for node_id in self.structure.pipeline:
            info = self.structure.nodes[node_id]
            kind = info.kind
            assert isinstance(kind, OpNode) and info.params is not None
            shape = self.analysis.shapes[self.structure.inputs[node_id][0]]
            code = self._node_code(node_id, kind.codegen, info.params, shape)
            ops.append(_Op(node_id, expression(code), kind.random, kind.needs_float))
            self.op_helpers += self._script_helpers(kind.script_helpers(info.params))
        return ops

    def _transforms(self, ops: list[_Op]) -> str:
        names = identifiers([op.node_id for op in ops])
        lines = [tpl.TRANSFORMS_HEAD.strip("\n")]
        resolved: list[_Op] = []
        for op in ops:
            if FITTED_MARKER not in op.code:
                resolved.append(op)
                continue
            # channel_stats converts to float at the end itself.
            before = _with_float([o for o in resolved if not o.random], at_end=False)
            name = names[op.node_id]
            lines.append(
                _comment(
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
            resolved.append(_Op(op.node_id, name, op.random, op.needs_float))
        order = ", ".join(op.node_id for op in ops) or "none"
        if any(op.random for op in ops):
            lines.append(
                _comment(f"Operators in graph order: {order}; random ones on training images only.", 4)
            )
            lines.append(_compose("train_transform", _with_float(resolved)))
            deterministic = [op for op in resolved if not op.random]
            lines.append(_compose("eval_transform", _with_float(deterministic)))
            lines.append("    return train_transform, eval_transform")
        else:
            lines.append(
                _comment(
                    f"Operators in graph order: {order}. None is random, so training and evaluation "
                    "images get the same transforms.",
                    4,
                )
            )
            lines.append(_compose("transform", _with_float(resolved)))
            lines.append("    return transform, transform")
        return "\n".join(lines) + "\n"

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
                code = self._node_code(node_id, kind.codegen, info.params, in_shapes[0], ctx)
                helpers += self._model_helpers(kind.script_helpers(info.params))
                self.transfer = names[node_id]
            else:
                assert isinstance(kind, LayerNode)
                code = self._node_code(node_id, kind.codegen, info.params, in_shapes, ctx)
                helpers += self._script_helpers(kind.script_helpers(info.params))
            attribute = f"self.{names[node_id]}"
            init.append(statement(f"{attribute} = ", expression(code), 8))
            calls.append((node_id, partial(_call, attribute)))
        argument, forward = self._forward(layers, calls, names)
        blocks = [block + "\n\n" for block in _blocks(helpers)]
        lines = [
            "# --- Network " + "-" * 74,
            *blocks,
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
        if not self.regression:
            return ["    def __init__(self) -> None:", "        super().__init__()", *init]
        return [
            "    def __init__(self, target_scale: tuple[float, float] = (0.0, 1.0)) -> None:",
            "        super().__init__()",
            "        # The network learns the standardized target; forward answers in its units.",
            "        self.target_mean, self.target_std = target_scale",
            *init,
        ]

    def _net_return(self, forward: list[str]) -> list[str]:
        if not self.regression:
            return forward
        *body, last = forward
        return [*body, last + " * self.target_std + self.target_mean"]

    def _model_helpers(self, family_helpers: tuple[ScriptHelper, ...]) -> list[str]:
        """The script definitions (and their imports) a model node's code calls: the transfer
        model's, then its backbone family's."""
        self.imports.update(tpl.TRANSFER_IMPORTS)
        return [tpl.TRANSFER, *self._script_helpers(family_helpers)]

    def _script_helpers(self, helpers: tuple[ScriptHelper, ...]) -> list[str]:
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
        text = "\n".join(lines) + "\n" + self.blocks.train_loop
        if c.schedule in ("cosine", "onecycle"):
            text += "            scheduler.step()\n"
        text += self.blocks.train_metrics
        if c.schedule == "step":
            text += "        scheduler.step()\n"
        text += tpl.EPOCH_PRINT
        if c.early_stopping:
            text += self.blocks.improved + tpl.EARLY_STOPPING_CHECK
        return text
