"""Issue 38's five reports over the 20-million-row archive, for `make bench` (`archive.measure` runs it).

Each scenario makes the reads its report makes, on the store as the server's reader calls it: pages of
25,000 rows up to the reader's cap of 200,000 and a one-row look past it, as `Reader.pages` reads them;
each page asked in a worker thread (three at once) on a read-only connection of its own, typed, as
`archive.reader.fetch` asks a range wholly in SearchDesk's copy; each page read as typed rows and added
up on the calling thread, as the event loop does (`search_analytics`, `metrics.tally`). Then the
report's own computation over the sums (`weekly.sections`, `decay.decayed`,
`ctr_gaps.curve`/`gap`, `new_queries.order`/`top_pages`, `brand_split.split_rows`). The target is
≤ 1 s each. Not run by the test suite: the fixture takes minutes to build (`make bench` builds it once).
"""

from __future__ import annotations

import datetime as dt
import queue
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchdesk_server.archive.answers import Columns
from searchdesk_server.archive.grouped import KEPT
from searchdesk_server.archive.store import Archive
from searchdesk_server.brand import brand_pattern
from searchdesk_server.tools.analytics.metrics import add_rows
from searchdesk_server.tools.analytics.paging import ROW_CAP
from searchdesk_server.tools.analytics.rows import common_columns, entries
from searchdesk_server.tools.reports import ctr_gaps, decay, new_queries, weekly
from searchdesk_server.tools.reports.brand_split import split_rows
from searchdesk_server.tools.reports.calendar import buckets, full_months, last_full_week
from searchdesk_server.tools.reports.periods import YEAR_DAYS, Period

PAGE = 25_000
Sums = list[float]


@dataclass(frozen=True)
class Read:
    """One paged read of a report: a period's rows by `dims` into `into`, at slot `at` of `width`."""

    period: Period
    dims: Sequence[str]
    into: dict[Any, Sums]
    at: int
    width: int
    filters: Sequence[Mapping[str, str]] = ()
    #: Each page's rows, when the report's sink is its own rather than per-key sums into `into`.
    keep: Callable[[Sequence[Any]], None] | None = None
    #: Called once the read has ended.
    done: Callable[[], None] | None = None


def _asked(path: Path, site: str, read: Read, start: int, limit: int) -> Columns | list[dict[str, Any]]:
    """One page as `archive.reader.fetch` asks it: a read-only connection of its own, typed for a range
    wholly in the copy."""
    archive = Archive.open_readonly(path)
    assert archive is not None
    try:
        p = read.period
        return archive.query(site, p.start, p.end, read.dims, "web", read.filters, limit, start, typed=True).rows
    finally:
        archive.close()


def _pages(path: Path, site: str, read: Read, out: queue.Queue[tuple[Read, Any]]) -> None:
    """Every page of one read, up to the reader's cap (and its one-row look past it), onto `out`."""
    try:
        start = 0
        while start < ROW_CAP:
            got = _asked(path, site, read, start, PAGE)
            out.put((read, got))
            if len(got) < PAGE:
                return
            start += PAGE
        _asked(path, site, read, start, 1)  # `Reader.pages`: one row past the cap says whether more lie beyond
    finally:
        out.put((read, None))


def _page(got: Columns | list[dict[str, Any]], dims: int) -> Sequence[Any]:
    """A page as the server's reader hands it on: the copy's columns read as typed rows
    (`search_analytics`, `Reader._drain`), else Google's objects."""
    if isinstance(got, Columns):
        typed = common_columns(got, dims)
        return typed.entries if typed else got.shaped()
    return got


def together(path: Path, site: str, *reads: Read) -> int:
    """The reads as the server makes them: pages asked in worker threads, three at once (the reader's
    window; `fetch` runs the copy's read in a worker thread), and each page, as it comes, read as typed
    rows and added up on this thread, as the event loop does (`search_analytics`, `metrics.tally`).
    The rows read."""
    arrived: queue.Queue[tuple[Read, Any]] = queue.Queue()
    rows = 0
    with ThreadPoolExecutor(3) as pool:
        asked = [pool.submit(_pages, path, site, read, arrived) for read in reads]
        left = len(reads)
        while left:
            read, got = arrived.get()
            if got is None:
                left -= 1
                if read.done:
                    read.done()
                continue
            rows += len(got)
            page = _page(got, len(read.dims))
            if read.keep:
                read.keep(page)
            else:
                add_rows(read.into, entries(page, len(read.dims)), read.width, read.at)
        for job in asked:
            job.result()
    return rows


