"""Hostile and broken dataset uploads, built in memory when the tests run (no binary files in git).

Each case is what a client sends (file name and bytes per part), the status the server must answer,
and a fragment the message must contain: the member, file or CSV row concerned. `limits` names
module constants of `dragdl.server.services.datasets` to lower for the case (so that a "too many
files" archive needs 10 members, not 200,001).
"""

from __future__ import annotations

import io
import stat
import struct
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

Part = tuple[str, bytes]


@dataclass(frozen=True)
class HostileCase:
    id: str
    files: list[Part]
    status: int
    message: str
    limits: dict[str, int] = field(default_factory=dict)


def png(width: int = 8, height: int = 8, value: int = 128, mode: str = "L") -> bytes:
    out = io.BytesIO()
    Image.new(mode, (width, height), value).save(out, format="PNG")
    return out.getvalue()


def png_claiming(width: int, height: int) -> bytes:
    """A small valid PNG whose header claims width x height: only a header check can catch it cheaply."""
    data = bytearray(png())
    # Signature (8) + IHDR length (4) + b"IHDR" (4), then width, height; the chunk's CRC follows 13 bytes.
    struct.pack_into(">II", data, 16, width, height)
    struct.pack_into(">I", data, 29, zlib.crc32(bytes(data[12:29])))
    return bytes(data)


def make_zip(members: dict[str, bytes], *, links: tuple[str, ...] = (), dirs: tuple[str, ...] = ()) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if name in links:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, data)
        for name in dirs:
            archive.writestr(zipfile.ZipInfo(name.rstrip("/") + "/"), b"")
    return out.getvalue()


def parquet(columns: dict[str, list[object]]) -> bytes:
    """A Parquet file of these columns."""
    import pandas as pd

    out = io.BytesIO()
    pd.DataFrame(columns).to_parquet(out, index=False)
    return out.getvalue()


def two_classes(**extra: bytes) -> dict[str, bytes]:
    return {"cat/a.png": png(), "cat/b.png": png(), "dog/a.png": png(value=9), **extra}


def lying_sizes(members: dict[str, bytes]) -> bytes:
    """A zip whose headers declare every member 1 byte long (it expands to much more)."""
    data = bytearray(make_zip(members))
    at = 0
    while (at := data.find(b"PK\x01\x02", at)) >= 0:  # central directory: uncompressed size at +24
        struct.pack_into("<I", data, at + 24, 1)
        at += 4
    at = 0
    while (at := data.find(b"PK\x03\x04", at)) >= 0:  # local headers: uncompressed size at +22
        struct.pack_into("<I", data, at + 22, 1)
        at += 4
    return bytes(data)


def npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=allow_pickle)
    return out.getvalue()


def bitmaps(rows: int = 4, side: int = 28, value: int = 0) -> bytes:
    return npy(np.full((rows, side * side), value, dtype=np.uint8))


def csv_zip(rows: str, images: dict[str, bytes] | None = None) -> bytes:
    members = {"list.csv": rows.encode()}
    members.update(images if images is not None else {"img/a.png": png(), "img/b.png": png(value=7)})
    return make_zip(members)


