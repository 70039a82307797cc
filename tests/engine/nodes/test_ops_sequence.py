"""Sequence operator nodes: shapes, the fitted standardization and its JSON state, the random
operators' seeding, and the exported script's code building the same operators."""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch

from dragdl.engine.data.sequence_ops import feature_stats, resample_steps, shift_steps
from dragdl.engine.data.stages import FittedTransform, OpStage, apply_stages
from dragdl.engine.graph.errors import NodeError
from dragdl.engine.nodes.base import OpNode, Shape
from dragdl.engine.nodes.ops_sequence import FITTED_NAMES, OPS_HELPER, FittedStandardize
from dragdl.engine.nodes.registry import all_node_types, get_node_type

SEQUENCE_OPS = [k for k in all_node_types() if isinstance(k, OpNode) and "sequence" in k.inputs[0].types]
RANDOM = {"op.RandomTimeShift", "op.RandomCropSteps", "op.GaussianNoise"}


def op(type_name: str) -> OpNode[Any]:
    kind = get_node_type(type_name)
    assert isinstance(kind, OpNode)
    return kind


def params(type_name: str, values: dict[str, Any] | None = None) -> Any:
    return op(type_name).params_model.model_validate(values or {})


def test_the_sequence_operators_map_sequences_to_sequences() -> None:
    assert {k.type for k in SEQUENCE_OPS} == {
        "op.StandardizeFeatures",
        "op.RandomTimeShift",
        "op.RandomCropSteps",
        "op.CenterCropSteps",
        "op.GaussianNoise",
        "op.ResampleSteps",
    }
    for kind in SEQUENCE_OPS:
        assert kind.inputs[0].types == ("sequence",) and kind.outputs[0].types == ("sequence",)
        assert kind.random == (kind.type in RANDOM), kind.type


@pytest.mark.parametrize(
    ("type_name", "values", "shape", "expected"),
    [
        ("op.StandardizeFeatures", {}, (28, 28), (28, 28)),
        ("op.RandomTimeShift", {"max_shift": 5}, (None, 3), (None, 3)),
        ("op.RandomCropSteps", {"length": 20}, (28, 3), (20, 3)),
        ("op.RandomCropSteps", {"length": 20}, (None, 3), (None, 3)),  # a shorter one stays whole
        ("op.CenterCropSteps", {"length": 28}, (28, 3), (28, 3)),
        ("op.GaussianNoise", {}, (None, 6), (None, 6)),
        ("op.ResampleSteps", {"length": 50}, (28, 3), (50, 3)),
        ("op.ResampleSteps", {"length": 50}, (None, 3), (50, 3)),
    ],
)
def test_shapes(type_name: str, values: dict[str, Any], shape: Shape, expected: Shape) -> None:
    assert op(type_name).infer(params(type_name, values), shape) == expected


