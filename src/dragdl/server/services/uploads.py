"""Multipart uploads streamed straight into a folder, with a byte cap on the whole request.

Starlette's form parser spools every file to the system temp dir before a route runs, so neither a
size cap nor the final location could be enforced while the bytes arrive. Here each file part is
written to `target_dir` as it is received and the request is refused (413) the moment its files
exceed `max_bytes`; the caller removes `target_dir` on any failure.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from fastapi import Request, status
from python_multipart import MultipartParser
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header
from starlette.concurrency import run_in_threadpool

from dragdl.server.request_limits import MULTIPART_ENVELOPE_BYTES

MAX_FIELD_BYTES = 64 * 1024
MAX_FIELDS = 16
"""Text fields of one upload (a dataset upload has one: its name)."""
MAX_FIELDS_TOTAL_BYTES = 256 * 1024
"""All text fields of one upload together: they are held in memory, unlike the files."""


class UploadError(Exception):
    """The request cannot be accepted; `status_code` is the HTTP answer, the message says why."""

    def __init__(self, message: str, status_code: int = status.HTTP_400_BAD_REQUEST) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


@dataclass(frozen=True)
class ReceivedFile:
    filename: str
    """The client's file name, without any folder part."""
    path: Path
    size: int


@dataclass
class ReceivedForm:
    files: list[ReceivedFile] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)


def client_filename(raw: str) -> str:
    """The last path component of a client-supplied name (browsers on Windows may send C:\\...)."""
    return raw.replace("\\", "/").rsplit("/", 1)[-1].strip()


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    name: str = ""
    filename: str | None = None
    path: Path | None = None
    handle: IO[bytes] | None = None
    size: int = 0
    data: bytearray = field(default_factory=bytearray)


class _Receiver:
    def __init__(self, target_dir: Path, max_bytes: int, max_files: int, charset: str) -> None:
        self.target_dir = target_dir
        self.max_bytes = max_bytes
        self.max_files = max_files
        self.charset = charset
        self.form = ReceivedForm()
        self.part = _Part()
        self.total = 0
        self.field_bytes = 0
        self.header_name = b""
        self.header_value = b""
        self.pending: list[tuple[IO[bytes], bytes]] = []
        self.handles: list[IO[bytes]] = []

    def _decode(self, raw: bytes) -> str:
        return raw.decode(self.charset, errors="replace")

    def on_part_begin(self) -> None:
        self.part = _Part()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header_name += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def on_header_end(self) -> None:
        self.part.headers[self.header_name.lower()] = self.header_value
        self.header_name = self.header_value = b""

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self.part.headers.get(b"content-disposition", b""))
        if b"name" not in options:
            raise UploadError('a multipart part has no Content-Disposition "name"')
        self.part.name = self._decode(options[b"name"])
        if b"filename" not in options:
            if len(self.form.fields) >= MAX_FIELDS:
                raise UploadError(f"too many form fields in one upload (limit {MAX_FIELDS})")
            return
        if len(self.form.files) >= self.max_files:
            raise UploadError(f"too many files in one upload (limit {self.max_files})")
        self.part.filename = client_filename(self._decode(options[b"filename"]))
        self.target_dir.mkdir(parents=True, exist_ok=True)
        self.part.path = self.target_dir / f"{len(self.form.files):05d}.part"
        self.part.handle = self.part.path.open("xb")
        self.handles.append(self.part.handle)

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        chunk = data[start:end]
        if self.part.handle is None:
            if len(self.part.data) + len(chunk) > MAX_FIELD_BYTES:
                raise UploadError(f"form field {self.part.name!r} is longer than {MAX_FIELD_BYTES} bytes")
            self.field_bytes += len(chunk)
            if self.field_bytes > MAX_FIELDS_TOTAL_BYTES:
                raise UploadError(
                    f"the form fields are longer than {MAX_FIELDS_TOTAL_BYTES} bytes together "
                    f"(reached in field {self.part.name!r})"
                )
            self.part.data.extend(chunk)
            return
        self.total += len(chunk)
        if self.total > self.max_bytes:
            raise UploadError(
                f"the upload is larger than the limit of {self.max_bytes} bytes "
                f"(reached in file {self.part.filename!r})",
                413,
            )
        self.part.size += len(chunk)
        self.pending.append((self.part.handle, chunk))

    def on_part_end(self) -> None:
        part = self.part
        if part.handle is None or part.path is None or part.filename is None:
            self.form.fields[part.name] = self._decode(bytes(part.data))
            return
        self.pending.append((part.handle, b""))  # b"" marks the end: close after the last write
        self.form.files.append(ReceivedFile(filename=part.filename, path=part.path, size=part.size))

    def flush(self) -> None:
        """Write what the last chunk carried (in a worker thread: disk writes must not block the loop)."""
        for handle, chunk in self.pending:
            if chunk:
                handle.write(chunk)
            else:
                handle.close()
        self.pending.clear()

    def close_all(self) -> None:
        for handle in self.handles:
            handle.close()


async def receive_multipart(
    request: Request, target_dir: Path, max_bytes: int, max_files: int
) -> ReceivedForm:
    """Stream the request's multipart body: files into `target_dir`, text fields into memory.

    Raises UploadError (400 malformed, 413 too large). Files written so far stay in `target_dir`.
    """
    content_type, params = parse_options_header(request.headers.get("content-type"))
    if content_type != b"multipart/form-data":
        raise UploadError("send the files as multipart/form-data", status.HTTP_415_UNSUPPORTED_MEDIA_TYPE)
    boundary = params.get(b"boundary")
    if not boundary:
        raise UploadError("the multipart Content-Type has no boundary")
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes + MULTIPART_ENVELOPE_BYTES:
        raise UploadError(
            f"the upload ({declared} bytes) is larger than the limit of {max_bytes} bytes",
            413,
        )
    charset = params.get(b"charset", b"utf-8").decode("latin-1")
    try:
        charset = codecs.lookup(charset).name
    except LookupError:
        charset = "utf-8"
    receiver = _Receiver(target_dir, max_bytes, max_files, charset)
    parser = MultipartParser(
        boundary,
        {
            "on_part_begin": receiver.on_part_begin,
            "on_part_data": receiver.on_part_data,
            "on_part_end": receiver.on_part_end,
            "on_header_field": receiver.on_header_field,
            "on_header_value": receiver.on_header_value,
            "on_header_end": receiver.on_header_end,
            "on_headers_finished": receiver.on_headers_finished,
        },
    )
    try:
        async for chunk in request.stream():
            parser.write(chunk)
            if receiver.pending:
                await run_in_threadpool(receiver.flush)
        parser.finalize()
    except FormParserError as exc:
        raise UploadError(f"malformed multipart body ({exc})") from None
    finally:
        receiver.close_all()
    return receiver.form


def tree_size(folder: Path) -> int:
    """Bytes of the regular files below `folder` (links are not followed)."""
    total = 0
    for base, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(base, name)
            if not os.path.islink(path):
                total += os.path.getsize(path)
    return total
