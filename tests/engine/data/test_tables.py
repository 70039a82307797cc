"""Tables: reading CSV/TSV/Parquet, scikit-learn's sets, prediction rows and the training source."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dragdl.engine.data.base import DatasetError
from dragdl.engine.data.tables import (
    MISSING_TOKENS,
    ColumnInfo,
    TableSource,
    builtin_table,
    is_missing_text,
    read_rows,
    read_table,
    rows_to_table,
)
from dragdl.engine.tasks.registry import get_task_kind


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_kinds_missing_and_categories(tmp_path: Path) -> None:
    table = read_table(_write(tmp_path / "t.csv", "age,city,score\n30,Paris,1.5\n,Rome,2\n41,,x\n"))
    assert table.num_rows == 3
    schema = {c.name: c for c in table.schema()}
    assert schema["age"] == ColumnInfo(name="age", kind="number", missing=1)
    assert schema["city"].kind == "category" and schema["city"].categories == ("Paris", "Rome")
    assert schema["city"].missing == 1
    # one text cell makes the whole column a category: kinds are decided per column.
    assert schema["score"].kind == "category"
    assert np.isnan(table.columns["age"][1])


def test_a_row_with_more_fields_than_the_header_is_refused_not_shifted(tmp_path: Path) -> None:
    # pandas would make the first field an index and silently drop it.
    extra = _write(tmp_path / "extra.csv", "a,b,t\n1,5,2,x\n3,4,y\n")
    with pytest.raises(DatasetError, match=r"extra\.csv: some rows have more fields than the header"):
        read_table(extra)
    # A byte-order mark does not end up in the first column's name.
    assert read_table(_write(tmp_path / "bom.csv", "\ufeffa,b\n1,2\n")).names == ["a", "b"]


def test_parquet_cells_that_are_not_numbers_or_text_are_refused_naming_the_column(tmp_path: Path) -> None:
    import pandas as pd

    pd.DataFrame({"x": [1.0, 2.0], "lst": [[1, 2], [3]], "t": [1, 2]}).to_parquet(tmp_path / "n.parquet")
    with pytest.raises(DatasetError, match=r"column 'lst' holds .* values \(row 1\)"):
        read_table(tmp_path / "n.parquet")


def test_tsv_and_parquet(tmp_path: Path) -> None:
    import pandas as pd

    tsv = read_table(_write(tmp_path / "t.tsv", "a\tb\n1\tx\n2\ty\n"))
    assert tsv.schema()[0].kind == "number" and tsv.schema()[1].categories == ("x", "y")
    pd.DataFrame({"a": [1, 2, None], "b": ["u", None, "v"]}).to_parquet(tmp_path / "t.parquet")
    parquet = read_table(tmp_path / "t.parquet")
    assert [c.kind for c in parquet.schema()] == ["number", "category"]
    assert [c.missing for c in parquet.schema()] == [1, 1]


def test_empty_and_wrong_files(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as empty:
        read_table(_write(tmp_path / "e.csv", ""))
    assert empty.value.code == "table_empty" and "e.csv" in empty.value.message
    with pytest.raises(DatasetError) as header_only:
        read_table(_write(tmp_path / "h.csv", "a,b\n"))
    assert header_only.value.code == "table_empty"
    with pytest.raises(DatasetError, match=r"\.csv, \.tsv or \.parquet"):
        read_table(_write(tmp_path / "t.txt", "a\n1\n"))
    with pytest.raises(DatasetError, match="does not exist"):
        read_table(tmp_path / "missing.csv")


@pytest.mark.parametrize(
    ("name", "rows", "features", "target", "classes"),
    [
        ("iris", 150, 4, "species", 3),
        ("wine", 178, 13, "cultivar", 3),
        ("breast_cancer", 569, 30, "diagnosis", 2),
    ],
)
def test_builtin_classification_sets(name: str, rows: int, features: int, target: str, classes: int) -> None:
    table, target_name = builtin_table(name)
    assert target_name == target
    source = TableSource(table, target_name)
    assert source.info.count == rows and len(source.info.columns) == features
    assert len(source.info.classes) == classes and source.info.target == target
    assert source.info.channels == 0 and source.info.size is None
    assert get_task_kind("classification").output_size(source.info) == classes
    assert len(np.bincount(source.labels)) == classes
    assert source.labels.max() == classes - 1


def test_builtin_regression_set() -> None:
    table, target = builtin_table("diabetes")
    source = TableSource(table, target)
    values = get_task_kind("regression").targets(source)
    assert values.dtype == np.float32 and len(values) == 442
    assert source.info.columns[0].name == "age" and len(source.info.columns) == 10


def test_unknown_builtin() -> None:
    with pytest.raises(DatasetError, match="iris"):
        builtin_table("irs")


def test_missing_target_names_close_columns(tmp_path: Path) -> None:
    table = read_table(_write(tmp_path / "t.csv", "price,rooms\n1,2\n3,4\n"))
    with pytest.raises(DatasetError) as err:
        TableSource(table, "prices")
    assert err.value.code == "column_unknown" and "'price'" in err.value.message
    assert err.value.field == "target"


def test_rows_without_a_target_are_left_out_and_named(tmp_path: Path) -> None:
    table = read_table(_write(tmp_path / "t.csv", "x,y\n1,a\n2,\n3,b\n4,NA\n5,a\n"))
    source = TableSource(table, "y")
    assert source.info.count == 3 and len(source) == 3
    assert source.info.missing_targets == 2 and source.info.missing_target_rows == (2, 4)
    assert source.features.columns["x"].tolist() == [1.0, 3.0, 5.0]
    assert source.info.classes == ("a", "b") and source.labels.tolist() == [0, 1, 0]


def test_rows_without_a_target_refused_name_the_first_row(tmp_path: Path) -> None:
    table = read_table(_write(tmp_path / "t.csv", "x,y\n1,a\n2,\n3,b\n4,\n"))
    with pytest.raises(DatasetError, match="row 2 \\(2 rows in all\\)") as err:
        TableSource(table, "y", missing_targets="refuse")
    assert err.value.code == "target_missing"


def test_a_table_without_any_target_is_refused_even_when_dropping(tmp_path: Path) -> None:
    table = read_table(_write(tmp_path / "t.csv", "x,y\n1,\n2,\n"))
    with pytest.raises(DatasetError, match="row 1 \\(2 rows in all\\)") as err:
        TableSource(table, "y")
    assert err.value.code == "target_missing"


def test_rows_after_a_dropped_one_keep_their_file_number(tmp_path: Path) -> None:
    table = read_table(_write(tmp_path / "t.csv", "x,y\n1,2.5\n2,\n3,lots\n"))
    source = TableSource(table, "y")
    assert source.info.target_text == (3, "lots")
    with pytest.raises(DatasetError, match="row 3"):
        get_task_kind("regression").targets(source)


def test_text_in_numeric_target_names_the_row(tmp_path: Path) -> None:
    table = read_table(_write(tmp_path / "t.csv", "x,y\n1,2.5\n2,3.5\n3,lots\n"))
    source = TableSource(table, "y")
    with pytest.raises(DatasetError, match="row 3") as err:
        get_task_kind("regression").targets(source)
    assert err.value.code == "target_not_numeric" and "'lots'" in err.value.message


def test_one_class_only(tmp_path: Path) -> None:
    source = TableSource(read_table(_write(tmp_path / "t.csv", "x,y\n1,a\n2,a\n")), "y")
    with pytest.raises(DatasetError) as err:
        get_task_kind("classification").output_size(source.info)
    assert err.value.code == "too_few_classes"


def test_numeric_class_names_read_as_integers(tmp_path: Path) -> None:
    source = TableSource(read_table(_write(tmp_path / "t.csv", "x,y\n1,10\n2,2\n3,10\n")), "y")
    assert source.info.classes == ("2", "10")  # sorted as numbers
    assert source.labels.tolist() == [1, 0, 1]


def test_rows_to_table_against_schema() -> None:
    schema = [
        ColumnInfo(name="age", kind="number"),
        ColumnInfo(name="city", kind="category", categories=("Paris", "Rome")),
    ]
    table = rows_to_table([{"age": "31", "city": "Rome", "id": 7}, {"age": None}], schema)
    assert table.names == ["age", "city"]
    assert table.columns["age"][0] == 31.0 and np.isnan(table.columns["age"][1])
    assert table.columns["city"].tolist() == ["Rome", None]
    with pytest.raises(DatasetError, match=r"row 2, column 'age'") as err:
        rows_to_table([{"age": 1, "city": "Rome"}, {"age": "old"}], schema)
    assert err.value.code == "value_not_numeric"
    with pytest.raises(DatasetError, match="no row has the column 'city'") as absent:
        rows_to_table([{"age": 1}], schema)
    assert absent.value.code == "column_unknown" and "'age', 'city'" in absent.value.message
    with pytest.raises(DatasetError):
        rows_to_table([], schema)


def test_column_info_json() -> None:
    info = ColumnInfo(name="c", kind="category", missing=2, categories=("a", "b"))
    assert info.to_json() == {"name": "c", "kind": "category", "missing": 2, "categories": ["a", "b"]}
    assert ColumnInfo.model_validate(info.to_json()) == info


def test_one_set_of_missing_tokens_is_pandas_default() -> None:
    from pandas._libs.parsers import STR_NA_VALUES

    assert set(STR_NA_VALUES) == MISSING_TOKENS


def test_na_is_missing_in_a_file_in_prediction_rows_and_in_a_prediction_file(tmp_path: Path) -> None:
    # Issue 19: training read "NA" as missing, while a CSV batch or REST row refused it as "not a number".
    path = _write(tmp_path / "t.csv", "mass,island,sex\n3750,Torgersen,MALE\nNA,NA,NA\n3800, n/a ,null\n")
    table = read_table(path)
    assert table.kind("mass") == "number" and np.isnan(table.columns["mass"][1])
    assert list(table.columns["island"]) == ["Torgersen", None, None]
    schema = table.schema()
    rows = [
        {"mass": "NA", "island": "NA", "sex": "None"},
        {"mass": " N/A ", "island": "#N/A", "sex": "MALE"},
        {"mass": "3750", "island": "Torgersen", "sex": "NaN"},
    ]
    read = rows_to_table(rows, schema)
    assert np.isnan(read.columns["mass"][:2]).all() and read.columns["mass"][2] == 3750
    assert list(read.columns["island"]) == [None, None, "Torgersen"]
    assert list(read.columns["sex"]) == [None, "MALE", None]
    # The CLI reads a prediction file with read_rows: the same cells are missing there.
    from_file = rows_to_table(read_rows(path), schema)
    assert list(from_file.columns["island"]) == ["Torgersen", None, None]
    assert is_missing_text(" NA ") and not is_missing_text("NAN?")


def test_the_web_form_reads_the_same_missing_tokens() -> None:
    """The prediction form parses its fields in the browser; its list is this one."""
    import json
    import re

    source = Path(__file__).parents[3] / "frontend/src/features/models/tableForm.ts"
    found = re.search(r"MISSING_TOKENS: ReadonlySet<string> = new Set\(\[(.*?)\]\)", source.read_text(), re.S)
    assert found is not None
    listed = json.loads("[" + found.group(1).strip().rstrip(",") + "]")
    assert set(listed) | {""} == MISSING_TOKENS
