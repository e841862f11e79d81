"""query_search_analytics: search performance as a table a person can read, with the totals of its rows.

Google's rows are checked into entries once, exactly as the reports check theirs (`rows.entries`:
an odd row is left out, and the result says so); the totals are the reports' arithmetic over those
same entries (`metrics`); and only the rows the result budget shows are turned into dictionaries
(`LazyRows`): a 25,000-row answer shows a few hundred. With all_rows the rows go to a CSV file
instead (`export`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...google import shapes as sh
from ...result import Output, ToolFailure
from ...runtime import Call, plural
from .._listing import listing
from .export import export_rows
from .lazy_rows import LazyRows
from .metrics import ctr, incomplete_from, position, summed, totals, totals_sentence
from .paging import ROW_CAP
from .query import build_query
from .rows import CommonAnswer, Entry, common_answer, common_entries, entries

_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}(?:T[0-9:.+\-Z]{2,30})?")


def _stamp(value: object) -> str | None:
    """Google's first incomplete date (or hour), only when it is one: it goes into our own sentence."""
    text = sh.text(value)
    return text if text is not None and _STAMP.fullmatch(text) else None


def _row(dims: Sequence[str]) -> Callable[[Entry], dict[str, Any]]:
    """How a kept entry becomes a result row, keyed by dimension name; CTR and position worked out
    as the totals (and the all_rows file) work them out."""

    def build(entry: Entry) -> dict[str, Any]:
        key, clicks, impressions, weighted, weight = entry
        row: dict[str, Any] = dict(zip(dims, (key,) if len(dims) == 1 else key, strict=True))
        row["clicks"], row["impressions"] = clicks, impressions
        rate, place = ctr(clicks, impressions), position(weighted, weight)
        if rate is not None:
            row["ctr"] = rate
        if place is not None:
            row["position"] = place
        return row

    return build


def _google_rows(raw: list[Any], dims: int, kept: int) -> int:
    """How many of Google's rows hold the first `kept` usable ones, odd rows between them included:
    start_row counts Google's rows, so paging on neither skips nor repeats one."""
    seen = 0
    for index, row in enumerate(raw):
        if seen == kept:
            return index
        if next(entries([row], dims), None) is not None:
            seen += 1
    return len(raw)


def _metrics(r: Mapping[str, Any]) -> list[str]:
    rate = r.get("ctr")
    pos = r.get("position")
    return [
        sh.cell(r.get("clicks")),
        sh.cell(r.get("impressions")),
        f"{rate * 100:.1f}%" if isinstance(rate, int | float) else "",
        f"{pos:.1f}" if isinstance(pos, int | float) else "",
    ]


async def query_search_analytics(call: Call) -> Output:
    if call.args.get("all_rows"):
        if "row_limit" in call.args or "start_row" in call.args:
            raise ToolFailure(
                f"all_rows reads every row from the first (up to {ROW_CAP:,}); leave out row_limit and start_row."
            )
        return await export_rows(call, build_query(call))
    q = build_query(call)
    from .query import search_analytics

    raw = await search_analytics(call, q.site, q.body, decode=common_answer(len(q.dimensions)))
    google_rows: list[Any] = []
    if isinstance(raw, CommonAnswer):  # the usual answer, read straight into typed rows: no row is odd
        common: tuple[Sequence[Entry], list[float]] | None = (raw.entries, raw.sums)
        metadata, count = raw.metadata, len(raw.entries)
    else:
        raw_rows = raw.get("rows") if isinstance(raw, dict) else None
        google_rows = raw_rows if isinstance(raw_rows, list) else []
        common = common_entries(google_rows, len(q.dimensions))  # no row is odd
        metadata, count = raw.get("metadata") if isinstance(raw, dict) else None, len(google_rows)
    kept: Sequence[Entry] = common[0] if common else list(entries(google_rows, len(q.dimensions)))
    rows = LazyRows(kept, _row(q.dimensions))
    odd = count - len(kept)

    def at_google(shown: int) -> int:
        """The start_row that follows the first `shown` rows of this answer."""
        return q.start_row + (shown if not odd else _google_rows(google_rows, len(q.dimensions), shown))

    meta = sh.record(metadata)
    incomplete = _stamp(meta.get("firstIncompleteDate")) or _stamp(meta.get("firstIncompleteHour"))
    total = totals(common[1] if common else summed(kept))
    more_at_google = count >= q.row_limit
    span = f"{q.start.isoformat()} to {q.end.isoformat()}"
    by = f" by {', '.join(q.dimensions)}" if q.dimensions else ""
    intro = f"Search performance for {q.site}, {span} (Pacific time){by}: {plural(len(rows), 'row')}"
    if q.start_row:
        intro += f" from row {q.start_row:,}"
    intro += "."
    notes = [
        totals_sentence(total),
        "Data lags about 2-3 days" + (f"; {incomplete_from(sh.cell(incomplete))}." if incomplete else "."),
    ]
    if odd:
        notes.append(
            f"{plural(odd, 'row')} from Google left out (keys missing, or a count that is not a plain number); "
            "the totals are of the rows kept."
        )
    if {"query", "page"} & set(q.dimensions):
        notes.append("Rows grouped by query or page do not add up to the property total (Google omits rare queries).")
    if more_at_google:
        notes.append(f"Google may have more rows: call again with start_row={q.start_row + count}.")
    out = listing(
        entries=rows,
        headers=[*q.dimensions, "Clicks", "Impressions", "CTR", "Position"],
        row=lambda r: [*(sh.cell(r.get(d, ""), 200) for d in q.dimensions), *_metrics(r)],
        intro=intro,
        key="rows",
        narrow=lambda shown: f"Narrow with filters or page on with start_row={at_google(shown)}.",
        noun="rows",
        extra={
            "site": q.site,
            "start_date": q.start.isoformat(),
            "end_date": q.end.isoformat(),
            "dimensions": q.dimensions,
            "totals": total,
            "first_incomplete": incomplete,
            "start_row": q.start_row,
        },
        footer="\n".join(notes),
    )
    shown = out.data.get("shown", len(rows))
    if shown < len(rows) or more_at_google:
        out.data["next_start_row"] = at_google(shown) if shown < len(rows) else q.start_row + count
    return out
