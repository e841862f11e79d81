"""The archive's store: one SQLite file per Google account, written by the app, read by servers.

Why SQLite (the standard library's): it is already in every Python, adds nothing to the app folder
(issue 28's 143 MiB ceiling rules out most embedded engines' native libraries), WAL lets two server
processes read while the app writes, and its B-trees aggregate in C. The schema is built for the one
access pattern that matters — a property's table over a range of days:

- `parts`: one small integer per (site, search type, table); `strings`: every page, query, country
  and device once (interned), so a row holds integers only.
- `rows` is WITHOUT ROWID with primary key (part, day, k1, k2): the rows of one table of one day are
  adjacent on disk, a range of days is one contiguous scan, and re-writing a day is one range
  delete. `day` is the date's ordinal. Clicks and impressions are integers; `position` is kept as
  Google gave it (a float, already an impression-weighted average for that row and day), and sums
  over days weight it by impressions again — which is how Google aggregates it.
- `days`: per (part, day) when it was copied, how many rows Google returned and whether Google cut
  the table at its row limit (50,000 rows a day and search type).

Per day it keeps six tables, each from its own request so each is as complete as Google makes it:
`TABLES`. A day is kept only when all six were written in one transaction (`write_day`), so a copy
killed halfway leaves the day absent, never half there; re-copying a day replaces it.

A damaged file is set aside (renamed, never deleted) and the days still readable in it are copied
into a fresh file; the loss is recorded in the fresh file (`losses`) for the app to show.

The store is the archive's front door (the app and the server's reader take its names from here); it
holds the file and the `Archive` that writes and reads it. Beside it: `schema.py` (the tables),
`encode.py` (Google's rows as the integers written), `grouped.py` (a range's rows summed per key,
and its pages), `months.py` (whole months summed once, when Google no longer has them), `answers.py`
(what reading gives back), `salvage.py` (what a damaged file still gives back), `errors.py`.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import sys
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from .. import account_sqlite
from ..gcpause import collection_paused
from ..google.regex import searches
from . import months
from .answers import Answer, Columns, Kept, Loss, Recovery, each_day
from .encode import WIDTH, Rows, column, common_columns, encode_sorted, write_rows
from .errors import ArchiveDamaged, ArchiveError, CannotAnswer, damage
from .grouped import Request, answer_rows
from .salvage import listed_days, read_day
from .schema import ROW_LIMIT, SCHEMA, SCHEMA_VERSION, SEARCH_TYPES, TABLES, table_for

#: The store is the archive's front door: the app and the server's reader take these from here.
__all__ = [
    "DEMO_FILE",
    "FOLDER",
    "ROW_LIMIT",
    "SEARCH_TYPES",
    "TABLES",
    "Answer",
    "Archive",
    "ArchiveDamaged",
    "ArchiveError",
    "CannotAnswer",
    "Kept",
    "Loss",
    "Recovery",
    "account_file",
    "folder",
    "path_for",
    "recover",
]

FOLDER: Final = "archive"
DEMO_FILE: Final = "demo.sqlite3"

# --- where ---------------------------------------------------------------------------------------


def folder() -> Path:
    """The archive's folder in the person's data folder (beside the journal)."""
    from ..journal.paths import data_folder

    return data_folder() / FOLDER


def account_file(account: str | None) -> str:
    """The file name for an account's archive: its e-mail address, case-folded and made safe for
    every file system (a configured account without a name is `default`)."""
    key = (account or "").casefold().strip()
    if not key:
        return "default.sqlite3"
    return urllib.parse.quote(key, safe="@._-+") + ".sqlite3"


def path_for(account: str | None, *, demo: bool = False) -> Path:
    """Where an account's archive lives; the demo keeps its own, never mixed with a person's."""
    return folder() / (DEMO_FILE if demo else account_file(account))


# --- the store -----------------------------------------------------------------------------------


def _add_regexp(conn: sqlite3.Connection) -> None:
    """Every connection, the server's read-only one included, answers `regexp` filters."""
    conn.create_function("regexp", 2, _regexp, deterministic=True)


