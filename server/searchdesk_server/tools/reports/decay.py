"""report_content_decay: pages whose clicks fell steadily over months, from their peak to now.

A page that slowly loses its clicks never shows in a week-on-week comparison; months side by side
do. The months are whole calendar months (a month still running would read as a fall), reaching
back as far as Google's 16 months and SearchDesk's copy together go (at most `MAX_MONTHS`), so a page
that peaked two years ago is still seen. The rule that lists a page is stated in every answer.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio

from ...archive.reader import google_first_day, kept_since
from ...deadlines import REPORT_READ_SECONDS
from ...google import shapes as sh
from ...result import Output
from ...runtime import Call, plural
from .._listing import listing
from ..analytics.concurrency import Job, together
from ..analytics.lazy_rows import LazyRows
from ..analytics.metrics import Sums, as_count, empty_sums, rounded, summed, tally
from ..analytics.paging import WINDOW, Pages, Reader
from ..analytics.rows import entries
from . import render
from .calendar import full_months
from .periods import Period, timeline
from .provenance import Read, provenance

MAX_MONTHS: Final = 36  # three years: the most months one answer reads (two requests a month)
MIN_MONTHS: Final = 4  # a peak and three months after it
MIN_PEAK_CLICKS: Final = 20  # a peak smaller than this is noise, not a page losing its readers
BELOW_PEAK: Final = 0.8  # every month after the peak had at most 80% of the peak's clicks…
MIN_MONTHS_BELOW: Final = 3  # …for at least three consecutive months up to the latest…
MIN_FALL: Final = 0.3  # …and the latest month is at least 30% below the peak
#: Seconds of reading before the answer is made from the months read in full: clients stop waiting at
#: about 50 s, and the answer must come before that with what was done.
TIME_BUDGET_S: Final = REPORT_READ_SECONDS

RULE: Final = (
    f"a page is listed when its best month had at least {MIN_PEAK_CLICKS} clicks, every month since "
    f"(at least {MIN_MONTHS_BELOW} in a row, up to the latest) had at most {BELOW_PEAK:.0%} of that peak's "
    f"clicks, and the latest month is at least {MIN_FALL:.0%} below the peak"
)


def decayed(clicks: Sequence[float]) -> tuple[int, int] | None:
    """(peak month's index, months below it) for a page whose monthly clicks (oldest first) meet the
    rule (`RULE`); None otherwise. The peak is the best month, the most recent of equal bests (so a
    page back at its best is not decaying)."""
    if len(clicks) < MIN_MONTHS:
        return None
    best = max(clicks)
    peak = max(i for i, c in enumerate(clicks) if c == best)
    after = clicks[peak + 1 :]
    if best < MIN_PEAK_CLICKS or len(after) < MIN_MONTHS_BELOW:
        return None
    if any(c > best * BELOW_PEAK for c in after) or clicks[-1] > best * (1 - MIN_FALL):
        return None
    return peak, len(after)


def _label(month: Period) -> str:
    return month.start.strftime("%Y-%m")


def _builder(months: list[Period], series: Mapping[Any, list[float]], found: Mapping[Any, tuple[int, int]]) -> Any:
    def build(page: Any) -> dict[str, Any]:
        clicks = series[page]
        peak, below = found[page]
        fall = clicks[peak] - clicks[-1]
        return {
            "page": page,
            "peak_month": _label(months[peak]),
            "peak_clicks": as_count(clicks[peak]),
            "latest_month": _label(months[-1]),
            "latest_clicks": as_count(clicks[-1]),
            "fall": as_count(fall),
            "fall_pct": rounded(-fall / clicks[peak] * 100, 1),
            "months_below_peak": below,
            "clicks_by_month": [as_count(c) for c in clicks],
        }

    return build


def _cells(r: Mapping[str, Any]) -> list[str]:
    return [
        sh.cell(r["page"]),
        f"{r['peak_month']}: {render.number(r['peak_clicks'], 'i')}",
        f"{r['latest_month']}: {render.number(r['latest_clicks'], 'i')}",
        f"{render.signed(-r['fall'], 'i')} ({render.percent(r['fall_pct'], r['latest_clicks'])})",
        str(r["months_below_peak"]),
    ]


@dataclass
class _Read:
    """The months read in full, newest last (`cut`: how many of the oldest asked for were not), each
    page's clicks per month (slot 4 × month of `sums`) and the property's own total per month."""

    months: list[Period]
    asked: int
    cut: int
    sums: dict[Any, Sums]
    totals: list[Sums]
    pages: list[Pages]


async def _read_months(reader: Reader, months: list[Period]) -> _Read:
    """Every month's pages and total, newest first, until done or `TIME_BUDGET_S` has passed."""
    sums: dict[Any, Sums] = {}
    totals: list[Sums] = [empty_sums(4) for _ in months]
    pages: list[Pages] = [Pages() for _ in months]

    done: set[tuple[str, int]] = set()

    def job(i: int, month: Period) -> Job:
        async def rows() -> None:
            pages[i] = await reader.pages(month.body(["page"]), tally(4 * len(months), 1, 4 * i, sums))
            done.add(("rows", i))

        return rows

    def total(i: int, month: Period) -> Job:
        async def run() -> None:
            raw = await reader.request({**month.body([]), "rowLimit": 1, "startRow": 0})
            totals[i] = summed(entries(raw.get("rows"), 0))
            done.add(("total", i))

        return run

    # Newest months first, a few at a time, so a read cut short by the time budget has the most recent
    # months whole (all at once, the oldest months' requests could hold every place in the window).
    newest_first = list(enumerate(months))[::-1]
    with anyio.move_on_after(TIME_BUDGET_S):
        for at in range(0, len(newest_first), WINDOW):
            await together(*(j for i, m in newest_first[at : at + WINDOW] for j in (job(i, m), total(i, m))))
    whole = 0  # how many of the most recent months were read in full
    while whole < len(months) and {("rows", len(months) - 1 - whole), ("total", len(months) - 1 - whole)} <= done:
        whole += 1
    cut = len(months) - whole
    return _Read(months[cut:], len(months), cut, sums, totals[cut:], pages[cut:])


async def report_content_decay(call: Call) -> Output:
    """The report_content_decay tool: decaying pages over whole months, the most clicks lost first."""
    site = call.site()
    reader = Reader(call, site)
    tl = await timeline(reader)
    last = tl.last_final or tl.today - dt.timedelta(days=3)
    google_first = google_first_day(tl.today)
    kept = await kept_since(call, site, tl.today)
    first = min(google_first, kept) if kept else google_first
    got = await _read_months(reader, full_months(first, last, int(call.args.get("months", MAX_MONTHS))))
    months, pages, totals, cut, asked = got.months, got.pages, got.totals, got.cut, got.asked
    series = {p: [s[4 * i] for i in range(cut, asked)] for p, s in got.sums.items()}
    found = {p: hit for p, clicks in series.items() if (hit := decayed(clicks))}
    keys = sorted(found, key=lambda p: (-(series[p][found[p][0]] - series[p][-1]), p))
    read = Pages(
        rows=sum(p.rows for p in pages),
        cap_reached=any(p.cap_reached for p in pages),
        more_at_google=any(p.more_at_google for p in pages),
    )
    by_month = [math.fsum(c[i] for c in series.values()) for i in range(len(months))]
    months_words = f"the {plural(len(months), 'month')}"
    lines, data = provenance(
        reader, tl, "page", (Read("months", months_words, read, math.fsum(by_month), sum(t[0] for t in totals)),)
    )
    build = _builder(months, series, found)
    peak_total = sum(series[p][found[p][0]] for p in keys)
    latest_total = sum(series[p][-1] for p in keys)
    span = f"{months[0].start.isoformat()} to {months[-1].end.isoformat()}" if months else "no whole month"
    head = [
        f"Content decay for {site}: clicks by page in whole calendar months, {span} "
        f"({plural(len(months), 'month')}; a month still running is left out).",
        *lines,
        f"Rule: {RULE}.",
        f"{plural(len(keys), 'page')} decaying: {as_count(peak_total):,} clicks at their peaks, "
        f"{as_count(latest_total):,} in the latest month, {as_count(peak_total - latest_total):,} fewer; "
        "the most clicks lost first.",
    ]
    if cut:
        head.append(
            f"Stopped reading after {TIME_BUDGET_S} seconds, so an answer comes before Claude stops waiting: "
            f"these are the {plural(len(months), 'most recent month')} of the {asked} asked for. Ask for fewer "
            "months (months) to see older ones."
        )
    if kept is None or kept >= google_first:
        head.append(f"SearchDesk's copy has nothing before {google_first.isoformat()}, so months start there.")
    return listing(
        entries=LazyRows(keys, build),
        headers=["page", "Peak month: clicks", "Latest month: clicks", "Fall", "Months below peak"],
        row=_cells,
        intro="\n".join(head),
        key="rows",
        narrow="Ask for fewer months (months) to see the rest.",
        noun="pages",
        extra={
            "site": site,
            "months": [_label(m) for m in months],
            "first_day": months[0].start.isoformat() if months else None,
            "last_day": months[-1].end.isoformat() if months else None,
            **data,
            "rule": {
                "min_peak_clicks": MIN_PEAK_CLICKS,
                "below_peak": BELOW_PEAK,
                "min_months_below": MIN_MONTHS_BELOW,
                "min_fall": MIN_FALL,
            },
            "clicks_by_month": [as_count(c) for c in by_month],
            "months_asked": asked,
            "property_clicks_by_month": [as_count(t[0]) for t in totals],
            "peak_clicks": as_count(peak_total),
            "latest_clicks": as_count(latest_total),
            "fall": as_count(peak_total - latest_total),
        },
        footer="Fall = the latest month's clicks − the peak month's (its % of the peak).",
    )
