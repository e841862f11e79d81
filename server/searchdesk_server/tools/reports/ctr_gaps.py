"""report_ctr_gaps: pages or queries whose CTR is well below what the property's own keys earn at the
same position.

A published industry curve (report_quick_wins) says little about one site: a brand, a results page
full of shopping ads, a local pack all move it. The property's own curve does: for each position
bucket, the median CTR of its own keys over the same period. A key far under its bucket's median has
a title or snippet people pass over; the clicks it would get at the median say what that costs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
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
from .yardstick import CTR_CURVE, MIN_IMPRESSIONS

GAP_RATIO: Final = 0.5  # listed when its CTR is below half its bucket's median
MIN_BUCKET_KEYS: Final = 5  # a median of fewer keys is no curve


@dataclass(frozen=True)
class Bucket:
    """One position bucket of the property's own curve."""

    first: int
    last: int
    keys: int
    median: float | None  # None: fewer than MIN_BUCKET_KEYS keys, so no key is judged against it

    def words(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"


def bucket_of(pos: float | None) -> tuple[int, int] | None:
    """The bucket of a position rounded to a whole place (halves up): 1 to 10 each alone, then 11-15
    and 16-20 (the buckets of `yardstick.CTR_CURVE`, so both curves cut positions alike)."""
    if pos is None:
        return None
    place = math.floor(pos + 0.5)
    for first, last, _ in CTR_CURVE:
        if first <= place <= last:
            return first, last
    return None


def eligible(s: Sums) -> bool:
    """Enough impressions to judge, and a position inside the curve's buckets."""
    return s[1] >= MIN_IMPRESSIONS and bucket_of(position(s[2], s[3])) is not None


def curve(sums: Mapping[Any, Sums]) -> dict[tuple[int, int], Bucket]:
    """The property's own curve: per bucket, the median CTR of its eligible keys (each key one vote)."""
    rates: dict[tuple[int, int], list[float]] = {(f, la): [] for f, la, _ in CTR_CURVE}
    for s in sums.values():
        if eligible(s):
            b = bucket_of(position(s[2], s[3]))
            assert b is not None
            rates[b].append(s[0] / s[1])
    return {
        b: Bucket(b[0], b[1], len(r), statistics.median(r) if len(r) >= MIN_BUCKET_KEYS else None)
        for b, r in rates.items()
    }


def gap(s: Sums, buckets: Mapping[tuple[int, int], Bucket]) -> float | None:
    """The clicks a key would get at its bucket's median CTR, minus its clicks, when its CTR is below
    `GAP_RATIO` of that median; None otherwise."""
    if not eligible(s):
        return None
    b = buckets[bucket_of(position(s[2], s[3])) or (0, 0)]
    if b.median is None or s[0] >= s[1] * b.median * GAP_RATIO:
        return None
    return s[1] * b.median - s[0]


def _builder(by: str, sums: Mapping[Any, Sums], buckets: Mapping[tuple[int, int], Bucket]) -> Any:
    def build(key: Any) -> dict[str, Any]:
        s = sums[key]
        pos = position(s[2], s[3])
        b = buckets[bucket_of(pos) or (0, 0)]
        median = b.median or 0.0
        return {
            by: key,
            "impressions": as_count(s[1]),
            "clicks": as_count(s[0]),
            "ctr": rounded(ctr(s[0], s[1]), 4),
            "position": rounded(pos, 2),
            "bucket": b.words(),
            "bucket_median_ctr": rounded(median, 4),
            "clicks_at_median": rounded(s[1] * median, 1),
            "extra_clicks": rounded(s[1] * median - s[0], 1),
        }

    return build


def _cells(by: str, r: Mapping[str, Any]) -> list[str]:
    return [
        sh.cell(r[by]),
        render.number(r["impressions"], "i"),
        render.number(r["clicks"], "i"),
        render.number(r["ctr"], "ctr"),
        render.number(r["position"], "position"),
        f"{r['bucket']}: {render.number(r['bucket_median_ctr'], 'ctr')}",
        f"{r['clicks_at_median']:,.1f}",
        f"{r['extra_clicks']:,.1f}",
    ]


def curve_words(buckets: Mapping[tuple[int, int], Bucket]) -> str:
    """The curve as the text states it: each bucket's median, or why it has none."""
    return "; ".join(
        f"{b.words()}: {render.number(b.median, 'ctr')} ({plural(b.keys, 'key')})"
        if b.median is not None
        else f"{b.words()}: too few keys ({b.keys})"
        for b in buckets.values()
    )


async def report_ctr_gaps(call: Call) -> Output:
    """The report_ctr_gaps tool: keys well under the property's own CTR curve, the most clicks missed first."""
    by = call.args.get("by", "page")
    reader, tl, found, sums = await single(call, [by])
    now = found.period
    buckets = curve(sums)
    gaps = {k: g for k, s in sums.items() if (g := gap(s, buckets)) is not None}
    # The total is the sum of the rows as shown (each to a tenth), so it always adds up to them.
    extra = rounded(math.fsum(round(g, 1) for g in gaps.values()), 1) or 0.0
    keys = sorted(gaps, key=lambda k: (-gaps[k], -sums[k][1], k))
    lines, data = provenance(reader, tl, by, (found.read("period", "this period", sums, 0),))
    head = [
        f"CTR gaps for {reader.site}, by {by}: {now.words()}.",
        *lines,
        f"The property's own curve: the median CTR of its {NOUNS[by]} with at least {MIN_IMPRESSIONS} impressions, "
        f"by position rounded to a whole place (a bucket needs at least {MIN_BUCKET_KEYS}): {curve_words(buckets)}.",
        f"{plural(len(keys), by, NOUNS[by])} with a CTR below {GAP_RATIO:.0%} of the median for its position; "
        f"{extra:,.1f} more clicks in all at the median rate. Most clicks missed first.",
    ]
    return listing(
        entries=LazyRows(keys, _builder(by, sums, buckets)),
        headers=[by, "Impressions", "Clicks", "CTR", "Position", "Bucket: median CTR", "Clicks at median", "Extra"],
        row=lambda r: _cells(by, r),
        intro="\n".join(head),
        key="rows",
        narrow=render.NARROW_DATES,
        noun=NOUNS[by],
        extra={
            "site": reader.site,
            "by": by,
            "period": now.data(),
            **data,
            "min_impressions": MIN_IMPRESSIONS,
            "gap_ratio": GAP_RATIO,
            "min_bucket_keys": MIN_BUCKET_KEYS,
            "curve": [
                {"positions": [b.first, b.last], "keys": b.keys, "median_ctr": rounded(b.median, 6)}
                for b in buckets.values()
            ],
            "extra_clicks": extra,
        },
        footer=(
            "Clicks at median = impressions × the bucket's median CTR; Extra = that − clicks. The curve is this "
            "property's own, from the same dates. A lower position is better."
        ),
    )
