"""Sequence layer nodes: recurrent layers, 1-D convolution and pooling over time, and the layers that
turn a sequence into one feature vector.

They take the `sequence` port (a dataset's T steps of F features) or a `tensor` of shape (T, F)
from another sequence layer, and give (T', H): the hidden state or filters at every step. Global
pooling over time and Last step give (H,), after which Linear and the other flat layers follow.
T is None when the sequences differ in length; the recurrent layers then pack each batch by its
lengths, so the padding never reaches their state.

Their modules (`network/sequence_layers.py`) import only torch: the exported script carries that
file's source once (`script_helpers`) and writes each layer as `Recurrent(...)`, `Conv1dTime(...)`.
"""

from __future__ import annotations

import ast
import inspect
from types import ModuleType
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from dragdl.engine.graph.errors import NodeError
from dragdl.engine.models.families import ScriptHelper
from dragdl.engine.network import sequence_layers as modules
from dragdl.engine.network.sequence_layers import Conv1dTime, GlobalPoolTime, LastStep, Pool1dTime, Recurrent
from dragdl.engine.nodes.base import EmptyParams, LayerNode, Shape, ShapeContext, format_shape
from dragdl.engine.nodes.calls import Call
from dragdl.engine.nodes.registry import Port, register

_STRICT = ConfigDict(extra="forbid")
SEQUENCE_IN = Port("in", ("sequence", "tensor"), label="sequence")
"""What a sequence layer takes: the dataset's sequences, or another sequence layer's (T, F)."""


def carried_module(module: ModuleType, purpose: str) -> ScriptHelper:
    """A torch-only module as the exported script carries it: its definitions (without the module
    docstring and imports) under a comment naming where they come from, and its imports one name a
    line, so that the script's own `from torch import nn` is not repeated. `from __future__` is
    dropped: the script runs on Python versions that evaluate these annotations as written."""
    source = inspect.getsource(module)
    tree = ast.parse(source)
    lines = source.splitlines()
    imports: list[str] = []
    skipped: set[int] = set()
    for index, statement in enumerate(tree.body):
        docstring = (
            index == 0 and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        )
        if not (docstring or isinstance(statement, ast.Import | ast.ImportFrom)):
            continue
        assert statement.end_lineno is not None
        skipped.update(range(statement.lineno - 1, statement.end_lineno))
        if isinstance(statement, ast.Import):
            imports += [
                f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                for alias in statement.names
            ]
        elif isinstance(statement, ast.ImportFrom) and statement.module != "__future__":
            imports += [
                f"from {statement.module} import {alias.name}"
                + (f" as {alias.asname}" if alias.asname else "")
                for alias in statement.names
            ]
    body = "\n".join(line for number, line in enumerate(lines) if number not in skipped).strip("\n")
    name = module.__name__.removeprefix("dragdl.engine.").replace(".", "/")
    head = f"# DragDL's {name}.py, carried whole: {purpose}."
    return ScriptHelper(head + "\n\n" + body + "\n", tuple(imports))


LAYERS_HELPER = carried_module(modules, "the sequence layers' modules")


def _from(ctx: ShapeContext) -> str:
    return f" from node {ctx.input_nodes[0]}" if ctx.input_nodes else ""


def _steps(node: LayerNode[Any], shape: Shape, ctx: ShapeContext) -> tuple[int | None, int]:
    """(T, F) of the input, or a NodeError saying what the layer expects and what it receives."""
    if len(shape) == 2 and shape[1] is not None:
        return shape[0], shape[1]
    hint = (
        "it must come before global pooling over time or Last step, which end the sequence"
        if len(shape) == 1
        else "connect a sequence dataset (or a sequence layer) to it"
    )
    raise NodeError(
        "shape_mismatch",
        f"{node.title} expects a sequence TxF (steps x features) but receives {format_shape(shape)}"
        f"{_from(ctx)}; {hint}",
        input_shape=format_shape(shape),
    )


class _SequenceLayer(LayerNode[Any]):
    inputs: ClassVar = (SEQUENCE_IN,)

    def script_helpers(self, params: Any) -> tuple[ScriptHelper, ...]:
        return (LAYERS_HELPER,)


# --- recurrent layers --------------------------------------------------------------------------