def _regexp(pattern: str, value: str | bytes) -> bool:
    """SQL's `regexp(pattern, value)`: Google's includingRegex, by RE2 as Google runs it (`google.regex`),
    in time linear in the value; Python's backtracking `re` took minutes on an ordinary-looking pattern."""
    return searches(pattern, value)


class Archive:
    """One account's archive file. `open` for the app (the only writer); `open_readonly` for servers.

    Every method is synchronous and short: the app calls it off the Qt thread, the server in a worker
    thread. Writers never block readers (WAL); a reader sees whole days only."""

    def __init__(self, path: Path, conn: sqlite3.Connection, *, readonly: bool) -> None:
        self.path = path
        self.readonly = readonly
        self._conn = conn
        self._parts: dict[tuple[str, str, str], int] = {}
        self._ids: dict[str, int] = {}

    # opening

    @classmethod
    def open(cls, path: Path, *, check: bool = False) -> Archive:
        """Open (creating) an archive to write. With `check`, a damaged file is found first
        (`PRAGMA quick_check`) and raises ArchiveDamaged: call `recover`."""
        conn = account_sqlite.open_to_write(
            path, schema=SCHEMA, version=SCHEMA_VERSION, check=check, damage=damage(path), prepare=_add_regexp
        )
        return cls(path, conn, readonly=False)

    @classmethod
    def open_readonly(cls, path: Path) -> Archive | None:
        """Open an archive to read (a server); None when there is none. Never creates or changes it."""
        conn = account_sqlite.open_to_read(path, probe="days", damage=damage(path), prepare=_add_regexp)
        if conn is None:
            return None
        return cls(path, conn, readonly=True)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # parts and strings

    def _part(self, site: str, search_type: str, table: str, *, create: bool) -> int | None:
        key = (site, search_type, table)
        part = self._parts.get(key)
        if part is not None:
            return part
        row = self._conn.execute("SELECT id FROM parts WHERE site=? AND search_type=? AND tbl=?", key).fetchone()
        if row is None:
            if not create:
                return None
            part = int(
                self._conn.execute("INSERT INTO parts(site, search_type, tbl) VALUES(?,?,?)", key).lastrowid or 0
            )
        else:
            part = int(row[0])
        self._parts[key] = part
        return part

    # writing

    def write_day(
        self,
        site: str,
        day: dt.date,
        search_type: str,
        tables: Mapping[str, Rows],
        *,
        copied_at: dt.datetime | None = None,
        truncated: Mapping[str, bool] | None = None,
    ) -> None:
        """Keep one day of one property and search type: all six `TABLES`, each the rows of its own
        request exactly as Google returned them (`keys`, `clicks`, `impressions`, `position`; `ctr` is
        clicks / impressions and is recomputed on reading): its `rows` as decoded from Google's answer.

        Atomic and idempotent: the day is replaced in one transaction, so re-copying it never
        duplicates rows and a reader sees the old day or the new one, never half. `truncated` says
        which tables Google cut at its row limit; unsaid, a table is cut when it has `ROW_LIMIT` rows.
        Rows whose keys are not text or whose counts are not numbers are dropped (they would be
        dropped on reading anyway). Raises ValueError unless all six tables are given."""
        if self.readonly:
            raise ArchiveError("This archive was opened to read.")
        missing = set(TABLES) - set(tables)
        if missing:
            raise ValueError(f"write_day needs every table; missing {sorted(missing)}")
        stamp = (copied_at or dt.datetime.now(dt.UTC)).timestamp()
        # Collection held off for the whole write, and everything it made dropped before it ends
        # (`_replace_day`'s locals): a day's columns and rows are 30 lists of 50,000 to 250,000
        # values, alive to the end and no garbage, and one collection that walked them cost 8 ms, a
        # thirtieth of the copy (gcpause.py).
        with collection_paused():
            self._replace_day(site, day.toordinal(), search_type, tables, stamp, truncated or {})

    def _replace_day(
        self,
        site: str,
        number: int,
        search_type: str,
        tables: Mapping[str, Rows],
        stamp: float,
        cut: Mapping[str, bool],
    ) -> None:
        """`write_day`'s work, in one transaction."""
        conn = self._conn
        # The copier writes day after day of the same pages and queries: a common table's keys are
        # looked up in the ids this process already has, and only the words without one are gathered
        # and interned (gathering every day's 200,000 words into a set first was a seventh of its CPU).
        common = {name: common_columns(tables[name], len(dims), self._ids) for name, dims in TABLES.items()}
        strings: set[str] = set()
        for name, dims in TABLES.items():
            columns = common[name]
            if columns is None:
                for i in range(len(dims)):
                    strings |= column(tables[name], i)
            else:
                strings |= columns.unknown()
        strings.difference_update(self._ids)
        conn.execute("BEGIN IMMEDIATE")
        try:
            ids = self._intern(strings)
            for name, dims in TABLES.items():
                part = self._part(site, search_type, name, create=True)
                assert part is not None  # create=True always gives one
                rows = tables[name]
                conn.execute("DELETE FROM rows WHERE part=? AND day=?", (part, number))
                if name in months.MONTHLY:
                    months.drop(conn, part, dt.date.fromordinal(number))
                columns = common[name]
                flat = columns.sorted(ids) if columns is not None and columns.found(ids) else None
                if flat is None:
                    flat = encode_sorted(rows, len(dims), ids)
                write_rows(conn, part, number, flat)
                conn.execute(
                    "INSERT OR REPLACE INTO days(part, day, copied_at, nrows, truncated) VALUES(?,?,?,?,?)",
                    (part, number, stamp, len(flat) // WIDTH, int(cut.get(name, len(rows) >= ROW_LIMIT))),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            self._ids.clear()
            raise

    def _intern(self, values: set[str]) -> dict[str, int]:
        """Ids for these strings, adding the new ones. The copier writes day after day of the same
        pages and queries, so ids already seen by this process are not asked again."""
        conn = self._conn
        known = self._ids
        new = values - known.keys()
        if new:
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS wanted(value TEXT PRIMARY KEY) WITHOUT ROWID")
            conn.executemany("INSERT OR IGNORE INTO wanted(value) VALUES(?)", ((v,) for v in new))
            conn.execute("INSERT OR IGNORE INTO strings(value) SELECT value FROM wanted")
            if len(known) > 2_000_000:
                known.clear()
            known.update(
                (value, int(sid))
                for sid, value in conn.execute("SELECT s.id, s.value FROM wanted w JOIN strings s ON s.value = w.value")
            )
            # Emptied at once, by the copy that filled it: the next day's handful of new words should
            # not pay for clearing this day's hundred thousand (10 ms, a twentieth of a daily copy).
            conn.execute("DELETE FROM wanted")
        return known

    def delete_site(self, site: str) -> None:
        """Forget every day of a property (the person's Delete): rows, days and its strings' use.
        Strings no other row uses are left (cheap; `vacuum` reclaims the space)."""
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            parts = [r[0] for r in conn.execute("SELECT id FROM parts WHERE site=?", (site,))]
            for part in parts:
                for table in ("rows", "days", "months", "rolled"):
                    conn.execute(f"DELETE FROM {table} WHERE part=?", (part,))  # noqa: S608 (our own names)
            conn.execute("DELETE FROM parts WHERE site=?", (site,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._parts = {k: v for k, v in self._parts.items() if k[0] != site}

    def roll_up(self, site: str, search_type: str, before: dt.date) -> int:
        """Sum the whole months before `before` once (`months.py`): the copier calls it with Google's
        first day, before which it never writes again. The number of months summed."""
        if self.readonly:
            raise ArchiveError("This archive was opened to read.")
        parts = {}
        for table in months.MONTHLY:
            part = self._part(site, search_type, table, create=False)
            if part is not None:
                parts[part] = TABLES[table]
        try:
            return months.roll_up(self._conn, parts, before)
        except sqlite3.DatabaseError as exc:
            if account_sqlite.damaged(exc):
                raise damage(self.path)() from exc
            raise

    def vacuum(self) -> None:
        """Give deleted space back to the file system (after `delete_site`; takes the write lock)."""
        self._conn.execute("DELETE FROM strings WHERE id NOT IN (SELECT k1 FROM rows UNION SELECT k2 FROM rows)")
        self._ids.clear()  # a deleted string's id may be given to another word: forget them all
        self._conn.execute("VACUUM")

    # reading what is kept

    def sites(self) -> list[str]:
        """Every property with at least one kept day."""
        return [
            r[0]
            for r in self._conn.execute(
                "SELECT DISTINCT p.site FROM parts p WHERE EXISTS (SELECT 1 FROM days d WHERE d.part = p.id) ORDER BY 1"
            )
        ]

    def days(self, site: str, search_type: str = "web") -> set[dt.date]:
        """The days kept whole (all six tables) for this property and search type."""
        rows = self._conn.execute(
            "SELECT d.day FROM days d JOIN parts p ON p.id = d.part WHERE p.site=? AND p.search_type=? "
            "GROUP BY d.day HAVING count(*) = ?",
            (site, search_type, len(TABLES)),
        )
        return {dt.date.fromordinal(r[0]) for r in rows}

    def copied(self, site: str, search_type: str, start: dt.date, end: dt.date) -> dict[dt.date, dt.datetime]:
        """Each kept day in [start, end] with when it was copied (the oldest of its tables' copies)."""
        rows = self._conn.execute(
            "SELECT d.day, min(d.copied_at) FROM days d JOIN parts p ON p.id = d.part "
            "WHERE p.site=? AND p.search_type=? AND d.day BETWEEN ? AND ? GROUP BY d.day HAVING count(*) = ?",
            (site, search_type, start.toordinal(), end.toordinal(), len(TABLES)),
        )
        return {dt.date.fromordinal(d): dt.datetime.fromtimestamp(t, dt.UTC) for d, t in rows}

    def kept(self, site: str) -> Kept:
        """What the app shows for a property: since when, its share of the file, last copied."""
        row = self._conn.execute(
            "SELECT min(d.day), max(d.day), count(DISTINCT d.day), max(d.copied_at), sum(d.nrows) "
            "FROM days d JOIN parts p ON p.id = d.part WHERE p.site=?",
            (site,),
        ).fetchone()
        total = self._conn.execute("SELECT sum(nrows) FROM days").fetchone()[0] or 0
        size = self.size_bytes()
        share = int(size * (row[4] or 0) / total) if total else 0
        return Kept(
            since=dt.date.fromordinal(row[0]) if row[0] else None,
            until=dt.date.fromordinal(row[1]) if row[1] else None,
            days=int(row[2] or 0),
            size_bytes=share,
            last_copied=dt.datetime.fromtimestamp(row[3], dt.UTC) if row[3] else None,
        )

    def size_bytes(self) -> int:
        """The file's size on disk with its write-ahead log."""
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += os.stat(f"{self.path}{suffix}").st_size
            except OSError:
                pass
        return total

    def losses(self) -> list[Loss]:
        """Days lost to damage, as `recover` recorded them (the app shows them until the person
        dismisses them: `clear_losses`)."""
        return [
            Loss(dt.datetime.fromtimestamp(at, dt.UTC), Path(aside), site, stype, dt.date.fromordinal(day))
            for at, aside, site, stype, day in self._conn.execute(
                "SELECT noted_at, set_aside, site, search_type, day FROM losses ORDER BY site, search_type, day"
            )
        ]

    def clear_losses(self) -> None:
        self._conn.execute("DELETE FROM losses")

    # answering

    def query(
        self,
        site: str,
        start: dt.date,
        end: dt.date,
        dimensions: Sequence[str] = (),
        search_type: str = "web",
        filters: Sequence[Mapping[str, str]] = (),
        row_limit: int = 1000,
        start_row: int = 0,
        *,
        typed: bool = False,
    ) -> Answer:
        """Rows over [start, end] from the table that matches `dimensions` (in their order, `date`
        among them giving each day's rows), as Google would have answered: summed over days, ctr as
        clicks / impressions, position weighted by impressions, sorted by clicks then impressions.

        `filters`: Google's filters (`dimension`, `operator`, `expression`, all of them applying), only
        on dimensions the table has. Raises CannotAnswer otherwise, ArchiveDamaged on a damaged file.
        A filter on a dimension not asked for reads the table that has it, summed over it, as Google
        sums a filtered request (by-day totals of branded queries: the query table, summed per day).
        `typed`: rows with dimensions as `Columns` rather than Google's objects (a report's reader)."""
        table = table_for([*dimensions, *(f["dimension"] for f in filters)])
        dims = TABLES[table]
        copied = self.copied(site, search_type, start, end)
        gaps = [d for d in each_day(start, end) if d not in copied]
        part = self._part(site, search_type, table, create=False)
        if part is None or not copied:
            return Answer([], table, copied, gaps, [])
        truncated = [
            dt.date.fromordinal(r[0])
            for r in self._conn.execute(
                "SELECT day FROM days WHERE part=? AND day BETWEEN ? AND ? AND truncated ORDER BY day",
                (part, start.toordinal(), end.toordinal()),
            )
        ]
        request = Request(part, start, end, dims, tuple(dimensions), tuple(filters))
        lo = max(start_row, 0)
        hi = lo + row_limit if row_limit >= 0 else sys.maxsize  # SQLite's LIMIT: a negative one is none
        with collection_paused():  # tens of thousands of rows fetched, all kept (gcpause.py)
            rows = self._summed_month(request, table, lo, hi, typed)
            if rows is None:
                rows = answer_rows(self._conn, self.path, request, copied, lo, hi, typed=typed)
        return Answer(rows, table, copied, gaps, truncated)

    def _summed_month(
        self, request: Request, table: str, lo: int, hi: int, typed: bool
    ) -> Columns | list[dict[str, Any]] | None:
        """Rows `lo` to `hi` from a month summed once (`months.py`); None when the request is not one."""
        conn = self._conn
        try:
            if not months.usable(conn, request, table):
                return None
            columns = months.page(conn, request, lo, hi)
        except sqlite3.DatabaseError as exc:
            if account_sqlite.damaged(exc):
                raise damage(self.path)() from exc
            raise
        return columns if typed else columns.shaped()


# --- damage --------------------------------------------------------------------------------------


def recover(path: Path) -> Recovery:
    """Set a damaged archive aside (renamed beside it, `<name>.damaged-<time>`, never deleted), copy
    every day still readable in it into a fresh file at `path`, and record the days lost there
    (`Archive.losses`). Safe to call on a file that is only partly readable."""
    aside = account_sqlite.set_aside(path)
    fresh = Archive.open(path)
    recovered = 0
    lost: list[tuple[str, str, dt.date]] = []
    unknown = False
    try:
        old = sqlite3.connect(f"{aside.as_uri()}?mode=ro", uri=True)
        listed = listed_days(old)
    except sqlite3.DatabaseError:
        listed, unknown = [], True
    if listed is None:
        listed, unknown = [], True
    for site, search_type, day in listed:
        try:
            tables = read_day(old, site, search_type, day)
        except sqlite3.DatabaseError:
            tables = None
        if tables is None:
            lost.append((site, search_type, day))
            continue
        data, copied_at, cut = tables
        fresh.write_day(site, day, search_type, data, copied_at=copied_at, truncated=cut)
        recovered += 1
    now = time.time()
    fresh._conn.executemany(
        "INSERT INTO losses(noted_at, set_aside, site, search_type, day) VALUES(?,?,?,?,?)",
        [(now, str(aside), s, t, d.toordinal()) for s, t, d in lost],
    )
    fresh.close()
    return Recovery(aside, recovered, tuple(lost), unknown)
