"""Table nodes: dataset.table, the table operators, and what validation says about them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from dragdl.engine.analysis.validate import validate_graph
from dragdl.engine.compile.plan import compile_graph
from dragdl.engine.data.base import DataContext, UploadedDataset
from dragdl.engine.data.table_pipeline import table_features
from dragdl.engine.data.tables import Table, read_table
from dragdl.engine.graph.errors import GraphInvalid
from dragdl.engine.nodes.registry import get_node_type
from dragdl.engine.nodes.table_ops import Impute, OneHot, SelectColumns, Standardize
from dragdl.engine.nodes.tables import TableOpNode
from dragdl.engine.run import split

from ...graphs import chain

CLASSIFIER = ("train", "train.Classifier", {"epochs": 1, "device": "cpu"})
REGRESSOR = ("train", "train.Regressor", {"epochs": 1, "device": "cpu"})


@pytest.fixture
def ctx(tmp_path: Path) -> DataContext:
    return DataContext(data_dir=tmp_path, allow_download=False)


def graph(
    data: dict[str, Any], *ops: tuple[str, str, dict[str, Any]], train: Any = CLASSIFIER
) -> dict[str, Any]:
    nodes = [("data", "dataset.table", data), *ops, ("out", "layer.Linear", {"out_features": "auto"}), train]
    return chain("table", nodes)


def people(tmp_path: Path) -> Path:
    """Ten people: a number with a gap, a category with a gap, a numeric and a class target."""
    rows = [
        "age,city,income,bought",
        "30,Paris,1.5,yes",
        ",Rome,2.0,no",
        "41,Paris,3.5,yes",
        "25,,1.0,no",
        "52,Oslo,4.0,yes",
        "33,Rome,2.5,no",
        "47,Paris,3.0,yes",
        "29,Oslo,1.5,no",
        "38,Rome,2.0,yes",
        "44,Oslo,3.0,no",
    ]
    path = tmp_path / "people.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_shapes_read_as_features(ctx: DataContext) -> None:
    result = validate_graph(graph({"source": "wine"}, ("scale", "op.Standardize", {})), ctx)
    assert result.ok, result.errors
    assert result.shapes == {"data": "13 features", "scale": "13 features", "out": "3"}
    assert result.dataset is not None and result.dataset.target == "cultivar"
    assert result.dataset.columns is not None and len(result.dataset.columns) == 13
    assert result.dataset.columns[0].kind == "number" and result.dataset.channels == 0


def test_describe_shows_kinds_and_missing(ctx: DataContext, tmp_path: Path) -> None:
    path = people(tmp_path)
    result = validate_graph(
        graph(
            {"source": "file", "path": str(path)},
            ("fill", "op.Impute", {"strategy": "most_frequent"}),
            ("hot", "op.OneHot", {}),
        ),
        ctx,
    )
    assert result.ok, result.errors
    assert result.dataset is not None and result.dataset.columns is not None
    columns = {c.name: c for c in result.dataset.columns}
    assert (columns["age"].kind, columns["age"].missing) == ("number", 1)
    assert (columns["city"].kind, columns["city"].missing) == ("category", 1)
    assert columns["city"].categories == ("Oslo", "Paris", "Rome")
    # age, income and city as three 0/1 columns (the schema's categories before fitting).
    assert result.shapes["hot"] == "5 features" and result.dataset.target == "bought"
    assert result.dataset.classes == ["no", "yes"]


def test_missing_target_names_close_columns(ctx: DataContext) -> None:
    result = validate_graph(graph({"source": "iris", "target": "specie"}), ctx)
    (error,) = result.errors
    assert error.code == "column_unknown" and error.node_id == "data" and error.field == "target"
    assert "'species'" in error.message and "'specie'" in error.message


def test_empty_file(ctx: DataContext, tmp_path: Path) -> None:
    (tmp_path / "empty.csv").write_text("", encoding="utf-8")
    result = validate_graph(graph({"source": "file", "path": "empty.csv"}), ctx)
    (error,) = result.errors
    assert error.code == "table_empty" and "empty.csv" in error.message and error.field == "path"


def test_one_class_only(ctx: DataContext, tmp_path: Path) -> None:
    (tmp_path / "one.csv").write_text("x,y\n1,a\n2,a\n3,a\n", encoding="utf-8")
    result = validate_graph(graph({"source": "file", "path": "one.csv"}), ctx)
    assert [e.code for e in result.errors] == ["too_few_classes"]
    assert result.errors[0].node_id == "data"


def test_text_in_a_numeric_target_names_the_row(ctx: DataContext, tmp_path: Path) -> None:
    (tmp_path / "prices.csv").write_text("rooms,price\n2,100\n3,150\n4,lots\n5,260\n", encoding="utf-8")
    with pytest.raises(GraphInvalid) as err:
        compile_graph(graph({"source": "file", "path": "prices.csv"}, train=REGRESSOR), ctx)
    (error,) = err.value.errors
    assert error.code == "target_not_numeric" and "row 3" in error.message and "'lots'" in error.message


def test_text_and_gaps_must_not_reach_the_network(ctx: DataContext, tmp_path: Path) -> None:
    path = str(people(tmp_path))
    text = validate_graph(graph({"source": "file", "path": path}, ("fill", "op.Impute", {})), ctx)
    assert [e.code for e in text.errors] == ["text_feature"]
    assert text.errors[0].node_id == "out" and "'city'" in text.errors[0].message
    gaps = validate_graph(graph({"source": "file", "path": path}, ("hot", "op.OneHot", {})), ctx)
    assert [e.code for e in gaps.errors] == ["missing_values"] and "'age'" in gaps.errors[0].message


def test_unknown_and_wrong_kind_columns_are_named(ctx: DataContext) -> None:
    result = validate_graph(
        graph(
            {"source": "iris"},
            ("pick", "op.SelectColumns", {"mode": "keep", "columns": ["petal lenght (cm)"]}),
        ),
        ctx,
    )
    (error,) = result.errors
    assert error.code == "column_unknown" and error.node_id == "pick" and error.field == "columns"
    assert "'petal length (cm)'" in error.message
    hot = validate_graph(
        graph({"source": "iris"}, ("hot", "op.OneHot", {"columns": ["sepal width (cm)"]})), ctx
    )
    assert [e.code for e in hot.errors] == ["column_kind"]


def test_select_columns_keeps_or_drops(ctx: DataContext) -> None:
    keep = validate_graph(
        graph({"source": "iris"}, ("pick", "op.SelectColumns", {"columns": ["petal width (cm)"]})), ctx
    )
    assert keep.shapes["pick"] == "1 feature"
    drop = validate_graph(
        graph(
            {"source": "iris"},
            ("pick", "op.SelectColumns", {"mode": "drop", "columns": ["petal width (cm)"]}),
        ),
        ctx,
    )
    assert drop.shapes["pick"] == "3 features"
    table = Table({"a": np.array([1.0]), "b": np.array([2.0]), "c": np.array([3.0])})
    node = SelectColumns()
    kept = node.apply(node.params_model(columns=["c", "a"]), table, {})
    assert kept.names == ["c", "a"]


def test_image_nodes_do_not_take_tables(ctx: DataContext) -> None:
    nodes = [
        ("data", "dataset.table", {"source": "iris"}),
        ("norm", "op.Normalize", {"preset": "dataset"}),
        ("out", "layer.Linear", {}),
        CLASSIFIER,
    ]
    result = validate_graph(chain("mixed", nodes), ctx)
    assert "port_type_mismatch" in [e.code for e in result.errors]


def _fit_apply(
    node: TableOpNode[Any], params: dict[str, Any], train: Table, other: Table
) -> tuple[dict[str, Any], Table]:
    typed = node.params_model.model_validate(params)
    state = node.fit(typed, train)
    return state, node.apply(typed, other, state)


def test_standardize_uses_training_rows_only() -> None:
    train = Table({"x": np.array([1.0, 3.0, np.nan]), "k": np.array([5.0, 5.0, 5.0])})
    other = Table({"x": np.array([2.0, 5.0, np.nan]), "k": np.array([5.0, 6.0, 4.0])})
    state, out = _fit_apply(Standardize(), {}, train, other)
    assert state["columns"]["x"] == {"mean": 2.0, "std": 1.0}
    assert state["columns"]["k"]["std"] == 1.0  # constant column: no division by zero
    np.testing.assert_allclose(out.columns["x"][:2], [0.0, 3.0])
    assert np.isnan(out.columns["x"][2])


def test_one_hot_fitted_categories_and_unseen_zeros() -> None:
    train = Table({"c": np.array(["b", "a", "b"], dtype=object), "n": np.array([1.0, 2.0, 3.0])})
    other = Table({"c": np.array(["a", "z", None], dtype=object), "n": np.array([4.0, 5.0, 6.0])})
    state, out = _fit_apply(OneHot(), {}, train, other)
    assert state == {"categories": {"c": ["a", "b"]}}
    assert out.names == ["c=a", "c=b", "n"]
    np.testing.assert_array_equal(table_features(out).numpy(), [[1, 0, 4], [0, 0, 5], [0, 0, 6]])


def test_one_hot_width_is_what_the_training_rows_had(ctx: DataContext, tmp_path: Path) -> None:
    # 'Oslo' is in one row only: with a seed that puts it in the test rows, the network gets one
    # input per city of the training rows, not per city of the file.
    rows = ["city,x,y"] + [f"{'Paris' if i % 2 else 'Rome'},{i},{'a' if i % 3 else 'b'}" for i in range(30)]
    rows.append("Oslo,99,a")
    (tmp_path / "cities.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    data = {"source": "file", "path": "cities.csv"}
    assert validate_graph(graph(data, ("hot", "op.OneHot", {})), ctx).shapes["hot"] == "4 features"
    for seed in range(20):
        settings = {**CLASSIFIER[2], "test_split": 0.2, "val_split": 0.0, "seed": seed}
        plan = compile_graph(
            graph(data, ("hot", "op.OneHot", {}), train=("train", "train.Classifier", settings)), ctx
        )
        if 30 not in split(plan).train:
            break
    else:
        pytest.fail("no seed put the Oslo row outside the training rows")
    assert plan.fitted is not None and plan.fitted["hot"]["categories"]["city"] == ["Paris", "Rome"]
    assert plan.input_shape == (3,)
    assert plan.model(torch.zeros(2, 3)).shape == (2, 2)


@pytest.mark.parametrize(("strategy", "fill"), [("mean", 3.0), ("median", 2.0), ("most_frequent", 2.0)])
def test_impute_strategies(strategy: str, fill: float) -> None:
    train = Table(
        {"x": np.array([2.0, 2.0, 5.0, np.nan]), "c": np.array(["u", "v", "v", None], dtype=object)}
    )
    state, out = _fit_apply(Impute(), {"strategy": strategy}, train, train)
    assert out.columns["x"][3] == fill
    if strategy == "most_frequent":
        assert out.columns["c"].tolist() == ["u", "v", "v", "v"]
    else:
        assert out.columns["c"][3] is None and "c" not in state["fill"]


def test_uploaded_table(ctx: DataContext, tmp_path: Path) -> None:
    folder = tmp_path / "datasets" / "t1"
    folder.mkdir(parents=True)
    people(folder)
    uploaded = DataContext(
        data_dir=tmp_path,
        uploaded={
            "t1": UploadedDataset(kind="table", path=folder),
            "img": UploadedDataset("folder", tmp_path),
        },
    )
    ok = validate_graph(
        graph(
            {"source": "uploaded", "dataset_id": "t1"},
            ("fill", "op.Impute", {"strategy": "most_frequent"}),
            ("hot", "op.OneHot", {}),
        ),
        uploaded,
    )
    assert ok.ok, ok.errors
    wrong = validate_graph(graph({"source": "uploaded", "dataset_id": "img"}), uploaded)
    assert wrong.errors[0].field == "dataset_id" and "Uploaded dataset node" in wrong.errors[0].message
    image_node = chain(
        "u", [("data", "dataset.uploaded", {"dataset_id": "t1"}), ("out", "layer.Flatten", {}), CLASSIFIER]
    )
    error = validate_graph(image_node, uploaded).errors[0]
    assert error.field == "dataset_id" and "Table node" in error.message


def test_table_operators_share_one_base() -> None:
    for name in ("op.Standardize", "op.OneHot", "op.Impute", "op.SelectColumns"):
        kind = get_node_type(name)
        assert isinstance(kind, TableOpNode)
        assert kind.inputs[0].types == ("table",) and kind.outputs[0].types == ("table",)


def test_read_table_kinds_survive_a_round_trip(tmp_path: Path) -> None:
    table = read_table(people(tmp_path))
    assert [c.kind for c in table.schema()] == ["number", "category", "number", "category"]


def test_one_hot_refuses_a_free_text_column_naming_it(ctx: DataContext, tmp_path: Path) -> None:
    # A name per row: one-hot would turn it into 80 columns of noise.
    rows = ["name,x,y"] + [f"person {i},{i},{'a' if i % 3 else 'b'}" for i in range(80)]
    (tmp_path / "names.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    data = {"source": "file", "path": "names.csv"}
    result = validate_graph(graph(data, ("hot", "op.OneHot", {})), ctx)
    (error,) = result.errors
    assert (error.code, error.node_id, error.field) == ("too_many_categories", "hot", "max_categories")
    assert "'name' has 80 distinct values, more than 50" in error.message
    # Raised, it is accepted; dropped, the column is gone and nothing is refused.
    assert validate_graph(graph(data, ("hot", "op.OneHot", {"max_categories": 100})), ctx).ok
    keep = ("pick", "op.SelectColumns", {"mode": "drop", "columns": ["name"]})
    assert validate_graph(graph(data, keep), ctx).ok


def test_a_model_asks_only_for_the_columns_its_features_come_from(ctx: DataContext, tmp_path: Path) -> None:
    from dragdl.engine.bundle import load_bundle
    from dragdl.engine.run import run_graph
    from dragdl.engine.train.reporter import ListReporter

    # 'note' is free text, dropped after the fitted operators saw it; 'city' is one-hot encoded.
    rows = ["note,city,age,bought"] + [
        f"visit {i},{('Paris', 'Rome', 'Oslo')[i % 3]},{20 + i},{'yes' if i % 2 else 'no'}" for i in range(40)
    ]
    (tmp_path / "visits.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    data = {"source": "file", "path": "visits.csv", "target": "bought"}
    graph_ = graph(
        data,
        ("fill", "op.Impute", {"strategy": "most_frequent"}),
        ("drop", "op.SelectColumns", {"mode": "drop", "columns": ["note"]}),
        ("hot", "op.OneHot", {}),
        ("scale", "op.Standardize", {}),
    )
    assert run_graph(graph_, ctx, tmp_path / "run", ListReporter()).status == "succeeded"
    bundle = load_bundle(tmp_path / "run")
    assert bundle.manifest.table is not None and bundle.manifest.table.inputs == ["city", "age"]
    assert [c.name for c in bundle.input_columns or []] == ["city", "age"]
    (answer,) = bundle.predict_rows([{"city": "Rome", "age": 31}])
    assert answer["label"] in ("yes", "no")
    with pytest.raises(Exception, match="age"):
        bundle.predict_rows([{"city": "Rome"}])
    # A city training never saw would be answered as "none of them": refused, naming row and column.
    with pytest.raises(Exception, match="row 2, column 'city': 'Lima' is not one of the values seen"):
        bundle.predict_rows([{"city": "Rome", "age": 30}, {"city": "Lima", "age": 31}])


def test_the_table_forms_words_are_what_the_form_shows() -> None:
    """The Table node's help spoke of sources by their stored values ('file', 'uploaded') and asked
    for 'the id' of an uploaded table, beside a select that shows names and labels."""
    from dragdl.engine.nodes.tables import TableParams

    for name, field in TableParams.model_json_schema()["properties"].items():
        description = field.get("description", "")
        assert not re.search(r"'(file|uploaded)'", description), (name, description)
        assert " id " not in f" {description} ", (name, description)
