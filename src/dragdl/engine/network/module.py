"""The network a graph describes, as one nn.Module."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

from dragdl.engine.errors import EngineError


class LayerRuntimeError(EngineError):
    """A layer failed on real data; carries the node id so the error can be shown on the canvas."""

    node_id: str

    def __init__(self, node_id: str, message: str) -> None:
        super().__init__("layer_failed", message, node_id)
        self.args = (f"node {node_id}: {message}",)


@dataclass(frozen=True)
class Step:
    node_id: str
    inputs: tuple[str, ...]
    """Ids of the values feeding this node; `GraphModule.INPUT` is the image batch."""
    release: tuple[str, ...] = ()
    """Values no later step needs, dropped after this step to keep peak memory low."""


class GraphModule(nn.Module):
    """Runs the layer nodes in topological order; Add/Concat receive several inputs.

    Submodules are keyed by node id, so checkpoints and bundles name their weights after the
    canvas nodes (`layers.n3.weight`).
    """

    INPUT = "__input__"

    def __init__(self, layers: dict[str, nn.Module], steps: list[Step], output: str) -> None:
        super().__init__()
        self.layers = nn.ModuleDict(layers)
        self.steps = steps
        self.output = output
        # A plain chain (each node fed by the one before it, as in an MLP or a simple CNN) runs
        # without the value table: on small networks the table's dictionary work per layer is a
        # measurable share of a step.
        self.chain = self._is_chain(steps, output) and list(layers) == [s.node_id for s in steps]
        self.with_lengths = frozenset(node_id for node_id, layer in layers.items() if takes_lengths(layer))
        """The layers called as `module(x, lengths)`. Empty for most graphs, which then run the
        plain paths below without a per-step test."""
        self.output_scale: tuple[float, float] | None = None
        """(shift, scale): a regressor learns its target standardized and answers z * scale + shift.
        Plain floats, not buffers: the weights files stay as they were, and the bundle's JSON
        keeps the numbers."""

    def set_output_scale(self, scale: tuple[float, float] | None) -> None:
        self.output_scale = scale

    @staticmethod
    def plan_steps(order: list[tuple[str, tuple[str, ...]]], output: str) -> list[Step]:
        """Add release lists: each value is dropped after its last use."""
        last_use: dict[str, int] = {}
        for index, (_, inputs) in enumerate(order):
            for source in inputs:
                last_use[source] = index
        steps = []
        for index, (node_id, inputs) in enumerate(order):
            release = tuple(
                source for source in dict.fromkeys(inputs) if last_use[source] == index and source != output
            )
            steps.append(Step(node_id=node_id, inputs=inputs, release=release))
        return steps

    def param_groups(self, lr: float) -> list[dict[str, Any]]:
        """Optimizer groups: ordinary layers at `lr` in one group, then the groups of every layer
        that defines its own (a transfer model's backbone at a lower rate, its head at `lr`).

        Parameters that do not require gradients (a frozen backbone) are left out.
        """
        plain: list[nn.Parameter] = []
        own: list[dict[str, Any]] = []
        for node_id, layer in self.layers.items():
            groups = getattr(layer, "param_groups", None)
            if callable(groups):
                own += [{**group, "name": f"{node_id}.{group.get('name', 'params')}"} for group in groups(lr)]
            else:
                plain += [p for p in layer.parameters() if p.requires_grad]
        layers = [{"params": plain, "lr": lr, "name": "layers"}] if plain else []
        return layers + [group for group in own if group["params"]]

    def node_layers(self) -> dict[str, nn.Module]:
        """The module of each layer node, by node id."""
        return dict(self.layers.items())

    @classmethod
    def _is_chain(cls, steps: list[Step], output: str) -> bool:
        previous = cls.INPUT
        for step in steps:
            if step.inputs != (previous,):
                return False
            previous = step.node_id
        return bool(steps) and previous == output

    def forward(self, images: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """`lengths`: each sample's count of valid steps when a batch of sequences is padded; passed
        to every layer that declares `takes_lengths` as the layers before it leave them (a layer
        with `output_lengths`, such as a strided convolution over time, shortens them), ignored by
        the others."""
        if self.with_lengths:
            out = self._forward_with_lengths(images, lengths)
        elif self.chain:
            out = self._forward_chain(images)
        else:
            out = self._forward_graph(images)
        if self.output_scale is not None:
            shift, scale = self.output_scale
            out = out * scale + shift
        return out

    def _forward_graph(self, images: torch.Tensor) -> torch.Tensor:
        values: dict[str, torch.Tensor] = {self.INPUT: images}
        for step in self.steps:
            args = [values[source] for source in step.inputs]
            try:
                values[step.node_id] = self.layers[step.node_id](*args)
            except LayerRuntimeError:
                raise
            except Exception as exc:  # torch raises RuntimeError, ValueError, IndexError...
                raise LayerRuntimeError(step.node_id, str(exc).split("\n")[0]) from exc
            for source in step.release:
                del values[source]
        return values[self.output]

    def _forward_with_lengths(self, images: torch.Tensor, lengths: torch.Tensor | None) -> torch.Tensor:
        # A loop of its own, so that graphs without such layers pay no test per step. Each value
        # carries its own lengths: a strided Conv1d or a pool over time shortens the sequences
        # (`output_lengths`), and the recurrent layer or Last step after it must count the
        # shortened steps, not the batch's.
        values: dict[str, torch.Tensor] = {self.INPUT: images}
        value_lengths: dict[str, torch.Tensor | None] = {self.INPUT: lengths}
        for step in self.steps:
            layer = self.layers[step.node_id]
            args: list[torch.Tensor | None] = [values[source] for source in step.inputs]
            # Merged values (Add, Concat) come from one sequence: their steps line up.
            own = value_lengths[step.inputs[0]]
            if step.node_id in self.with_lengths:
                args.append(own)
            try:
                values[step.node_id] = layer(*args)
                shorten = getattr(layer, "output_lengths", None)
                value_lengths[step.node_id] = own if own is None or shorten is None else shorten(own)
            except LayerRuntimeError:
                raise
            except Exception as exc:
                raise LayerRuntimeError(step.node_id, str(exc).split("\n")[0]) from exc
            for source in step.release:
                del values[source], value_lengths[source]
        return values[self.output]

    def _forward_chain(self, x: torch.Tensor) -> torch.Tensor:
        # ModuleDict keeps the insertion order, checked to be the steps' order in __init__.
        for node_id, layer in self.layers.items():
            try:
                x = layer(x)
            except LayerRuntimeError:
                raise
            except Exception as exc:
                raise LayerRuntimeError(node_id, str(exc).split("\n")[0]) from exc
        return x


def takes_lengths(layer: nn.Module) -> bool:
    """Whether a layer's module is called with the batch's sequence lengths as a second argument
    (a class attribute `takes_lengths = True`, as variable-length recurrent layers declare)."""
    return getattr(layer, "takes_lengths", False) is True


@runtime_checkable
class NodeLayers(Protocol):
    """A network that can say which module computes each canvas node (GraphModule, a feature head)."""

    def node_layers(self) -> dict[str, nn.Module]: ...


@contextmanager
def watch_non_finite(model: nn.Module) -> Iterator[list[str]]:
    """Within the block, the list names (in order of execution) the nodes whose output held NaN or
    infinity in a forward pass of `model`; the first is where the values stopped being finite.

    Forward hooks cost a reduction per layer, so this is for diagnosing a failed step, not for
    every step.
    """
    found: list[str] = []
    handles: list[RemovableHandle] = []
    layers = model.node_layers() if isinstance(model, NodeLayers) else {}

    def hook(node_id: str) -> Any:
        def check(module: nn.Module, inputs: Any, output: Any) -> None:
            tensor = isinstance(output, torch.Tensor) and output.is_floating_point()
            if tensor and not bool(torch.isfinite(output).all()):
                found.append(node_id)

        return check

    try:
        for node_id, layer in layers.items():
            handles.append(layer.register_forward_hook(hook(node_id)))
        yield found
    finally:
        for handle in handles:
            handle.remove()
