"""Typed events a training run emits: what the monitor, the database and the log are built from.

Epoch numbers are 1-based (epoch 1 of 10); `ProgressEvent.step` counts the steps done in the epoch;
`MetricEvent.step` is the global number of optimizer steps done.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal

Status = Literal["running", "succeeded", "stopped", "failed"]
LogLevel = Literal["debug", "info", "warning", "error"]
MetricScope = Literal["step", "epoch", "test"]


@dataclass(frozen=True)
class _Event:
    type: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with the event's `type` first."""
        return {"type": self.type, **asdict(self)}


@dataclass(frozen=True)
class StatusEvent(_Event):
    type: ClassVar[str] = "status"
    status: Status
    message: str = ""


@dataclass(frozen=True)
class StartEvent(_Event):
    type: ClassVar[str] = "start"
    epochs: int
    steps_per_epoch: int
    train_samples: int
    val_samples: int
    test_samples: int
    device: str
    trainable_parameters: int
    total_parameters: int
    resumed_from_epoch: int | None = None
    """The epoch (1-based) a resumed run continues in; None for a fresh run."""
    resumed_from_step: int | None = None
    batch_size: int | None = None
    """Images per optimizer step; None in events recorded before it was reported."""
    fast_path: dict[str, Any] | None = None
    """The precision and memory format the run trains in, and the probe's figures
    (`FastPath.to_dict()`); None in events recorded before it was reported."""
    workers: list[dict[str, Any]] | None = None
    """The workers of a distributed run (`rank`, `node_id`, `address`, `pid`, `device`); None when
    one process trains."""


@dataclass(frozen=True)
class ProgressEvent(_Event):
    type: ClassVar[str] = "progress"
    epoch: int
    step: int
    steps_per_epoch: int


@dataclass(frozen=True)
class MetricEvent(_Event):
    type: ClassVar[str] = "metric"
    scope: MetricScope
    epoch: int
    step: int
    values: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class LogEvent(_Event):
    type: ClassVar[str] = "log"
    level: LogLevel
    message: str


@dataclass(frozen=True)
class ArtifactEvent(_Event):
    type: ClassVar[str] = "artifact"
    kind: str
    """checkpoint, report or model."""
    path: str


@dataclass(frozen=True)
class ErrorEvent(_Event):
    type: ClassVar[str] = "error"
    code: str
    message: str
    node_id: str | None = None


Event = StatusEvent | StartEvent | ProgressEvent | MetricEvent | LogEvent | ArtifactEvent | ErrorEvent

EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (StatusEvent, StartEvent, ProgressEvent, MetricEvent, LogEvent, ArtifactEvent, ErrorEvent)
}


def event_from_json(data: dict[str, Any]) -> Event:
    """The inverse of `to_json()`; keys that are not fields of the event (a timestamp) are ignored."""
    cls = EVENT_TYPES.get(str(data.get("type")))
    if cls is None:
        raise ValueError(f"unknown event type ({data.get('type')!r})")
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})
