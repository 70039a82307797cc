"""The sequence layers' torch modules: shapes, variable lengths, ONNX with a dynamic time axis."""

from __future__ import annotations

import ast
import inspect
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from dragdl.engine.network import sequence_layers
from dragdl.engine.network.sequence_layers import (
    Conv1dTime,
    GlobalPoolTime,
    LastStep,
    Pool1dTime,
    Recurrent,
)


def _padded(lengths: list[int], features: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A random (N, T_max, F) batch zero-padded past each length, and the lengths."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(len(lengths), max(lengths), features, generator=generator)
    for i, length in enumerate(lengths):
        x[i, length:] = 0
    return x, torch.tensor(lengths)


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_recurrent_shapes(cell: str, bidirectional: bool) -> None:
    layer = Recurrent(3, 8, cell, num_layers=2, bidirectional=bidirectional, dropout=0.2)  # type: ignore[arg-type]
    out = layer(torch.randn(4, 11, 3))
    assert out.shape == (4, 11, 16 if bidirectional else 8)
    assert Recurrent.takes_lengths


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_packed_lengths_equal_running_each_sequence_alone(cell: str) -> None:
    torch.manual_seed(0)
    layer = Recurrent(2, 5, cell, bidirectional=True).eval()  # type: ignore[arg-type]
    x, lengths = _padded([7, 3, 5], 2)
    with torch.no_grad():
        out = layer(x, lengths)
        assert out.shape == (3, 7, 10)
        for i, length in enumerate(lengths.tolist()):
            alone = layer(x[i : i + 1, :length])
            torch.testing.assert_close(out[i, :length], alone[0])
            assert not out[i, length:].any()
        # Without lengths the backward direction would start in the padding: the results differ.
        assert not torch.allclose(layer(x)[1, :3], out[1, :3])


def test_full_lengths_give_the_unpacked_result() -> None:
    torch.manual_seed(0)
    layer = Recurrent(3, 6, "lstm", num_layers=2, bidirectional=True).eval()
    x = torch.randn(4, 9, 3)
    with torch.no_grad():
        torch.testing.assert_close(layer(x, torch.full((4,), 9)), layer(x))


def test_recurrent_refuses_bad_settings() -> None:
    with pytest.raises(ValueError, match=r"cell \('transformer'\) must be one of rnn, lstm, gru"):
        Recurrent(3, 4, "transformer")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"dropout \(1.5\) must be in \[0, 1\)"):
        Recurrent(3, 4, dropout=1.5)


def test_global_pool_reads_only_valid_steps() -> None:
    x, lengths = _padded([4, 2], 3)
    x[1, 2:] = 100.0  # padding that must not count (made large so a leak would show)
    mean = GlobalPoolTime("mean")(x, lengths)
    biggest = GlobalPoolTime("max")(x, lengths)
    torch.testing.assert_close(mean[1], x[1, :2].mean(dim=0))
    torch.testing.assert_close(biggest[1], x[1, :2].amax(dim=0))
    torch.testing.assert_close(mean[0], x[0].mean(dim=0))
    assert GlobalPoolTime("max")(x).shape == (2, 3)
    with pytest.raises(ValueError, match="mode"):
        GlobalPoolTime("median")  # type: ignore[arg-type]


def test_last_step_takes_each_sequence_last_valid_step() -> None:
    x, lengths = _padded([5, 1, 3], 2)
    out = LastStep()(x, lengths)
    for i, length in enumerate(lengths.tolist()):
        torch.testing.assert_close(out[i], x[i, length - 1])
    torch.testing.assert_close(LastStep()(x), x[:, -1])


