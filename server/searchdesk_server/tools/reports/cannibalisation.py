"""report_cannibalisation: queries where two or more of the site's own pages split the impressions.

Pages competing for one query each rank worse than one page would; listing every page with a real
share (not every page Google ever showed once) points at the ones worth merging or differentiating.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ...google import shapes as sh
from ...result import Output
from ...runtime import Call, plural
from .._listing import listing
from ..analytics.lazy_rows import LazyRows
from ..analytics.metrics import Sums, as_count, position, rounded
from . import render
from .collect import single
from .provenance import provenance
from .yardstick import MIN_IMPRESSIONS

MIN_SHARE: Final = 0.10  # a page counts when it has ≥ 10% of a query's impressions

Pair = tuple[str, str, float]  # query, page, the query's impressions over all pages


def split_queries(sums: Mapping[Any, Sums]) -> list[tuple[float, str, list[str]]]:
    """(impressions over all pages, query, pages with ≥ MIN_SHARE of them, largest first) for each
    query with enough impressions that two or more pages split; the most impressions first."""
    pages: dict[str, list[str]] = {}
    for query, page in sums:
        pages.setdefault(query, []).append(page)
    out = []
    for query, urls in pages.items():
        total = sum(sums[(query, p)][1] for p in urls)
        if total < MIN_IMPRESSIONS:
            continue
        big = [p for p in urls if sums[(query, p)][1] / total >= MIN_SHARE]
        if len(big) >= 2:
            big.sort(key=lambda p: (-sums[(query, p)][1], p))
            out.append((total, query, big))
    out.sort(key=lambda t: (-t[0], t[1]))
    return out


def _builder(sums: Mapping[Any, Sums]) -> Callable[[Pair], dict[str, Any]]:
    """Builds one page's row for a split query, only when the result budget reaches it."""

    def build(item: Pair) -> dict[str, Any]:
        query, page, total = item
        s = sums[(query, page)]
        return {
            "query": query,
            "query_impressions": as_count(total),
            "page": page,
            "impressions": as_count(s[1]),
            "share": rounded(s[1] / total, 4),
            "clicks": as_count(s[0]),
            "position": rounded(position(s[2], s[3]), 2),
        }

    return build


def _cells(r: Mapping[str, Any]) -> list[str]:
    return [
        sh.cell(r["query"]),
        render.number(r["query_impressions"], "i"),
        sh.cell(r["page"]),
        render.number(r["impressions"], "i"),
        render.share(r["share"]),
        render.number(r["clicks"], "i"),
        render.number(r["position"], "position"),
    ]


async def report_cannibalisation(call: Call) -> Output:
    """The report_cannibalisation tool: split queries for one period, one row per competing page."""
    reader, tl, found, sums = await single(call, ["query", "page"])
    now = found.period
    split = split_queries(sums)
    pairs = [(query, page, total) for total, query, big in split for page in big]
    lines, data = provenance(reader, tl, "query", (found.read("period", "this period", sums, 0),))
    head = [
        f"Cannibalisation for {reader.site}: {now.words()}.",
        *lines,
        f"{plural(len(split), 'query', 'queries')} where two or more of the site's pages each hold at least "
        f"{MIN_SHARE:.0%} of the query's impressions (queries with at least {MIN_IMPRESSIONS} impressions); "
        "the most impressions first, one row per page.",
    ]
    return listing(
        entries=LazyRows(pairs, _builder(sums)),
        headers=["query", "Query impressions", "page", "Impressions", "Share", "Clicks", "Position"],
        row=_cells,
        intro="\n".join(head),
        key="rows",
        narrow=render.NARROW_DATES,
        noun="rows",
        extra={
            "site": reader.site,
            "period": now.data(),
            **data,
            "queries": len(split),
            "min_share": MIN_SHARE,
            "min_impressions": MIN_IMPRESSIONS,
        },
        footer=(
            "Share = the page's impressions / the impressions of all the site's pages for that query (pages "
            "under the threshold are not listed, so shares may add up to less than 100%)."
        ),
    )
