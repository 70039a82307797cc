"""Sequence layer nodes: shapes inferred from (T, F), errors naming the field and shapes, built
modules that give those shapes (with and without lengths), and the exported script's code."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from dragdl.engine.compile.codegen_format import ordered_imports
from dragdl.engine.compile.codegen_template import THIRD_PARTY_IMPORTS
from dragdl.engine.graph.errors import NodeError
from dragdl.engine.models.families import ScriptHelper
from dragdl.engine.network.module import GraphModule, takes_lengths
from dragdl.engine.nodes.base import LayerNode, Shape, ShapeContext
from dragdl.engine.nodes.ops_sequence import OPS_HELPER
from dragdl.engine.nodes.registry import get_node_type
from dragdl.engine.nodes.sequence_layers import LAYERS_HELPER

SEQUENCE_TYPES = (
    "layer.RNN",
    "layer.LSTM",
    "layer.GRU",
    "layer.Conv1d",
    "layer.MaxPool1d",
    "layer.AvgPool1d",
    "layer.GlobalPoolTime",
    "layer.LastStep",
)


def layer(type_name: str) -> LayerNode[Any]:
    kind = get_node_type(type_name)
    assert isinstance(kind, LayerNode)
    return kind


def ctx(tmp_path: Path, *sources: str) -> ShapeContext:
    return ShapeContext(num_outputs=3, data_dir=tmp_path, node_id="n2", input_nodes=sources)


def infer(type_name: str, params: dict[str, Any], shape: Shape, tmp_path: Path) -> Shape:
    kind = layer(type_name)
    return kind.infer(kind.params_model.model_validate(params), [shape], ctx(tmp_path))


def test_every_sequence_layer_takes_the_sequence_port_and_gives_a_tensor() -> None:
    for type_name in SEQUENCE_TYPES:
        kind = layer(type_name)
        assert kind.inputs[0].types == ("sequence", "tensor"), type_name
        assert kind.outputs[0].types == ("tensor",), type_name


@pytest.mark.parametrize(
    ("type_name", "params", "shape", "expected"),
    [
        ("layer.LSTM", {}, (28, 28), (28, 64)),
        ("layer.LSTM", {"hidden_size": 32, "bidirectional": True}, (28, 28), (28, 64)),
        ("layer.GRU", {"hidden_size": 16, "num_layers": 3, "dropout": 0.2}, (None, 3), (None, 16)),
        ("layer.RNN", {"hidden_size": 8, "bidirectional": True}, (None, 1), (None, 16)),
        ("layer.Conv1d", {"out_channels": 8}, (100, 3), (100, 8)),  # 'same', odd kernel
        ("layer.Conv1d", {"out_channels": 8, "stride": 2}, (100, 3), (50, 8)),
        ("layer.Conv1d", {"out_channels": 8, "stride": 2}, (101, 3), (51, 8)),
        ("layer.Conv1d", {"kernel_size": 4}, (100, 3), (100, 32)),  # 'same' with an even kernel
        ("layer.Conv1d", {"kernel_size": 5, "padding": "valid"}, (100, 3), (96, 32)),
        ("layer.Conv1d", {"kernel_size": 3, "padding": "valid", "dilation": 4}, (100, 3), (92, 32)),
        ("layer.Conv1d", {"kernel_size": 3, "padding": 2, "stride": 3}, (100, 3), (34, 32)),
        ("layer.Conv1d", {"out_channels": 4}, (None, 3), (None, 4)),
        ("layer.MaxPool1d", {}, (28, 16), (14, 16)),
        ("layer.AvgPool1d", {"kernel_size": 3, "stride": 2}, (28, 16), (13, 16)),
        ("layer.MaxPool1d", {"kernel_size": 4}, (None, 16), (None, 16)),
        ("layer.GlobalPoolTime", {}, (28, 16), (16,)),
        ("layer.GlobalPoolTime", {"mode": "max"}, (None, 16), (16,)),
        ("layer.LastStep", {}, (None, 64), (64,)),
    ],
)
def test_shapes_follow_the_steps_and_features(
    type_name: str, params: dict[str, Any], shape: Shape, expected: Shape, tmp_path: Path
) -> None:
    assert infer(type_name, params, shape, tmp_path) == expected


def test_a_sequence_layer_given_an_image_names_what_it_expects_and_receives(tmp_path: Path) -> None:
    kind = layer("layer.Conv1d")
    with pytest.raises(NodeError, match=r"expects a sequence TxF .* receives 1x28x28 from node conv") as exc:
        kind.infer(kind.params_model.model_validate({}), [(1, 28, 28)], ctx(tmp_path, "conv"))
    assert exc.value.details["input_shape"] == "1x28x28"
    with pytest.raises(NodeError, match="receives 64; it must come before global pooling over time"):
        infer("layer.LSTM", {}, (64,), tmp_path)


@pytest.mark.parametrize(
    ("shape", "fix", "suggest"),
    [
        ((28, 128), "a Last step or a Global pooling over time", "pool_time"),
        ((16, 7, 7), "a Flatten", "flatten"),
    ],
)
def test_a_linear_after_steps_or_maps_says_what_makes_one_vector_of_them(
    shape: Shape, fix: str, suggest: str, tmp_path: Path
) -> None:
    """After an LSTM, the fix is a Last step or pooling over time, not the images' Flatten."""
    with pytest.raises(NodeError, match=f"receives {'x'.join(map(str, shape))}: add {fix}") as exc:
        infer("layer.Linear", {"out_features": 10}, shape, tmp_path)
    assert exc.value.details["suggest"] == suggest  # the Chinese UI words the fix from it


