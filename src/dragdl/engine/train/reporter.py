"""Where training events go: a list (tests), a JSON-lines file (the runner), or several at once."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Protocol

from dragdl.engine.train.events import Event, LogEvent, event_from_json


class Reporter(Protocol):
    def emit(self, event: Event) -> None: ...


class ListReporter:
    """Keeps every event in memory."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def of_type(self, cls: type[Event]) -> list[Event]:
        return [e for e in self.events if isinstance(e, cls)]


class JsonlReporter:
    """Appends every event to `out_dir/events.jsonl` and log lines to `out_dir/log.txt`.

    Appending (not truncating) lets a resumed run continue the same files. Each line is flushed
    so that a reader tailing the file sees events as they happen.
    """

    def __init__(self, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.events_path = out_dir / "events.jsonl"
        self.log_path = out_dir / "log.txt"
        self._events: IO[str] = self.events_path.open("a", encoding="utf-8")
        self._log: IO[str] = self.log_path.open("a", encoding="utf-8")

    def emit(self, event: Event) -> None:
        now = time.time()
        self._events.write(json.dumps({**event.to_json(), "time": now}) + "\n")
        self._events.flush()
        if isinstance(event, LogEvent):
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
            self._log.write(f"{stamp} {event.level.upper():7} {event.message}\n")
            self._log.flush()

    def close(self) -> None:
        self._events.close()
        self._log.close()

    def __enter__(self) -> JsonlReporter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class MultiReporter:
    """Forwards every event to each reporter in turn."""

    def __init__(self, *reporters: Reporter) -> None:
        self.reporters = reporters

    def emit(self, event: Event) -> None:
        for reporter in self.reporters:
            reporter.emit(event)


class NullReporter:
    """Drops everything (benchmarks, scripted runs that only want the result)."""

    def emit(self, event: Event) -> None:
        pass


def read_events(path: Path) -> list[Event]:
    """Parse an events.jsonl back into typed events."""
    with path.open(encoding="utf-8") as f:
        return [event_from_json(json.loads(line)) for line in f if line.strip()]
