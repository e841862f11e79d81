"""What a damaged archive file still gives back, read for `store.recover` to copy into a fresh file.

Read with plain SQL on a connection of its own, not through `Archive`: the file may be missing its
days table, or hold rows its days table no longer lists, and every statement may fail.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Any

from .schema import TABLES


def listed_days(old: sqlite3.Connection) -> list[tuple[str, str, dt.date]] | None:
    """Every (site, search type, day) the damaged file says it held, from its days table or, when
    that is unreadable, from its rows."""
    for sql in (
        "SELECT DISTINCT p.site, p.search_type, d.day FROM days d JOIN parts p ON p.id = d.part",
        "SELECT DISTINCT p.site, p.search_type, r.day FROM rows r JOIN parts p ON p.id = r.part",
    ):
        try:
            return [(s, t, dt.date.fromordinal(d)) for s, t, d in old.execute(sql)]
        except sqlite3.DatabaseError:
            continue
    return None


def read_day(
    old: sqlite3.Connection, site: str, search_type: str, day: dt.date
) -> tuple[dict[str, list[dict[str, Any]]], dt.datetime, dict[str, bool]] | None:
    """One day of a damaged file as `Archive.write_day` takes it (its tables, when it was copied,
    which tables Google cut), or None when any table of it is missing or no longer reads whole."""
    tables: dict[str, list[dict[str, Any]]] = {}
    cut: dict[str, bool] = {}
    stamp = 0.0
    for name, dims in TABLES.items():
        row = old.execute(
            "SELECT p.id, d.copied_at, d.truncated, d.nrows FROM parts p JOIN days d ON d.part = p.id "
            "WHERE p.site=? AND p.search_type=? AND p.tbl=? AND d.day=?",
            (site, search_type, name, day.toordinal()),
        ).fetchone()
        if row is None:
            return None
        part, copied_at, truncated, nrows = row
        stamp = max(stamp, copied_at)
        cut[name] = bool(truncated)
        got = old.execute(
            "SELECT s1.value, s2.value, r.clicks, r.impressions, r.position FROM rows r "
            "LEFT JOIN strings s1 ON s1.id = r.k1 LEFT JOIN strings s2 ON s2.id = r.k2 "
            "WHERE r.part=? AND r.day=?",
            (part, day.toordinal()),
        ).fetchall()
        if len(got) != nrows:
            return None
        out = []
        for v1, v2, clicks, impressions, position in got:
            keys = [v for v in (v1, v2)[: len(dims)]]
            if any(k is None for k in keys):
                return None
            entry: dict[str, Any] = {"clicks": clicks, "impressions": impressions, "position": position}
            if dims:
                entry["keys"] = keys
            out.append(entry)
        tables[name] = out
    return tables, dt.datetime.fromtimestamp(stamp, dt.UTC), cut
