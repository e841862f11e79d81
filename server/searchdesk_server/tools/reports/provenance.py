"""The facts every report opens with: how fresh the data is, what was read, and what may be missing.

A report is only as good as the rows Google returned; saying how many were read, whether a cap
was hit, and what share of the property's own clicks they hold lets a person (and a model) judge
the numbers instead of trusting them blindly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...runtime import plural
from ..analytics.metrics import coverage
from ..analytics.paging import PAGE_ROWS, ROW_CAP, Pages, Reader
from . import render
from .periods import Timeline


@dataclass(frozen=True)
class Read:
    """One period's paged read, with what it covers of the property's own clicks."""

    key: str  # "period" or "previous" in the structured half
    words: str  # "this period" or "the earlier period" in the text
    pages: Pages
    rows_clicks: float
    property_clicks: float

    @property
    def coverage(self) -> float | None:
        return coverage(self.rows_clicks, self.property_clicks)


def _freshness(tl: Timeline) -> str:
    if tl.first_incomplete:
        return f"Google's first incomplete date is {tl.first_incomplete}; later days are still being counted."
    if tl.days:
        return "Google reported no incomplete days."
    return "Google has no web search data for this property in the last 16 months."


def _cap_line(reads: Sequence[Read]) -> str | None:
    """Whether SearchDesk's row cap cut the read short, or was met exactly."""
    if any(r.pages.more_at_google for r in reads):
        return (
            f"Stopped at the {ROW_CAP:,}-row cap with more rows at Google: the smallest keys are missing. "
            "Narrow the dates."
        )
    if any(r.pages.cap_reached for r in reads):
        return f"Exactly {ROW_CAP:,} rows: nothing lies beyond the cap."
    return None


def _coverage_line(by: str, reads: Sequence[Read], hidden: bool) -> str:
    """The share of the property's clicks the rows hold, and why some may be missing."""
    first, *rest = reads
    held = f"{render.share(first.coverage)} of the property's clicks for {first.words}" + "".join(
        f" and {render.share(r.coverage)} for {r.words}" for r in rest
    )
    if not hidden:
        return f"These rows hold {held}: no clicks are missing."
    why = "leaves out rare (anonymised) queries and " if by == "query" else ""
    return (
        f"These rows hold {held}: Google {why}returns only its top rows "
        f"(about 50,000 a day), so small {render.NOUNS.get(by, 'keys')} may be missing."
    )


def _data(reader: Reader, tl: Timeline, reads: Sequence[Read], more: bool, hidden: bool) -> dict[str, Any]:
    return {
        "search_type": "web",
        "data_state": "final",
        "first_incomplete_date": tl.first_incomplete,
        "last_final_date": tl.last_final.isoformat() if tl.last_final else None,
        "first_data_date": tl.first_day,
        "rows_read": {r.key: r.pages.rows for r in reads},
        "requests": reader.requests,
        "row_cap": ROW_CAP,
        "cap_reached": any(r.pages.cap_reached for r in reads),
        "more_rows_at_google": more,
        "clicks_coverage": {r.key: r.coverage for r in reads},
        "may_be_incomplete": hidden,
    }


def provenance(reader: Reader, tl: Timeline, by: str, reads: Sequence[Read]) -> tuple[list[str], dict[str, Any]]:
    """The lines every report opens with, and the same facts for the structured half: freshness,
    rows read, and whether Google's row limits (or SearchDesk's cap) may have hidden data."""
    read = " and ".join(f"{plural(r.pages.rows, 'row')} for {r.words}" for r in reads)
    lines = [
        "Web search, final data only (dataState final); dates are Google's days (Pacific time). " + _freshness(tl),
        f"Read {read} in {plural(reader.requests, 'request')} (pages of {PAGE_ROWS:,}, at most {ROW_CAP:,} rows "
        "a period).",
    ]
    cap = _cap_line(reads)
    if cap:
        lines.append(cap)
    more = any(r.pages.more_at_google for r in reads)
    hidden = more or any(r.rows_clicks < r.property_clicks for r in reads)
    lines.append(_coverage_line(by, reads, hidden))
    return lines, _data(reader, tl, reads, more, hidden)
