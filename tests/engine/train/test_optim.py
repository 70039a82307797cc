"""Optimizer parameter groups: a pretrained backbone learns slower than its head, frozen parts not at all."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from dragdl.engine.models.head import InputAdapter, TransferModel
from dragdl.engine.network.module import GraphModule
from dragdl.engine.tasks.settings import TrainConfig
from dragdl.engine.train.optim import build_optimizer, build_scheduler, current_lr

CPU = torch.device("cpu")


def transfer(freeze: bool, scale: float = 0.1) -> TransferModel:
    features = nn.Sequential(nn.Conv2d(3, 4, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    head = nn.Sequential(nn.Dropout(0.2), nn.Linear(4, 3))
    adapter = InputAdapter(1, (8, 8), (8, 8), (0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
    return TransferModel(adapter, features, head, freeze_features=freeze, backbone_lr_scale=scale)


def network(*layers: tuple[str, nn.Module]) -> GraphModule:
    sources = [GraphModule.INPUT, *(node_id for node_id, _ in layers[:-1])]
    order: list[tuple[str, tuple[str, ...]]] = [
        (node_id, (source,)) for (node_id, _), source in zip(layers, sources, strict=True)
    ]
    return GraphModule(dict(layers), GraphModule.plan_steps(order, layers[-1][0]), layers[-1][0])


def ids(params: list[torch.Tensor]) -> set[int]:
    return {id(p) for p in params}


def test_fine_tuned_backbone_learns_at_the_scaled_rate_and_the_head_at_lr() -> None:
    model = transfer(freeze=False, scale=0.25)
    optimizer = build_optimizer(network(("m", model)), TrainConfig(lr=0.01, optimizer="sgd"), CPU)
    groups = {g["name"]: g for g in optimizer.param_groups}
    assert set(groups) == {"m.backbone", "m.head"}
    assert groups["m.backbone"]["lr"] == pytest.approx(0.0025)
    assert groups["m.head"]["lr"] == pytest.approx(0.01)
    assert ids(groups["m.backbone"]["params"]) == ids(list(model.features.parameters()))
    assert ids(groups["m.head"]["params"]) == ids(list(model.head.parameters()))
    assert current_lr(optimizer) == pytest.approx(0.01)  # the reported rate is the configured one


def test_frozen_backbone_is_left_out_of_the_optimizer() -> None:
    model = transfer(freeze=True)
    optimizer = build_optimizer(network(("m", model)), TrainConfig(lr=0.01), CPU)
    [group] = optimizer.param_groups
    assert group["name"] == "m.head"
    assert ids(group["params"]) == ids(list(model.head.parameters()))


def test_ordinary_layers_share_one_group_at_lr_in_module_order() -> None:
    net = network(("conv", nn.Conv2d(1, 2, 3)), ("flat", nn.Flatten()), ("fc", nn.Linear(72, 3)))
    frozen = net.layers["conv"].bias
    assert frozen is not None
    frozen.requires_grad_(False)
    optimizer = build_optimizer(net, TrainConfig(lr=0.05), CPU)
    [group] = optimizer.param_groups
    expected = [p for p in net.parameters() if p.requires_grad]
    assert [id(p) for p in group["params"]] == [id(p) for p in expected]
    assert group["lr"] == pytest.approx(0.05)


def test_a_model_without_param_groups_gets_one_group() -> None:
    model = nn.Sequential(nn.Linear(4, 3))
    optimizer = build_optimizer(model, TrainConfig(lr=0.02), CPU)
    [group] = optimizer.param_groups
    assert group["lr"] == pytest.approx(0.02) and len(group["params"]) == 2


def test_one_cycle_peaks_each_group_at_its_own_rate() -> None:
    config = TrainConfig(lr=0.01, schedule="onecycle")
    optimizer = build_optimizer(network(("m", transfer(freeze=False, scale=0.5))), config, CPU)
    scheduler = build_scheduler(optimizer, config, total_steps=100)
    assert scheduler is not None
    peaks = [g["max_lr"] for g in optimizer.param_groups]
    assert peaks == pytest.approx([0.005, 0.01])
