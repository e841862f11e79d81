"""report_quick_wins: keys ranking 4-20 whose CTR is below the curve for their position.

These are the cheapest gains a site has: the page already ranks, so a better title and snippet
can earn more clicks without moving a place. The curve is a published yardstick, named in the result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from ...google import shapes as sh
from ...result import Output
from ...runtime import Call, plural
from .._listing import listing
from ..analytics.lazy_rows import LazyRows
from ..analytics.metrics import Sums, as_count, ctr, position, rounded
from . import render
from .collect import single
from .provenance import provenance
from .render import NOUNS
from .yardstick import CTR_CURVE, CTR_CURVE_SOURCE, MIN_IMPRESSIONS, expected_ctr

QUICK_POSITIONS: Final = (4, 20)


def curve_words() -> str:
    """The curve's buckets within the quick-win positions, as the text states them."""
    lo, hi = QUICK_POSITIONS
    parts = [
        f"{first}{'' if first == last else f'-{last}'}: {value * 100:.1f}%"
        for first, last, value in CTR_CURVE
        if last >= lo and first <= hi
    ]
    return ", ".join(parts)


def extra_clicks(s: Sums) -> float | None:
    """Impressions × the curve's CTR − clicks, for a key in the quick-win positions with enough
    impressions and a CTR below the curve; None for every other key."""
    c, i, ps, pi = s
    pos = position(ps, pi)
    lo, hi = QUICK_POSITIONS
    if i < MIN_IMPRESSIONS or pos is None or not lo <= math.floor(pos + 0.5) <= hi:
        return None
    expected = expected_ctr(pos)
    if expected is None:
        return None
    # In thousandths (the curve's precision), exactly: 6 clicks of 500 at 1.2% sit on the curve, not
    # below it, though 0.012 has no exact binary form; and equal gaps are truly equal for the ordering.
    gap = round(i * round(expected * 1000)) - round(c * 1000)
    return gap / 1000 if gap > 0 else None


def quick_win(by: str, key: Any, s: Sums) -> dict[str, Any]:
    """One quick win's row: its numbers, the curve's CTR for its position and the clicks it could gain."""
    c, i, ps, pi = s
    pos = position(ps, pi)
    return {
        by: key,
        "impressions": as_count(i),
        "clicks": as_count(c),
        "ctr": rounded(ctr(c, i), 4),
        "position": rounded(pos, 2),
        "expected_ctr": expected_ctr(pos) if pos is not None else None,
        "extra_clicks": rounded(extra_clicks(s), 1),
    }


def _cells(by: str, r: Mapping[str, Any]) -> list[str]:
    return [
        sh.cell(r[by]),
        render.number(r["impressions"], "i"),
        render.number(r["clicks"], "i"),
        render.number(r["ctr"], "ctr"),
        render.number(r["position"], "position"),
        render.number(r["expected_ctr"], "ctr"),
        f"{r['extra_clicks']:,.1f}",
    ]


async def report_quick_wins(call: Call) -> Output:
    """The report_quick_wins tool: quick wins for one period, the most extra clicks first."""
    by = call.args.get("by", "query")
    reader, tl, found, sums = await single(call, [by])
    now = found.period
    gains = {k: g for k, s in sums.items() if (g := extra_clicks(s)) is not None}
    keys = sorted(gains, key=lambda k: (-gains[k], -sums[k][1], k))
    lines, data = provenance(reader, tl, by, (found.read("period", "this period", sums, 0),))
    lo, hi = QUICK_POSITIONS
    head = [
        f"Quick wins for {reader.site}, by {by}: {now.words()}.",
        *lines,
        f"{plural(len(keys), by, NOUNS[by])} at positions {lo}-{hi} with at least {MIN_IMPRESSIONS} impressions "
        f"and a CTR below the curve; about {sum(gains.values()):,.0f} extra clicks in all if each reached it. "
        "Most extra clicks first.",
        f"CTR curve used (expected CTR at a position rounded to a whole place): {curve_words()}. "
        f"Source: {CTR_CURVE_SOURCE}",
    ]
    curve = [{"positions": [first, last], "ctr": value} for first, last, value in CTR_CURVE]
    return listing(
        entries=LazyRows(keys, lambda k: quick_win(by, k, sums[k])),
        headers=[by, "Impressions", "Clicks", "CTR", "Position", "Curve CTR", "Extra clicks"],
        row=lambda r: _cells(by, r),
        intro="\n".join(head),
        key="rows",
        narrow="Narrow the dates or filter with query_search_analytics.",
        noun=NOUNS[by],
        extra={
            "site": reader.site,
            "by": by,
            "period": now.data(),
            **data,
            "positions": list(QUICK_POSITIONS),
            "min_impressions": MIN_IMPRESSIONS,
            "extra_clicks": rounded(sum(gains.values()), 1),
            "ctr_curve": {"source": CTR_CURVE_SOURCE, "buckets": curve},
        },
        footer=(
            "Extra clicks = impressions × curve CTR − clicks: what a better title and snippet might earn at the "
            "same position. A lower position number is better."
        ),
    )
