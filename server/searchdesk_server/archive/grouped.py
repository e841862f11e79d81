"""A period's rows summed per key once, and its pages cut from that one pass (`Archive.query`'s SQL).

Why: a report reads a long answer as Google serves it, in pages of 25,000 rows, each a request of its
own (`tools/analytics/paging.py`), and the archive answers each page on a connection of its own
(`reader.fetch`). With ``LIMIT ? OFFSET ?`` every page summed the whole period again: new queries'
588,000 (query, page) pairs of 28 days cost 24 passes of a second each (36.8 s, issue 38). Paging by
key cannot help here: the pages are in the order of the sums (clicks, then impressions), which exist
only once every row of the period has been added up, so any page needs the whole pass.

So the pass is done once per period (`Pass`) and kept, process-wide, for the pages still to come,
keyed by everything that decides its answer: the file (path, device, inode), the table, the days,
the grouping, the filters, and each day's copy time — a day copied again, or a file recovered into a
new one, is another key, so a page is never cut from rows the file no longer holds. A pass is kept as
columns of numbers (the words' ids, 44 bytes a row: 26 MB for those 588,000 pairs, against some 250 MB
as Python rows with their words) and each page looks up only its own words. It is dropped when a page
reaches its end, after `KEEP_S` seconds, or oldest first past `KEEP_ROWS`; an answer that fits in
its first page is never kept. The order is the statement's, ties by key, so a page is exactly the
rows ``LIMIT ? OFFSET ?`` gives (tests/server/archive/test_grouped_pages.py holds that), and a month
summed once (`months.py`) reads in the same order.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .. import account_sqlite
from .answers import Columns
from .errors import CannotAnswer, damage

#: How long a pass is kept for the pages after it: a report's pages follow each other within seconds.
KEEP_S: Final = 60.0
#: The most groups one pass keeps: the reader's cap (200,000 rows, `tools.analytics.paging.ROW_CAP`)
#: and its one-row look past it, no more (each group more is fetched and kept for nothing). A page
#: beyond them is a pass of its own, up to that page.
PASS_ROWS: Final = 200_001
#: A first page this long is a paged read (Google's most rows a request, as the reader asks them): its
#: pass is kept when the answer goes on. A shorter first page is one statement and nothing kept.
PAGED: Final = 25_000
#: The most groups kept over all passes (about 40 MB); past it the oldest pass goes first.
KEEP_ROWS: Final = 1_000_000
#: One thread at a time fetches a statement's rows and makes them columns (`fetched`, `Pass.cut`).
FETCHING: Final = threading.Lock()
#: Words looked up per statement (SQLite's smallest limit on bound values is 999).
_LOOKUP: Final = 500
#: The most words a kept pass remembers for its next pages (some 20 MB); past it they are looked up again.
WORDS_KEPT: Final = 250_000

#: Google's filter operators as SQL over an interned value (`regexp` is RE2, as at Google: store.py).
_FILTER_SQL: Final[Mapping[str, str]] = {
    "equals": "value = ?",
    "notEquals": "value != ?",
    "contains": "instr(lower(value), lower(?)) > 0",
    "notContains": "instr(lower(value), lower(?)) = 0",
    "includingRegex": "regexp(?, CAST(value AS BLOB))",  # its UTF-8 bytes, as RE2 reads them: no decoding
    "excludingRegex": "NOT regexp(?, CAST(value AS BLOB))",
}


@dataclass(frozen=True)
class Request:
    """One table's rows over a range of days, as `Archive.query` asks for them: the table's columns
    per dimension (`dims`), the grouping asked for (`dimensions`, `date` among them or not) and
    Google's filters."""

    part: int
    start: dt.date
    end: dt.date
    dims: Sequence[str]
    dimensions: Sequence[str]
    filters: Sequence[Mapping[str, str]]

    def columns(self) -> dict[str, str]:
        return {d: f"k{i + 1}" for i, d in enumerate(self.dims)}

    def group(self) -> list[str]:
        """The grouped columns in the order asked: `day` for `date`, else the table's key column."""
        column = self.columns()
        return [column[d] if d != "date" else "day" for d in self.dimensions]

    def where(self) -> tuple[str, list[Any]]:
        """The WHERE clause and its values. Raises CannotAnswer for a filter the table cannot apply."""
        column = self.columns()
        where = ["r.part = ?", "r.day BETWEEN ? AND ?"]
        params: list[Any] = [self.part, self.start.toordinal(), self.end.toordinal()]
        for f in self.filters:
            dim = f["dimension"]
            if dim not in column:
                raise CannotAnswer(
                    f"SearchDesk's copy cannot filter by {dim} when the rows are by "
                    + (" and ".join(self.dims) or "day")
                    + "."
                )
            clause, value = _filter_clause(f.get("operator", "equals"), f["expression"])
            where.append(f"r.{column[dim]} IN (SELECT id FROM strings WHERE {clause})")  # noqa: S608
            params.append(value)
        return " AND ".join(where), params


