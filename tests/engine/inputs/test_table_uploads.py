"""The table input type reads its uploads itself (`detect_upload`, `describe_upload`): one table file
sent on its own and without options, checked before it is read; errors carry the code the server
answers by (too_large: 413, file_type: 415)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dragdl.engine.data.base import DatasetError
from dragdl.engine.inputs import table_upload
from dragdl.engine.inputs.tables import TABLE


def test_one_table_file_is_a_table_stored_under_its_readers_name(tmp_path: Path) -> None:
    (tmp_path / "iris.csv").write_text("length,species\n1.5,a\n2.5,b\n")
    assert TABLE.detect_upload(tmp_path) == "table"
    assert TABLE.detect_upload(tmp_path, {"label_column": "species"}) is None  # a recording's options
    assert TABLE.upload_loose_only and not TABLE.upload_fallback
    info = TABLE.describe_upload("table", tmp_path)
    assert (info["file"], info["count"], info["reader_file"]) == ("iris.csv", 2, "table.csv")
    assert [(c["name"], c["kind"]) for c in info["columns"]] == [
        ("length", "number"),
        ("species", "category"),
    ]
    assert (tmp_path / "table.csv").is_file() and not (tmp_path / "iris.csv").exists()
    (tmp_path / "other.csv").write_text("x\n1\n")
    assert TABLE.detect_upload(tmp_path) is None  # two files: not a table upload


def test_its_errors_name_the_uploaders_file_with_the_servers_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big"
    big.mkdir()
    (big / "big.csv").write_text("a,b\n" + "1,2\n" * 20)
    monkeypatch.setattr(table_upload, "MAX_TABLE_BYTES", 50)
    with pytest.raises(DatasetError, match=r"big\.csv: 84 bytes is above the limit of 50") as caught:
        TABLE.describe_upload("table", big)
    assert caught.value.code == "too_large"
    wide = tmp_path / "utf16"
    wide.mkdir()
    (wide / "excel.csv").write_bytes("name,x\nAda,1\nBob,2\n".encode("utf-16-le"))
    with pytest.raises(DatasetError, match=r"excel\.csv: the text is UTF-16") as caught:
        TABLE.describe_upload("table", wide)
    assert caught.value.code == "file_type"
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "empty.csv").write_text("")
    with pytest.raises(DatasetError, match=r"empty\.csv\b.*is empty"):
        TABLE.describe_upload("table", empty)
