"""Server-sent events: a line parser (the WHATWG event-stream rules) and the task events built from it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

FINAL_STATUSES = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event as the stream carried it."""

    event: str = "message"
    data: str = ""
    id: str | None = None
    """The last event id in effect when it was dispatched (ids carry over to events without one)."""
    retry_ms: int | None = None


@dataclass
class SSEParser:
    """Feed it lines (without their line ending); it returns an event at each blank line that ends one.

    A `retry:` field is remembered in `retry_ms`; comments (`: keep-alive`) are skipped. An event cut
    off by a dropped connection is never dispatched, so a resumed stream cannot repeat it half-read.
    """

    last_id: str | None = None
    retry_ms: int | None = None
    _event: str = ""
    _data: list[str] = field(default_factory=list)

    def feed(self, line: str) -> ServerSentEvent | None:
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id":
            if "\0" not in value:
                self.last_id = value
        elif name == "retry" and value.isdigit():
            self.retry_ms = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        event, data = self._event or "message", self._data
        self._event, self._data = "", []
        if not data:
            return None
        return ServerSentEvent(event, "\n".join(data), self.last_id, self.retry_ms)


def parse_stream(lines: Iterable[str]) -> Iterator[ServerSentEvent]:
    parser = SSEParser()
    for line in lines:
        event = parser.feed(line.rstrip("\r\n"))
        if event is not None:
            yield event


@dataclass(frozen=True)
class Event:
    """A task event: `kind` is status, start, progress, metric, log, artifact or error; `data` its JSON
    (the engine event's `to_json()`, plus `time`; status events carry the task's status, e.g. RUNNING)."""

    id: int | None
    kind: str
    data: dict[str, Any]

    @classmethod
    def from_sse(cls, sse: ServerSentEvent) -> Event:
        try:
            data = json.loads(sse.data)
        except ValueError:
            data = {"text": sse.data}
        if not isinstance(data, dict):
            data = {"value": data}
        try:
            event_id = int(sse.id) if sse.id is not None else None
        except ValueError:
            event_id = None
        return cls(event_id, sse.event, data)

    @property
    def status(self) -> str | None:
        """The task status of a status event (QUEUED, RUNNING, SUCCEEDED, FAILED, STOPPED), else None."""
        value = self.data.get("status") if self.kind == "status" else None
        return str(value).upper() if value is not None else None

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def time(self) -> datetime | None:
        value = self.data.get("time")
        try:
            return datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            return None
