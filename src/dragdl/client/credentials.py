"""Personal API tokens saved by `dragdl login`: `~/.dragdl/credentials.json`, one entry per server URL.

The file holds secrets, so it is written with mode 0600 (its folder 0700), through a temporary file
renamed over the old one: a crash mid-write leaves the previous file, never half of one.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

DEFAULT_SERVER = "http://127.0.0.1:8000"


def credentials_path() -> Path:
    return Path.home() / ".dragdl" / "credentials.json"


def normalize_url(url: str) -> str:
    """`localhost:8000/` -> `http://localhost:8000`: the key of a server in the credentials file."""
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = f"http://{url}"
    return url


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load_token(server_url: str, path: Path | None = None) -> str | None:
    """The token saved for this server, or None."""
    servers = _read(path or credentials_path()).get("servers")
    entry = servers.get(normalize_url(server_url)) if isinstance(servers, dict) else None
    token = entry.get("token") if isinstance(entry, dict) else None
    return token if isinstance(token, str) and token else None


def last_server(path: Path | None = None) -> str | None:
    """The server of the last `dragdl login` that saved a token, or None: the CLI asks it when no
    --server or $DRAGDL_SERVER names another."""
    data = _read(path or credentials_path())
    url, servers = data.get("last_server"), data.get("servers")
    if isinstance(url, str) and isinstance(servers, dict) and url in servers:
        return url
    return None


def save_token(server_url: str, token: str, username: str, path: Path | None = None) -> Path:
    """Store (or replace) the token for this server, keeping the other servers' entries."""
    path = path or credentials_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    data = _read(path)
    found = data.get("servers")
    servers: dict[str, Any] = found if isinstance(found, dict) else {}
    servers[normalize_url(server_url)] = {"token": token, "username": username}
    data["servers"] = servers
    data["last_server"] = normalize_url(server_url)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o600)  # a stale temporary file may have had another mode
            json.dump(data, f, indent=2)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    return path
