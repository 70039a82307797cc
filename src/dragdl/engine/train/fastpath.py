"""The fast path: the precision and memory format a run trains in, chosen by measuring them.

A hand-written loop trains in fp32 with PyTorch's default layout. DragDL knows the network, the
data and the machine, so with `precision`/`memory_format` "auto" it measures: a few real steps of
each candidate (fp32 contiguous, fp32 channels_last, bf16 in the faster layout) on a copy of the
model and optimizer, on the run's first batches, then keeps the fastest whose loss agrees with
fp32's. The probe restores torch's random state and never touches the run's model, optimizer or
data order, so the run starts from exactly the weights it would have started from without it.

On CUDA nothing is measured: bf16 (fp16 with a loss scaler where bf16 is missing) and
channels_last for images, as measured once and for all on GPUs. A network without convolutions
over images has nothing to gain from a layout, and bf16 pays only with native CPU support: such a
run is not probed at all. A short run is not probed beyond its first candidate either: measuring
the others would cost more than they could save. The probe's budget is a couple of seconds, or a
twentieth of a long run's expected time.

The choice is saved in every checkpoint and a resumed run keeps it (no new probe), so resuming stays
exact for the configuration the run started with.
"""

from __future__ import annotations

import copy
import itertools
import math
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import torch
from torch import Tensor, nn
from torch.optim import Optimizer

from dragdl.engine.data.batch import INPUT, Batch, batch_size, take
from dragdl.engine.tasks.settings import MemoryFormatChoice, PrecisionChoice
from dragdl.engine.train.device import Precision

PrecisionName = Literal["fp32", "bf16", "fp16"]
LayoutName = Literal["contiguous", "channels_last"]

LOSS_TOLERANCE = 0.02
"""Largest relative difference between a candidate's loss and fp32's on the same weights and batch."""
SPEED_MARGIN = 0.05
"""A candidate replaces a simpler one only when this much faster: closer figures are noise."""
MAX_PROBE_SHARE = 0.15
"""The other candidates are measured only when measuring them costs at most this share of the run's
expected time (each costs about what the first did): a faster layout typically saves a third."""
MIN_RUN_FLOPS = 2e11
"""Runs of fewer floating-point operations are not probed at all: about 2 s at the 100 GFLOP/s a
fast CPU reaches on small networks, too short for a probe to pay. Counted, not timed, so small
runs (and tests) train the same way on a busy machine as on an idle one."""
PROBE_BUDGET_S = 2.0
"""Wall time after which no further candidate is measured (the first always is), for runs of up to
PROBE_BUDGET_S / PROBE_SHARE seconds."""
PROBE_SHARE = 0.05
"""A longer run may spend this share of its expected time on the probe: on a heavy network (or a
busy machine) one candidate alone can fill the fixed budget, and the run would never learn that
another layout is faster."""
PROBE_BATCH = 64
"""Samples per probe step at most: per-sample speeds compare as well, at a fraction of the time."""
STEP_BUDGET_S = 0.3
"""About how long each candidate's timed steps take (at least MIN_STEPS, at most MAX_STEPS)."""
MIN_STEPS, MAX_STEPS = 2, 6
"""Two timed steps at least: one step's time is too much at the mercy of the machine's load."""


@dataclass(frozen=True)
class Candidate:
    precision: PrecisionName
    memory_format: LayoutName

    @property
    def name(self) -> str:
        return f"{self.precision} {self.memory_format}"


@dataclass(frozen=True)
class Measurement:
    """One candidate's probe: speed over its timed steps, and its first loss against fp32's."""

    candidate: Candidate
    samples_per_s: float
    loss: float
    loss_delta: float | None
    """|loss - fp32 loss| / |fp32 loss| on the same weights and batch; None without an fp32 reference."""
    agrees: bool
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "precision": self.candidate.precision,
            "memory_format": self.candidate.memory_format,
            "samples_per_s": self.samples_per_s,
            "loss": self.loss,
            "loss_delta": self.loss_delta,
            "agrees": self.agrees,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Measurement:
        return cls(
            Candidate(data["precision"], data["memory_format"]),
            float(data["samples_per_s"]),
            float(data["loss"]),
            None if data["loss_delta"] is None else float(data["loss_delta"]),
            bool(data["agrees"]),
            data.get("error"),
        )


