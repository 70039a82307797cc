"""Parameter errors speak plainly and name the field by its title, keeping the parts as details."""

from __future__ import annotations

from dragdl.engine.nodes.registry import get_node_type


def _errors(node_type: str, params: dict[str, object]) -> list[tuple[str, str | None, dict[str, object]]]:
    kind = get_node_type(node_type)
    assert kind is not None
    _, errors = kind.parse_params(params, "n1")
    assert all(error.code == "param_invalid" and error.node_id == "n1" for error in errors)
    return [(error.message, error.field, error.details) for error in errors]


def test_a_bound_names_the_field_title_the_limit_and_the_value() -> None:
    assert _errors("train.Classifier", {"epochs": 0}) == [
        (
            "Epochs must be at least 1 (got 0)",
            "epochs",
            {"type": "greater_than_equal", "title": "Epochs", "limit": 1, "got": 0},
        )
    ]


def test_no_raw_pydantic_wording_reaches_people() -> None:
    cases = [
        ("train.Classifier", {"lr": "fast"}),
        ("train.Classifier", {"optimizer": "rmsprop"}),
        ("train.Classifier", {"momentum": 2}),
        ("train.Classifier", {"unknown": 1}),
        ("train.Classifier", {"val_split": 0.45, "test_split": 0.45}),
        ("layer.Conv2d", {"kernel_size": 1.5}),
        ("dataset.quickdraw", {"categories": ["cat"]}),
    ]
    for node_type, params in cases:
        for message, _, details in _errors(node_type, params):
            assert "Input should" not in message and "Value error" not in message, message
            assert details["type"], message
    lr = _errors("train.Classifier", {"lr": "fast"})[0]
    assert lr[0] == "Learning rate must be a number (got 'fast')"
    categories = _errors("dataset.quickdraw", {"categories": ["cat"]})[0]
    assert categories[0].startswith("Categories needs at least 2 entries")