@pytest.mark.parametrize(
    ("type_name", "values", "field", "words"),
    [
        (
            "op.RandomCropSteps",
            {"length": 30},
            "length",
            r"length \(30\) is longer than .* \(28x3: 28 steps\)",
        ),
        ("op.CenterCropSteps", {"length": 29}, "length", r"length \(29\) is longer"),
        (
            "op.RandomTimeShift",
            {"max_shift": 28},
            "max_shift",
            r"max_shift \(28\) must be smaller than the 28",
        ),
    ],
)
def test_settings_that_do_not_fit_the_sequences_name_the_field(
    type_name: str, values: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(NodeError, match=words) as exc:
        op(type_name).infer(params(type_name, values), (28, 3))
    assert exc.value.field == field
    assert exc.value.details["input_shape"] == "28x3"


def test_an_operator_given_images_says_what_it_expects() -> None:
    with pytest.raises(NodeError, match=r"expects sequences TxF .* receives 1x28x28"):
        op("op.GaussianNoise").infer(params("op.GaussianNoise"), (1, 28, 28))


def _fitted(data: torch.Tensor) -> FittedStandardize:
    built = op("op.StandardizeFeatures").build(
        params("op.StandardizeFeatures"), (data.shape[1], data.shape[2])
    )
    assert isinstance(built, FittedStandardize) and isinstance(built, FittedTransform)
    built.fit(data)
    return built


def test_standardization_is_fitted_on_the_training_steps_and_its_state_round_trips() -> None:
    gen = torch.Generator().manual_seed(1)
    train = torch.randn(50, 30, 3, generator=gen) * torch.tensor([1.0, 100.0, 0.01]) + torch.tensor(
        [5.0, -3e4, 0.0]
    )
    built = _fitted(train)
    out = built(train)
    assert torch.allclose(out.mean(dim=(0, 1)), torch.zeros(3), atol=1e-4)
    assert torch.allclose(out.std(dim=(0, 1), correction=0), torch.ones(3), atol=1e-4)
    state = json.loads(json.dumps(built.state()))  # model.json keeps it as JSON
    again = op("op.StandardizeFeatures").build(params("op.StandardizeFeatures"), (30, 3))
    assert isinstance(again, FittedStandardize)
    again.load(state)
    sample = torch.randn(17, 3)
    assert torch.equal(again(sample), built(sample))


def test_standardization_refuses_a_state_of_other_features_and_use_before_fitting() -> None:
    built = op("op.StandardizeFeatures").build(params("op.StandardizeFeatures"), (30, 3))
    assert isinstance(built, FittedStandardize)
    with pytest.raises(RuntimeError, match="before its statistics were measured"):
        built(torch.zeros(30, 3))
    with pytest.raises(ValueError, match=r"fitted mean must be a list of 3 numbers"):
        built.load({"mean": [0.0, 1.0], "std": [1.0, 1.0, 1.0]})
    with pytest.raises(ValueError, match="fitted std"):
        built.load({"mean": [0.0, 1.0, 2.0]})


def test_feature_stats_pool_every_step_and_keep_a_constant_feature_finite() -> None:
    data = torch.randn(4, 10, 2)
    data[..., 1] = 7.0
    mean, std = feature_stats(data)
    stacked_mean, stacked_std = feature_stats(data.reshape(40, 2))  # variable lengths come stacked
    assert torch.equal(mean, stacked_mean) and torch.equal(std, stacked_std)
    assert mean[1] == 7.0 and std[1] == 1.0
    assert torch.allclose(std[0], data[..., 0].std(correction=0))


def test_shifting_moves_steps_and_fills_with_zeros_or_wraps() -> None:
    x = torch.arange(1.0, 6.0)[:, None]  # 5 steps, 1 feature
    assert shift_steps(x, 2, wrap=False).flatten().tolist() == [0, 0, 1, 2, 3]
    assert shift_steps(x, -1, wrap=False).flatten().tolist() == [2, 3, 4, 5, 0]
    assert shift_steps(x, 2, wrap=True).flatten().tolist() == [4, 5, 1, 2, 3]
    assert shift_steps(x[None].expand(3, 5, 1), 1, wrap=False)[2].flatten().tolist() == [0, 1, 2, 3, 4]


def test_resampling_keeps_the_ends_and_a_straight_line_straight() -> None:
    ramp = torch.stack([torch.linspace(0, 9, 10), torch.full((10,), 3.0)], dim=1)  # (10, 2)
    out = resample_steps(ramp, 19)
    assert out.shape == (19, 2)
    assert torch.allclose(out[:, 0], torch.linspace(0, 9, 19)) and torch.all(out[:, 1] == 3.0)
    batch = torch.randn(4, 10, 2)
    assert torch.allclose(resample_steps(batch, 7)[2], resample_steps(batch[2], 7))


def _run(type_name: str, values: dict[str, Any], x: torch.Tensor, seed: int) -> torch.Tensor:
    # As the pipeline runs a random stage: the default generator seeded for the sample.
    stage = OpStage("n1", op(type_name).build(params(type_name, values), tuple(x.shape)), True, False)
    torch.default_generator.manual_seed(seed)
    return apply_stages([stage], x)


@pytest.mark.parametrize(
    ("type_name", "values"),
    [
        ("op.RandomTimeShift", {"max_shift": 6}),
        ("op.RandomTimeShift", {"max_shift": 6, "fill": "wrap"}),
        ("op.RandomCropSteps", {"length": 12}),
        ("op.GaussianNoise", {"std": 0.5}),
    ],
)
def test_random_operators_follow_the_seed_the_pipeline_gives_each_sample(
    type_name: str, values: dict[str, Any]
) -> None:
    x = torch.randn(30, 2)
    first = _run(type_name, values, x, 11)
    assert torch.equal(first, _run(type_name, values, x, 11))
    outputs = {tuple(_run(type_name, values, x, seed).flatten().tolist()) for seed in range(8)}
    assert len(outputs) > 1  # the seed changes the augmentation


def test_a_random_crop_is_a_window_of_the_sequence_and_a_center_crop_its_middle() -> None:
    x = torch.arange(30.0)[:, None].repeat(1, 2)
    for seed in range(10):
        out = _run("op.RandomCropSteps", {"length": 12}, x, seed)
        start = int(out[0, 0])
        assert torch.equal(out, x[start : start + 12])
    center = op("op.CenterCropSteps").build(params("op.CenterCropSteps", {"length": 12}), (30, 2))
    assert center(x)[:, 0].tolist() == list(range(9, 21))
    assert torch.equal(center(x[:5]), x[:5])  # a shorter sequence stays whole


def test_noise_has_the_strength_asked_for() -> None:
    x = torch.zeros(2000, 4)
    noise = _run("op.GaussianNoise", {"std": 0.3}, x, 5)
    assert abs(float(noise.std()) - 0.3) < 0.01 and abs(float(noise.mean())) < 0.01


def _carried_namespace() -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "train_script"}
    source = "\n".join(OPS_HELPER.imports) + "\n\n" + OPS_HELPER.code
    exec(compile(source, "train.py", "exec"), namespace)  # test-only: DragDL's own carried source
    return namespace


@pytest.mark.parametrize("kind", SEQUENCE_OPS, ids=lambda k: k.type)
def test_the_scripts_line_builds_the_same_operator_without_dragdl(kind: OpNode[Any]) -> None:
    shape = (40, 3)
    parsed = kind.params_model.model_validate({})
    built = kind.build(parsed, shape)
    namespace = _carried_namespace()
    train = torch.randn(8, *shape)
    if isinstance(built, FittedTransform):
        # The script measures the statistics on the training steps with the carried feature_stats.
        built.fit(train)
        namespace |= dict(zip(FITTED_NAMES, namespace["feature_stats"](train), strict=True))
    generated = eval(kind.codegen(parsed, shape), namespace)  # test-only: our own generated code
    assert type(generated).__module__ == "train_script"
    x = torch.randn(*shape)
    torch.manual_seed(3)
    expected = built(x)
    torch.manual_seed(3)
    assert torch.equal(generated(x), expected)
    assert kind.script_helpers(parsed) == (OPS_HELPER,)