@dataclass(frozen=True)
class FastPath:
    """What a run trains in, why, and the probe's figures (plain data: checkpoints and report.json)."""

    precision: PrecisionName
    memory_format: LayoutName
    reason: str
    native_bf16: bool
    probe_s: float = 0.0
    measurements: tuple[Measurement, ...] = field(default=())

    @property
    def channels_last(self) -> bool:
        return self.memory_format == "channels_last"

    def autocast(self) -> Precision:
        dtype = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[self.precision]
        # fp16's narrow range needs loss scaling; bf16 has fp32's range.
        return Precision(dtype, scaler=self.precision == "fp16")

    @property
    def speedup(self) -> float | None:
        """The chosen candidate's speed over the first one measured (fp32 contiguous when probed)."""
        if not self.measurements:
            return None
        chosen = [
            m for m in self.measurements if m.candidate == Candidate(self.precision, self.memory_format)
        ]
        base = self.measurements[0].samples_per_s
        return chosen[0].samples_per_s / base if chosen and base > 0 else None

    def summary(self) -> str:
        """The log line."""
        text = f"fast path: {self.precision}, {self.memory_format.replace('_', ' ')} ({self.reason})"
        if self.measurements:
            figures = "; ".join(
                f"{m.candidate.name} {m.samples_per_s:,.0f} samples/s"
                + (f", loss {m.loss_delta:+.2%}" if m.loss_delta is not None else "")
                + ("" if m.agrees else " (loss disagrees)" if m.error is None else f" (failed: {m.error})")
                for m in self.measurements
            )
            text += f"; probe {self.probe_s:.2f} s: {figures}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "precision": self.precision,
            "memory_format": self.memory_format,
            "reason": self.reason,
            "native_bf16": self.native_bf16,
            "probe_s": self.probe_s,
            "speedup": self.speedup,
            "measurements": [m.to_dict() for m in self.measurements],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FastPath:
        return cls(
            precision=data["precision"],
            memory_format=data["memory_format"],
            reason=str(data["reason"]),
            native_bf16=bool(data["native_bf16"]),
            probe_s=float(data["probe_s"]),
            measurements=tuple(Measurement.from_dict(m) for m in data["measurements"]),
        )


def native_bf16(device: torch.device) -> bool:
    """Whether the device computes bf16 in hardware (AVX-512 BF16 or AMX on a CPU)."""
    if device.type == "cuda":
        return bool(torch.cuda.is_bf16_supported())
    for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):
        check = getattr(torch.cpu, name, None)
        if check is not None and check():
            return True
    return bool(_cpu_flags() & {"avx512_bf16", "amx_bf16"})


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


StepTiming = Callable[[Candidate, Callable[[], object], int], float]
"""Runs `step` n times and returns the seconds they took. Tests pass their own to make a candidate
look slow or fast; the steps still run, so the losses are real."""


def wall_clock(device: torch.device) -> StepTiming:
    """`n` steps timed one by one, counted as `n` times the fastest: a step that another process's
    burst of work slowed down does not count against its candidate (timeit's rule), so the choice
    holds on a busy machine as on a quiet one."""

    def timing(candidate: Candidate, step: Callable[[], object], n: int) -> float:
        fastest = math.inf
        for _ in range(n):
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            start = time.perf_counter()
            step()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            fastest = min(fastest, time.perf_counter() - start)
        return fastest * n

    return timing


def autocast(device: torch.device, precision: Precision) -> AbstractContextManager[Any]:
    if not precision.enabled:
        return nullcontext()
    return torch.autocast(device.type, dtype=precision.dtype)