_BUILDERS: list[Callable[[], HostileCase]] = [
    lambda: HostileCase(
        "zip-slip", [("data.zip", make_zip(two_classes(**{"../evil.png": png()})))], 400, "'../evil.png'"
    ),
    lambda: HostileCase(
        "zip-slip-backslash",
        [("data.zip", make_zip(two_classes(**{"cat\\..\\..\\evil.png": png()})))],
        400,
        "outside the archive",
    ),
    lambda: HostileCase(
        "absolute-path",
        [("data.zip", make_zip(two_classes(**{"/etc/evil.png": png()})))],
        400,
        "'/etc/evil.png' has an absolute path",
    ),
    lambda: HostileCase(
        "drive-path",
        [("data.zip", make_zip(two_classes(**{"C:/evil.png": png()})))],
        400,
        "absolute path",
    ),
    lambda: HostileCase(
        "symlink",
        [("data.zip", make_zip(two_classes(**{"dog/link.png": b"/etc/passwd"}), links=("dog/link.png",)))],
        400,
        "'dog/link.png' is a symbolic link",
    ),
    lambda: HostileCase(
        "bomb-ratio",
        [("data.zip", make_zip(two_classes(**{"dog/zeros.png": bytes(4 * 1024 * 1024)})))],
        400,
        "'dog/zeros.png' has a compression ratio",
    ),
    lambda: HostileCase(
        "bomb-count",
        [("data.zip", make_zip({f"c{i % 2}/{i}.png": png() for i in range(12)}))],
        400,
        "more than 10 files",
        limits={"MAX_ARCHIVE_FILES": 10},
    ),
    lambda: HostileCase(
        "bomb-total-size",
        [("data.zip", make_zip(two_classes(**{"dog/big.png": np.random.default_rng(0).bytes(2000)})))],
        400,
        "expands to more than 500 bytes",
        limits={"MAX_ARCHIVE_BYTES": 500},
    ),
    lambda: HostileCase(
        "lying-header", [("data.zip", lying_sizes(two_classes()))], 400, "cannot extract data.zip"
    ),
    lambda: HostileCase(
        "pixel-limit",
        [("data.zip", make_zip(two_classes(**{"dog/huge.png": png_claiming(8000, 8000)})))],
        400,
        "dog/huge.png has 8000x8000",
    ),
    lambda: HostileCase(
        "text-files-only",
        [("data.zip", make_zip({"cat/a.txt": b"meow", "dog/b.txt": b"woof"}))],
        400,
        "class folder 'cat'",
    ),
    lambda: HostileCase(
        "loose-files-only",
        [("data.zip", make_zip({"readme.txt": b"hi", "x.bin": b"\0"}))],
        400,
        "0 class folder",
    ),
    lambda: HostileCase(
        "fake-image",
        [("data.zip", make_zip(two_classes(**{"dog/fake.png": b"<html>not a png</html>"})))],
        400,
        "dog/fake.png",
    ),
    lambda: HostileCase(
        "single-class",
        [("data.zip", make_zip({"cat/a.png": png(), "cat/b.png": png()}))],
        400,
        "1 class folder",
    ),
    lambda: HostileCase(
        "empty-class",
        [("data.zip", make_zip({"cat/a.png": png(), "dog/readme.txt": b"x"}, dirs=("bird",)))],
        400,
        "class folder 'bird'",
    ),
    lambda: HostileCase(
        "corrupted-zip",
        [("data.zip", b"PK\x03\x04" + bytes(range(256)) * 4)],
        400,
        "data.zip is not a readable zip",
    ),
    lambda: HostileCase(
        "truncated-zip",
        [("data.zip", make_zip(two_classes())[:-40])],
        400,
        "data.zip is not a readable zip",
    ),
    lambda: HostileCase(
        "csv-short-row",
        [("data.zip", csv_zip("path,label\nimg/a.png,cat\nimg/b.png\n"))],
        400,
        "CSV list.csv row 3: expected",
    ),
    lambda: HostileCase(
        "csv-missing-image",
        [("data.zip", csv_zip("path,label\nimg/a.png,cat\nimg/nope.png,dog\n"))],
        400,
        "row 3: image file 'img/nope.png' not found",
    ),
    lambda: HostileCase(
        "csv-path-escape",
        [("data.zip", csv_zip("path,label\n../../../../etc/passwd,cat\nimg/b.png,dog\n"))],
        400,
        "row 2: image path '../../../../etc/passwd' points outside",
    ),
    lambda: HostileCase(
        "csv-no-label-column", [("data.zip", csv_zip("file,class\nimg/a.png,cat\n"))], 400, "no column 'path'"
    ),
    lambda: HostileCase(
        "csv-one-label",
        [("data.zip", csv_zip("path,label\nimg/a.png,cat\nimg/b.png,cat\n"))],
        400,
        "1 distinct label",
    ),
    lambda: HostileCase(
        "two-csvs",
        [("data.zip", make_zip({"a.csv": b"path,label\n", "b.csv": b"path,label\n", "x/a.png": png()}))],
        400,
        "several CSV files (a.csv, b.csv)",
    ),
    lambda: HostileCase("not-npy", [("cat.txt", b"meow"), ("dog.npy", bitmaps())], 415, "'cat.txt'"),
    lambda: HostileCase(
        "npy-pickle",
        [
            ("cat.npy", npy(np.array([{"x": 1}, None], dtype=object), allow_pickle=True)),
            ("dog.npy", bitmaps()),
        ],
        400,
        "cat.npy",
    ),
    lambda: HostileCase(
        "npy-float",
        [("cat.npy", npy(np.zeros((2, 784), dtype=np.float32))), ("dog.npy", bitmaps())],
        400,
        "uint8",
    ),
    lambda: HostileCase(
        "npy-not-square",
        [("cat.npy", npy(np.zeros((2, 700), dtype=np.uint8))), ("dog.npy", bitmaps())],
        400,
        "not a square image",
    ),
    lambda: HostileCase("npy-fake", [("cat.npy", b"not numpy"), ("dog.npy", bitmaps())], 400, "cat.npy"),
    lambda: HostileCase("npy-single-class", [("cat.npy", bitmaps())], 400, "1 .npy file"),
    lambda: HostileCase(
        "npy-sizes-differ", [("cat.npy", bitmaps()), ("dog.npy", bitmaps(side=16))], 400, "16x16"
    ),
    lambda: HostileCase("npy-hidden-name", [("..npy", bitmaps()), ("dog.npy", bitmaps())], 400, "'..npy'"),
    lambda: HostileCase("table-binary", [("data.csv", b"a,b\n\x00\x01,3\n")], 400, "data.csv: not a text"),
    lambda: HostileCase("table-empty", [("empty.csv", b"")], 400, "empty.csv is empty"),
    lambda: HostileCase("table-header-only", [("cols.tsv", b"a\tb\n")], 400, "cols.tsv has no data rows"),
    lambda: HostileCase(
        "table-not-utf8", [("latin.csv", "name,x\nJos\xe9,1\n".encode("latin-1"))], 400, "latin.csv"
    ),
    lambda: HostileCase(
        "table-parquet-fake", [("data.parquet", b"not parquet at all")], 400, "data.parquet: not a Parquet"
    ),
    lambda: HostileCase(
        "table-parquet-broken",
        [("data.parquet", b"PAR1" + bytes(range(256)) + b"PAR1")],
        400,
        "data.parquet: not a readable Parquet",
    ),
    lambda: HostileCase(
        "table-too-many-cells",
        [("big.csv", b"a,b\n" + b"1,2\n" * 20)],
        413,
        "big.csv: about 21 rows of 2 columns is above the limit of 10 cells",
        limits={"MAX_TABLE_CELLS": 10},
    ),
    lambda: HostileCase(
        "table-parquet-too-many-cells",
        [("big.parquet", parquet({"a": list(range(20)), "b": list(range(20))}))],
        413,
        "big.parquet: 20 rows of 2 columns is above the limit of 10 cells",
        limits={"MAX_TABLE_CELLS": 10},
    ),
    lambda: HostileCase(
        "table-too-large",
        [("big.csv", b"a,b\n" + b"1,2\n" * 20)],
        413,
        "big.csv: 84 bytes is above the limit of 50",
        limits={"MAX_TABLE_BYTES": 50},
    ),
    lambda: HostileCase(
        "table-utf16",
        [("excel.csv", "\ufeffname,x\nAda,1\n".encode("utf-16-le"))],
        415,
        "excel.csv: the text is UTF-16; save the table as UTF-8",
    ),
    lambda: HostileCase(
        "table-utf16-without-mark",
        [("excel.csv", "name,x\nAda,1\nBob,2\n".encode("utf-16-le"))],
        415,
        "excel.csv: the text is UTF-16",
    ),
    lambda: HostileCase(
        # A header row wider than the first bytes read: counted whole, not estimated.
        "table-wide-header",
        [("wide.csv", (",".join(f"column_{i:05d}" for i in range(20_000)) + "\n").encode() * 2)],
        400,
        "wide.csv: 20000 columns is above the limit of 10000",
    ),
    lambda: HostileCase(
        "table-duplicate-names",
        [("prices.csv", b"area,price,price\n1,2,3\n4,5,6\n")],
        400,
        "prices.csv has more than one column named 'price'",
    ),
    lambda: HostileCase(
        "two-tables",
        [("a.csv", b"x,y\n1,2\n"), ("b.csv", b"x,y\n3,4\n")],
        400,
        "a table is uploaded on its own, one file per dataset (2 files were sent with a.csv, b.csv)",
    ),
    lambda: HostileCase(
        "zip-with-extra-file",
        [("data.zip", make_zip(two_classes())), ("cat.npy", bitmaps())],
        400,
        "one .zip",
    ),
]


