"""One SQLite file per Google account: each watched page's latest inspection and every change.

Why this shape: the questions are "how many pages in each state" (a property may have 100,000
watched pages; the answer must take under 0.1 s), "which pages are in this state" and "what changed
since <date>" over a year of history (under 0.2 s). So:

- `pages`: one row per (site, url) holding the page's latest result inline (NULL until inspected),
  why it is watched (a bit set of `Why`), and the clicks that order the watcher's queue. One index on
  (site, coverage, verdict, inspected_at) serves a state's pages and covers the counts: they are one
  grouped scan of that index, never of the wide rows (0.3 s → 0.06 s for 100,000 pages).
- `changes`: one row per change of verdict or coverage state, with its site and time, indexed on
  (site, changed_at): "changed since" is one range scan, however long the history.
- `watch`: the watch's state per property (switched on, paused, pass started, next pass).

Times are stored as POSIX seconds (UTC). The app is the only writer (WAL: servers read while it
writes); servers open the file read-only and never create it. A damaged file is set aside (renamed,
never deleted) and what is still readable copied into a fresh one (`recover`), as the archive does.
What a row means as a value (a page's result, a change, the figures) is `coverage.records`'.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from .. import account_sqlite
from .records import (
    RESULT_COLUMNS,
    Change,
    Counts,
    CoverageDamaged,
    CoverageError,
    Page,
    PageResult,
    Recovery,
    WatchState,
    Why,
)

__all__ = ["MAX_PAGES", "RECHECK", "CoverageStore", "folder", "path_for", "recover"]

FOLDER: Final = "coverage"
SCHEMA_VERSION: Final = 1
#: Pages watched per property at most (the rest are left out and the app says so where it applies).
MAX_PAGES: Final = 100_000
#: How long a result stays fresh before the watcher inspects the page again (the watcher's default).
RECHECK: Final = dt.timedelta(days=7)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pages(
    id INTEGER PRIMARY KEY, site TEXT NOT NULL, url TEXT NOT NULL, why INTEGER NOT NULL,
    clicks INTEGER NOT NULL DEFAULT 0, added_at REAL NOT NULL,
    inspected_at REAL, verdict TEXT, coverage TEXT, indexing_state TEXT, robots_txt TEXT,
    page_fetch TEXT, last_crawl TEXT, google_canonical TEXT, user_canonical TEXT,
    UNIQUE(site, url));
CREATE INDEX IF NOT EXISTS pages_state ON pages(site, coverage, verdict, inspected_at);
CREATE TABLE IF NOT EXISTS changes(
    site TEXT NOT NULL, url TEXT NOT NULL, changed_at REAL NOT NULL,
    from_verdict TEXT NOT NULL, to_verdict TEXT NOT NULL, from_coverage TEXT NOT NULL, to_coverage TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS changes_when ON changes(site, changed_at);
CREATE TABLE IF NOT EXISTS watch(
    site TEXT PRIMARY KEY, switched_on INTEGER NOT NULL, paused INTEGER NOT NULL,
    pass_started REAL, next_pass REAL) WITHOUT ROWID;
"""


_UPDATE_RESULT: Final = (
    "UPDATE pages SET inspected_at=?, " + ", ".join(f"{c}=?" for c in RESULT_COLUMNS) + " WHERE id=?"  # noqa: S608
)


# --- where ---------------------------------------------------------------------------------------


def folder() -> Path:
    """The watch's folder in the person's data folder, beside the archive's."""
    from ..journal.paths import data_folder

    return data_folder() / FOLDER


def path_for(account: str | None) -> Path:
    """Where an account's store lives: named as the archive names the account's file."""
    from ..archive.store import account_file

    return folder() / account_file(account)


# --- times ---------------------------------------------------------------------------------------


def _stamp(when: dt.datetime) -> float:
    if when.tzinfo is None:
        raise ValueError("the coverage store takes aware times (UTC)")
    return when.timestamp()


def _time(stamp: float | None) -> dt.datetime | None:
    return None if stamp is None else dt.datetime.fromtimestamp(stamp, dt.UTC)


def _damage(path: Path) -> Callable[[], CoverageDamaged]:
    """The error a damaged coverage file raises, in words for the person."""
    return lambda: CoverageDamaged(f"The coverage file {path.name} is damaged.")


# --- the store -----------------------------------------------------------------------------------


