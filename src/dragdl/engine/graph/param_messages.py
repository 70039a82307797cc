"""Plain-language messages for parameter errors, naming the field by its title.

Pydantic says "Input should be greater than or equal to 1"; people want "Epochs must be at least 1
(got 0)". The details keep what the message was made of (`type`, `title`, `limit`, `got`) so the
web UI can say the same in another language.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import ErrorDetails

_LIMIT_KEYS = ("ge", "gt", "le", "lt", "min_length", "max_length", "expected", "pattern", "limit")

_TEMPLATES: dict[str, str] = {
    "greater_than_equal": "{title} must be at least {limit}",
    "greater_than": "{title} must be greater than {limit}",
    "less_than_equal": "{title} must be at most {limit}",
    "less_than": "{title} must be less than {limit}",
    "missing": "{title} is required",
    "int_parsing": "{title} must be a whole number",
    "int_from_float": "{title} must be a whole number",
    "int_type": "{title} must be a whole number",
    "float_parsing": "{title} must be a number",
    "float_type": "{title} must be a number",
    "bool_parsing": "{title} must be on or off",
    "bool_type": "{title} must be on or off",
    "string_type": "{title} must be text",
    "string_too_short": "{title} must have at least {limit} characters",
    "string_too_long": "{title} must have at most {limit} characters",
    "string_pattern_mismatch": "{title} contains characters that are not allowed",
    "too_short": "{title} needs at least {limit} entries",
    "too_long": "{title} takes at most {limit} entries",
    "list_type": "{title} must be a list",
    "literal_error": "{title} must be one of {limit}",
    "enum": "{title} must be one of {limit}",
    "extra_forbidden": "{title} is not a parameter of this node",
    "finite_number": "{title} must be a finite number",
    # The train node's own rules (engine/tasks/settings.py):
    "workers_above_batch": "{title} must be at most the batch size ({limit}): each worker trains on "
    "its share of every batch",
    "worker_needs_gpu": "{title} must be at least {limit} when the device is CUDA: each worker trains "
    "on a GPU of its own",
}
"""English message per Pydantic error type; the web UI has the same keys in each language."""


def _json_scalar(value: Any) -> str | int | float | bool | None:
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)


def param_error(item: ErrorDetails, titles: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """(message, details) for one Pydantic error of a node's params; `titles` maps field -> title."""
    loc = [str(part) for part in item["loc"]]
    name = loc[0] if loc else ""
    title = titles.get(name, name)
    if len(loc) > 1:
        title = f"{title} [{', '.join(loc[1:])}]"
    kind = item["type"]
    ctx = item.get("ctx") or {}
    limit = next((ctx[key] for key in _LIMIT_KEYS if key in ctx), None)
    details: dict[str, Any] = {"type": kind, "title": title}
    if limit is not None:
        details["limit"] = _json_scalar(limit)
    template = _TEMPLATES.get(kind)
    if template is None:
        # A rule of the model itself (a validator): its own sentence already names the fields.
        text = str(ctx["error"]) if kind == "value_error" and "error" in ctx else str(item["msg"])
        message = f"{title}: {text}" if name else text
    else:
        message = template.format(title=title, limit=limit)
    received = item.get("input")
    if kind not in ("missing", "extra_forbidden") and name and not isinstance(received, dict | list):
        details["got"] = _json_scalar(received)
        message += f" (got {received!r})"
    return message, details


TEMPLATE_TYPES: frozenset[str] = frozenset(_TEMPLATES)