def ts(rows: list[str], header: str = "@problemName P\n@univariate true\n@classLabel true a b\n") -> bytes:
    """A small .ts file: `header`, @data, then `rows` (one series each)."""
    return (header + "@data\n" + "\n".join(rows)).encode()


_EQUAL = "@problemName P\n@univariate true\n@equalLength true\n@seriesLength 4\n@classLabel true a b\n"

_SEQUENCE_BUILDERS: list[Callable[[], HostileCase]] = [
    lambda: HostileCase(
        "ts-declares-huge-series",
        [("huge.ts", ts(["1,2:a"], "@problemName Huge\n@seriesLength 1000000000\n@classLabel true a\n"))],
        413,
        "huge.ts, line 2 (@seriesLength): 1,000,000,000 time steps is over the limit of 100,000",
    ),
    lambda: HostileCase(
        "ts-declares-huge-dimensions",
        [("wide.ts", ts(["1,2:a"], "@dimensions 1000000000\n@classLabel true a\n"))],
        413,
        "wide.ts, line 1 (@dimensions): 1,000,000,000 dimensions is over the limit of 10,000",
    ),
    lambda: HostileCase(
        "ts-truncated",
        [("cut.ts", ts(["1,2,3,4:a", "4,3,2,1:b", "1,2,3,4:a", "5,6"], _EQUAL))],
        400,
        "cut.ts, line 10: no label after the values (the file ends in the middle of this line",
    ),
    lambda: HostileCase(
        "ts-unequal-where-equal-declared",
        [("uneven.ts", ts(["1,2,3,4:a", "1,2,3:b", "1,2,3,4:a"], _EQUAL) + b"\n")],
        400,
        "uneven.ts, line 8: 3 steps, but @equalLength true and the series have 4",
    ),
    lambda: HostileCase(
        "ts-zip-slip",
        [("set.zip", make_zip({"P_TRAIN.ts": ts(["1,2:a", "2,1:b"]), "../P_TEST.ts": ts(["1,2:a"])}))],
        400,
        "'../P_TEST.ts'",
    ),
    lambda: HostileCase(
        "ts-zip-symlink",
        [("set.zip", make_zip({"P.ts": b"/etc/passwd", "x/P_TEST.ts": ts(["1:a"])}, links=("P.ts",)))],
        400,
        "'P.ts' is a symbolic link",
    ),
    lambda: HostileCase(
        "ts-zip-bomb",
        [("set.zip", make_zip({"P.ts": ts(["1,2:a", "2,1:b"]) + b"#" * (4 * 1024 * 1024) + b"\n"}))],
        400,
        "'P.ts' has a compression ratio",
    ),
    lambda: HostileCase(
        "sequence-npy-pickled",
        [
            ("X.npy", npy(np.array([{"x": 1}, None], dtype=object), allow_pickle=True)),
            ("y.npy", npy(np.array([0, 1]))),
        ],
        400,
        "X.npy: holds Python objects (a pickled array), which are never loaded",
    ),
    lambda: HostileCase(
        "sequence-npy-pickled-in-zip",
        [
            (
                "arrays.zip",
                make_zip(
                    {
                        "set/X.npy": npy(np.array([[1.0], None], dtype=object), allow_pickle=True),
                        "set/labels.csv": b"a\nb\n",
                    }
                ),
            )
        ],
        400,
        "X.npy: holds Python objects",
    ),
    lambda: HostileCase(
        "sequence-csv-folders-bad-cell",
        [("csvs.zip", make_zip({"a/1.csv": b"1,2\n3,4\n", "b/1.csv": b"1,2\n3,oops\n"}))],
        400,
        "b/1.csv, line 2, column 2: 'oops' is not a number",
    ),
]


def hostile_cases() -> list[HostileCase]:
    return [build() for build in _BUILDERS + _SEQUENCE_BUILDERS]


def case_ids() -> list[str]:
    return [case.id for case in hostile_cases()]
