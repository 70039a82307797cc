"""GraphModule hands a batch's sequence lengths to the layers that declare they take them."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn

from dragdl.engine.network.module import GraphModule, LayerRuntimeError, takes_lengths


class MaskPastLength(nn.Module):
    """Zeroes every step at or beyond each sample's length: (N, T, F) -> (N, T, F)."""

    takes_lengths = True

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Tensor | None] = []

    def forward(self, x: Tensor, lengths: Tensor | None) -> Tensor:
        self.seen.append(lengths)
        if lengths is None:
            return x
        steps = torch.arange(x.shape[1])[None, :]
        return x * (steps < lengths[:, None]).unsqueeze(-1)


def _chain(layers: dict[str, nn.Module]) -> GraphModule:
    order: list[tuple[str, tuple[str, ...]]] = []
    previous = GraphModule.INPUT
    for node_id in layers:
        order.append((node_id, (previous,)))
        previous = node_id
    return GraphModule(layers, GraphModule.plan_steps(order, previous), previous)


def test_a_layer_that_takes_lengths_gets_them_and_the_others_do_not() -> None:
    mask = MaskPastLength()
    model = _chain({"n1": nn.Identity(), "n2": mask, "n3": nn.Flatten()})
    x = torch.ones(2, 4, 3)
    out = model(x, torch.tensor([1, 3]))
    assert model.with_lengths == {"n2"}
    # Sample 0 keeps 1 step of 3 features, sample 1 keeps 3 steps.
    assert out.sum(dim=1).tolist() == [3.0, 9.0]
    assert mask.seen[-1] is not None and mask.seen[-1].tolist() == [1, 3]


def test_without_lengths_such_a_layer_receives_none() -> None:
    mask = MaskPastLength()
    model = _chain({"n1": mask})
    x = torch.randn(2, 4, 3)
    assert torch.equal(model(x), x)
    assert mask.seen == [None]


def test_lengths_reach_a_layer_fed_by_several_inputs_after_its_inputs() -> None:
    class AddWithLengths(nn.Module):
        takes_lengths = True

        def forward(self, a: Tensor, b: Tensor, lengths: Tensor | None = None) -> Tensor:
            assert lengths is not None
            return a + b + lengths[:, None].float()

    order = [("a", (GraphModule.INPUT,)), ("b", (GraphModule.INPUT,)), ("sum", ("a", "b"))]
    layers: dict[str, nn.Module] = {"a": nn.Identity(), "b": nn.Identity(), "sum": AddWithLengths()}
    model = GraphModule(layers, GraphModule.plan_steps(order, "sum"), "sum")
    out = model(torch.zeros(2, 3), torch.tensor([5, 7]))
    assert out.tolist() == [[5.0] * 3, [7.0] * 3]


def test_graphs_without_such_layers_keep_the_plain_chain() -> None:
    model = _chain({"n1": nn.Linear(3, 2), "n2": nn.ReLU()})
    assert model.chain and not model.with_lengths
    x = torch.randn(4, 3)
    # Lengths given to a network none of whose layers takes them change nothing.
    assert torch.equal(model(x, torch.tensor([1, 2, 3, 4])), model(x))


def test_only_a_true_class_attribute_counts() -> None:
    class Truthy(nn.Module):
        takes_lengths = "yes"

    assert takes_lengths(MaskPastLength()) and not takes_lengths(Truthy()) and not takes_lengths(nn.ReLU())


def test_a_failing_layer_that_takes_lengths_is_named() -> None:
    class Broken(MaskPastLength):
        def forward(self, x: Tensor, lengths: Tensor | None) -> Tensor:
            raise ValueError("lengths and batch disagree")

    model = _chain({"n1": nn.Identity(), "rnn": Broken()})
    with pytest.raises(LayerRuntimeError, match="node rnn: lengths and batch disagree"):
        model(torch.zeros(2, 4, 3), torch.tensor([4, 4]))