def _filter_clause(operator: str, expression: str) -> tuple[str, str]:
    if operator not in _FILTER_SQL:
        raise CannotAnswer(f"SearchDesk's copy does not know the filter {operator}.")
    return _FILTER_SQL[operator], expression


#: The sums of the property's totals: clicks, impressions, position weighted by impressions, and the
#: plain position and count of rows without impressions (a range seen only in such rows keeps Google's).
_SUMS: Final = (
    "sum(r.clicks) AS c, sum(r.impressions) AS i, sum(r.position * r.impressions), "
    "sum(CASE WHEN r.impressions = 0 THEN r.position ELSE 0 END), sum(r.impressions = 0)"
)


#: A group's position as Google states it, worked out inside SQLite (one column fetched, not three):
#: weighted by impressions, else the plain mean of a key seen only without impressions. SQLite divides
#: doubles as Python does (a REAL by an INTEGER converts it exactly), so the value is the same double.
#: A group without impressions has only rows without them (counts are never negative), so their mean
#: is `avg` over the group: two sums a row fewer than counting those rows apart, a tenth of new
#: queries' pass over 588,000 pairs (`make bench`).
_POSITION: Final = (
    "CASE WHEN sum(r.impressions) THEN sum(r.position * r.impressions) / sum(r.impressions) ELSE avg(r.position) END"
)


@dataclass
class Pass:
    """One grouped pass: per group its keys (ids, or the day's ordinal for `date`), clicks, impressions
    and position, in the answer's order (clicks, then impressions, from the most), as columns of
    numbers once kept (ids and counts as 64-bit integers, positions as doubles: 40 bytes a group,
    against some 200 as Python's tuples). At most `limit` groups: `complete` when the answer has no more.

    A group holds at least one row, so it never has neither impressions, clicks nor a row without
    impressions: no group is left out as `_total_rows` leaves out an empty range."""

    group: list[str]
    limit: int
    fetched: list[tuple[Any, ...]] | None
    columns: list[array[Any]] = field(default_factory=list)
    made: float = field(default_factory=time.monotonic)
    #: The words of the pages cut so far, by id: pages of one answer share most of theirs (new
    #: queries' eight pages of pairs hold 215,000 words page by page, 48,000 different ones). A word
    #: never changes under its id; only `vacuum` may give a deleted word's id to another, and then a
    #: kept pass shows its rows' own words, as it was made, for at most `KEEP_S`.
    words: dict[int, str | None] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.fetched) if self.fetched is not None else len(self.columns[-1])

    @property
    def complete(self) -> bool:
        return len(self) < self.limit

    def covers(self, hi: int) -> bool:
        """Whether rows up to `hi` are all here (or the answer ends before)."""
        return self.complete or hi <= len(self)

    def compact(self) -> None:
        """The groups as columns, to be kept (until then they are SQLite's tuples: most answers are
        one page, cut from them at once)."""
        if self.fetched is None:
            return
        codes = [*("q" for _ in self.group), "q", "q", "d"]
        values = zip(*self.fetched, strict=True) if self.fetched else ((),) * len(codes)
        self.columns = [array(code, column) for code, column in zip(codes, values, strict=True)]
        self.fetched = None

    def cut(self, conn: sqlite3.Connection, lo: int, hi: int) -> Columns:
        """Rows `lo` to `hi` as columns: keys as words (days as dates), clicks, impressions, position."""
        n = len(self.group)
        if self.fetched is not None:
            found = self.fetched[lo:hi]
            columns: list[Sequence[Any]] = list(zip(*found, strict=True)) if found else [()] * (n + 3)
        else:
            columns = [column[lo:hi] for column in self.columns]
        words = self.words
        if len(words) > WORDS_KEPT:
            words.clear()
        missing = {v for g, column in zip(self.group, columns, strict=False) if g != "day" for v in column}
        missing.difference_update(words)
        if missing:
            words.update(_words(conn, missing))
        keys = [
            [dt.date.fromordinal(v).isoformat() for v in column] if g == "day" else list(map(words.get, column))
            for g, column in zip(self.group, columns, strict=False)
        ]
        return Columns(n, keys[0] if n == 1 else list(zip(*keys, strict=True)), *columns[n:])


