"""Shape checks at the boundary: what Google sent is checked field by field, never trusted.

One odd entry never takes down a listing: a row that is not an object is dropped, a number
that is not finite is left out, a count sent as a string becomes a number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..text.cleaning import clean, clean_json, md_cell


def records(value: object, key: str) -> list[dict[str, Any]]:
    """The list under `key`, keeping only object entries, each cleaned."""
    if not isinstance(value, dict):
        return []
    items = value.get(key)
    if not isinstance(items, list):
        return []
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, dict):
            cleaned = clean_json(item)
            if isinstance(cleaned, dict):
                out.append(cleaned)
    return out


def objects(value: object, key: str) -> list[dict[Any, Any]]:
    """The object entries of the list under `key`, NOT cleaned: only for callers that pass every
    field they keep through `text` or `number` (which clean), so each field is cleaned once."""
    if not isinstance(value, dict):
        return []
    items = value.get(key)
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, dict)]


def record(value: object) -> dict[str, Any]:
    """An object answer (an empty 200 is an empty record)."""
    if not isinstance(value, dict):
        return {}
    cleaned = clean_json(value)
    return cleaned if isinstance(cleaned, dict) else {}


def text(value: object) -> str | None:
    """A string field: cleaned; other scalars are stringified; containers are not text."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    return None


def texts(value: object) -> list[str]:
    """A list of strings: anything but a list is no list (a string is not a list of its characters);
    entries that are not text, or are empty, are left out."""
    if not isinstance(value, list):
        return []
    return [t for t in (text(v) for v in value) if t]


def number(value: object) -> int | float | None:
    """A finite number; int64 counts arrive as strings and become numbers; -0 is 0."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = int(value) if value.strip().lstrip("-").isdigit() else float(value)
        except ValueError:
            return None
    if isinstance(value, int):
        return value if abs(value) < 2**63 else None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return 0.0 if value == 0 else value
    return None


def boolean(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def pick(entry: dict[str, Any], fields: Sequence[tuple[str, str, Callable[[object], object]]]) -> dict[str, Any]:
    """Our output record: (our name, Google's name, converter); missing or odd fields left out."""
    out: dict[str, Any] = {}
    for ours, theirs, conv in fields:
        value = conv(entry.get(theirs))
        if value is not None:
            out[ours] = value
    return out


def cell(value: object, limit: int = 200) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, list):
        return md_cell(", ".join(str(v) for v in value), limit)
    return md_cell(str(value), limit)


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "| " + " | ".join(headers) + " |\n|" + "---|" * len(headers)
    return "\n".join([head, *("| " + " | ".join(r) + " |" for r in rows)])


def md_row(values: Sequence[str]) -> str:
    return "| " + " | ".join(values) + " |"
