"""The separator of a text table, told from its first lines (one reading for every reader)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dragdl.engine.data.table_text import detect_separator
from dragdl.engine.data.tables import read_rows, read_table


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_each_separator_is_found_whatever_the_name(sep: str) -> None:
    text = sep.join(["a", "b", "c"]) + "\r\n" + sep.join(["1", "x", '"q, r; s"']) + "\r\n"
    assert detect_separator(("\ufeff" + text).encode(), "t.csv") == sep


def test_decimal_commas_and_text_with_other_separators_do_not_mislead() -> None:
    assert detect_separator(b"a;b;t\n1,5;2,25;x\n3,5;4,0;y\n", "eu.csv") == ";"
    assert detect_separator(b"name,note\nann,a; b\nbo,c; d\n", "t.csv") == ","
    # One column, or lines that agree with no separator: the name's default.
    assert detect_separator(b"x\n1\n2\n", "t.tsv") == "\t"
    assert detect_separator(b"a,b\n1,2,3\n", "t.csv") == ","
    # A line cut at the end of the sample does not count against the separator.
    assert detect_separator(b"a;b\n" + b"1;2\n" * 20_000, "big.csv") == ";"


def test_a_semicolon_csv_is_read_with_its_columns_for_training_and_prediction(tmp_path: Path) -> None:
    path = tmp_path / "eu.csv"
    path.write_bytes("\ufeffsize;colour;kind\r\n1;red;a\r\n2;;b\r\n".encode())
    table = read_table(path)
    assert table.names == ["size", "colour", "kind"] and table.kind("size") == "number"
    assert read_rows(path)[1] == {"size": "2", "colour": None, "kind": "b"}


def test_decimal_commas_in_a_semicolon_file_are_numbers(tmp_path: Path) -> None:
    path = tmp_path / "eu.csv"
    path.write_bytes(b"a;b;t\r\n1,5;-0,25;x\r\n3;1,5e-05;1,2\r\n")
    table = read_table(path)
    assert table.kind("a") == "number" and table.columns["a"].tolist() == [1.5, 3.0]
    assert table.columns["b"].tolist() == [-0.25, 1.5e-05]
    assert table.columns["t"].tolist() == ["x", "1.2"]  # every reader reads each cell alike
    # A comma-separated file keeps its cells as written (a quoted "1,5" is text there).
    path.write_text('a,t\n"1,5",x\n', encoding="utf-8")
    assert read_table(path).columns["a"].tolist() == ["1,5"]
