"""TrainConfig: the train node's params model and UI form."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dragdl.engine.tasks.settings import TrainConfig


def test_defaults() -> None:
    cfg = TrainConfig()
    assert (cfg.epochs, cfg.batch_size, cfg.optimizer, cfg.lr) == (10, 64, "adam", 1e-3)
    assert (cfg.val_split, cfg.test_split, cfg.device) == (0.1, 0.2, "auto")
    assert (cfg.precision, cfg.memory_format) == ("auto", "auto")


@pytest.mark.parametrize(("amp", "precision"), [("auto", "auto"), ("off", "fp32")])
def test_the_amp_param_of_earlier_graphs_still_loads_as_a_precision(amp: str, precision: str) -> None:
    cfg = TrainConfig.model_validate({"amp": amp, "epochs": 3})
    assert (cfg.precision, cfg.epochs) == (precision, 3)
    assert "amp" not in cfg.model_dump()


def test_every_field_is_described_for_the_form() -> None:
    schema = TrainConfig.model_json_schema()
    assert schema["additionalProperties"] is False
    missing = [name for name, prop in schema["properties"].items() if not prop.get("description")]
    assert missing == []
    assert schema["properties"]["epochs"]["maximum"] == 1000
    assert schema["properties"]["optimizer"]["enum"] == ["sgd", "adam", "adamw"]


def test_splits_that_leave_too_little_training_data_name_both_fields() -> None:
    with pytest.raises(ValidationError) as err:
        TrainConfig(val_split=0.45, test_split=0.45)
    message = str(err.value)
    assert "val_split (0.45)" in message and "test_split (0.45)" in message


@pytest.mark.parametrize(
    "params",
    [
        {"epochs": 0},
        {"lr": 0},
        {"momentum": 1.0},
        {"label_smoothing": 0.6},
        {"optimizer": "rmsprop"},
        {"bogus": 1},
    ],
)
def test_out_of_range_or_unknown_values_are_refused(params: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        TrainConfig(**params)


def test_more_workers_than_samples_in_a_batch_are_refused_on_the_workers_field() -> None:
    from dragdl.engine.nodes.registry import get_node_type

    kind = get_node_type("train.Classifier")
    assert kind is not None
    _, errors = kind.parse_params({"batch_size": 64, "workers": 65}, "train")
    (error,) = errors
    assert (error.field, error.node_id, error.details["type"]) == ("workers", "train", "workers_above_batch")
    assert error.details["limit"] == 64
    assert error.message.startswith("Workers must be at most the batch size (64)")
    assert TrainConfig(batch_size=64, workers=64).workers == 64


def test_cuda_workers_must_each_have_a_gpu() -> None:
    with pytest.raises(ValidationError) as refused:
        TrainConfig(device="cuda", workers=2, gpus_per_worker=0)
    (error,) = refused.value.errors()
    assert (error["loc"], error["type"]) == (("gpus_per_worker",), "worker_needs_gpu")
    assert TrainConfig(device="cuda", workers=2, gpus_per_worker=1).gpus_per_worker == 1
    assert TrainConfig(device="cuda", workers=1).gpus_per_worker == 0  # one process: the node's GPU