def _words(conn: sqlite3.Connection, ids: set[int]) -> dict[int, str | None]:
    """The words of these ids, in one statement and one row: the ids bound as one JSON list, the
    words found and their ids given back as two JSON lists, each made from the same rows in the same
    order (an id the file no longer has is in neither).

    One statement, not one per few hundred ids: each call into SQLite gives up Python's lock, and with
    the reader's three threads each taking it back waited on the others (content decay's fifteen
    months took three times their CPU time in wall time with 50 lookups a month). One row, not one a
    word, for the same reason: fetching each of a page's 31,000 words was 14 ms, most of it with
    Python's lock, against 5 ms in SQLite without it and 6 ms to read the two lists. JSON holds text
    and whole numbers exactly. A SQLite built without JSON (before 3.38, and only if built so) is
    asked a few hundred ids at a time."""
    wanted = sorted(ids)
    try:
        found, words = conn.execute(
            "SELECT json_group_array(s.id), json_group_array(s.value) "
            "FROM json_each(?) j JOIN strings s ON s.id = j.value",
            (json.dumps(wanted),),
        ).fetchone()
        return dict(zip(json.loads(found), json.loads(words), strict=True))
    except sqlite3.OperationalError:
        pass
    out: dict[int, str | None] = {}
    for at in range(0, len(wanted), _LOOKUP):
        chunk = wanted[at : at + _LOOKUP]
        marks = ",".join("?" * len(chunk))
        out.update(conn.execute(f"SELECT id, value FROM strings WHERE id IN ({marks})", chunk))  # noqa: S608
    return out


def statement(request: Request) -> tuple[str, list[Any]]:
    """The grouped statement, ordered as Google orders its rows (ties by key, so any two reads of the
    same rows give the same order), with a LIMIT to bind."""
    group = request.group()
    where, params = request.where()
    grouped = ", ".join(f"r.{g}" for g in group)
    # Only our own column names and placeholders are formatted into the statement.
    sql = (
        f"SELECT {grouped}, sum(r.clicks) AS c, sum(r.impressions) AS i, {_POSITION} FROM rows r WHERE {where} "  # noqa: S608
        f"GROUP BY {grouped} ORDER BY c DESC, i DESC, {grouped} LIMIT ?"
    )
    return sql, params


def fetched(cursor: sqlite3.Cursor) -> list[Any]:
    """A statement's rows once its first step has run (where SQLite sums and sorts, in parallel with
    other reads), fetched by one thread at a time (`FETCHING`).

    Why: each row fetched gives up Python's lock and takes it back, so threads fetching at once
    wait on each other row by row. A report reads three periods at once (the reader's window): content
    decay's fifteen months took 0.68 s of reading in three threads against 0.33 s one after another,
    and the whole report 1.2 s against 0.85 s with only the fetching taken in turn (`make bench`)."""
    with FETCHING:
        return cursor.fetchall()


def grouped_pass(conn: sqlite3.Connection, request: Request, limit: int) -> Pass:
    """The first `limit` groups of the range (at most `PASS_ROWS` unless a page asks past them)."""
    sql, params = statement(request)
    return Pass(request.group(), limit, fetched(conn.execute(sql, [*params, limit])))


