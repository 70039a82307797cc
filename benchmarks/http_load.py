"""A lean HTTP/1.1 load generator: asyncio keep-alive connections replaying prepared requests.

The server under test shares this machine's CPUs with the client, so the client must cost little:
a thread per connection with a full HTTP client library spends about as much CPU per request as a
small model's whole prediction, and that CPU is taken from the server. Here every request is bytes
prepared before the clock starts, and a response is read as its headers plus Content-Length bytes
(the server under test always sends Content-Length; chunked answers are not supported).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Reply:
    status: int
    seconds: float
    """From writing the request to the last byte of the answer."""


@dataclass(frozen=True)
class Load:
    replies: list[Reply]
    wall_s: float
    sample_ok_body: bytes | None
    """The body of one 200 answer, for checks on what the server said."""


def get_request(url: str, path: str, headers: dict[str, str]) -> bytes:
    return _head("GET", url, path, headers, b"")


def multipart_request(
    url: str,
    path: str,
    headers: dict[str, str],
    files: Sequence[tuple[str, str, bytes, str]],
    fields: dict[str, str],
) -> bytes:
    """A POST of multipart/form-data: `files` as (field, filename, bytes, content type)."""
    boundary = uuid.uuid4().hex
    parts: list[bytes] = []
    for field, filename, data, content_type in files:
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{filename}"\r\n'
            f"Content-Type: {content_type}\r\n\r\n".encode()
            + data
            + b"\r\n"
        )
    for name, value in fields.items():
        disposition = f'Content-Disposition: form-data; name="{name}"'
        parts.append(f"--{boundary}\r\n{disposition}\r\n\r\n{value}\r\n".encode())
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    content_type = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    return _head("POST", url, path, {**headers, **content_type}, body)


def _head(method: str, url: str, path: str, headers: dict[str, str], body: bytes) -> bytes:
    host = urlsplit(url).netloc
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def run(url: str, requests: Sequence[bytes], concurrency: int, count: int) -> Load:
    """`count` requests (cycling through `requests`), `concurrency` connections each sending its next
    request when the previous answer has arrived."""
    return asyncio.run(_run(url, requests, concurrency, count))


async def _run(url: str, requests: Sequence[bytes], concurrency: int, count: int) -> Load:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    connections = [await asyncio.open_connection(host, port) for _ in range(concurrency)]
    replies: list[Reply] = []
    sample: list[bytes] = []
    counter = iter(range(count))

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for index in counter:  # one shared iterator: the connections take turns
            start = time.perf_counter()
            writer.write(requests[index % len(requests)])
            status, body = await _read_response(reader)
            replies.append(Reply(status, time.perf_counter() - start))
            if status == 200 and not sample:
                sample.append(body)

    started = time.perf_counter()
    try:
        await asyncio.gather(*(client(reader, writer) for reader, writer in connections))
    finally:
        for _, writer in connections:
            writer.close()
    return Load(replies, time.perf_counter() - started, sample[0] if sample else None)


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return status, await reader.readexactly(length)