def fixed(
    device: torch.device,
    precision: PrecisionChoice,
    memory_format: MemoryFormatChoice,
    images: bool,
    reason: str,
) -> FastPath:
    """The choice without measuring: what is set, else CUDA's rule, else fp32 contiguous."""
    cuda = device.type == "cuda"
    bf16 = native_bf16(device)
    chosen: PrecisionName
    if precision != "auto":
        chosen = precision
    elif cuda:
        chosen = "bf16" if bf16 else "fp16"
    else:
        chosen = "fp32"
    layout: LayoutName
    if memory_format != "auto":
        layout = memory_format
    else:
        layout = "channels_last" if cuda and images else "contiguous"
    return FastPath(chosen, layout, reason, bf16)


@dataclass
class Probe:
    """What a probe trains: a copy of `model` with a fresh optimizer, on the run's first batches
    (on the device; read only when something is measured)."""

    model: nn.Module
    make_optimizer: Callable[[nn.Module], Optimizer]
    step: Callable[[nn.Module, Batch], tuple[Tensor, Tensor]]
    """The task kind's step: (loss, outputs) of a model on a batch."""
    load_batches: Callable[[], list[Batch]]
    device: torch.device
    total_steps: int
    """Optimizer steps the whole run will take (to judge whether probing pays)."""
    input_shape: tuple[int, ...]
    """One sample's shape, to count the run's floating-point operations."""
    run_samples: int
    """Training samples the whole run will see."""
    timing: StepTiming | None = None


def choose(
    device: torch.device,
    precision: PrecisionChoice,
    memory_format: MemoryFormatChoice,
    images: bool,
    probe: Probe,
) -> FastPath:
    """The fast path for a run's settings; measures the "auto" ones on the CPU. `images`: the
    network convolves image batches (a layout can matter)."""
    if device.type == "cuda":
        return fixed(device, precision, memory_format, images, "CUDA: mixed precision and channels last")
    bf16 = native_bf16(device)
    layouts: list[LayoutName] = (
        [memory_format]
        if memory_format != "auto"
        else ["contiguous", "channels_last"]
        if images
        else ["contiguous"]
    )
    precisions: list[PrecisionName] = (
        [precision] if precision != "auto" else ["fp32", "bf16"] if images or bf16 else ["fp32"]
    )
    if len(layouts) == 1 and len(precisions) == 1:
        why = "as set in the train node" if precision != "auto" or not images else "nothing to measure"
        if precision == "auto" and memory_format == "auto" and not images:
            why = "no convolution over images and no native bf16: nothing to measure"
        return fixed(device, precision, memory_format, images, why)
    flops = training_flops(probe) * probe.run_samples
    if flops < MIN_RUN_FLOPS:
        small = f"a small run ({_operations(flops)}): too short for measuring to pay"
        settings = {"precision": precision, "memory format": memory_format}
        set_here = [name for name, value in settings.items() if value != "auto"]
        if set_here:
            small += f"; {' and '.join(set_here)} as set in the train node"
        return fixed(device, "fp32" if precision == "auto" else precision, layouts[0], images, small)
    with _rng_kept(device):
        return _measure_all(probe, layouts, precisions, bf16)


def _operations(flops: float) -> str:
    """A count of operations in words a reader takes in at once: "83.8 billion", "454 thousand"."""
    for scale, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand")):
        if flops >= scale:
            return f"{flops / scale:.3g} {word} operations"
    return f"{flops:.0f} operations"


def training_flops(probe: Probe) -> float:
    """Floating-point operations of one training sample: a forward pass counted on a zero sample
    (eval mode: no dropout draw, no batch-norm update), times three for the backward pass.

    A network that takes more than its input (a task kind whose `step` hands it the targets) is
    counted through the kind's step on the first sample of the run's first batch instead."""
    from torch.utils.flop_counter import FlopCounterMode

    model = probe.model
    was_training = model.training
    model.eval()
    recurrent: list[float] = []
    hooks = [
        module.register_forward_pre_hook(partial(_count_recurrent, recurrent))
        for module in model.modules()
        if isinstance(module, nn.RNNBase)
    ]
    try:
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            try:
                model(torch.zeros((1, *probe.input_shape), device=probe.device))
            except TypeError:  # raised by the call's signature, before any operation was counted
                probe.step(model, take(probe.load_batches()[0], 1))
    finally:
        model.train(was_training)
        for hook in hooks:
            hook.remove()
    return 3.0 * (float(counter.get_total_flops()) + sum(recurrent))


