"""compare_periods: every key's clicks, impressions, CTR and position in two periods, largest change first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...google import shapes as sh
from ...result import Output
from ...runtime import Call, plural
from .._listing import listing
from ..analytics.lazy_rows import LazyRows
from ..analytics.metrics import change
from .comparison import METRICS, Comparison, compare, compared_row, comparison_head, move, pair, status
from .render import NOUNS


def _order(c: Comparison, metric: str) -> Callable[[Any], tuple[Any, ...]]:
    """Largest absolute change in `metric` first; keys without a change last; ties by clicks, then key."""

    def order(key: Any) -> tuple[Any, ...]:
        s = c.sums[key]
        delta = change(*pair(s, metric))
        return (delta is None, -abs(delta or 0.0), -s[0], -s[4], key)

    return order


async def compare_periods(call: Call) -> Output:
    """The compare_periods tool: both periods per key, with the rows' and the property's totals."""
    by = call.args.get("by", "page")
    metric = call.args.get("sort", "clicks")
    c = await compare(call, by)
    head, data = comparison_head("Compare periods", c)
    keys = sorted(c.sums, key=_order(c, metric))
    counts = {"both": 0, "new": 0, "gone": 0}
    for s in c.sums.values():
        counts[status(s)] += 1
    head.append(
        f"{plural(len(keys), by, NOUNS[by])}: {counts['both']:,} in both periods, {counts['new']:,} new, "
        f"{counts['gone']:,} gone. Largest change in {metric} first."
    )
    return listing(
        entries=LazyRows(keys, lambda k: compared_row(by, k, c.sums[k])),
        headers=[by, "Status", "Clicks", "Impressions", "CTR", "Position"],
        row=lambda r: [sh.cell(r[by]), r["status"], *(move(r, m) for m in METRICS)],
        intro="\n".join(head),
        key="rows",
        narrow="Narrow the dates, or use report_traffic_drops for the losers alone.",
        noun=NOUNS[by],
        extra={**data, "sort": metric, "keys": counts},
        footer=(
            "Each cell: earlier → this period (change, change in % of the earlier value; 'new' where that is 0). "
            "A lower position is better, so a negative position change is an improvement."
        ),
    )
