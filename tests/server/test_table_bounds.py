"""Uploaded tables bounded before the work (issue 23, findings 1 and 9): a nested Parquet column is
refused from the schema, a Parquet file whose text decodes far larger than it is is refused before
pandas converts it, a long cell (from the bytes, before pandas parses the file) or too many
categories (counted by pandas before any cell is converted in Python) are refused naming the row and
column, and what is stored to describe a table stays small. SQLite only: the bounds are checked
before any row is written."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from dragdl.engine.inputs import table_upload
from dragdl.server.services.cpu_pool import CpuPool


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


@pytest.fixture
def parsed_here(app: FastAPI, user_client: TestClient) -> Iterator[None]:
    """Uploads read in the test's process (`cpu_workers=0`), where a limit the test patches applies
    (the CPU pool's workers import the modules afresh)."""
    pool, app.state.cpu_pool = app.state.cpu_pool, CpuPool(0)
    yield
    app.state.cpu_pool = pool


def upload(client: TestClient, filename: str, data: bytes) -> Any:
    return client.post("/api/datasets", files=[("files", (filename, data))])


def parquet_of(table: Any, **options: Any) -> bytes:
    import pyarrow.parquet as pq

    out = io.BytesIO()
    pq.write_table(table, out, **options)
    return out.getvalue()


def test_a_nested_parquet_column_is_refused_from_its_schema(user_client: TestClient) -> None:
    import numpy as np
    import pyarrow as pa

    cell = pa.array([np.zeros(2_000_000, dtype=np.int64)], type=pa.list_(pa.int64()))
    data = parquet_of(pa.table({"id": [1], "zeros": cell}), compression="zstd")
    assert len(data) < 100_000  # 16 MB of values in a few KB
    response = upload(user_client, "zeros.parquet", data)
    assert response.status_code == 400, response.text
    # Named from the schema ("list<...>"), not from a decoded row.
    assert "zeros.parquet: column 'zeros' holds list<" in response.json()["detail"]


@pytest.mark.usefixtures("parsed_here")
def test_a_parquet_file_whose_text_decodes_too_large_is_refused(
    user_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow as pa

    monkeypatch.setattr(table_upload, "MAX_DECODED_BYTES", 50 * 1024**2)
    value = "x" * 3000
    rows = 20_000  # 60 MB of text from one dictionary entry
    column = pa.DictionaryArray.from_arrays(pa.array([0] * rows, type=pa.int32()), pa.array([value]))
    data = parquet_of(pa.table({"n": list(range(rows)), "text": column}))
    assert len(data) < 500_000
    response = upload(user_client, "wide.parquet", data)
    assert response.status_code == 413, response.text
    detail = response.json()["detail"]
    assert "wide.parquet: its text is above" in detail and "'text'" in detail


def test_a_long_cell_is_refused_naming_row_and_column_with_a_bounded_quote(user_client: TestClient) -> None:
    cell = "A" * 5_000_000
    data = f"x,note\n1,short\n2,{cell}\n".encode()
    response = upload(user_client, "long.csv", data)
    assert response.status_code == 400, response.text[:300]
    detail = response.json()["detail"]
    assert detail.startswith(
        f"long.csv: row 2, column 'note': a cell is longer than the limit of {table_upload.MAX_CELL_CHARS}"
    )
    assert len(detail) < 400


def test_a_long_cell_is_refused_from_the_bytes_before_the_file_is_parsed(user_client: TestClient) -> None:
    # Row 3 has a field too many, which the parser would report first; the cell's bytes come first.
    data = b"x,y,note\n1,2,short\n3,4,\xc3\xa9" + "é".encode() * 3_000_000 + b"\n5,6,7,8\n"
    response = upload(user_client, "long.csv", data)
    assert response.status_code == 400, response.text[:300]
    detail = response.json()["detail"]
    assert detail.startswith("long.csv: row 2, column 'note': a cell is longer than"), detail
    assert "'éééé" in detail and len(detail) < 400
    # A cell just under the limit in characters (two bytes each) passes the byte scan and the reader.
    fine = b"x,note\n1," + "é".encode() * table_upload.MAX_CELL_CHARS + b"\n2,b\n"
    assert upload(user_client, "fine.csv", fine).status_code == 201


def test_a_long_cell_of_a_quoted_text_is_refused_once_parsed(user_client: TestClient) -> None:
    # Commas inside quotes split the byte scan's runs: the parsed cell is measured instead.
    cell = ",".join(["B" * 1000] * 6)
    response = upload(user_client, "quoted.csv", f'x,note\n1,"{cell}"\n'.encode())
    assert response.status_code == 400, response.text[:300]
    assert response.json()["detail"].startswith("quoted.csv: row 1, column 'note': a cell of 6005 characters")


def test_a_column_of_too_many_categories_is_refused(user_client: TestClient) -> None:
    rows = "".join(f"{i},id{i}\n" for i in range(table_upload.MAX_CATEGORIES + 5))
    response = upload(user_client, "ids.csv", f"x,key\n{rows}".encode())
    assert response.status_code == 400, response.text[:300]
    assert response.json()["detail"] == (
        f"ids.csv: column 'key' has more than {table_upload.MAX_CATEGORIES} distinct values (reached in "
        f"row {table_upload.MAX_CATEGORIES + 1}); a category column takes at most "
        f"{table_upload.MAX_CATEGORIES}: leave out an identifier or free-text column"
    )


@pytest.mark.usefixtures("parsed_here")
def test_categories_are_counted_before_any_cell_is_converted(
    user_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dragdl.engine.data import tables

    converted: list[int] = []
    convert = tables.column_from_values

    def counting(values: Any) -> Any:
        converted.append(len(values))
        return convert(values)

    monkeypatch.setattr(tables, "column_from_values", counting)
    monkeypatch.setattr(table_upload, "MAX_CATEGORIES", 50)
    # Padded copies of one value are one category: 40 of them in 200 rows, then 11 more.
    rows = "".join(f"{i},{' ' * (i % 3)}k{i % 40}\n" for i in range(200))
    rows += "".join(f"{i},n{i}\n" for i in range(11))
    response = upload(user_client, "keys.csv", f"x,key\n{rows}".encode())
    assert response.status_code == 400, response.text[:300]
    assert "column 'key' has more than 50 distinct values (reached in row 211)" in response.json()["detail"]
    assert converted == []  # refused before a value of any column was converted one by one
    # Numbers are no categories, however many distinct ones a column holds; a blank is missing.
    numbers = "".join(f"{i},{i / 7:.6f}\n" for i in range(300)) + "300, \n"
    accepted = upload(user_client, "numbers.csv", f"x,y\n{numbers}".encode())
    assert accepted.status_code == 201, accepted.text[:300]
    assert [c["kind"] for c in accepted.json()["columns"]] == ["number", "number"]


def test_the_stored_description_of_a_table_stays_small(user_client: TestClient) -> None:
    count = 9000
    rows = "".join(f"{i % 3},{'c' * 900}{i:05d}\n" for i in range(count))
    response = upload(user_client, "cats.csv", f"x,cat\n{rows}".encode())
    assert response.status_code == 201, response.text[:300]
    listing = user_client.get("/api/datasets")
    assert listing.status_code == 200
    assert len(listing.content) < 64 * 1024, f"the dataset list is {len(listing.content)} bytes"
    [column] = [c for c in listing.json()["data"][0]["columns"] if c["name"] == "cat"]
    assert len(column["categories"]) == table_upload.INFO_CATEGORIES
    assert column["category_count"] == count  # the real count, as the web UI shows it
    assert all(len(value) <= table_upload.INFO_CATEGORY_CHARS for value in column["categories"])


def test_a_workbook_is_bounded_by_its_declared_sizes_before_it_is_parsed(
    user_client: TestClient, parsed_here: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zipfile

    from dragdl.engine.inputs import table_workbook

    monkeypatch.setattr(table_workbook, "MAX_WORKBOOK_XML_BYTES", 1_000_000)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/worksheets/sheet1.xml", b" " * 2_000_000)  # 2 MB in a few KB
    assert len(out.getvalue()) < 20_000
    response = upload(user_client, "bomb.xlsx", out.getvalue())
    assert response.status_code == 413, response.text
    assert "bomb.xlsx: 2000008 bytes once decompressed is above the limit" in response.json()["detail"]


def test_a_workbook_sheet_is_bounded_while_it_is_streamed(
    user_client: TestClient, parsed_here: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import openpyxl

    monkeypatch.setattr(table_upload, "MAX_TABLE_CELLS", 100)
    book = openpyxl.Workbook()
    for i in range(60):
        book.active.append([i, i * 2, "a" if i % 2 else "b"])
    out = io.BytesIO()
    book.save(out)
    response = upload(user_client, "wide.xlsx", out.getvalue())
    assert response.status_code == 413, response.text
    assert "wide.xlsx: over 33 rows of 3 columns is above the limit of 100 cells" in response.json()["detail"]
