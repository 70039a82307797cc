"""Where pretrained weights come from: an explicit file, a local cache, or a bounded download.

Resolution order: the file the user named -> the caches other tools already fill
(`$TORCH_HOME/hub/checkpoints`, the Hugging Face hub cache) -> a download when allowed -> a
`WeightsUnavailable` error that says where we looked and what to do. Nothing here may hang: every
network step has a timeout, and the first contact with a host runs in a thread bounded by a
deadline because DNS resolution ignores socket timeouts.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import socket
import threading
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import torch

from dragdl.engine.files import save_atomic

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 5.0
"""Deadline for the first contact with a download host (DNS + TCP connect)."""
DOWNLOAD_TIMEOUT_S = 10.0
"""Socket timeout for each read of a download; a stalled transfer fails instead of hanging."""
_PROBE_MEMORY_S = 60.0
_HASH_IN_NAME = re.compile(r"-([a-f0-9]{8,})\.")

SUGGESTION = (
    "Set `pretrained: false` to start from random weights, or give `weights_path` "
    "(a .safetensors or PyTorch state-dict file on this machine)."
)


class WeightsError(Exception):
    """Base of the weight-loading errors; `message` is meant for people."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class WeightsUnavailable(WeightsError):
    """No pretrained weights could be found (or fetched) for a backbone."""

    def __init__(self, backbone: str, looked: list[str], reason: str) -> None:
        where = "; ".join(looked) if looked else "nowhere"
        super().__init__(
            f"pretrained weights for backbone {backbone!r} are unavailable: {reason}. "
            f"Looked in: {where}. {SUGGESTION}"
        )
        self.backbone = backbone
        self.looked = looked


class WeightsInvalid(WeightsError):
    """A weights file exists but cannot be read safely or does not fit the backbone."""


@dataclass(frozen=True)
class WeightsSpec:
    """Where the published weights of one backbone live."""

    backbone: str
    """Human-readable name used in messages, e.g. `torchvision resnet18`."""
    url: str | None = None
    """Direct download URL; its file name is the torch hub cache name."""
    hf_repo: str | None = None
    hf_filenames: tuple[str, ...] = ()
    hf_revision: str | None = None


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def weights_cache_dir(data_dir: Path) -> Path:
    """Where weights DragDL converts itself (Lite0's) are cached, under a DataContext's cache dir."""
    return data_dir / "cache" / "weights"


def downloads_allowed() -> bool:
    """False when `DRAGDL_OFFLINE` or `HF_HUB_OFFLINE` is set: then nothing touches the network."""
    return not (_truthy(os.environ.get("DRAGDL_OFFLINE")) or _truthy(os.environ.get("HF_HUB_OFFLINE")))


def torch_hub_checkpoints() -> Path:
    # torch.hub.get_dir() reads $TORCH_HOME on every call, so tests and users can redirect it.
    return Path(torch.hub.get_dir()) / "checkpoints"


def hf_hub_cache() -> Path:
    # Computed here rather than taken from huggingface_hub.constants, which freezes the
    # environment at import time.
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(xdg).expanduser() / "huggingface" / "hub"


