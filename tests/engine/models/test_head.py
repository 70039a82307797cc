"""TransferModel: input adaptation, frozen features, parameter groups, export."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from dragdl.engine.models import InputAdapter, TransferModel, backbone_info, create_features, make_head


def _model(in_channels: int = 3, size: int = 32, freeze: bool = True, scale: float = 0.1) -> TransferModel:
    torch.manual_seed(0)
    info = backbone_info("torchvision", "mobilenet_v3_small")
    adapter = InputAdapter(in_channels, (size, size), (64, 64), info.mean, info.std)
    features = create_features("torchvision", "mobilenet_v3_small", pretrained=False)
    head = make_head(info.feature_dim, 5, hidden_units=16, dropout=0.2)
    return TransferModel(adapter, features, head, freeze_features=freeze, backbone_lr_scale=scale)


def test_grayscale_is_repeated_resized_and_normalized() -> None:
    mean, std = (0.1, 0.2, 0.3), (0.5, 0.6, 0.7)
    adapter = InputAdapter(1, (28, 28), (56, 56), mean, std)
    x = torch.rand(2, 1, 28, 28)
    out = adapter(x)
    assert out.shape == (2, 3, 56, 56)
    resized = F.interpolate(x, size=(56, 56), mode="bilinear", antialias=True)
    for channel in range(3):
        expected = (resized[:, 0] - mean[channel]) / std[channel]
        torch.testing.assert_close(out[:, channel], expected)


def test_matching_size_is_not_resized() -> None:
    adapter = InputAdapter(3, (64, 64), (64, 64), (0.0,) * 3, (1.0,) * 3)
    assert adapter.resize_to is None
    x = torch.rand(1, 3, 64, 64)
    torch.testing.assert_close(adapter(x), x)
    assert InputAdapter(3, (None, None), (64, 64), (0.0,) * 3, (1.0,) * 3).resize_to == (64, 64)


def test_transfer_model_takes_grayscale_batches() -> None:
    model = _model(in_channels=1, size=28).eval()
    assert model(torch.rand(4, 1, 28, 28)).shape == (4, 5)


def test_frozen_training_step_changes_only_the_head() -> None:
    model = _model()
    model.train()
    assert model.features_frozen and not model.features.training and model.head.training
    before = {key: value.clone() for key, value in model.state_dict().items()}
    optimizer = torch.optim.SGD(model.param_groups(lr=0.1), lr=0.1)
    loss = F.cross_entropy(model(torch.rand(8, 3, 32, 32)), torch.randint(0, 5, (8,)))
    loss.backward()
    optimizer.step()
    after = model.state_dict()
    changed = {key for key in before if not torch.equal(before[key], after[key])}
    assert changed, "the head should have learned"
    assert all(key.startswith("head.") for key in changed), sorted(changed)
    assert all(param.grad is None for param in model.features.parameters())


def test_param_groups_scale_the_backbone_when_fine_tuning() -> None:
    frozen = _model(freeze=True).param_groups(lr=1e-3)
    assert [group["name"] for group in frozen] == ["head"]
    tuned_model = _model(freeze=False, scale=0.25)
    tuned = tuned_model.param_groups(lr=1e-3)
    assert [(group["name"], group["lr"]) for group in tuned] == [("backbone", 2.5e-4), ("head", 1e-3)]
    assert sum(len(group["params"]) for group in tuned) == len(list(tuned_model.parameters()))
    tuned_model.train()
    assert tuned_model.features.training


def test_head_layout() -> None:
    head = make_head(32, 4, hidden_units=None, dropout=0.3)
    assert [type(layer).__name__ for layer in head] == ["Dropout", "Linear"]
    head = make_head(32, 4, hidden_units=8, dropout=0.3)
    assert [type(layer).__name__ for layer in head] == ["Dropout", "Linear", "ReLU", "Dropout", "Linear"]


def test_forward_exports_without_data_dependent_control_flow() -> None:
    model = _model(in_channels=1, size=28).eval()
    x = torch.rand(2, 1, 28, 28)
    exported = torch.export.export(model, (x,))
    torch.testing.assert_close(exported.module()(x), model(x))


@pytest.mark.slow
def test_lite0_transfer_model_exports_to_onnx(tmp_path: object) -> None:
    import onnxruntime

    info = backbone_info("efficientnet_lite0", "efficientnet_lite0")
    model = TransferModel(
        InputAdapter(1, (28, 28), (224, 224), info.mean, info.std),
        create_features("efficientnet_lite0", "efficientnet_lite0"),
        make_head(info.feature_dim, 10, hidden_units=32, dropout=0.2),
    ).eval()
    x = torch.rand(2, 1, 28, 28)
    program = torch.onnx.export(model, (x,), dynamo=True, verbose=False)
    assert program is not None
    session = onnxruntime.InferenceSession(program.model_proto.SerializeToString())
    (out,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    torch.testing.assert_close(torch.from_numpy(out), model(x), atol=1e-3, rtol=1e-3)