_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _count_recurrent(found: list[float], module: nn.Module, args: tuple[Any, ...]) -> None:
    """Adds a recurrent layer's multiply-adds for the sample it receives: torch's flop counter
    counts none for its fused kernels, which would make a recurrent network look like a small run.
    Per step, layer and direction: each gate multiplies the input and the hidden state."""
    assert isinstance(module, nn.RNNBase)
    x = args[0]
    if not isinstance(x, Tensor):  # a packed sequence: counted as one of its full length
        x = x.data.unsqueeze(0)
    steps = int(x.shape[1] if module.batch_first else x.shape[0]) if x.ndim == 3 else int(x.shape[0])
    hidden, directions = module.hidden_size, 2 if module.bidirectional else 1
    total = 0.0
    for layer in range(module.num_layers):
        inputs = module.input_size if layer == 0 else hidden * directions
        total += directions * steps * _GATES.get(module.mode, 1) * 2 * (inputs + hidden) * hidden
    found.append(total)


def _measure_all(
    probe: Probe, layouts: list[LayoutName], precisions: list[PrecisionName], bf16: bool
) -> FastPath:
    started = time.perf_counter()
    full = probe.load_batches()
    batches = [take(batch, PROBE_BATCH) for batch in full]
    timing = probe.timing or wall_clock(probe.device)
    first = Candidate(precisions[0], layouts[0])
    warm_s, _, _ = _run_steps(probe, batches, first, 0, None)
    steps = max(MIN_STEPS, min(MAX_STEPS, int(STEP_BUDGET_S / max(warm_s, 1e-6))))
    measuring = time.perf_counter()
    measured = [_measure(probe, batches, first, steps, timing, None)]
    candidate_s = time.perf_counter() - measuring
    base = measured[0]
    if base.error is not None or base.samples_per_s <= 0:
        return FastPath(first.precision, first.memory_format, "the probe failed", bf16, 0.0, tuple(measured))
    expected_s = probe.total_steps * batch_size(full[0]) / base.samples_per_s
    others = len(layouts) - 1 + len(precisions) - 1
    if candidate_s * others > MAX_PROBE_SHARE * expected_s:
        reason = f"a short run (about {expected_s:.1f} s): measuring more would cost more than it saves"
        return FastPath(
            first.precision, first.memory_format, reason, bf16, time.perf_counter() - started, tuple(measured)
        )
    reference = base.loss if first.precision == "fp32" else None
    budget_s = max(PROBE_BUDGET_S, PROBE_SHARE * expected_s)
    deadline = started + budget_s
    skipped: list[str] = []

    def measure(candidate: Candidate) -> None:
        if time.perf_counter() > deadline:
            skipped.append(candidate.name)
        else:
            measured.append(_measure(probe, batches, candidate, steps, timing, reference))

    for layout in layouts[1:]:
        measure(Candidate(first.precision, layout))
    layout_best = max((m for m in measured if m.agrees), key=lambda m: m.samples_per_s)
    for name in precisions[1:]:
        measure(Candidate(name, layout_best.candidate.memory_format))
    best = base
    for m in measured[1:]:
        if m.agrees and m.samples_per_s > best.samples_per_s * (1 + SPEED_MARGIN):
            best = m
    reason = _reason(best, base, measured, bf16)
    if skipped:
        reason += f"; not measured within the {budget_s:.1f} s probe budget: {', '.join(skipped)}"
    chosen = best.candidate
    return FastPath(
        chosen.precision, chosen.memory_format, reason, bf16, time.perf_counter() - started, tuple(measured)
    )


