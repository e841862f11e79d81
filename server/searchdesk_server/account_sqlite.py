"""A per-account SQLite file kept by the app and read by servers: opening it to write or to read,
knowing a damaged one, and setting a damaged one aside.

Why one place: the archive (`archive.store`) and the coverage watch (`coverage.store`) keep one such
file per Google account with the same rules: the app is the only writer (WAL, so servers read while
it writes), servers open read-only and never create the file, a damaged file is renamed beside
itself (never deleted) with its WAL and shared-memory files, and what is still readable is copied
into a fresh one. Each store keeps its own schema, words and recovery of its own tables.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["connect", "damaged", "open_to_read", "open_to_write", "set_aside"]

Prepare = Callable[[sqlite3.Connection], None]
"""Something a store adds to each connection it opens (the archive's `regexp`)."""

Damage = Callable[[], Exception]
"""The store's own error for a damaged file, with its own words."""


def connect(path: Path, *, readonly: bool) -> sqlite3.Connection:
    """A connection to the file: read-only (`mode=ro`, never creating it) or to write (autocommit,
    so the store's own transactions decide); both wait on a busy writer rather than fail."""
    if readonly:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5.0, check_same_thread=False)
    else:
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout=5000")
    return conn


def damaged(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite's error says the file itself is damaged (not busy, not a missing table)."""
    text = str(exc).lower()
    return any(w in text for w in ("malformed", "not a database", "corrupt", "disk image"))


def open_to_write(
    path: Path,
    *,
    schema: str,
    version: int,
    check: bool,
    damage: Damage,
    prepare: Prepare | None = None,
) -> sqlite3.Connection:
    """Open (creating) the file to write, with its schema and version. With `check`, a damaged file
    is found first (`PRAGMA quick_check`); a damaged file raises `damage()`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = connect(path, readonly=False)
        if prepare is not None:
            prepare(conn)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        if check:
            verdict = conn.execute("PRAGMA quick_check").fetchone()
            if not verdict or verdict[0] != "ok":
                conn.close()
                raise damage()
        conn.executescript(schema)
        conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES('schema', ?)", (str(version),))
    except sqlite3.DatabaseError as exc:
        if damaged(exc):
            raise damage() from exc
        raise
    return conn


def open_to_read(
    path: Path, *, probe: str, damage: Damage, prepare: Prepare | None = None
) -> sqlite3.Connection | None:
    """Open the file to read; None when there is none or it has no `probe` table yet. Never
    creates or changes it. A damaged file raises `damage()`."""
    if not path.is_file():
        return None
    try:
        conn = connect(path, readonly=True)
        if prepare is not None:
            prepare(conn)
        conn.execute(f"SELECT 1 FROM {probe} LIMIT 1").fetchall()  # noqa: S608 (the store's own table name)
    except sqlite3.DatabaseError as exc:
        if damaged(exc):
            raise damage() from exc
        if "no such table" in str(exc):
            return None
        raise
    return conn


def set_aside(path: Path) -> Path:
    """Rename a damaged file beside itself (`<name>.damaged-<time>`, `-2`, `-3`… when taken), with
    its WAL and shared-memory files, and return where it now is. Never deletes anything."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        if side.exists():
            os.replace(side, Path(f"{aside}{suffix}"))
    return aside