@pytest.mark.parametrize(
    ("type_name", "params", "shape", "field", "words"),
    [
        ("layer.Conv1d", {"kernel_size": 9, "padding": "valid"}, (5, 2), "kernel_size", "input 5x2"),
        ("layer.MaxPool1d", {"kernel_size": 8}, (5, 2), "kernel_size", "too few steps"),
        (
            "layer.Conv1d",
            {"kernel_size": 4, "stride": 2},
            (50, 2),
            "padding",
            r"even kernel_size \(4\) needs stride 1",
        ),
        ("layer.Conv1d", {"padding": 65}, (50, 2), "padding", r"padding \(65\) must be in 0..64"),
        ("layer.LSTM", {"dropout": 0.3}, (50, 2), "dropout", r"dropout \(0.3\) acts between stacked"),
    ],
)
def test_bad_settings_are_errors_naming_the_field(
    type_name: str, params: dict[str, Any], shape: Shape, field: str, words: str, tmp_path: Path
) -> None:
    with pytest.raises(NodeError, match=words) as exc:
        infer(type_name, params, shape, tmp_path)
    assert exc.value.field == field


BUILD_CASES: list[tuple[str, dict[str, Any]]] = [
    ("layer.RNN", {"hidden_size": 5}),
    ("layer.LSTM", {"hidden_size": 6, "bidirectional": True}),
    ("layer.GRU", {"hidden_size": 4, "num_layers": 2, "dropout": 0.1}),
    ("layer.Conv1d", {"out_channels": 5, "kernel_size": 4}),
    ("layer.Conv1d", {"out_channels": 5, "kernel_size": 3, "stride": 2, "dilation": 2}),
    ("layer.Conv1d", {"out_channels": 5, "kernel_size": 3, "padding": "valid"}),
    ("layer.MaxPool1d", {"kernel_size": 3}),
    ("layer.AvgPool1d", {"kernel_size": 2, "stride": 1}),
    ("layer.GlobalPoolTime", {"mode": "max"}),
    ("layer.GlobalPoolTime", {}),
    ("layer.LastStep", {}),
]


@pytest.mark.parametrize(("type_name", "params"), BUILD_CASES)
def test_built_modules_give_the_inferred_shapes(
    type_name: str, params: dict[str, Any], tmp_path: Path
) -> None:
    kind = layer(type_name)
    parsed = kind.params_model.model_validate(params)
    module = kind.build(parsed, [(11, 3)], ctx(tmp_path)).eval()
    x = torch.randn(4, 11, 3)
    out = module(x)
    assert (4, *kind.infer(parsed, [(11, 3)], ctx(tmp_path))) == tuple(out.shape)
    if takes_lengths(module):  # padded sequences of several lengths: the same shape
        lengths = torch.tensor([11, 7, 1, 4])
        assert module(x, lengths).shape == out.shape
    # An unknown T infers None there (a flat output keeps its width), and the module takes any T.
    unknown = kind.infer(parsed, [(None, 3)], ctx(tmp_path))
    longer = module(torch.randn(2, 20, 3))
    assert len(unknown) == longer.ndim - 1 and unknown[-1] == longer.shape[-1]
    assert len(unknown) == 1 or unknown[0] is None


def _network(tmp_path: Path, chain: list[tuple[str, dict[str, Any]]], shape: Shape) -> GraphModule:
    layers: dict[str, nn.Module] = {}
    order: list[tuple[str, tuple[str, ...]]] = []
    previous = GraphModule.INPUT
    for index, (type_name, params) in enumerate(chain):
        kind = layer(type_name)
        parsed = kind.params_model.model_validate(params)
        node_id = f"n{index}"
        layers[node_id] = kind.build(parsed, [shape], ctx(tmp_path))
        shape = kind.infer(parsed, [shape], ctx(tmp_path))
        order.append((node_id, (previous,)))
        previous = node_id
    return GraphModule(layers, GraphModule.plan_steps(order, previous), previous).eval()