class RecurrentParams(BaseModel):
    model_config = _STRICT
    hidden_size: int = Field(
        64, ge=1, le=4096, title="Hidden size", description="Numbers the layer remembers at each step."
    )
    num_layers: int = Field(
        1,
        ge=1,
        le=8,
        title="Layers",
        description="Recurrent layers stacked on each other, each reading the one below.",
    )
    bidirectional: bool = Field(
        False,
        title="Bidirectional",
        description="Also read each sequence backwards and put both readings side by side "
        "(twice the outputs).",
    )
    dropout: float = Field(
        0.0,
        ge=0.0,
        lt=1.0,
        title="Dropout",
        description="Probability of zeroing each value between stacked layers while training "
        "(needs 2 or more layers).",
    )


class _Recurrent(_SequenceLayer):
    params_model = RecurrentParams
    cell: ClassVar[Literal["rnn", "lstm", "gru"]]

    def infer(self, params: RecurrentParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        steps, _ = _steps(self, inputs[0], ctx)
        if params.dropout > 0 and params.num_layers == 1:
            # torch applies it between stacked layers only: with one layer it would do nothing.
            raise NodeError(
                "param_invalid",
                f"dropout ({params.dropout}) acts between stacked layers: set Layers to 2 or more, "
                "or dropout to 0",
                field="dropout",
            )
        return (steps, params.hidden_size * (2 if params.bidirectional else 1))

    def module(self, params: RecurrentParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        _, features = _steps(self, inputs[0], ctx)
        options: dict[str, Any] = {"cell": self.cell}  # always written: the script reads better so
        if params.num_layers != 1:
            options["num_layers"] = params.num_layers
        if params.bidirectional:
            options["bidirectional"] = True
        if params.dropout:
            options["dropout"] = params.dropout
        return Call(Recurrent, "Recurrent", (features, params.hidden_size), options)


@register
class RNN(_Recurrent):
    type = "layer.RNN"
    title = "RNN"
    description = (
        "Simple recurrent layer: reads the sequence step by step, updating a memory of hidden_size numbers. "
        "Gives that memory at every step; LSTM and GRU remember longer."
    )
    cell = "rnn"


@register
class LSTM(_Recurrent):
    type = "layer.LSTM"
    title = "LSTM"
    description = (
        "Long short-term memory: a recurrent layer whose gates decide what to keep and forget, so it "
        "remembers over many steps. Gives its memory at every step; end with Last step or global pooling."
    )
    cell = "lstm"


@register
class GRU(_Recurrent):
    type = "layer.GRU"
    title = "GRU"
    description = (
        "Gated recurrent unit: like an LSTM with fewer gates, often as good and faster. Gives its memory "
        "at every step; end with Last step or global pooling."
    )
    cell = "gru"


# --- convolution and pooling over time ---------------------------------------------------------


def _window_out(steps: int | None, kernel: int, stride: int, padding: int, dilation: int = 1) -> int | None:
    if steps is None:
        return None
    return (steps + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _check_steps(node: LayerNode[Any], shape: Shape, out: int | None, field: str, ctx: ShapeContext) -> None:
    if out is not None and out < 1:
        raise NodeError(
            "shape_mismatch",
            f"{node.title}: the input {format_shape(shape)}{_from(ctx)} has too few steps for this {field}; "
            "the output would be empty. Use a smaller kernel or fewer pooling layers, or longer sequences",
            field=field,
            input_shape=format_shape(shape),
        )


class Conv1dParams(BaseModel):
    model_config = _STRICT
    out_channels: int = Field(
        32, ge=1, le=4096, title="Filters", description="Number of filters: the features each step gets."
    )
    kernel_size: int = Field(3, ge=1, le=63, title="Kernel size", description="Steps each filter looks at.")
    stride: int = Field(1, ge=1, le=16, title="Stride", description="Steps between filter positions.")
    padding: Literal["same", "valid"] | int = Field(
        "same",
        title="Padding",
        description="'same' keeps the number of steps (divided by the stride), 'valid' adds none, "
        "or a number of zero steps on each side.",
    )
    dilation: int = Field(
        1,
        ge=1,
        le=32,
        title="Dilation",
        description="Spacing between the steps a filter looks at (1 = adjacent).",
    )


def _conv1d_padding(params: Conv1dParams) -> int | Literal["same"]:
    if params.padding == "valid":
        return 0
    if params.padding == "same":
        span = params.dilation * (params.kernel_size - 1)
        if span % 2 == 0:
            return span // 2
        if params.stride == 1:
            return "same"  # torch pads the odd step on the right
        raise NodeError(
            "param_invalid",
            f"padding 'same' with an even kernel_size ({params.kernel_size}) needs stride 1, "
            f"not {params.stride}",
            field="padding",
        )
    if not 0 <= params.padding <= 64:
        raise NodeError("param_invalid", f"padding ({params.padding}) must be in 0..64", field="padding")
    return params.padding


@register
class Conv1d(_SequenceLayer):
    type = "layer.Conv1d"
    title = "Conv1d"
    description = (
        "1-D convolution over time: learns filters that respond to short patterns (a peak, a rise) "
        "wherever they occur in the sequence."
    )
    params_model = Conv1dParams

    def infer(self, params: Conv1dParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        steps, _ = _steps(self, inputs[0], ctx)
        padding = _conv1d_padding(params)
        out = (
            steps
            if padding == "same"
            else _window_out(steps, params.kernel_size, params.stride, padding, params.dilation)
        )
        _check_steps(self, inputs[0], out, "kernel_size", ctx)
        return (out, params.out_channels)

    def module(self, params: Conv1dParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        _, features = _steps(self, inputs[0], ctx)
        options: dict[str, Any] = {}
        if params.stride != 1:
            options["stride"] = params.stride
        padding = _conv1d_padding(params)
        if padding != 0:
            options["padding"] = padding
        if params.dilation != 1:
            options["dilation"] = params.dilation
        return Call(Conv1dTime, "Conv1dTime", (features, params.out_channels, params.kernel_size), options)


class Pool1dParams(BaseModel):
    model_config = _STRICT
    kernel_size: int = Field(2, ge=1, le=64, title="Kernel size", description="Steps in each window.")
    stride: int | None = Field(
        None, ge=1, le=64, title="Stride", description="Steps between windows; empty = kernel_size."
    )


class _Pool1d(_SequenceLayer):
    params_model = Pool1dParams
    mode: ClassVar[Literal["max", "avg"]]

    def infer(self, params: Pool1dParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        steps, features = _steps(self, inputs[0], ctx)
        out = _window_out(steps, params.kernel_size, params.stride or params.kernel_size, 0)
        _check_steps(self, inputs[0], out, "kernel_size", ctx)
        return (out, features)

    def module(self, params: Pool1dParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        _steps(self, inputs[0], ctx)
        options = {"stride": params.stride} if params.stride and params.stride != params.kernel_size else {}
        return Call(Pool1dTime, "Pool1dTime", (self.mode, params.kernel_size), options)


@register
class MaxPool1d(_Pool1d):
    type = "layer.MaxPool1d"
    title = "MaxPool1d"
    description = (
        "Keeps the strongest value of each feature in each window of steps, halving the steps by default."
    )
    mode = "max"


@register
class AvgPool1d(_Pool1d):
    type = "layer.AvgPool1d"
    title = "AvgPool1d"
    description = "Averages each feature over each window of steps, halving the steps by default."
    mode = "avg"


# --- from a sequence to one vector -------------------------------------------------------------


class GlobalPoolTimeParams(BaseModel):
    model_config = _STRICT
    mode: Literal["mean", "max"] = Field(
        "mean",
        title="Pooling",
        description="'mean' averages each feature over the steps; 'max' keeps its largest value.",
    )


@register
class GlobalPoolTimeLayer(_SequenceLayer):
    type = "layer.GlobalPoolTime"
    title = "Global pooling over time"
    description = (
        "Pools each feature over all steps of the sequence (its real steps only, when lengths differ): "
        "TxF becomes F features for Linear layers."
    )
    params_model = GlobalPoolTimeParams

    def infer(self, params: GlobalPoolTimeParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        return (_steps(self, inputs[0], ctx)[1],)

    def module(self, params: GlobalPoolTimeParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        _steps(self, inputs[0], ctx)
        return Call(GlobalPoolTime, "GlobalPoolTime", (params.mode,) if params.mode != "mean" else ())


@register
class LastStepLayer(_SequenceLayer):
    type = "layer.LastStep"
    title = "Last step"
    description = (
        "Keeps each sequence's last real step: after an RNN, LSTM or GRU, its memory of the whole "
        "sequence. TxF becomes F features for Linear layers."
    )
    params_model = EmptyParams

    def infer(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Shape:
        return (_steps(self, inputs[0], ctx)[1],)

    def module(self, params: EmptyParams, inputs: list[Shape], ctx: ShapeContext) -> Call:
        _steps(self, inputs[0], ctx)
        return Call(LastStep, "LastStep")