class CoverageStore:
    """One account's coverage store. `open` for the app's watcher (the only writer); `open_readonly`
    for servers. Every method is synchronous and short: the app calls it off the Qt thread, the
    server in a worker thread."""

    def __init__(self, path: Path, conn: sqlite3.Connection, *, readonly: bool) -> None:
        self.path = path
        self.readonly = readonly
        self._conn = conn

    # opening

    @classmethod
    def open(cls, path: Path, *, check: bool = False) -> CoverageStore:
        """Open (creating) a store to write. With `check`, a damaged file raises CoverageDamaged
        (`PRAGMA quick_check`): call `recover`."""
        conn = account_sqlite.open_to_write(
            path, schema=_SCHEMA, version=SCHEMA_VERSION, check=check, damage=_damage(path)
        )
        return cls(path, conn, readonly=False)

    @classmethod
    def in_memory(cls) -> CoverageStore:
        """A store that is never a file (the demo's watch)."""
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.executescript(_SCHEMA)
        return cls(Path(":memory:"), conn, readonly=False)

    @classmethod
    def open_readonly(cls, path: Path) -> CoverageStore | None:
        """Open a store to read (a server); None when there is none. Never creates or changes it."""
        conn = account_sqlite.open_to_read(path, probe="pages", damage=_damage(path))
        if conn is None:
            return None
        return cls(path, conn, readonly=True)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> CoverageStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self) -> _Transaction:
        if self.readonly:
            raise CoverageError("This coverage store was opened to read.")
        return _Transaction(self._conn)

    # writing (the app's watcher)

    def add_pages(
        self, site: str, urls: Iterable[str], why: Why, *, now: dt.datetime, clicks: dict[str, int] | None = None
    ) -> int:
        """Watch these pages of `site` for `why` (a page already watched gains the reason; `clicks`
        updates the clicks that put it earlier in the queue). Pages past `MAX_PAGES` for the property
        are left out, those with the fewest clicks first. Returns how many were left out."""
        stamp = _stamp(now)
        clicks = clicks or {}
        with self._write() as conn:
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS wanted(url TEXT PRIMARY KEY, clicks INTEGER) WITHOUT ROWID")
            conn.execute("DELETE FROM wanted")
            conn.executemany("INSERT OR IGNORE INTO wanted VALUES(?,?)", ((u, clicks.get(u, 0)) for u in urls))
            conn.execute(
                "UPDATE pages SET why = why | ?, clicks = MAX(clicks, (SELECT w.clicks FROM wanted w WHERE w.url = "
                "pages.url)) WHERE site=? AND url IN (SELECT url FROM wanted)",
                (int(why), site),
            )
            new = "FROM wanted WHERE url NOT IN (SELECT url FROM pages WHERE site=?)"
            fresh = int(conn.execute(f"SELECT COUNT(*) {new}", (site,)).fetchone()[0])
            known = int(conn.execute("SELECT COUNT(*) FROM pages WHERE site=?", (site,)).fetchone()[0])
            room = max(0, MAX_PAGES - known)
            conn.execute(
                f"INSERT INTO pages(site, url, why, clicks, added_at) SELECT ?, url, ?, clicks, ? {new} "
                "ORDER BY clicks DESC, url LIMIT ?",
                (site, int(why), stamp, site, room),
            )
            conn.execute("DELETE FROM wanted")
        left_out = max(0, fresh - room)
        return left_out

    def remove_pages(self, site: str, urls: Iterable[str]) -> None:
        """Stop watching these pages (no longer in a sitemap nor seen with impressions); their
        history of changes stays."""
        with self._write() as conn:
            conn.executemany("DELETE FROM pages WHERE site=? AND url=?", ((site, u) for u in urls))

    def record(self, site: str, url: str, result: PageResult, *, inspected_at: dt.datetime) -> Change | None:
        """Keep a page's new inspection result; when its verdict or coverage state differs from the
        last one kept, the change is kept too (and returned). A page not watched yet is added as
        watched for no reason of its own (`Why(0)`), so a result is never lost."""
        stamp = _stamp(inspected_at)
        values = tuple(getattr(result, c) for c in RESULT_COLUMNS)
        with self._write() as conn:
            row = conn.execute(
                "SELECT id, inspected_at, verdict, coverage FROM pages WHERE site=? AND url=?", (site, url)
            ).fetchone()
            if row is None:
                conn.execute("INSERT INTO pages(site, url, why, added_at) VALUES(?,?,0,?)", (site, url, stamp))
                row = conn.execute(
                    "SELECT id, inspected_at, verdict, coverage FROM pages WHERE site=? AND url=?", (site, url)
                ).fetchone()
            page, before, old_verdict, old_coverage = row
            if before is not None and before > stamp:
                return None  # an older result arriving late never overwrites a newer one
            conn.execute(
                _UPDATE_RESULT,
                (stamp, *values, page),
            )
            if before is None or (old_verdict, old_coverage) == (result.verdict, result.coverage):
                return None
            change = (site, url, stamp, old_verdict or "", result.verdict, old_coverage or "", result.coverage)
            conn.execute("INSERT INTO changes VALUES(?,?,?,?,?,?,?)", change)
        return Change(url, inspected_at, old_verdict or "", result.verdict, old_coverage or "", result.coverage)

    def set_watch(self, site: str, state: WatchState) -> None:
        """The watch's state for a property (the person's switch and Pause, the watcher's pass)."""
        started = None if state.pass_started is None else _stamp(state.pass_started)
        following = None if state.next_pass is None else _stamp(state.next_pass)
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO watch(site, switched_on, paused, pass_started, next_pass) VALUES(?,?,?,?,?)",
                (site, int(state.switched_on), int(state.paused), started, following),
            )

    def delete_site(self, site: str) -> None:
        """Forget a property: its pages, its changes and its watch (the person's Delete)."""
        with self._write() as conn:
            for table in ("pages", "changes", "watch"):
                conn.execute(f"DELETE FROM {table} WHERE site=?", (site,))  # noqa: S608 (fixed names)

    def due(self, site: str, limit: int, *, now: dt.datetime, every: dt.timedelta = RECHECK) -> list[str]:
        """The next pages to inspect, in the watcher's order: never inspected, then pages with clicks
        (most first), then the oldest result; only pages not inspected in this pass (since the
        watch's `pass_started`) and whose result is older than `every` — so a pass resumed after a
        kill, a sleep or a lost network repeats no page."""
        state = self.watch(site)
        cutoff = _stamp(now - every)
        if state is not None and state.pass_started is not None:
            cutoff = min(cutoff, _stamp(state.pass_started))
        rows = self._conn.execute(
            "SELECT url FROM pages WHERE site=? AND (inspected_at IS NULL OR inspected_at < ?) "
            "ORDER BY inspected_at IS NOT NULL, clicks DESC, inspected_at LIMIT ?",
            (site, cutoff, limit),
        )
        return [r[0] for r in rows]

    # reading (servers and the app's Settings)

    def sites(self) -> list[str]:
        """Every property with a watch or a watched page."""
        rows = self._conn.execute("SELECT site FROM watch UNION SELECT DISTINCT site FROM pages ORDER BY 1")
        return [r[0] for r in rows]

    def watch(self, site: str) -> WatchState | None:
        row = self._conn.execute(
            "SELECT switched_on, paused, pass_started, next_pass FROM watch WHERE site=?", (site,)
        ).fetchone()
        if row is None:
            return None
        return WatchState(bool(row[0]), bool(row[1]), _time(row[2]), _time(row[3]))

    def counts(self, site: str) -> Counts:
        """Known and inspected pages, by verdict and by coverage state, oldest and newest inspection:
        one grouped scan of the property's rows."""
        by_verdict: dict[str, int] = {}
        by_coverage: dict[str, int] = {}
        known = inspected = 0
        oldest: float | None = None
        newest: float | None = None
        rows = self._conn.execute(
            "SELECT verdict, coverage, COUNT(*), COUNT(inspected_at), MIN(inspected_at), MAX(inspected_at) "
            "FROM pages WHERE site=? GROUP BY coverage, verdict",
            (site,),
        )
        for verdict, coverage, n, done, low, high in rows:
            known += n
            if not done:
                continue
            inspected += done
            by_verdict[verdict or ""] = by_verdict.get(verdict or "", 0) + done
            by_coverage[coverage or ""] = by_coverage.get(coverage or "", 0) + done
            oldest = low if oldest is None else min(oldest, low)
            newest = high if newest is None else max(newest, high)
        return Counts(known, inspected, by_verdict, by_coverage, _time(oldest), _time(newest))

    def pages(
        self, site: str, *, coverage: str | None = None, verdict: str | None = None, offset: int = 0, limit: int = 100
    ) -> tuple[list[Page], int]:
        """The inspected pages in a coverage state and/or with a verdict, by URL, and how many there are."""
        where, args = ["site=?", "inspected_at IS NOT NULL"], [site]
        if coverage is not None:
            where.append("coverage=?")
            args.append(coverage)
        if verdict is not None:
            where.append("verdict=?")
            args.append(verdict)
        clause = " AND ".join(where)
        total = int(self._conn.execute(f"SELECT COUNT(*) FROM pages WHERE {clause}", args).fetchone()[0])  # noqa: S608
        rows = self._conn.execute(
            f"SELECT url, why, inspected_at, {', '.join(RESULT_COLUMNS)} FROM pages WHERE {clause} "  # noqa: S608
            "ORDER BY url LIMIT ? OFFSET ?",
            (*args, limit, offset),
        )
        return [_page(r) for r in rows], total

    def page(self, site: str, url: str) -> Page | None:
        """One watched page (None: not watched)."""
        row = self._conn.execute(
            f"SELECT url, why, inspected_at, {', '.join(RESULT_COLUMNS)} FROM pages WHERE site=? AND url=?",  # noqa: S608
            (site, url),
        ).fetchone()
        return None if row is None else _page(row)

    def changed_since(
        self,
        site: str,
        since: dt.datetime,
        until: dt.datetime | None = None,
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> tuple[list[Change], int]:
        """Changes of verdict or coverage state from `since` (inclusive) to `until` (exclusive),
        newest first (from the `offset`-th), and how many there are: one range scan of the (site,
        changed_at) index."""
        high = _stamp(until) if until is not None else float("inf")
        args = (site, _stamp(since), high)
        total = int(
            self._conn.execute(
                "SELECT COUNT(*) FROM changes WHERE site=? AND changed_at>=? AND changed_at<?", args
            ).fetchone()[0]
        )
        rows = self._conn.execute(
            "SELECT url, changed_at, from_verdict, to_verdict, from_coverage, to_coverage FROM changes "
            "WHERE site=? AND changed_at>=? AND changed_at<? ORDER BY changed_at DESC, url LIMIT ? OFFSET ?",
            (*args, -1 if limit is None else limit, offset),
        )
        return [Change(u, dt.datetime.fromtimestamp(t, dt.UTC), a, b, c, d) for u, t, a, b, c, d in rows], total


def _page(row: Sequence[Any]) -> Page:
    url, why, inspected_at = row[0], row[1], row[2]
    result = None
    if inspected_at is not None:
        result = PageResult(*(str(v or "") for v in row[3:]))
    return Page(str(url), Why(int(why)), _time(inspected_at), result)


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any error: a reader never sees half a write."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self._conn.execute("BEGIN IMMEDIATE")
        return self._conn

    def __exit__(self, kind: object, *rest: object) -> None:
        self._conn.execute("COMMIT" if kind is None else "ROLLBACK")


# --- damage --------------------------------------------------------------------------------------


def recover(path: Path) -> Recovery:
    """Set a damaged store aside (renamed beside it, `<name>.damaged-<time>`, never deleted) and copy
    every page, change and watch still readable in it into a fresh file at `path`."""
    aside = account_sqlite.set_aside(path)
    pages = changes = 0
    unreadable = False
    with CoverageStore.open(path) as fresh:
        try:
            old = sqlite3.connect(f"{aside.as_uri()}?mode=ro", uri=True)
        except sqlite3.DatabaseError:
            return Recovery(aside, 0, 0, True)
        try:
            for table in ("pages", "changes", "watch"):
                rows, whole = _readable(old, table)
                unreadable = unreadable or not whole
                with fresh._write() as conn:
                    for row in rows:
                        marks = ",".join("?" * len(row))
                        try:
                            conn.execute(f"INSERT OR IGNORE INTO {table} VALUES({marks})", row)
                        except sqlite3.DatabaseError:
                            unreadable = True
                            continue
                        if table == "pages":
                            pages += 1
                        elif table == "changes":
                            changes += 1
        finally:
            old.close()
    return Recovery(aside, pages, changes, unreadable)


def _readable(old: sqlite3.Connection, table: str) -> tuple[list[tuple[object, ...]], bool]:
    """A damaged table's rows as far as they can be read, and whether that was all of them (a read
    that fails ends the table there)."""
    rows: list[tuple[object, ...]] = []
    try:
        cursor = old.execute(f"SELECT * FROM {table}")  # noqa: S608 (fixed names)
        while (row := cursor.fetchone()) is not None:
            rows.append(tuple(row))
    except sqlite3.DatabaseError:
        return rows, False
    return rows, True
