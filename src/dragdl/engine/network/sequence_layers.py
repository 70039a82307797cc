"""Torch modules of the sequence layer nodes. Input and output are batch-first (N, T, F).

This module imports only torch, so the exported training script can carry its source
(`inspect.getsource`) and run without DragDL.

Variable lengths: a module whose `takes_lengths` is True accepts `forward(x, lengths)` with int64
`lengths` (N,) counting each sequence's valid steps (the rest is zero padding). `Recurrent` packs
the batch so padding never reaches its state; `GlobalPoolTime` and `LastStep` read only the valid
steps. `Conv1dTime` and `Pool1dTime` do not take lengths (their windows at a sequence's end see the
padding); `output_lengths` says how they shorten the lengths for the modules after them.

ONNX: packing (`pack_padded_sequence`) does not export, so an exported model runs the unpacked
path (`lengths` None), with a dynamic time axis. On full-length inputs both paths give the same
result (tests/engine/network/test_sequence_layers.py checks it against onnxruntime).
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

_CELLS: dict[str, type[nn.RNN] | type[nn.LSTM] | type[nn.GRU]] = {
    "rnn": nn.RNN,
    "lstm": nn.LSTM,
    "gru": nn.GRU,
}


def _steps_mask(lengths: Tensor, steps: int, device: torch.device) -> Tensor:
    """(N, T, 1) bool: True on each sequence's valid steps."""
    valid = torch.arange(steps, device=device)[None, :] < lengths.to(device)[:, None]
    return valid.unsqueeze(-1)


class Recurrent(nn.Module):
    """An RNN, LSTM or GRU over (N, T, F): the hidden state at every step,
    (N, T, H x directions)."""

    takes_lengths = True

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        cell: Literal["rnn", "lstm", "gru"] = "lstm",
        num_layers: int = 1,
        bidirectional: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if cell not in _CELLS:
            raise ValueError(f"cell ({cell!r}) must be one of {', '.join(_CELLS)}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout ({dropout}) must be in [0, 1)")
        # torch applies dropout between stacked layers only (and warns for one layer),
        # so it is passed on only where it has an effect.
        self.rnn = _CELLS[cell](
            input_size,
            hidden_size,
            num_layers=num_layers,
            batch_first=True,
            bidirectional=bidirectional,
            dropout=dropout if num_layers > 1 else 0.0,
        )

    def forward(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        if lengths is None:
            out: Tensor = self.rnn(x)[0]
            return out
        # Packing needs the lengths on the CPU; the padded steps come back as zeros, and
        # total_length keeps T so the lengths still line up with the steps after this
        # layer.
        packed = pack_padded_sequence(
            x,
            lengths.cpu(),
            batch_first=True,
            enforce_sorted=False,
        )
        padded, _ = pad_packed_sequence(
            self.rnn(packed)[0],
            batch_first=True,
            total_length=x.shape[1],
        )
        return padded

    @staticmethod
    def output_lengths(lengths: Tensor) -> Tensor:
        return lengths


class Conv1dTime(nn.Module):
    """A 1-D convolution over time: (N, T, F) -> (N, T', C), transposed to and from
    torch's (N, C, T)."""

    takes_lengths = False

    def __init__(
        self,
        in_features: int,
        out_channels: int,
        kernel_size: int,
        stride: int = 1,
        padding: int | Literal["same"] = 0,
        dilation: int = 1,
    ) -> None:
        super().__init__()
        self.conv = nn.Conv1d(
            in_features,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
        )

    def forward(self, x: Tensor) -> Tensor:
        out: Tensor = self.conv(x.transpose(1, 2))
        return out.transpose(1, 2)

    def output_lengths(self, lengths: Tensor) -> Tensor:
        conv = self.conv
        (kernel,), (stride,), (dilation,) = conv.kernel_size, conv.stride, conv.dilation
        padding = self.conv.padding
        if isinstance(padding, str):  # "same" (torch allows it with stride 1 only)
            return lengths
        return _shortened(lengths, kernel, stride, padding[0], dilation)


class Pool1dTime(nn.Module):
    """Max or average pooling over time: (N, T, F) -> (N, T', F)."""

    takes_lengths = False

    def __init__(
        self,
        mode: Literal["max", "avg"] = "max",
        kernel_size: int = 2,
        stride: int | None = None,
    ) -> None:
        super().__init__()
        if mode not in ("max", "avg"):
            raise ValueError(f"mode ({mode!r}) must be 'max' or 'avg'")
        stride = kernel_size if stride is None else stride
        self.kernel_size, self.stride = kernel_size, stride
        pool = nn.MaxPool1d if mode == "max" else nn.AvgPool1d
        self.pool: nn.Module = pool(kernel_size, stride)

    def forward(self, x: Tensor) -> Tensor:
        out: Tensor = self.pool(x.transpose(1, 2))
        return out.transpose(1, 2)

    def output_lengths(self, lengths: Tensor) -> Tensor:
        return _shortened(lengths, self.kernel_size, self.stride, 0, 1)


def _shortened(
    lengths: Tensor,
    kernel: int,
    stride: int,
    padding: int,
    dilation: int,
) -> Tensor:
    """Valid steps after a window over time; at least 1, so a short sequence keeps one
    step."""
    span = lengths + 2 * padding - dilation * (kernel - 1) - 1
    out = torch.div(span, stride, rounding_mode="floor") + 1
    return out.clamp(min=1)


class GlobalPoolTime(nn.Module):
    """The mean or maximum over time of each feature: (N, T, F) -> (N, F), over valid
    steps only when lengths are given."""

    takes_lengths = True

    def __init__(self, mode: Literal["mean", "max"] = "mean") -> None:
        super().__init__()
        if mode not in ("mean", "max"):
            raise ValueError(f"mode ({mode!r}) must be 'mean' or 'max'")
        self.mode = mode

    def forward(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        # Reduced in the order x is stored in. After a convolution over time, x is a
        # transposed view of torch's (N, C, T): reducing its dim 1 gives the same
        # values, but a gradient laid out (N, T, C), against x's layout, which costs
        # the backward pass of the layers before it several times their time.
        steps_adjacent = x.stride(1) < x.stride(2)
        x, dim = (x.transpose(1, 2), 2) if steps_adjacent else (x, 1)
        if lengths is None:
            return x.mean(dim=dim) if self.mode == "mean" else x.amax(dim=dim)
        mask = _steps_mask(lengths, x.shape[dim], x.device)
        if steps_adjacent:
            mask = mask.transpose(1, 2)
        if self.mode == "mean":
            return (x * mask).sum(dim=dim) / lengths.to(x.device, x.dtype)[:, None]
        return x.masked_fill(~mask, float("-inf")).amax(dim=dim)


class LastStep(nn.Module):
    """Each sequence's last valid step (from lengths), else the last step:
    (N, T, F) -> (N, F)."""

    takes_lengths = True

    def forward(self, x: Tensor, lengths: Tensor | None = None) -> Tensor:
        if x.stride(1) < x.stride(2):  # taken in x's layout, as GlobalPoolTime reduces
            x = x.transpose(1, 2)
            if lengths is None:
                return x[:, :, -1]
            index = (lengths.to(x.device) - 1).view(-1, 1, 1).expand(-1, x.shape[1], 1)
            return x.gather(2, index).squeeze(2)
        if lengths is None:
            return x[:, -1]
        index = (lengths.to(x.device) - 1).view(-1, 1, 1).expand(-1, 1, x.shape[2])
        return x.gather(1, index).squeeze(1)
