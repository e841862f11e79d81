"""Whole calendar months of the page table summed once, for the months Google no longer has (issue 38).

Why: content decay reads a property's pages month by month, as far back as SearchDesk's copy goes, and
each month summed from its days was a grouped pass over a month of rows (some 240,000 of the 20 million
in `make bench`'s archive): fifteen of them were two thirds of that report's time. A month before
Google's 16 months never changes again, because the copier copies only days Google still has. So once a
month has left Google's window the app sums it, once (`roll_up`), with the very statement a read of
that month runs (`grouped.statement`), in that statement's order, and a read of exactly that month
takes a range of them instead (`page`, its words joined in the same statement): the same keys and the
same numbers to the bit, in the same order (tests/server/archive/test_months.py).
Writing any day of a month drops that month's sums first (`drop`, in the write's transaction), so they
never outlive their days; a recovered file starts without them and the app sums its months again.

Only the page table is summed: the one report that reads whole months reads them by page. The rest
would add a file's worth of rows (a month's pairs of query and page barely repeat) for no reader.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Final

from .answers import Columns
from .grouped import FETCHING, Request, statement
from .schema import TABLES

#: The tables whose months are summed (see the module's docstring).
MONTHLY: Final = ("page",)


def month_span(day: dt.date) -> tuple[dt.date, dt.date]:
    """The first and last day of `day`'s calendar month."""
    first = day.replace(day=1)
    after = (first + dt.timedelta(days=32)).replace(day=1)
    return first, after - dt.timedelta(days=1)


def whole_month(start: dt.date, end: dt.date) -> bool:
    """Whether [start, end] is exactly one calendar month."""
    return (start, end) == month_span(start)


def usable(conn: sqlite3.Connection, request: Request, table: str) -> bool:
    """Whether a read can take a month's sums: exactly one summed calendar month of a summed table,
    grouped by its own key only (no day), without filters. A file written before the sums existed has
    none: False."""
    dimensions, start = request.dimensions, request.start
    if table not in MONTHLY or request.filters or list(dimensions) != list(TABLES[table]):
        return False
    if not whole_month(start, request.end):
        return False
    try:
        found = conn.execute(
            "SELECT 1 FROM rolled WHERE part=? AND month=?", (request.part, start.toordinal())
        ).fetchone()
    except sqlite3.OperationalError:  # no such table: a file from before the sums
        return False
    return found is not None


def page(conn: sqlite3.Connection, request: Request, lo: int, hi: int) -> Columns:
    """Rows `lo` to `hi` of a summed month (`usable`), in the order its read gives them, with their words:
    one range of the table, no sort, no second look-up. A word the file no longer has is None."""
    cursor = conn.execute(
        "SELECT s.value, m.clicks, m.impressions, m.position FROM months m LEFT JOIN strings s ON s.id = m.k1 "
        "WHERE m.part = ? AND m.month = ? AND m.rank >= ? AND m.rank < ? ORDER BY m.rank",
        (request.part, request.start.toordinal(), lo, hi),
    )
    with FETCHING:  # one thread at a time (`grouped.fetched`), the columns made as the rows come
        found = cursor.fetchall()
        words, clicks, impressions, positions = zip(*found, strict=True) if found else ((), (), (), ())
    return Columns(1, words, clicks, impressions, positions)


def drop(conn: sqlite3.Connection, part: int, day: dt.date) -> None:
    """Forget the sums of `day`'s month (a day of it is being written), inside the caller's transaction."""
    month = month_span(day)[0].toordinal()
    conn.execute("DELETE FROM rolled WHERE part=? AND month=?", (part, month))
    conn.execute("DELETE FROM months WHERE part=? AND month=?", (part, month))


def roll_up(conn: sqlite3.Connection, parts: Mapping[int, Sequence[str]], before: dt.date) -> int:
    """Sum every month that ends before `before` (Google's first day: the copier never writes it again)
    and has kept days, for each of `parts` (part id → its table's dimensions), unless summed already.
    One transaction a month, so a month is summed whole or not at all. The number of months summed."""
    done = 0
    for part, dims in parts.items():
        days = conn.execute(
            "SELECT min(day), max(day) FROM days WHERE part=? AND day < ?", (part, before.toordinal())
        ).fetchone()
        if days[0] is None:
            continue
        rolled = {m for (m,) in conn.execute("SELECT month FROM rolled WHERE part=?", (part,))}
        month = month_span(dt.date.fromordinal(days[0]))[0]
        while month_span(month)[1] < before and month.toordinal() <= days[1]:
            first, last = month_span(month)
            if first.toordinal() not in rolled:
                _sum_month(conn, Request(part, first, last, dims, dims, ()))
                done += 1
            month = last + dt.timedelta(days=1)
    return done


def _sum_month(conn: sqlite3.Connection, request: Request) -> None:
    """One month's groups as the read of it orders them, each with its place (`rank`): reading a page of
    them is then a range of the table's own order, with nothing to sort."""
    sql, params = statement(request)
    month = request.start.toordinal()
    conn.execute("BEGIN IMMEDIATE")
    try:
        groups = conn.execute(sql, [*params, -1]).fetchall()
        conn.executemany(
            "INSERT INTO months(part, month, rank, k1, clicks, impressions, position) VALUES(?, ?, ?, ?, ?, ?, ?)",
            ((request.part, month, rank, *group) for rank, group in enumerate(groups)),
        )
        conn.execute("INSERT INTO rolled(part, month) VALUES(?, ?)", (request.part, month))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
