"""The SDK without a server: SSE parsing, reconnection with Last-Event-ID, error shapes, credentials."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from dragdl.client import ApiError, DragDLClient, load_token, save_token
from dragdl.client.events import parse_stream

URL = "http://dragdl.test"


def sse(event_id: int, kind: str, data: dict[str, Any]) -> bytes:
    return f"id: {event_id}\nevent: {kind}\ndata: {json.dumps(data)}\n\n".encode()


REQUIRED_GRAPH = dict(code="missing", message="Field required", node_id=None, field="graph", details={})
HISTORY = [
    sse(1, "status", {"type": "status", "status": "QUEUED", "message": "submitted"}),
    sse(2, "status", {"type": "status", "status": "RUNNING", "attempt": 1}),
    sse(3, "log", {"type": "log", "level": "info", "message": "hello"}),
    sse(5, "progress", {"type": "progress", "epoch": 1, "step": 1, "steps_per_epoch": 2}),
    sse(8, "metric", {"type": "metric", "scope": "epoch", "epoch": 1, "step": 2, "values": {"loss": 1.0}}),
    sse(9, "status", {"type": "status", "status": "SUCCEEDED", "message": "done"}),
]


class Dropping(httpx.SyncByteStream):
    """Sends some bytes, then fails like a connection cut mid-event."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield b"retry: 2000\n\n"
        yield from self.chunks
        raise httpx.ReadError("connection reset by peer")


def test_sse_parser_joins_data_lines_and_skips_comments() -> None:
    lines = [": keep-alive", "", "retry: 1500", "id: 7", "event: log", "data: a", "data:b", "", "data: c", ""]
    events = list(parse_stream(lines))
    assert [(e.event, e.data, e.id, e.retry_ms) for e in events] == [
        ("log", "a\nb", "7", 1500),
        ("message", "c", "7", 1500),  # the last id stays in effect
    ]


def test_events_reconnect_with_last_event_id_after_a_drop() -> None:
    requests: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        last = request.headers.get("last-event-id")
        requests.append(last)
        assert request.headers["authorization"] == "Bearer secret"
        if last is None:  # the first connection dies inside the fourth event
            return httpx.Response(200, stream=Dropping([*HISTORY[:3], HISTORY[3][:20]]))
        remaining = [chunk for chunk in HISTORY if int(chunk.split(b"\n")[0][4:]) > int(last)]
        return httpx.Response(200, content=b"".join(remaining), headers={"content-type": "text/event-stream"})

    transport = httpx.MockTransport(handler)
    with DragDLClient(URL, token="secret", transport=transport, reconnect_delay_s=0) as client:
        events = list(client.events("t1"))
    assert requests == [None, "3"]
    assert [e.id for e in events] == [1, 2, 3, 5, 8, 9]
    assert events[-1].status == "SUCCEEDED" and events[-1].is_final
    assert events[4].data["values"] == {"loss": 1.0} and events[2].kind == "log"


def test_events_give_up_when_the_server_stays_away() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    transport = httpx.MockTransport(handler)
    client = DragDLClient(URL, token="t", transport=transport, reconnect_delay_s=0, max_reconnects=2)
    with client, pytest.raises(ApiError) as caught:
        list(client.events("t1"))
    assert caught.value.status is None
    assert caught.value.message.startswith(f"the DragDL server at {URL} is unreachable")


@pytest.mark.parametrize(
    ("status", "body", "message", "errors"),
    [
        (404, {"detail": "no task 'x'"}, "no task 'x'", []),
        (
            422,
            {"detail": {"message": "does not validate", "errors": [{"code": "c", "node_id": "n3"}]}},
            "does not validate",
            [{"code": "c", "node_id": "n3"}],
        ),
        (
            422,
            {"detail": [{"type": "missing", "loc": ["body", "graph"], "msg": "Field required"}]},
            "the request was refused: graph: Field required",
            [REQUIRED_GRAPH],
        ),
        (502, None, "HTTP 502 from http://dragdl.test: Bad gateway", []),
    ],
)
def test_api_errors_carry_the_servers_message(
    status: int, body: Any, message: str, errors: list[dict[str, Any]]
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if body is None:
            return httpx.Response(status, text="Bad gateway")
        return httpx.Response(status, json=body)

    client = DragDLClient(URL, token="t", transport=httpx.MockTransport(handler))
    with client, pytest.raises(ApiError) as caught:
        client.get_task("x")
    assert (caught.value.status, caught.value.message, caught.value.errors) == (status, message, errors)


def test_token_comes_from_the_argument_then_the_environment_then_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("DRAGDL_TOKEN", raising=False)
    save_token(URL + "/", "from-file", "alice")
    save_token("other.test:9000", "other", "bob")
    path = tmp_path / ".dragdl" / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_token(URL) == "from-file" and load_token("http://other.test:9000") == "other"
    assert DragDLClient(URL).token == "from-file"
    monkeypatch.setenv("DRAGDL_TOKEN", "from-env")
    assert DragDLClient(URL).token == "from-env"
    assert DragDLClient(URL, token="given").token == "given"
    assert DragDLClient("http://elsewhere.test", token=None).token == "from-env"


def test_events_wait_for_a_free_stream_when_the_account_has_all_open() -> None:
    answers = iter([429, 429, 200])
    requests: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request.headers.get("last-event-id"))
        if next(answers) == 429:
            detail = {"detail": "too many open event streams: your account has 20 of the 20 allowed"}
            return httpx.Response(429, json=detail, headers={"Retry-After": "5"})
        return httpx.Response(200, content=b"".join(HISTORY), headers={"content-type": "text/event-stream"})

    transport = httpx.MockTransport(handler)
    with DragDLClient(URL, token="t", transport=transport, reconnect_delay_s=0) as client:
        assert [e.id for e in client.events("t1")] == [1, 2, 3, 5, 8, 9]
    assert requests == [None, None, None]
    refusing = httpx.MockTransport(lambda request: httpx.Response(429, json={"detail": "too many open"}))
    client = DragDLClient(URL, token="t", transport=refusing, reconnect_delay_s=0, max_reconnects=2)
    with client, pytest.raises(ApiError) as caught:
        list(client.events("t1"))
    assert caught.value.status == 429 and caught.value.message == "too many open"