def _reason(best: Measurement, base: Measurement, measured: list[Measurement], bf16: bool) -> str:
    if best is not base:
        return f"measured fastest, {best.samples_per_s / base.samples_per_s:.2f}x {base.candidate.name}"
    slower_bf16 = [m for m in measured if m.candidate.precision == "bf16" and m.agrees]
    native = "" if bf16 else "; this CPU has no native bf16"
    if slower_bf16:
        return f"the others were not faster{native}"
    return f"the others were not faster or their loss disagreed{native}"


def _measure(
    probe: Probe,
    batches: list[Batch],
    candidate: Candidate,
    steps: int,
    timing: StepTiming,
    reference: float | None,
) -> Measurement:
    try:
        _, seconds, loss = _run_steps(probe, batches, candidate, steps, timing)
    except RuntimeError as exc:  # an operator without a bf16 or channels_last kernel here
        message = str(exc).split("\n")[0][:200]
        return Measurement(candidate, 0.0, math.nan, None, False, message)
    # The timed steps are those after the first: batches 1..steps of the cycled list.
    samples = sum(batch_size(b) for b in itertools.islice(itertools.cycle(batches), 1, steps + 1))
    speed = samples / max(seconds, 1e-9)
    delta = None if reference is None else abs(loss - reference) / max(abs(reference), 1e-12)
    # fp32 is the reference whatever its layout; another precision must agree with it.
    within = delta is None or candidate.precision == "fp32" or delta <= LOSS_TOLERANCE
    return Measurement(candidate, speed, loss, delta, math.isfinite(loss) and within)


def _run_steps(
    probe: Probe,
    batches: list[Batch],
    candidate: Candidate,
    steps: int,
    timing: StepTiming | None,
) -> tuple[float, float, float]:
    """One untimed first step, then `steps` timed ones (none without `timing`) on a copy of the model.

    Returns the first step's seconds, the timed steps' seconds and the first step's loss: the loss
    on the starting weights, which is what the candidates' losses are compared by.
    """
    model = copy.deepcopy(probe.model)
    channels_last = candidate.memory_format == "channels_last"
    if channels_last:
        model.to(memory_format=torch.channels_last)
    model.train()
    optimizer = probe.make_optimizer(model)
    precision = FastPath(candidate.precision, candidate.memory_format, "", False).autocast()
    scaler = torch.amp.GradScaler(probe.device.type, enabled=precision.scaler)
    cycled = _cycled(batches, channels_last)
    # Every candidate sees the same dropout masks, so their first losses differ by precision only.
    torch.manual_seed(0)

    def step() -> float:
        with autocast(probe.device, precision):
            loss, _ = probe.step(model, next(cycled))
        optimizer.zero_grad(set_to_none=True)
        torch.autograd.backward(scaler.scale(loss))
        scaler.step(optimizer)
        scaler.update()
        return float(loss.detach())

    start = time.perf_counter()
    first_loss = step()
    first_s = time.perf_counter() - start
    timed = timing(candidate, step, steps) if timing is not None else 0.0
    return first_s, timed, first_loss


def _cycled(batches: list[Batch], channels_last: bool) -> Iterator[Batch]:
    if channels_last:
        batches = [
            {**b, INPUT: b[INPUT].contiguous(memory_format=torch.channels_last)} if b[INPUT].ndim == 4 else b
            for b in batches
        ]
    return itertools.cycle(batches)


def first_batches(source: Iterable[Batch], count: int) -> list[Batch]:
    """The first `count` batches of an epoch, the iterator closed after them."""
    iterator = iter(source)
    try:
        return list(itertools.islice(iterator, count))
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()


@contextmanager
def _rng_kept(device: torch.device) -> Iterator[None]:
    """Puts torch's random state back afterwards: the probe draws dropout masks from it."""
    cpu = torch.get_rng_state()
    cuda = torch.cuda.get_rng_state_all() if device.type == "cuda" else []
    try:
        yield
    finally:
        torch.set_rng_state(cpu)
        if cuda:
            torch.cuda.set_rng_state_all(cuda)