@pytest.mark.parametrize("last", ["layer.LastStep", "layer.GlobalPoolTime"])
def test_padding_never_reaches_the_answer_when_lengths_are_given(last: str, tmp_path: Path) -> None:
    # A padded batch with its lengths answers as each sequence alone, unpadded.
    torch.manual_seed(0)
    net = _network(
        tmp_path, [("layer.GRU", {"hidden_size": 6, "bidirectional": True}), (last, {})], (None, 2)
    )
    sequences = [torch.randn(n, 2) for n in (9, 4, 1)]
    batch = torch.zeros(3, 9, 2)
    for row, sequence in enumerate(sequences):
        batch[row, : len(sequence)] = sequence
    with torch.no_grad():
        padded = net(batch, torch.tensor([9, 4, 1]))
        alone = torch.cat([net(sequence[None]) for sequence in sequences])
    assert padded.shape == (3, 12)
    assert torch.allclose(padded, alone, atol=1e-6)
    assert not torch.allclose(net(batch)[1], alone[1], atol=1e-3)  # without lengths the padding counts


def _carried_namespace() -> dict[str, Any]:
    """A fresh namespace holding what the exported script carries: the helper's imports and code."""
    namespace: dict[str, Any] = {"__name__": "train_script"}
    source = "\n".join(LAYERS_HELPER.imports) + "\n\n" + LAYERS_HELPER.code
    exec(compile(source, "train.py", "exec"), namespace)  # test-only: DragDL's own carried source
    return namespace


@pytest.mark.parametrize(("type_name", "params"), BUILD_CASES)
def test_the_scripts_line_builds_the_same_module_without_dragdl(
    type_name: str, params: dict[str, Any], tmp_path: Path
) -> None:
    kind = layer(type_name)
    parsed = kind.params_model.model_validate(params)
    built = kind.build(parsed, [(11, 3)], ctx(tmp_path)).eval()
    namespace = _carried_namespace()
    code = kind.codegen(parsed, [(11, 3)], ctx(tmp_path))
    assert code.startswith(kind.module(parsed, [(11, 3)], ctx(tmp_path)).name + "(")
    generated = eval(code, namespace).eval()  # test-only: our own generated code
    assert type(generated).__name__ == type(built).__name__
    assert type(generated).__module__ == "train_script"  # not DragDL's class
    generated.load_state_dict(built.state_dict())
    x, lengths = torch.randn(3, 11, 3), torch.tensor([11, 6, 2])
    with torch.no_grad():
        assert torch.equal(generated(x), built(x))
        if takes_lengths(built):
            assert torch.equal(generated(x, lengths), built(x, lengths))
    assert kind.script_helpers(parsed) == (LAYERS_HELPER,)


def test_recurrent_code_names_the_cell_and_only_changed_settings(tmp_path: Path) -> None:
    kind = layer("layer.LSTM")
    parsed = kind.params_model.model_validate({"hidden_size": 32, "num_layers": 2, "dropout": 0.25})
    assert kind.codegen(parsed, [(28, 28)], ctx(tmp_path)) == (
        "Recurrent(28, 32, cell='lstm', num_layers=2, dropout=0.25)"
    )
    conv = layer("layer.Conv1d")
    assert conv.codegen(conv.params_model.model_validate({}), [(28, 3)], ctx(tmp_path)) == (
        "Conv1dTime(3, 32, 3, padding=1)"
    )


def _ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed")
    return found


@pytest.mark.parametrize("helper", [LAYERS_HELPER, OPS_HELPER], ids=["layers", "operators"])
def test_the_carried_source_reads_as_the_script_is_formatted_and_linted(helper: ScriptHelper) -> None:
    # The exported script is checked with ruff's defaults (88 columns, isort): the carried module,
    # with the script's own imports merged into its, must pass the same checks.
    imports = ordered_imports({*THIRD_PARTY_IMPORTS, *helper.imports})
    stdlib = [line for line in imports if line.split()[1].split(".")[0] in sys.stdlib_module_names]
    third = [line for line in imports if line not in stdlib]
    head = "\n".join(stdlib) + "\n\n" + "\n".join(third) + "\n\nEPOCHS = 10  # the configuration\n"
    script = head + "\n\n" + helper.code + "\n\nprint(np, v2)\n"  # the script's own imports
    assert "from torch import Tensor, nn" in script
    for command in (
        ["format", "--isolated", "--diff", "-"],
        ["check", "--isolated", "--select", "E,F,W,I,B,UP,SIM", "--stdin-filename", "train.py", "-"],
    ):
        result = subprocess.run(
            [_ruff(), *command], input=script, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr
