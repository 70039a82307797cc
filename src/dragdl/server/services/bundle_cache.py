"""Loaded bundles kept in memory for prediction, reloaded when their files change.

torch and the engine are imported when a bundle is first loaded: the server starts without them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dragdl.engine.bundle import Bundle


def _signature(folder: Path) -> tuple[int, ...]:
    """Modification times of the files a loaded bundle depends on (-1 for a missing one)."""
    stamps = []
    for name in ("model.json", "model.safetensors"):
        try:
            stamps.append((folder / name).stat().st_mtime_ns)
        except OSError:
            stamps.append(-1)
    return tuple(stamps)


class BundleCache:
    """Thread-safe LRU of loaded bundles. Each model loads once even when requests arrive together."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self._entries: OrderedDict[str, tuple[tuple[int, ...], Bundle]] = OrderedDict()
        self._lock = threading.Lock()
        self._loading: dict[str, threading.Lock] = {}

    def _lookup(self, key: str, signature: tuple[int, ...]) -> Bundle | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != signature:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def get(self, key: str, folder: Path) -> Bundle:
        """The loaded bundle (blocking: call from a worker thread); raises BundleError."""
        signature = _signature(folder)
        bundle = self._lookup(key, signature)
        if bundle is not None:
            return bundle
        with self._lock:
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:
            bundle = self._lookup(key, signature)
            if bundle is not None:
                return bundle
            from dragdl.engine.bundle import load_bundle

            bundle = load_bundle(folder)
            with self._lock:
                self._entries[key] = (signature, bundle)
                self._entries.move_to_end(key)
                while len(self._entries) > self.capacity:
                    self._entries.popitem(last=False)
            return bundle

    def evict(self, key: str) -> None:
        with self._lock:
            self._entries.pop(key, None)
            self._loading.pop(key, None)

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return key in self._entries
