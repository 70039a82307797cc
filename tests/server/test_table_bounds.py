"""Uploaded tables bounded before the work (issue 23, findings 1 and 9): a nested Parquet column is
refused from the schema, a Parquet file whose text decodes far larger than it is is refused before
pandas converts it, a long cell or too many categories are refused naming the column, and what is
stored to describe a table stays small. SQLite only: the bounds are checked before any row is written."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dragdl.server.services import table_upload


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'dragdl.db'}"


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
    assert detail.startswith("long.csv: row 2, column 'note': a cell of 5000000 characters is above")
    assert len(detail) < 400


def test_a_column_of_too_many_categories_is_refused(user_client: TestClient) -> None:
    rows = "".join(f"{i},id{i}\n" for i in range(table_upload.MAX_CATEGORIES + 5))
    response = upload(user_client, "ids.csv", f"x,key\n{rows}".encode())
    assert response.status_code == 400, response.text[:300]
    assert (
        f"ids.csv: column 'key' has more than {table_upload.MAX_CATEGORIES} distinct values"
        in (response.json()["detail"])
    )


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
    assert all(len(value) <= table_upload.INFO_CATEGORY_CHARS for value in column["categories"])