@pytest.mark.parametrize(
    "layer", [GlobalPoolTime("mean"), GlobalPoolTime("max"), LastStep()], ids=["mean", "max", "last"]
)
@pytest.mark.parametrize("with_lengths", [False, True])
def test_time_reductions_keep_a_convolution_output_layout(layer: nn.Module, with_lengths: bool) -> None:
    # A convolution over time hands on a transposed view of (N, C, T). Reduced over time as stored,
    # the values and gradients are those of a contiguous copy, and the gradient keeps the view's
    # layout: one laid out (N, T, C) made the backward pass of the layers before it several times
    # slower.
    x, lengths = _padded([7, 3, 5], 4)
    stored = x.transpose(1, 2).contiguous().requires_grad_()
    view = stored.transpose(1, 2)
    plain = x.clone().requires_grad_()
    lengths_or_none = lengths if with_lengths else None
    out = layer(view, lengths_or_none)
    expected = layer(plain, lengths_or_none)
    torch.testing.assert_close(out, expected)
    weights = torch.arange(out.numel(), dtype=out.dtype).view_as(out)
    grad = torch.autograd.grad((out * weights).sum(), view)[0]
    assert grad.stride(1) < grad.stride(2)
    torch.testing.assert_close(grad, torch.autograd.grad((expected * weights).sum(), plain)[0])


@pytest.mark.parametrize(
    ("kernel", "stride", "padding", "dilation"), [(3, 1, 0, 1), (5, 2, 2, 1), (3, 1, "same", 2)]
)
def test_conv1d_over_time_and_its_output_lengths(
    kernel: int, stride: int, padding: int | str, dilation: int
) -> None:
    torch.manual_seed(0)
    layer = Conv1dTime(3, 6, kernel, stride, padding, dilation)  # type: ignore[arg-type]
    x, lengths = _padded([20, 13, 9], 3)
    out = layer(x)
    expected = torch.nn.functional.conv1d(
        x.transpose(1, 2), layer.conv.weight, layer.conv.bias, stride, padding, dilation
    ).transpose(1, 2)
    torch.testing.assert_close(out, expected)
    # Each sequence run alone has as many output steps as output_lengths says.
    for i, length in enumerate(layer.output_lengths(lengths).tolist()):
        assert layer(x[i : i + 1, : lengths[i]]).shape[1] == length


@pytest.mark.parametrize("mode", ["max", "avg"])
def test_pool1d_over_time(mode: str) -> None:
    x, lengths = _padded([8, 5], 2)
    layer = Pool1dTime(mode, 2)  # type: ignore[arg-type]
    out = layer(x)
    assert out.shape == (2, 4, 2)
    pairs = x[0].reshape(4, 2, 2)
    torch.testing.assert_close(out[0], pairs.amax(dim=1) if mode == "max" else pairs.mean(dim=1))
    assert layer.output_lengths(lengths).tolist() == [4, 2]
    assert Pool1dTime("max", 3, stride=1)(x).shape == (2, 6, 2)


