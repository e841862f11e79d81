"""report_new_queries: what people started searching for, and the searches rising fastest, each with its page.

New demand shows first as impressions: a query the site was never shown for, or one that doubled,
is a page to strengthen (or to write) before the clicks come. The period is compared with the one
just before it, of the same length; the thresholds that make a query "new" or "rising" are stated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from ...google import shapes as sh
from ...result import Output
from ...runtime import Call, plural
from .._listing import listing
from ..analytics.concurrency import Job, together
from ..analytics.lazy_rows import LazyRows
from ..analytics.metrics import Sums, add_rows, as_count, change_pct, column, position, rounded, tally
from ..analytics.paging import Pages, Reader
from ..analytics.rows import CommonEntries, Entry, checked
from . import render
from .collect import PeriodRead, read_period
from .periods import current_period, timeline
from .provenance import provenance

ALMOST_NONE: Final = 2  # "new": at most this many impressions in the period before
MIN_NEW: Final = 10  # …and at least this many now (fewer is noise)
RISE: Final = 2.0  # "rising": at least twice the impressions of the period before…
MIN_RISING: Final = 50  # …and at least this many now


def classify(s: Sums) -> str | None:
    """ "new", "rising" or None for a query's sums (slots 0-3 this period, 4-7 the one before)."""
    now, before = s[1], s[5]
    if before <= ALMOST_NONE:
        return "new" if now >= MIN_NEW else None
    return "rising" if now >= MIN_RISING and now >= before * RISE else None


def order(sums: Mapping[Any, Sums]) -> list[tuple[str, Any]]:
    """(kind, query) for every listed query: new ones by impressions, then rising ones by growth
    (fastest first, then the most impressions gained); ties by the query."""
    kinds = {q: k for q, s in sums.items() if (k := classify(s))}
    new = sorted((q for q, k in kinds.items() if k == "new"), key=lambda q: (-sums[q][1], -sums[q][0], q))
    rising = sorted(
        (q for q, k in kinds.items() if k == "rising"),
        key=lambda q: (-sums[q][1] / sums[q][5], -(sums[q][1] - sums[q][5]), q),
    )
    return [("new", q) for q in new] + [("rising", q) for q in rising]


def top_pages(pairs: Mapping[Any, Sums]) -> dict[Any, tuple[Any, float]]:
    """Each query's page with the most impressions this period (ties: more clicks, then the URL), and
    that page's share of the query's impressions over its pages."""
    best: dict[Any, tuple[Any, Sums]] = {}
    over: dict[Any, float] = {}
    for (query, page), s in pairs.items():
        over[query] = over.get(query, 0.0) + s[1]
        held = best.get(query)
        if held is None or (-s[1], -s[0], page) < (-held[1][1], -held[1][0], held[0]):
            best[query] = (page, s)
    return {q: (p, s[1] / over[q] if over[q] else 0.0) for q, (p, s) in best.items()}


class ListedPages:
    """The (query, page) rows summed for the listed queries only: a sink for the read by page.

    Why: a page is shown only beside a listed query, and the read by page is up to 200,000 rows, one
    per pair. Summing every pair and then picking each query's page was 0.29 s of the report's 1.37 s
    over SearchDesk's copy (`make bench`); the pairs of queries never listed were summed for nothing.
    Which queries are listed is known once both reads by query have ended (`want`). Pages that come
    before are held, checked, as they came, so the read by page never waits for the reads by query.
    Each listed query keeps every one of its pairs, so `top_pages` gives exactly what it gives over
    all of them."""

    def __init__(self) -> None:
        self.pairs: dict[Any, Sums] = {}
        self._wanted: set[Any] | None = None
        self._held: list[CommonEntries | list[Entry]] = []

    def add(self, rows: Sequence[Any]) -> None:
        """A page of the read by page: its listed queries' pairs summed, or the page held until
        `want` says which are listed."""
        found = rows if isinstance(rows, CommonEntries) else checked(rows, 2)
        if self._wanted is None:
            self._held.append(found)
        else:
            self._sum(found)

    async def sink(self, rows: Sequence[Any]) -> None:
        """`add`, as the reader calls a sink."""
        self.add(rows)

    def want(self, queries: Iterable[Any]) -> None:
        """The listed queries: the pages held so far are summed for them, and every page after."""
        self._wanted = set(queries)
        for found in self._held:
            self._sum(found)
        self._held.clear()

    def _sum(self, found: CommonEntries | list[Entry]) -> None:
        wanted = self._wanted or set()
        # A typed page makes only the listed queries' entries.
        kept = found.every(wanted) if isinstance(found, CommonEntries) else [e for e in found if e[0][0] in wanted]
        add_rows(self.pairs, kept, 4, 0)


