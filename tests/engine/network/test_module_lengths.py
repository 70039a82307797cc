"""GraphModule carries each value's own lengths: a layer that shortens the sequences (a strided
convolution or a pool over time) hands the shortened lengths to the layers after it."""

from __future__ import annotations

import torch
from torch import nn

from dragdl.engine.network.module import GraphModule
from dragdl.engine.network.sequence_layers import Conv1dTime, LastStep, Pool1dTime, Recurrent


def network(layers: dict[str, nn.Module]) -> GraphModule:
    ids = list(layers)
    order = [(node, (GraphModule.INPUT if i == 0 else ids[i - 1],)) for i, node in enumerate(ids)]
    return GraphModule(layers, GraphModule.plan_steps(order, ids[-1]), ids[-1])


def padded(sequences: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    batch = nn.utils.rnn.pad_sequence(sequences, batch_first=True)
    return batch, torch.tensor([len(s) for s in sequences])


def test_layers_after_a_strided_convolution_and_a_pool_get_the_shortened_lengths() -> None:
    torch.manual_seed(0)
    model = network(
        {
            "conv": Conv1dTime(2, 3, kernel_size=3, stride=2),
            "pool": Pool1dTime("max", kernel_size=2),
            "gru": Recurrent(3, 4, "gru"),
            "last": LastStep(),
        }
    ).eval()
    sequences = [torch.randn(length, 2) for length in (21, 9, 14)]
    batch, lengths = padded(sequences)
    with torch.no_grad():
        together = model(batch, lengths)
        # Each sequence alone has no padding: what the padded batch must answer for it.
        alone = torch.cat([model(s[None]) for s in sequences])
    torch.testing.assert_close(together, alone)


def test_the_batch_lengths_reach_a_layer_unchanged_when_nothing_before_it_shortens() -> None:
    seen: list[torch.Tensor | None] = []

    class Spy(nn.Module):
        takes_lengths = True

        def forward(self, x: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
            seen.append(lengths)
            return x

    model = network(
        {"gru": Recurrent(2, 3, "gru"), "spy": Spy(), "conv": Conv1dTime(3, 3, 2, 2), "spy2": Spy()}
    )
    batch, lengths = padded([torch.randn(8, 2), torch.randn(5, 2)])
    model(batch, lengths)
    assert [None if n is None else n.tolist() for n in seen] == [[8, 5], [4, 2]]
    seen.clear()
    model(batch)  # a batch of one length: no lengths anywhere
    assert seen == [None, None]