class Kept:
    """The passes kept for their next pages, process-wide (every request opens its own connection).

    A page asked while its pass is being made waits for that pass instead of making another: the
    reader asks up to three pages of one period at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._passes: OrderedDict[Hashable, Pass] = OrderedDict()
        self._making: dict[Hashable, threading.Lock] = {}

    def page(self, key: Hashable, make: Callable[[], Pass], lo: int, hi: int) -> Pass:
        """The pass for `key` (made by `make` unless kept), kept for pages after `hi` and forgotten
        once a page reaches its end."""
        found = self._take(key, hi)
        if found is None:
            with self._lock:
                making = self._making.setdefault(key, threading.Lock())
            with making:
                found = self._take(key, hi)
                if found is None:
                    found = make()
                    if not (found.complete and hi >= len(found)):
                        self._keep(key, found)
            with self._lock:
                self._making.pop(key, None)
        if found.complete and hi >= len(found):
            with self._lock:
                self._passes.pop(key, None)
        return found

    def _take(self, key: Hashable, hi: int) -> Pass | None:
        with self._lock:
            self._expire()
            found = self._passes.get(key)
            if found is None or not found.covers(hi):
                return None
            self._passes.move_to_end(key)
            return found

    def _keep(self, key: Hashable, found: Pass) -> None:
        found.compact()
        with self._lock:
            self._passes[key] = found
            self._expire()
        # A server may read nothing more for hours: the pass goes after `KEEP_S` all the same.
        sweep = threading.Timer(KEEP_S + 1, self._sweep)
        sweep.daemon = True
        sweep.start()

    def _sweep(self) -> None:
        with self._lock:
            self._expire()

    def _expire(self) -> None:
        """Passes older than `KEEP_S`, and the oldest past `KEEP_ROWS` (the newest is always kept)."""
        now = time.monotonic()
        for key in [k for k, p in self._passes.items() if now - p.made > KEEP_S]:
            del self._passes[key]
        while len(self._passes) > 1 and sum(map(len, self._passes.values())) > KEEP_ROWS:
            self._passes.popitem(last=False)

    def forget(self) -> None:
        """Drop every kept pass (the bench, so each round measures a cold read)."""
        with self._lock:
            self._passes.clear()


KEPT: Final = Kept()


def answer_rows(
    conn: sqlite3.Connection,
    path: Path,
    request: Request,
    copied: Mapping[dt.date, dt.datetime],
    lo: int,
    hi: int,
    *,
    typed: bool = False,
) -> list[dict[str, Any]] | Columns:
    """Rows `lo` to `hi` of the answer: the one row of totals, or the groups from the kept pass of
    this period (or a new one), as Google's rows or (`typed`, with dimensions) as `Columns`. Raises
    ArchiveDamaged on a damaged file."""
    try:
        if not request.dimensions:
            return _total_rows(conn, request, lo, hi)
        if lo == 0 and hi < PAGED:  # a small ask: one statement that sorts only its rows, nothing kept
            found = grouped_pass(conn, request, hi)
        else:
            make = lambda: grouped_pass(conn, request, max(hi, PASS_ROWS))  # noqa: E731
            found = KEPT.page(_key(path, request, copied), make, lo, hi)
        with FETCHING:  # its words fetched and its columns made as rows are (`fetched`)
            columns = found.cut(conn, lo, hi)
        return columns if typed else columns.shaped()
    except sqlite3.DatabaseError as exc:
        if account_sqlite.damaged(exc):
            raise damage(path)() from exc
        raise


def _key(path: Path, request: Request, copied: Mapping[dt.date, dt.datetime]) -> Hashable:
    """Everything that decides a pass's rows (see the module's docstring)."""
    try:
        stat = os.stat(path)
        file = (str(path), stat.st_dev, stat.st_ino)
    except OSError:
        file = (str(path), 0, 0)
    return (
        file,
        request.part,
        request.start,
        request.end,
        tuple(request.dimensions),
        tuple((f["dimension"], f.get("operator", "equals"), f["expression"]) for f in request.filters),
        tuple(sorted((d.toordinal(), t.timestamp()) for d, t in copied.items())),
    )


def _total_rows(conn: sqlite3.Connection, request: Request, lo: int, hi: int) -> list[dict[str, Any]]:
    """The property's totals over the range as Google's one row (none when nothing was seen)."""
    where, params = request.where()
    found = conn.execute(f"SELECT {_SUMS} FROM rows r WHERE {where}", params).fetchall()  # noqa: S608
    for clicks, impressions, weighted, bare, nbare in found[lo:hi]:
        if not impressions and not clicks:
            return []
        position = weighted / impressions if impressions else (bare / nbare if nbare else 0.0)
        return [
            {
                "clicks": clicks,
                "impressions": impressions,
                "ctr": clicks / impressions if impressions else 0.0,
                "position": position,
            }
        ]
    return []
