"""Issue 38's five reports over the 20-million-row archive, for `make bench` (`archive.measure` runs it).

Each scenario makes the reads its report makes, on the store as the server's reader calls it (pages of
25,000 rows up to the reader's cap of 200,000 and a one-row look past it, as `Reader.pages` reads them;
each period in a worker thread with its own read-only connection, as `read_period` does),
and then the report's own computation over the sums (`weekly.sections`, `decay.decayed`,
`ctr_gaps.curve`/`gap`, `new_queries.order`/`top_pages`, `brand_split.split_rows`). The target is
≤ 1 s each. Not run by the test suite: the fixture takes minutes to build (`make bench` builds it once).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from searchdesk_server.archive.grouped import KEPT
from searchdesk_server.archive.store import Archive
from searchdesk_server.brand import brand_pattern
from searchdesk_server.tools.analytics.paging import ROW_CAP
from searchdesk_server.tools.analytics.rows import entries
from searchdesk_server.tools.reports import ctr_gaps, decay, new_queries, weekly
from searchdesk_server.tools.reports.brand_split import split_rows
from searchdesk_server.tools.reports.calendar import buckets, full_months, last_full_week
from searchdesk_server.tools.reports.periods import YEAR_DAYS, Period

PAGE = 25_000
Sums = list[float]


def read(
    path: Path,
    site: str,
    period: Period,
    dims: Sequence[str],
    into: dict[Any, Sums],
    at: int,
    width: int,
    filters: Sequence[Mapping[str, str]] = (),
) -> int:
    """Every row of one period, up to the reader's cap, into per-key sums at slot `at` (a period's reader,
    in its own connection)."""
    archive = Archive.open_readonly(path)
    assert archive is not None
    try:
        rows = start = 0
        while True:
            got = archive.query(site, period.start, period.end, dims, "web", filters, PAGE, start).rows
            for key, c, i, w, p in entries(got, len(dims)):
                cell = into.get(key)
                if cell is None:
                    cell = into[key] = [0.0] * width
                cell[at] += c
                cell[at + 1] += i
                cell[at + 2] += w
                cell[at + 3] += p
            rows += len(got)
            if len(got) < PAGE:
                return rows
            start += PAGE
            if start >= ROW_CAP:  # `Reader.pages`: the cap reached, one row past it says whether more lie beyond
                archive.query(site, period.start, period.end, dims, "web", filters, 1, start)
                return rows
    finally:
        archive.close()


def together(*jobs: Callable[[], int]) -> int:
    with ThreadPoolExecutor(3) as pool:  # the reader's window: three requests in flight
        return sum(pool.map(lambda job: job(), jobs))


def weekly_summary(path: Path, site: str, last: dt.date) -> int:
    week = last_full_week(last)
    prev = week.shifted(7)
    pages: dict[Any, Sums] = {}
    queries: dict[Any, Sums] = {}
    totals: dict[Any, Sums] = {}
    rows = together(
        lambda: read(path, site, week, ["query"], queries, 0, 8),
        lambda: read(path, site, prev, ["query"], queries, 4, 8),
        lambda: read(path, site, week, ["page"], pages, 0, 8),
        lambda: read(path, site, prev, ["page"], pages, 4, 8),
        lambda: read(path, site, week.shifted(YEAR_DAYS), [], totals, 0, 4),
    )
    weekly.sections(pages, queries)
    return rows


def content_decay(path: Path, site: str, first: dt.date, last: dt.date) -> int:
    months = full_months(first, last, decay.MAX_MONTHS)
    sums: dict[Any, Sums] = {}
    width = 4 * len(months)
    rows = together(*(lambda i=i, m=m: read(path, site, m, ["page"], sums, 4 * i, width) for i, m in enumerate(months)))
    for s in sums.values():
        decay.decayed([s[4 * i] for i in range(len(months))])
    return rows


def ctr_gap(path: Path, site: str, last: dt.date) -> int:
    sums: dict[Any, Sums] = {}
    rows = read(path, site, Period(last - dt.timedelta(days=27), last), ["page"], sums, 0, 4)
    curve = ctr_gaps.curve(sums)
    for s in sums.values():
        ctr_gaps.gap(s, curve)
    return rows


def new_query(path: Path, site: str, last: dt.date) -> int:
    now = Period(last - dt.timedelta(days=27), last)
    sums: dict[Any, Sums] = {}
    pairs: dict[Any, Sums] = {}
    rows = together(
        lambda: read(path, site, now, ["query"], sums, 0, 8),
        lambda: read(path, site, now.shifted(28), ["query"], sums, 4, 8),
        lambda: read(path, site, now, ["query", "page"], pairs, 0, 4),
    )
    new_queries.order(sums)
    new_queries.top_pages(pairs)
    return rows


def brand_split(path: Path, site: str, last: dt.date) -> int:
    week = last_full_week(last)
    period = Period(week.start - dt.timedelta(weeks=12), week.end)
    pattern = brand_pattern(["bench query 1", "c++ (bench)"])
    by_day: dict[Any, Sums] = {}

    def part(at: int, operator: str | None) -> Callable[[], int]:
        filters = [{"dimension": "query", "operator": operator, "expression": pattern}] if operator else []
        return lambda: read(path, site, period, ["date"], by_day, at, 12, filters)

    rows = together(part(0, "includingRegex"), part(4, "excludingRegex"), part(8, None))
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