def test_the_module_imports_only_torch() -> None:
    # The exported script carries this module's source, so it must run where DragDL is absent.
    tree = ast.parse(inspect.getsource(sequence_layers))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    imported |= {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported <= {"__future__", "typing", "torch"}


# --- ONNX ---------------------------------------------------------------------------------------


def _models() -> dict[str, nn.Module]:
    torch.manual_seed(0)
    return {
        "lstm-last": nn.Sequential(Recurrent(3, 8, "lstm", 2, True, 0.1), LastStep()),
        "gru-maxpool": nn.Sequential(Recurrent(3, 8, "gru"), GlobalPoolTime("max")),
        "rnn-mean": nn.Sequential(Recurrent(3, 4, "rnn"), GlobalPoolTime("mean")),
        "conv": nn.Sequential(Conv1dTime(3, 8, 3, padding="same"), Pool1dTime("avg", 2), Conv1dTime(8, 4, 3),
                              Pool1dTime("max", 2), GlobalPoolTime("mean")),
    }  # fmt: skip


def _check_onnx(model: nn.Module, path: Path, dynamo: bool) -> None:
    import onnxruntime as ort  # type: ignore[import-untyped]

    model.eval()
    example = torch.randn(2, 16, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporters' deprecation and tracer notes
        if dynamo:
            dims = {0: torch.export.Dim("batch", min=1), 1: torch.export.Dim("time", min=8)}
            torch.onnx.export(
                model, (example,), str(path), input_names=["x"], output_names=["y"],
                dynamo=True, dynamic_shapes=(dims,), verbose=False,
            )  # fmt: skip
        else:
            torch.onnx.export(
                model, (example,), str(path), input_names=["x"], output_names=["y"],
                dynamo=False, dynamic_axes={"x": {0: "batch", 1: "time"}, "y": {0: "batch"}},
            )  # fmt: skip
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for batch, steps in ((1, 9), (3, 40)):  # lengths other than the traced 16: the axis is dynamic
        x = torch.randn(batch, steps, 3)
        with torch.no_grad():
            expected = model(x).numpy()
            # The exported graph is the unpacked path; on full-length inputs packing agrees with it.
            first = model[0]
            if getattr(first, "takes_lengths", False):
                packed = model[1](first(x, torch.full((batch,), steps)))
                np.testing.assert_allclose(packed.numpy(), expected, atol=1e-6)
        (out,) = session.run(["y"], {"x": x.numpy()})
        np.testing.assert_allclose(out, expected, atol=1e-5)


@pytest.mark.parametrize("name", ["lstm-last", "gru-maxpool", "rnn-mean", "conv"])
def test_onnx_export_with_a_dynamic_time_axis(name: str, tmp_path: Path) -> None:
    _check_onnx(_models()[name], tmp_path / f"{name}.onnx", dynamo=False)


@pytest.mark.slow
def test_the_dynamo_exporter_also_exports_a_dynamic_time_axis(tmp_path: Path) -> None:
    # bundle/export.py tries the dynamo exporter first; it takes about 20 s for an LSTM.
    _check_onnx(_models()["lstm-last"], tmp_path / "lstm.onnx", dynamo=True)


# --- learning -------------------------------------------------------------------------------------


def _waves_accuracy(model: nn.Module, epochs: int) -> float:
    """Adam on 1,200 of the built-in waves, accuracy on the other 300."""
    from dragdl.engine.data.sequence_builtin import open_sequence_builtin

    source = open_sequence_builtin("waves")
    assert source.labels is not None
    x, y = torch.from_numpy(np.array(source.values)), torch.from_numpy(source.labels)
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(0))
    train, test = order[:1200], order[1200:]
    optimizer = torch.optim.Adam(model.parameters(), 3e-3)
    for _ in range(epochs):
        model.train()
        for batch in train[torch.randperm(len(train))].split(32):
            loss = nn.functional.cross_entropy(model(x[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval()
    with torch.no_grad():
        return float((model(x[test]).argmax(dim=1) == y[test]).float().mean())


@pytest.mark.slow
def test_a_gru_and_a_1d_cnn_learn_the_waves() -> None:
    # The bar for the built-in waves (>= 95%), met by plain models of these modules. One
    # thread: these small batches run slower on several, and far slower on a busy machine.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _learn_the_waves()
    finally:
        torch.set_num_threads(threads)


def _learn_the_waves() -> None:
    torch.manual_seed(0)
    gru = nn.Sequential(Recurrent(1, 32, "gru"), GlobalPoolTime("mean"), nn.Linear(32, 3))
    assert _waves_accuracy(gru, epochs=10) >= 0.95
    torch.manual_seed(0)
    cnn = nn.Sequential(
        Conv1dTime(1, 16, 5, padding="same"), nn.ReLU(), Pool1dTime("max", 2),
        Conv1dTime(16, 32, 5, padding="same"), nn.ReLU(), GlobalPoolTime("mean"), nn.Linear(32, 3),
    )  # fmt: skip
    assert _waves_accuracy(cnn, epochs=8) >= 0.95