def _builder(sums: Mapping[Any, Sums], pages: Mapping[Any, tuple[Any, float]]) -> Any:
    def build(item: tuple[str, Any]) -> dict[str, Any]:
        kind, query = item
        s = sums[query]
        page, share = pages.get(query, (None, None))
        return {
            "kind": kind,
            "query": query,
            "impressions": as_count(s[1]),
            "impressions_prev": as_count(s[5]),
            "impressions_change_pct": rounded(change_pct(s[1], s[5]), 1),
            "clicks": as_count(s[0]),
            "clicks_prev": as_count(s[4]),
            "position": rounded(position(s[2], s[3]), 2),
            "page": page,
            "page_share": rounded(share, 4),
        }

    return build


def _cells(r: Mapping[str, Any]) -> list[str]:
    num = render.number
    return [
        r["kind"],
        sh.cell(r["query"]),
        f"{num(r['impressions_prev'], 'i')} → {num(r['impressions'], 'i')} "
        f"({render.percent(r['impressions_change_pct'], r['impressions'])})",
        f"{num(r['clicks_prev'], 'i')} → {num(r['clicks'], 'i')}",
        num(r["position"], "position"),
        "–" if r["page"] is None else f"{sh.cell(r['page'])} ({render.share(r['page_share'])})",
    ]


async def report_new_queries(call: Call) -> Output:
    """The report_new_queries tool: new queries, then rising ones, each with the page Google showed most."""
    site = call.site()
    reader = Reader(call, site)
    tl = await timeline(reader)
    now = current_period(call.args, tl)
    before = now.shifted(now.days)
    sums: dict[Any, Sums] = {}
    found: dict[int, PeriodRead] = {}
    paged: list[Pages] = []
    listed: list[tuple[str, Any]] = []
    by_pair = ListedPages()

    def job(at: int, period: Any) -> Job:
        async def run() -> None:
            found[at] = await read_period(reader, period, ["query"], tally(8, 1, at, sums))

        return run

    async def by_query() -> None:
        await together(job(0, now), job(4, before))
        listed.extend(order(sums))
        by_pair.want(q for _, q in listed)

    async def by_page() -> None:
        paged.append(await reader.pages(now.body(["query", "page"]), by_pair.sink))

    await together(by_query, by_page)
    pages = top_pages(by_pair.pairs)
    reads = (found[0].read("period", "this period", sums, 0), found[4].read("previous", "the period before", sums, 4))
    lines, data = provenance(reader, tl, "query", reads)
    data["rows_read"]["period_by_page"] = paged[0].rows
    new = [q for k, q in listed if k == "new"]
    rising = [q for k, q in listed if k == "rising"]
    new_i, new_c = sum(sums[q][1] for q in new), sum(sums[q][0] for q in new)
    gained = sum(sums[q][1] - sums[q][5] for q in rising)
    head = [
        f"New and rising queries for {site}: {now.words()}, against the period before ({before.words()}).",
        *lines,
        f"New: at least {MIN_NEW} impressions now and at most {ALMOST_NONE} before. Rising: at least "
        f"{MIN_RISING} impressions now and at least {RISE:g} times as many as before. Each with the page Google "
        "showed most for it this period (its share of the query's impressions over the site's pages).",
        f"{plural(len(new), 'new query', 'new queries')} ({as_count(new_i):,} impressions, {as_count(new_c):,} "
        f"clicks in all), by impressions; then {plural(len(rising), 'rising query', 'rising queries')} "
        f"(+{as_count(gained):,} impressions in all), fastest growth first.",
    ]
    return listing(
        entries=LazyRows(listed, _builder(sums, pages)),
        headers=["Kind", "query", "Impressions", "Clicks", "Position", "Page (share)"],
        row=_cells,
        intro="\n".join(head),
        key="rows",
        narrow=render.NARROW_DATES,
        noun="queries",
        extra={
            "site": site,
            "period": now.data(),
            "previous": before.data(),
            **data,
            "thresholds": {"almost_none": ALMOST_NONE, "min_new": MIN_NEW, "rise": RISE, "min_rising": MIN_RISING},
            "new": {"count": len(new), "impressions": as_count(new_i), "clicks": as_count(new_c)},
            "rising": {"count": len(rising), "impressions_gained": as_count(gained)},
            "property_impressions": {"period": as_count(found[0].total[1]), "previous": as_count(found[4].total[1])},
            "rows_impressions": {"period": as_count(column(sums, 1)), "previous": as_count(column(sums, 5))},
        },
        footer="Cells: the period before → this period. A lower position is better.",
    )
