"""report_traffic_drops: the keys that lost clicks between two periods, each with a likely cause.

The causes are rules of thumb on relative changes, checked in a fixed order so the same numbers
always get the same cause; the thresholds are printed in the result's footer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...google import shapes as sh
from ...result import Output
from ...runtime import Call, plural
from .._listing import listing
from ..analytics.lazy_rows import LazyRows
from ..analytics.metrics import Sums, as_count, ctr, position
from . import render
from .comparison import compare, compared_row, comparison_head
from .render import NOUNS

# Traffic-drop rules (relative changes between the two periods).
IMPRESSIONS_FELL: Final = 0.20  # impressions down by at least 20%
CTR_FELL: Final = 0.20  # CTR down by at least 20%
POSITION_FELL: Final = 1.0  # average position at least one place worse (a larger number)

DROP_FIELDS: Final = (
    "clicks",
    "clicks_prev",
    "clicks_change",
    "clicks_change_pct",
    "impressions",
    "impressions_prev",
    "impressions_change_pct",
    "ctr",
    "ctr_prev",
    "position",
    "position_prev",
)


def diagnose(s: Sums) -> tuple[str, str]:
    """A short, rule-based likely cause for a key that lost clicks (the rules are in the module head)."""
    now_c, now_i, now_ps, now_pi, old_c, old_i, old_ps, old_pi = s
    if not now_i:
        return "gone", "no impressions now; dropped out of the results"
    pos_now, pos_old = position(now_ps, now_pi), position(old_ps, old_pi)
    worse = pos_now is not None and pos_old is not None and pos_now - pos_old >= POSITION_FELL
    fell = old_i > 0 and (now_i - old_i) / old_i <= -IMPRESSIONS_FELL
    if fell and worse:
        return "ranking", "fewer impressions at a worse position; lost rankings"
    if fell:
        return "visibility", "fewer impressions at a similar position; less demand or shown for fewer searches"
    if worse:
        return "position", "similar impressions at a worse position"
    ctr_now, ctr_old = ctr(now_c, now_i), ctr(old_c, old_i)
    if ctr_now is not None and ctr_old and (ctr_now - ctr_old) / ctr_old <= -CTR_FELL:
        return "snippet", "similar impressions and position, lower CTR; the title, snippet or results page changed"
    return "mixed", "smaller changes in impressions and CTR together"


def drop_row(by: str, key: Any, s: Sums) -> dict[str, Any]:
    """A losing key's row: the comparison's fields a drop needs, and its likely cause."""
    full = compared_row(by, key, s)
    code, why = diagnose(s)
    return {by: key, **{k: full[k] for k in DROP_FIELDS}, "cause": code, "why": why}


def _drop_cells(by: str, r: Mapping[str, Any]) -> list[str]:
    num, pct = render.number, render.percent
    return [
        sh.cell(r[by]),
        f"{num(r['clicks_prev'], 'clicks')} → {num(r['clicks'], 'clicks')} "
        f"({render.signed(r['clicks_change'], 'clicks')}, {pct(r['clicks_change_pct'], r['clicks'])})",
        f"{num(r['impressions_prev'], 'i')} → {num(r['impressions'], 'i')} "
        f"({pct(r['impressions_change_pct'], r['impressions'])})",
        f"{num(r['ctr_prev'], 'ctr')} → {num(r['ctr'], 'ctr')}",
        f"{num(r['position_prev'], 'position')} → {num(r['position'], 'position')}",
        f"{r['cause']}: {r['why']}",
    ]


def _causes(sums: Mapping[Any, Sums], losers: list[Any]) -> dict[str, int]:
    """How many losing keys each likely cause explains, in name order."""
    causes: dict[str, int] = {}
    for k in losers:
        code = diagnose(sums[k])[0]
        causes[code] = causes.get(code, 0) + 1
    return dict(sorted(causes.items()))


FOOTER: Final = (
    "Cells: earlier → this period. Likely causes, checked in this order: gone (no impressions now); "
    f"ranking (impressions down ≥ {IMPRESSIONS_FELL:.0%} and position ≥ {POSITION_FELL:g} worse); "
    f"visibility (impressions down ≥ {IMPRESSIONS_FELL:.0%}); position (≥ {POSITION_FELL:g} worse); "
    f"snippet (CTR down ≥ {CTR_FELL:.0%}); else mixed. A rule of thumb, not a verdict: "
    "inspect_urls tells whether a lost page is still indexed."
)


async def report_traffic_drops(call: Call) -> Output:
    """The report_traffic_drops tool: losing keys, the most clicks lost first."""
    by = call.args.get("by", "page")
    c = await compare(call, by)
    head, data = comparison_head("Traffic drops", c)
    losers = [k for k, s in c.sums.items() if s[0] < s[4]]
    losers.sort(key=lambda k: (c.sums[k][0] - c.sums[k][4], -c.sums[k][4], k))
    lost = sum(c.sums[k][4] - c.sums[k][0] for k in losers)
    causes = _causes(c.sums, losers)
    head.append(
        f"{plural(len(losers), by, NOUNS[by])} lost clicks, {as_count(lost):,} clicks in all; the most lost first."
    )
    return listing(
        entries=LazyRows(losers, lambda k: drop_row(by, k, c.sums[k])),
        headers=[by, "Clicks", "Impressions", "CTR", "Position", "Likely cause"],
        row=lambda r: _drop_cells(by, r),
        intro="\n".join(head),
        key="rows",
        narrow="Narrow the dates, or look at one key with query_search_analytics filters.",
        noun=NOUNS[by],
        extra={**data, "lost_clicks": as_count(lost), "causes": causes},
        footer=FOOTER,
    )