def resolve_user_path(path: str, data_dir: Path) -> Path:
    """A user-given weights path: `~` expanded, relative paths taken from `data_dir`."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else data_dir / candidate


# --- loading files safely -------------------------------------------------------------------


def load_state_dict_file(path: Path) -> dict[str, torch.Tensor]:
    """Read a state dict from safetensors or a torch file, never unpickling arbitrary objects."""
    if not path.is_file():
        raise WeightsInvalid(f"weights file {str(path)!r} does not exist")
    try:
        if _is_safetensors(path):
            from safetensors.torch import load_file

            raw: object = load_file(str(path), device="cpu")
        else:
            raw = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise WeightsInvalid(
            f"cannot read weights file {str(path)!r} safely ({type(exc).__name__}: {exc}). "
            "DragDL loads torch files with weights_only=True, which refuses pickled Python objects; "
            "re-save it with `torch.save(model.state_dict(), path)` or as .safetensors"
        ) from exc
    return _unwrap_state_dict(raw, path)


def _is_safetensors(path: Path) -> bool:
    # A safetensors file starts with an 8-byte little-endian header length, then a JSON object;
    # checking the bytes accepts files whatever their extension.
    with path.open("rb") as handle:
        head = handle.read(9)
    return len(head) == 9 and head[8:9] == b"{"


def _unwrap_state_dict(raw: object, path: Path) -> dict[str, torch.Tensor]:
    # Training scripts often save {"state_dict": ...} or {"model": ...}, and DataParallel
    # prefixes every key with "module."; accept those common shapes.
    for _ in range(2):
        if isinstance(raw, Mapping) and not _all_tensors(raw):
            inner = next((raw[key] for key in ("state_dict", "model") if key in raw), None)
            if inner is not None:
                raw = inner
    if not isinstance(raw, Mapping) or not raw or not _all_tensors(raw):
        raise WeightsInvalid(f"weights file {str(path)!r} does not hold a state dict of tensors")
    state = {str(key): value for key, value in raw.items()}
    if all(key.startswith("module.") for key in state):
        state = {key.removeprefix("module."): value for key, value in state.items()}
    return state


def _all_tensors(mapping: Mapping[object, object]) -> bool:
    return all(isinstance(value, torch.Tensor) for value in mapping.values())


# --- resolution --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Located:
    """The outcome of a cheap look-up: a local file, or a source that a download could reach."""

    path: Path | None
    downloadable: bool = False


def locate(spec: WeightsSpec, allow_download: bool, probe: bool = True) -> Located:
    """Find weights without downloading; raise WeightsUnavailable when they cannot be had.

    With downloads allowed and nothing cached, the host is probed (bounded by PROBE_TIMEOUT_S)
    so that validation reports an unreachable network instead of letting the build fail later.
    """
    path, looked = _find_cached(spec)
    if path is not None:
        return Located(path)
    if spec.url is None and spec.hf_repo is None:
        raise WeightsUnavailable(spec.backbone, looked, "no pretrained weights are published for it")
    if not allow_download:
        raise WeightsUnavailable(spec.backbone, looked, "they are not cached and downloads are disabled")
    host_url = f"https://{_hf_host()}/" if spec.hf_repo else str(spec.url)
    if probe and not reachable(host_url):
        raise WeightsUnavailable(
            spec.backbone, looked, f"they are not cached and {urlparse(host_url).hostname} is unreachable"
        )
    return Located(None, downloadable=True)


def resolve(spec: WeightsSpec, allow_download: bool) -> Path:
    """A local file holding the weights: cached, or downloaded now when allowed."""
    located = locate(spec, allow_download)
    if located.path is not None:
        return located.path
    _, looked = _find_cached(spec)
    errors: list[str] = []
    if spec.hf_repo:
        try:
            return _download_hf(spec)
        except Exception as exc:
            errors.append(f"Hugging Face hub: {type(exc).__name__}: {exc}")
    if spec.url:
        try:
            return download_url(spec.url, torch_hub_checkpoints() / _url_file_name(spec.url))
        except Exception as exc:
            errors.append(f"{spec.url}: {type(exc).__name__}: {exc}")
    raise WeightsUnavailable(spec.backbone, looked, "the download failed (" + "; ".join(errors) + ")")


def _find_cached(spec: WeightsSpec) -> tuple[Path | None, list[str]]:
    looked: list[str] = []
    if spec.url:
        candidate = torch_hub_checkpoints() / _url_file_name(spec.url)
        looked.append(str(candidate))
        if candidate.is_file():
            return candidate, looked
    if spec.hf_repo:
        from huggingface_hub import try_to_load_from_cache

        cache = hf_hub_cache()
        for filename in spec.hf_filenames:
            looked.append(f"Hugging Face cache {cache} ({spec.hf_repo}/{filename})")
            found = try_to_load_from_cache(spec.hf_repo, filename, cache_dir=cache, revision=spec.hf_revision)
            if isinstance(found, str) and Path(found).is_file():
                return Path(found), looked
    return None, looked


def _url_file_name(url: str) -> str:
    return Path(urlparse(url).path).name


def _hf_host() -> str:
    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    return urlparse(endpoint).netloc or "huggingface.co"


_probe_results: dict[tuple[str, int], tuple[float, bool]] = {}


def reachable(url: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """True when a TCP connection to the URL's host opens before the deadline.

    The attempt runs in a daemon thread because getaddrinfo() cannot be interrupted; a stuck
    resolver then costs `timeout` seconds and a leaked thread, never a hung process. Results are
    remembered for a minute so that validating a graph probes each host once.
    """
    parsed = urlparse(url)
    host = parsed.hostname or ""
    port = parsed.port or (80 if parsed.scheme == "http" else 443)
    key = (host, port)
    now = time.monotonic()
    remembered = _probe_results.get(key)
    if remembered is not None and now - remembered[0] < _PROBE_MEMORY_S:
        return remembered[1]
    outcome: list[bool] = []

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                outcome.append(True)
        except OSError:
            outcome.append(False)

    worker = threading.Thread(target=attempt, name=f"probe-{host}", daemon=True)
    worker.start()
    worker.join(timeout)
    ok = bool(outcome and outcome[0])
    _probe_results[key] = (now, ok)
    if not ok:
        logger.info("download host %s:%d is unreachable", host, port)
    return ok


def download_url(url: str, target: Path, timeout: float = DOWNLOAD_TIMEOUT_S) -> Path:
    """Stream `url` to `target` (atomically), checking the sha256 prefix in torch hub file names."""
    match = _HASH_IN_NAME.search(target.name)
    digest = hashlib.sha256()

    def write(tmp: Path) -> None:
        logger.info("downloading %s to %s", url, target)
        with urllib.request.urlopen(url, timeout=timeout) as response, tmp.open("wb") as out:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if match and not digest.hexdigest().startswith(match.group(1)):
            raise WeightsInvalid(
                f"download of {url} is corrupt (sha256 does not start with {match.group(1)})"
            )

    save_atomic(write, target)
    return target


def _download_hf(spec: WeightsSpec) -> Path:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    assert spec.hf_repo is not None
    last: Exception | None = None
    for filename in spec.hf_filenames:
        try:
            found = hf_hub_download(
                spec.hf_repo,
                filename,
                revision=spec.hf_revision,
                cache_dir=hf_hub_cache(),
                etag_timeout=DOWNLOAD_TIMEOUT_S,
            )
            return Path(found)
        except EntryNotFoundError as exc:
            last = exc
    raise WeightsInvalid(f"none of {list(spec.hf_filenames)} exists in {spec.hf_repo}: {last}")
