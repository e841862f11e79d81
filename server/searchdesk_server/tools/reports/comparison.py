"""Two periods side by side, per key: what compare_periods and report_traffic_drops both stand on.

Both periods are summed into one list per key (slots 0-3 this period, 4-7 the earlier one), so a
key present in only one of them still has a row, and its change is computed the one fixed way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ...runtime import Call
from ..analytics.concurrency import Job, together
from ..analytics.metrics import Sums, as_count, change, change_pct, columns, ctr, position, rounded, tally
from ..analytics.paging import Reader
from . import render
from .collect import PeriodRead, read_period
from .periods import Period, Timeline, current_period, earlier_period, timeline
from .provenance import Read, provenance

METRICS: Final = ("clicks", "impressions", "ctr", "position")


@dataclass
class Comparison:
    """Both periods read and summed per key: slots 0-3 this period, 4-7 the earlier one."""

    site: str
    by: str
    reader: Reader
    tl: Timeline
    sums: dict[Any, Sums]
    now: PeriodRead
    before: PeriodRead

    def reads(self) -> tuple[Read, Read]:
        return (
            self.now.read("period", "this period", self.sums, 0),
            self.before.read("previous", "the earlier period", self.sums, 4),
        )


async def compare(call: Call, by: str) -> Comparison:
    """Both periods read at once into shared per-key sums."""
    site = call.site()
    reader = Reader(call, site)
    tl = await timeline(reader)
    now = current_period(call.args, tl)
    before = earlier_period(call.args, now)
    sums: dict[Any, Sums] = {}
    found: dict[int, PeriodRead] = {}

    def job(at: int, period: Period) -> Job:
        async def run() -> None:
            found[at] = await read_period(reader, period, [by], tally(8, 1, at, sums))

        return run

    await together(job(0, now), job(4, before))
    return Comparison(site, by, reader, tl, sums, found[0], found[4])


def pair(s: Sums, metric: str) -> tuple[float | None, float | None]:
    """(this period, earlier) for one metric: counts exact, CTR and position rounded as shown, so a
    change always agrees with the two numbers beside it."""
    if metric == "clicks":
        return s[0], s[4]
    if metric == "impressions":
        return s[1], s[5]
    if metric == "ctr":
        return rounded(ctr(s[0], s[1]), 4), rounded(ctr(s[4], s[5]), 4)
    return rounded(position(s[2], s[3]), 2), rounded(position(s[6], s[7]), 2)


def status(s: Sums) -> str:
    """Whether a key had data in both periods, only this one ("new") or only the earlier ("gone")."""
    if not s[4] and not s[5]:
        return "new"
    if not s[0] and not s[1]:
        return "gone"
    return "both"


def compared_row(by: str, key: Any, s: Sums) -> dict[str, Any]:
    """One key's metrics in both periods with their changes, absolute and in % of the earlier value."""
    row: dict[str, Any] = {by: key, "status": status(s)}
    for m in METRICS:
        now, before = pair(s, m)
        delta = change(now, before)
        if m in ("clicks", "impressions"):
            row[m], row[f"{m}_prev"] = as_count(now or 0), as_count(before or 0)
            row[f"{m}_change"] = None if delta is None else as_count(delta)
        else:
            row[m], row[f"{m}_prev"] = now, before
            row[f"{m}_change"] = rounded(delta, 4 if m == "ctr" else 2)
        row[f"{m}_change_pct"] = rounded(change_pct(now, before), 1)
    return row


def move(row: Mapping[str, Any], m: str) -> str:
    """One metric's cell: earlier → this period (change, change in %)."""
    return (
        f"{render.number(row[f'{m}_prev'], m)} → {render.number(row[m], m)} "
        f"({render.signed(row[f'{m}_change'], m)}, {render.percent(row[f'{m}_change_pct'], row[m])})"
    )


def _totals(s: Sums) -> dict[str, Any]:
    row = compared_row("key", "", s)
    del row["key"], row["status"]
    return row


def _totals_words(t: Mapping[str, Any]) -> str:
    return "; ".join(f"{m} {move(t, m)}" for m in METRICS)


def _notes(c: Comparison) -> list[str]:
    """Caveats a reader of the totals needs: by-page double counting, an earlier period before the data."""
    notes = []
    if c.by == "page":
        notes.append("By-page counts give each page its own impressions, so pages may add up to more impressions.")
    first = c.tl.first_day
    if first and c.before.period.start.isoformat() < first:
        notes.append(f"Search Console has web data from {first} only; the earlier period starts before it.")
    return notes


def comparison_head(title: str, c: Comparison) -> tuple[list[str], dict[str, Any]]:
    """Dates, provenance, and the totals of the rows for both periods beside the property's own."""
    lines, data = provenance(c.reader, c.tl, c.by, c.reads())
    rows_t, prop_t = _totals(columns(c.sums, 8)), _totals(c.now.total + c.before.total)
    head = [
        f"{title} for {c.site}, by {c.by}.",
        f"This period: {c.now.period.words()}; earlier period: {c.before.period.words()}.",
        *lines,
        f"Totals of these rows (earlier → this period): {_totals_words(rows_t)}.",
        f"The property's own totals: {_totals_words(prop_t)}.",
        *_notes(c),
    ]
    return head, {
        "site": c.site,
        "by": c.by,
        "period": c.now.period.data(),
        "previous": c.before.period.data(),
        **data,
        "totals": rows_t,
        "property_totals": prop_t,
    }
