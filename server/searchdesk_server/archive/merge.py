"""Rows of Google's shape summed by key: how the archive's days and Google's join into one answer.

Apart from the reader so the demo's archive (demo_archive.py), which the reader opens, can use it too
without an import circle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def merge_rows(rows: Sequence[Any], dims: Sequence[str]) -> list[Any]:
    """Rows of Google's shape with the same keys summed (position weighted by impressions, as Google
    weighs it), sorted by clicks; odd rows (no keys, counts that are not numbers) follow untouched,
    for the same cleaning as Google's to drop."""
    merged: dict[tuple[str, ...], list[float]] = {}
    odd: list[Any] = []
    for row in rows:
        keys = row.get("keys", []) if isinstance(row, dict) else None
        if not isinstance(row, dict) or not isinstance(keys, list):
            odd.append(row)
            continue
        clicks, impressions, pos = row.get("clicks"), row.get("impressions"), row.get("position")
        if not isinstance(clicks, int | float) or not isinstance(impressions, int | float):
            odd.append(row)
            continue
        sums = merged.setdefault(tuple(str(k) for k in keys), [0.0, 0.0, 0.0])
        sums[0] += clicks
        sums[1] += impressions
        sums[2] += (pos if isinstance(pos, int | float) else 0.0) * impressions
    out: list[Any] = []
    for key, (clicks, impressions, weighted) in merged.items():
        entry: dict[str, Any] = {"keys": list(key)} if dims else {}
        entry.update(
            clicks=_whole(clicks),
            impressions=_whole(impressions),
            ctr=clicks / impressions if impressions else 0.0,
            position=weighted / impressions if impressions else 0.0,
        )
        out.append(entry)
    out.sort(key=lambda r: (-r["clicks"], -r["impressions"]))
    return [*out, *odd]


def _whole(value: float) -> float | int:
    return int(value) if value.is_integer() else value
