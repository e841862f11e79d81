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
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import operator
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

from .. import account_sqlite
from ..gcpause import collection_paused
from ..google.regex import searches

#: Google's row limit per day and search type for one request's table.
ROW_LIMIT: Final = 50_000
SCHEMA_VERSION: Final = 1
FOLDER: Final = "archive"
DEMO_FILE: Final = "demo.sqlite3"

#: The six tables kept per (site, day, search type) and the dimensions each was requested with.
TABLES: Final[Mapping[str, tuple[str, ...]]] = {
    "totals": (),
    "page": ("page",),
    "query": ("query",),
    "country": ("country",),
    "device": ("device",),
    "query_page": ("query", "page"),
}
#: The dimensions each table answers, as a set: an answer uses the table whose set matches exactly.
_BY_DIMENSIONS: Final[Mapping[frozenset[str], str]] = {frozenset(d): name for name, d in TABLES.items()}
SEARCH_TYPES: Final = ("web", "image", "video", "news", "discover", "googleNews")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS parts(
    id INTEGER PRIMARY KEY, site TEXT NOT NULL, search_type TEXT NOT NULL, tbl TEXT NOT NULL,
    UNIQUE(site, search_type, tbl));
CREATE TABLE IF NOT EXISTS strings(id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS days(
    part INTEGER NOT NULL, day INTEGER NOT NULL, copied_at REAL NOT NULL, nrows INTEGER NOT NULL,
    truncated INTEGER NOT NULL, PRIMARY KEY(part, day)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rows(
    part INTEGER NOT NULL, day INTEGER NOT NULL, k1 INTEGER NOT NULL, k2 INTEGER NOT NULL,
    clicks INTEGER NOT NULL, impressions INTEGER NOT NULL, position REAL NOT NULL,
    PRIMARY KEY(part, day, k1, k2)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS losses(
    noted_at REAL NOT NULL, set_aside TEXT NOT NULL, site TEXT NOT NULL, search_type TEXT NOT NULL,
    day INTEGER NOT NULL);
"""


class ArchiveError(Exception):
    """The archive cannot do what was asked; the message is for a person."""


class ArchiveDamaged(ArchiveError):
    """The file is not a readable archive (`recover` sets it aside and keeps what is readable)."""


class CannotAnswer(ArchiveError):
    """The archive keeps no table for these dimensions or filters (e.g. by country and device)."""


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


# --- answers -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kept:
    """What the app shows per property: "Kept since <since> · <size> on this computer · last copied <time>".
    `size_bytes` is this site's share of the file (its rows' share of the file's size, estimated)."""

    since: dt.date | None
    until: dt.date | None
    days: int
    size_bytes: int
    last_copied: dt.datetime | None


@dataclass(frozen=True)
class Loss:
    """Days a damaged file no longer gave back when it was set aside."""

    noted_at: dt.datetime
    set_aside: Path
    site: str
    search_type: str
    day: dt.date


@dataclass(frozen=True)
class Recovery:
    """What `recover` did: where the damaged file went, the days it copied, and the days it lost
    (`lost_unknown`: the file was too damaged to even say which days it held)."""

    set_aside: Path
    recovered: int
    lost: tuple[tuple[str, str, dt.date], ...]
    lost_unknown: bool = False


@dataclass
class Answer:
    """Rows shaped exactly as Google returns them (`keys`, `clicks`, `impressions`, `ctr`,
    `position`), sorted by clicks as Google sorts them, plus where each day came from.

    `copied`: each day of the range the archive had, with when it was copied; `gaps`: the days of the
    range it does not have (oldest first); `truncated`: days whose table Google cut at its row limit."""

    rows: list[dict[str, Any]]
    table: str
    copied: dict[dt.date, dt.datetime] = field(default_factory=dict)
    gaps: list[dt.date] = field(default_factory=list)
    truncated: list[dt.date] = field(default_factory=list)


def table_for(dimensions: Sequence[str]) -> str:
    """The table that answers these dimensions (`date` is each day's own rows, so any table has it).

    Raises CannotAnswer for combinations no table keeps (Google answers them; the archive did not
    ask Google for them, so summing another table would be wrong)."""
    wanted = frozenset(d for d in dimensions if d != "date")
    name = _BY_DIMENSIONS.get(wanted)
    if name is None:
        raise CannotAnswer(
            "SearchDesk's copy keeps each day's totals and its rows by page, by query, by country, by device "
            "and by query and page; it has nothing for " + " and ".join(sorted(wanted)) + "."
        )
    return name


def gap_ranges(days: Iterable[dt.date]) -> list[tuple[dt.date, dt.date]]:
    """Consecutive days folded into (first, last) ranges, for sentences about gaps."""
    out: list[tuple[dt.date, dt.date]] = []
    for day in sorted(days):
        if out and (day - out[-1][1]).days == 1:
            out[-1] = (out[-1][0], day)
        else:
            out.append((day, day))
    return out


# --- the store -----------------------------------------------------------------------------------


def _add_regexp(conn: sqlite3.Connection) -> None:
    """Every connection, the server's read-only one included, answers `regexp` filters."""
    conn.create_function("regexp", 2, _regexp, deterministic=True)


def _regexp(pattern: str, value: str | bytes) -> bool:
    """SQL's `regexp(pattern, value)`: Google's includingRegex, by RE2 as Google runs it (`google.regex`),
    in time linear in the value; Python's backtracking `re` took minutes on an ordinary-looking pattern."""
    return searches(pattern, value)


def _damage(path: Path) -> Callable[[], ArchiveDamaged]:
    """The error a damaged archive file raises, in words for the person."""
    return lambda: ArchiveDamaged(f"The archive file {path.name} is damaged.")


Rows = Sequence[Mapping[str, Any]]


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
            path, schema=_SCHEMA, version=SCHEMA_VERSION, check=check, damage=_damage(path), prepare=_add_regexp
        )
        return cls(path, conn, readonly=False)

    @classmethod
    def open_readonly(cls, path: Path) -> Archive | None:
        """Open an archive to read (a server); None when there is none. Never creates or changes it."""
        conn = account_sqlite.open_to_read(path, probe="days", damage=_damage(path), prepare=_add_regexp)
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
        common = {name: _common_columns(tables[name], len(dims), self._ids) for name, dims in TABLES.items()}
        strings: set[str] = set()
        for name, dims in TABLES.items():
            columns = common[name]
            if columns is None:
                for i in range(len(dims)):
                    strings |= _column(tables[name], i)
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
                columns = common[name]
                flat = columns.sorted(ids) if columns is not None and columns.found(ids) else None
                if flat is None:
                    flat = _encode_sorted(rows, len(dims), ids)
                _write_rows(conn, part, number, flat)
                conn.execute(
                    "INSERT OR REPLACE INTO days(part, day, copied_at, nrows, truncated) VALUES(?,?,?,?,?)",
                    (part, number, stamp, len(flat) // _WIDTH, int(cut.get(name, len(rows) >= ROW_LIMIT))),
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
                conn.execute("DELETE FROM rows WHERE part=?", (part,))
                conn.execute("DELETE FROM days WHERE part=?", (part,))
            conn.execute("DELETE FROM parts WHERE site=?", (site,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        self._parts = {k: v for k, v in self._parts.items() if k[0] != site}

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
    ) -> Answer:
        """Rows over [start, end] from the table that matches `dimensions` (in their order, `date`
        among them giving each day's rows), as Google would have answered: summed over days, ctr as
        clicks / impressions, position weighted by impressions, sorted by clicks then impressions.

        `filters`: Google's filters (`dimension`, `operator`, `expression`, all of them applying), only
        on dimensions the table has. Raises CannotAnswer otherwise, ArchiveDamaged on a damaged file.
        A filter on a dimension not asked for reads the table that has it, summed over it, as Google
        sums a filtered request (by-day totals of branded queries: the query table, summed per day)."""
        table = table_for([*dimensions, *(f["dimension"] for f in filters)])
        dims = TABLES[table]
        copied = self.copied(site, search_type, start, end)
        gaps = [d for d in _each_day(start, end) if d not in copied]
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
        column = {d: f"k{i + 1}" for i, d in enumerate(dims)}
        where = ["r.part = ?", "r.day BETWEEN ? AND ?"]
        params: list[Any] = [part, start.toordinal(), end.toordinal()]
        for f in filters:
            dim = f["dimension"]
            if dim not in column:
                raise CannotAnswer(
                    f"SearchDesk's copy cannot filter by {dim} when the rows are by "
                    + (" and ".join(dims) or "day")
                    + "."
                )
            clause, value = _filter_clause(f.get("operator", "equals"), f["expression"])
            where.append(f"r.{column[dim]} IN (SELECT id FROM strings WHERE {clause})")  # noqa: S608
            params.append(value)
        group = [column[d] if d != "date" else "day" for d in dimensions]
        grouped = ", ".join(f"r.{g}" for g in group)
        # Only our own column names and placeholders are formatted into the statement. Each group's
        # words are looked up once per group, inside SQLite.
        keys = "".join("r.day, " if g == "day" else f"(SELECT value FROM strings WHERE id = r.{g}), " for g in group)  # noqa: S608
        grouping = f" GROUP BY {grouped} ORDER BY c DESC, i DESC" if group else ""
        sql = (
            f"SELECT {keys}sum(r.clicks) AS c, sum(r.impressions) AS i, sum(r.position * r.impressions), "  # noqa: S608
            "sum(CASE WHEN r.impressions = 0 THEN r.position ELSE 0 END), sum(r.impressions = 0) "
            f"FROM rows r WHERE {' AND '.join(where)}{grouping} LIMIT ? OFFSET ?"
        )
        params += [row_limit, start_row]
        try:
            fetched = self._conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            if account_sqlite.damaged(exc):
                raise _damage(self.path)() from exc
            raise
        out: list[dict[str, Any]] = []
        n = len(group)
        days = [i for i, g in enumerate(group) if g == "day"]
        for r in fetched:
            clicks, impressions, weighted, bare, nbare = r[n:]
            if not impressions and not clicks and nbare == 0:
                continue
            row: dict[str, Any] = {}
            if group:
                words = list(r[:n])
                for i in days:
                    words[i] = dt.date.fromordinal(words[i]).isoformat()
                row["keys"] = words
            row["clicks"] = clicks
            row["impressions"] = impressions
            row["ctr"] = clicks / impressions if impressions else 0.0
            row["position"] = weighted / impressions if impressions else (bare / nbare if nbare else 0.0)
            out.append(row)
        if not group and out and not out[0]["impressions"] and not out[0]["clicks"]:
            out = []
        return Answer(out, table, copied, gaps, truncated)


#: Google's filter operators as SQL over an interned value (`regexp` is `_regexp`: RE2, as at Google).
_FILTER_SQL: Final[Mapping[str, str]] = {
    "equals": "value = ?",
    "notEquals": "value != ?",
    "contains": "instr(lower(value), lower(?)) > 0",
    "notContains": "instr(lower(value), lower(?)) = 0",
    "includingRegex": "regexp(?, CAST(value AS BLOB))",  # its UTF-8 bytes, as RE2 reads them: no decoding
    "excludingRegex": "NOT regexp(?, CAST(value AS BLOB))",
}


def _filter_clause(operator: str, expression: str) -> tuple[str, str]:
    if operator not in _FILTER_SQL:
        raise CannotAnswer(f"SearchDesk's copy does not know the filter {operator}.")
    return _FILTER_SQL[operator], expression


def _each_day(start: dt.date, end: dt.date) -> Iterator[dt.date]:
    day = start
    while day <= end:
        yield day
        day += dt.timedelta(days=1)


_KEYS: Final = operator.itemgetter("keys")


def _column(rows: Rows, i: int) -> set[str]:
    """The text values at `keys[i]` of these rows: in C in the common case (every row well formed),
    row by row only when one is not."""
    try:
        found = set(map(operator.itemgetter(i), map(_KEYS, rows)))
        if set(map(type, found)) <= {str}:  # the common case, checked in C
            return found
    except (KeyError, IndexError, TypeError):
        found = set()
        for row in rows:
            keys = row.get("keys") if isinstance(row, Mapping) else None
            if isinstance(keys, list) and len(keys) > i and isinstance(keys[i], str):
                found.add(keys[i])
        return found
    return {value for value in found if type(value) is str}


def _count(value: object) -> int | None:
    if type(value) is int:
        return value if value >= 0 else None
    if type(value) is float and math.isfinite(value) and value >= 0:
        return int(value)
    if type(value) is str and value.isdigit():
        return int(value)
    return None


def _insert_rows(part: int, day: int, count: int = 1) -> str:
    """The statement that writes `_encode`'s rows into one table of one day.

    One table of one day has one part and one day, so they are written into the statement (integers
    formatted as integers: nothing from Google) and each row binds only (k1, k2, clicks, impressions,
    position): a day at the row limit is 150,000 rows, and every bound value costs. The tuples start
    with the key, so sorting them compares k1 (and k2) with Python's fast integer comparison, where
    part and day first cost two comparisons of equal values each time (issue 28 measured the sort of
    (part, day, k1, k2, ...) at a sixth of a copied day's CPU)."""
    one = f"({int(part):d},{int(day):d},?,?,?,?,?)"
    return "INSERT OR REPLACE INTO rows(part, day, k1, k2, clicks, impressions, position) VALUES" + ",".join(
        [one] * count
    )


#: Rows per INSERT in `_write_rows`: 500 bound values, far below SQLite's limit of 32,766.
_BATCH: Final = 100
#: Values per row in `_encode_sorted`'s flat list: (k1, k2, clicks, impressions, position).
_WIDTH: Final = 5


def _write_rows(conn: sqlite3.Connection, part: int, day: int, flat: list[Any]) -> None:
    """Insert `_encode_sorted`'s rows, `_BATCH` rows to a statement and the rest one by one.

    One statement per row ran SQLite's statement step and reset, and the driver's per-call work,
    150,000 times for a day at the row limit: a hundred rows to a statement (one multi-row VALUES,
    inserted in order with the same OR REPLACE, so the table ends the same) halves the insert's CPU
    (issue 28). The rows come laid end to end, so each statement's values are one slice of the list
    (a copy of 500 pointers in C) rather than a hundred tuples chained into a new list."""
    rows = len(flat) // _WIDTH
    full = rows - rows % _BATCH
    step = _BATCH * _WIDTH
    if full:
        conn.executemany(
            _insert_rows(part, day, _BATCH), (flat[at : at + step] for at in range(0, full * _WIDTH, step))
        )
    if full < rows:
        conn.executemany(
            _insert_rows(part, day),
            (flat[at : at + _WIDTH] for at in range(full * _WIDTH, rows * _WIDTH, _WIDTH)),
        )


def _encode_sorted(rows: Rows, ndims: int, ids: Mapping[str, int]) -> list[Any]:
    """`_encode`'s tuples in key order (so each insert lands where the last one did), laid end to end
    for `_write_rows`: exactly ``list(chain(*sorted(_encode(rows, ndims, ids))))``."""
    columns = _common_columns(rows, ndims, ids)
    flat = columns.sorted(ids) if columns is not None and columns.found(ids) else None
    if flat is not None:
        return flat
    values = _encode(rows, ndims, ids)
    values.sort()
    return list(itertools.chain.from_iterable(values))


def _encode(rows: Rows, ndims: int, ids: Mapping[str, int]) -> list[tuple[Any, ...]]:
    """Google's rows as (k1, k2, clicks, impressions, position) for `_insert_rows`; a row without text
    keys or with non-numeric counts is dropped (the reader's cleaning would drop it too).

    The common row (a dict with its keys, whole non-negative counts, a float position) is read with
    one C call (`_FIELDS`) and checked inline; any other goes through `_encode_row`, the general
    rules, which give the common row the same tuple."""
    common = _encode_common(rows, ndims, ids)
    if common is not None:
        return common
    get = ids.get
    fields = _FIELDS
    general = _encode_row
    out: list[tuple[Any, ...]] = []
    keep = out.append
    for row in rows:
        if ndims and type(row) is dict:
            try:
                keys, clicks, impressions, position = fields(row)
            except KeyError:
                pass
            else:
                if (
                    type(keys) is list
                    and len(keys) >= ndims
                    and type(clicks) is int
                    and clicks >= 0
                    and type(impressions) is int
                    and impressions >= 0
                    and type(position) is float
                    and 0 <= position < 1e9
                ):
                    k1 = get(keys[0], 0)
                    if not k1:
                        continue
                    k2 = 0
                    if ndims == 2:
                        k2 = get(keys[1], 0)
                        if not k2:
                            continue
                    keep((k1, k2, clicks, impressions, position))
                    continue
        encoded = general(row, ndims, get)
        if encoded is not None:
            keep(encoded)
    return out


_FIELDS: Final = operator.itemgetter("keys", "clicks", "impressions", "position")
_COLUMNS: Final = tuple(map(operator.itemgetter, ("keys", "clicks", "impressions", "position")))
_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)


def _encode_common(rows: Rows, ndims: int, ids: Mapping[str, int]) -> list[tuple[Any, ...]] | None:
    """`_encode` for a table whose every row is the common one, else None (`_encode` goes row by row):
    `_common_columns` as tuples."""
    columns = _common_columns(rows, ndims, ids)
    if columns is None or not columns.complete():
        return None
    return list(zip(columns.first, columns.second, columns.clicks, columns.impressions, columns.positions, strict=True))


@dataclass
class _Columns:
    """A common table's rows a column at a time: each key's id in `first` and `second` (None for a
    word that has none yet; `second` all 0 for a table of one dimension), and the three numbers."""

    ndims: int
    keys: list[list[Any]]
    first: list[int | None]
    second: list[int | None]
    clicks: list[int]
    impressions: list[int]
    positions: list[float]

    def _lookups(self) -> Iterator[tuple[list[int | None], Callable[[list[Any]], Any]]]:
        yield self.first, _FIRST
        if self.ndims == 2:
            yield self.second, _SECOND

    def unknown(self) -> set[str]:
        """The words of keys that have no id yet (a few a day, as a site's pages and queries change)."""
        out: set[str] = set()
        for ids, word in self._lookups():
            if not all(ids):  # a None (truth tested in C: `None in` compares every id with None)
                missing = itertools.compress(map(word, self.keys), map(operator.is_, ids, itertools.repeat(None)))
                out.update(w for w in missing if type(w) is str)
        return out

    def found(self, ids: Mapping[str, int]) -> bool:
        """Look up the keys that had no id in `ids` (just interned); True when every key now has one."""
        for column, word in self._lookups():
            if not all(column):
                for at in itertools.compress(range(len(column)), map(operator.is_, column, itertools.repeat(None))):
                    column[at] = ids.get(word(self.keys[at]))
        return self.complete()

    def complete(self) -> bool:
        """Every key has an id, as `_encode`'s inline path keeps a row only then."""
        return all(self.first) and (self.ndims < 2 or all(self.second))

    def sorted(self, ids: Mapping[str, int]) -> list[Any] | None:
        """The rows in key order laid end to end (see `_encode_sorted`), or None when two rows share
        a key (Google never sends them): the whole tuple decides their order, the general path.

        The order is found by sorting row numbers on one integer per row (k1, or k1 and k2 in one)
        and each column is placed with one slice assignment, so no tuple is made per row: sorting
        50,000 five-tuples and chaining them into statements' lists was a fifth of a copied day's
        CPU (issue 37)."""
        first, second = self.first, self.second
        key: list[Any] = first
        if self.ndims == 2:
            if max(cast(list[int], second)) >= 1 << 32:  # `complete`: no None left
                return None
            # k1 and k2 in one integer that sorts as the pair does (k2 a positive id below 2**32).
            key = list(map(operator.or_, map(operator.lshift, first, itertools.repeat(32)), second))
        if len(set(key)) != len(key):
            return None
        order = sorted(range(len(key)), key=key.__getitem__)
        flat: list[Any] = [None] * (len(key) * _WIDTH)
        columns: tuple[list[Any], ...] = (first, second, self.clicks, self.impressions, self.positions)
        for at, column in enumerate(columns):
            flat[at::_WIDTH] = list(map(column.__getitem__, order))
        return flat


def _common_columns(rows: Rows, ndims: int, ids: Mapping[str, int]) -> _Columns | None:
    """The columns of a table whose every row is the common one, else None (`_encode` goes row by row).

    The conditions of `_encode`'s inline path are tested a column at a time by C loops (``map``,
    ``set``, ``min``, ``max``, ``sum``), so a day at the row limit (150,000 rows) costs no Python
    bytecode per row; a row that `_encode` would treat by the general rules (any odd value) sends
    the whole table back to it, so the values are the same. Keys without an id are None here."""
    if not ndims or not rows or not set(map(type, rows)) <= {dict}:
        return None
    get_keys, get_clicks, get_impressions, get_positions = _COLUMNS
    try:  # a field missing raises KeyError; a key that cannot be looked up (a list) TypeError
        keys, clicks = list(map(get_keys, rows)), list(map(get_clicks, rows))
        impressions, positions = list(map(get_impressions, rows)), list(map(get_positions, rows))
        if not (
            set(map(type, keys)) <= {list}
            and min(map(len, keys)) >= ndims
            and set(map(type, clicks)) <= {int}
            and set(map(type, impressions)) <= {int}
            and set(map(type, positions)) <= {float}
            and min(clicks) >= 0
            and min(impressions) >= 0
            and math.isfinite(sum(positions))  # so no NaN: min and max below are exact
            and min(positions) >= 0.0
            and max(positions) < 1e9
        ):
            return None
        first: list[int | None] = list(map(ids.get, map(_FIRST, keys)))
        second: list[int | None] = list(map(ids.get, map(_SECOND, keys))) if ndims == 2 else [0] * len(first)
    except (KeyError, TypeError):
        return None
    return _Columns(ndims, keys, first, second, clicks, impressions, positions)


def _encode_row(row: object, ndims: int, get: Callable[[str, int], int]) -> tuple[Any, ...] | None:
    """One row by the general rules, as `_encode` builds it; None when it is dropped."""
    if type(row) is not dict:
        return None
    k1 = k2 = 0
    if ndims:
        keys = row.get("keys")
        if type(keys) is not list or len(keys) < ndims:
            return None
        k1 = get(keys[0], 0)
        if not k1:
            return None
        if ndims == 2:
            k2 = get(keys[1], 0)
            if not k2:
                return None
    clicks = row.get("clicks")
    if type(clicks) is not int:
        clicks = _count(clicks)
    impressions = row.get("impressions")
    if type(impressions) is not int:
        impressions = _count(impressions)
    if clicks is None or impressions is None or clicks < 0 or impressions < 0:
        return None
    position = row.get("position", 0.0)
    if type(position) is not float:
        position = float(position) if type(position) is int else 0.0
    if not 0 <= position < 1e9:
        position = 0.0
    return k1, k2, clicks, impressions, position


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
        listed = _listed_days(old)
    except sqlite3.DatabaseError:
        listed, unknown = [], True
    if listed is None:
        listed, unknown = [], True
    for site, search_type, day in listed:
        try:
            tables = _read_day(old, site, search_type, day)
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


def _listed_days(old: sqlite3.Connection) -> list[tuple[str, str, dt.date]] | None:
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


def _read_day(
    old: sqlite3.Connection, site: str, search_type: str, day: dt.date
) -> tuple[dict[str, list[dict[str, Any]]], dt.datetime, dict[str, bool]] | None:
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