def weekly_summary(path: Path, site: str, last: dt.date) -> int:
    week = last_full_week(last)
    prev = week.shifted(7)
    pages: dict[Any, Sums] = {}
    queries: dict[Any, Sums] = {}
    totals: dict[Any, Sums] = {}
    rows = together(
        path,
        site,
        Read(week, ["query"], queries, 0, 8),
        Read(prev, ["query"], queries, 4, 8),
        Read(week, ["page"], pages, 0, 8),
        Read(prev, ["page"], pages, 4, 8),
        Read(week.shifted(YEAR_DAYS), [], totals, 0, 4),
    )
    weekly.sections(pages, queries)
    return rows


def content_decay(path: Path, site: str, first: dt.date, last: dt.date) -> int:
    months = full_months(first, last, decay.MAX_MONTHS)
    sums: dict[Any, Sums] = {}
    width = 4 * len(months)
    rows = together(path, site, *(Read(m, ["page"], sums, 4 * i, width) for i, m in enumerate(months)))
    for s in sums.values():
        decay.decayed([s[4 * i] for i in range(len(months))])
    return rows


def ctr_gap(path: Path, site: str, last: dt.date) -> int:
    sums: dict[Any, Sums] = {}
    rows = together(path, site, Read(Period(last - dt.timedelta(days=27), last), ["page"], sums, 0, 4))
    curve = ctr_gaps.curve(sums)
    for s in sums.values():
        ctr_gaps.gap(s, curve)
    return rows


def new_query(path: Path, site: str, last: dt.date) -> int:
    now = Period(last - dt.timedelta(days=27), last)
    sums: dict[Any, Sums] = {}
    by_pair = new_queries.ListedPages()
    running = [2]

    def by_query_ended() -> None:  # `report_new_queries`' by_query: both reads by query, then `want`
        running[0] -= 1
        if not running[0]:
            by_pair.want(q for _, q in new_queries.order(sums))

    rows = together(
        path,
        site,
        Read(now, ["query"], sums, 0, 8, done=by_query_ended),
        Read(now.shifted(28), ["query"], sums, 4, 8, done=by_query_ended),
        Read(now, ["query", "page"], by_pair.pairs, 0, 4, keep=by_pair.add),
    )
    new_queries.top_pages(by_pair.pairs)
    return rows


def brand_split(path: Path, site: str, last: dt.date) -> int:
    week = last_full_week(last)
    period = Period(week.start - dt.timedelta(weeks=12), week.end)
    pattern = brand_pattern(["bench query 1", "c++ (bench)"])
    by_day: dict[Any, Sums] = {}

    def part(at: int, operator: str | None) -> Read:
        filters = [{"dimension": "query", "operator": operator, "expression": pattern}] if operator else []
        return Read(period, ["date"], by_day, at, 12, filters)

    rows = together(path, site, part(0, "includingRegex"), part(4, "excludingRegex"), part(8, None))
    split_rows(buckets(period, True), by_day)
    return rows


def scenarios(path: Path, site: str, first: dt.date, last: dt.date) -> dict[str, Callable[[], int]]:
    """Each report's reads and computation, by tool name. Each run starts cold: the passes the store
    keeps for a period's next pages (`archive.grouped.KEPT`) are dropped first, so no round is served
    from the one before."""
    runs: dict[str, Callable[[], int]] = {
        "report_weekly_summary": lambda: weekly_summary(path, site, last),
        "report_content_decay": lambda: content_decay(path, site, first, last),
        "report_ctr_gaps": lambda: ctr_gap(path, site, last),
        "report_new_queries": lambda: new_query(path, site, last),
        "report_brand_split": lambda: brand_split(path, site, last),
    }
    return {name: _cold(run) for name, run in runs.items()}


def _cold(run: Callable[[], int]) -> Callable[[], int]:
    def cold() -> int:
        KEPT.forget()
        return run()

    return cold
