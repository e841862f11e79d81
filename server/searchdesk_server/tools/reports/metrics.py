"""The reports' arithmetic, fixed in one place so every report adds up the same way.

CTR = clicks / impressions, position weighted by impressions, a change in % undefined (None, shown
"new") when its base is 0, and numbers rounded as they are shown. Per-key sums are flat lists of
slots (`Sums`) so 200,000 rows add up without an object per row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from .rows import Entry, entries

if TYPE_CHECKING:
    from .paging import Sink

Sums = list[float]  # clicks, impressions, position × impressions, impressions with a position

MIN_IMPRESSIONS: Final = 100  # quick wins and cannibalisation ignore keys with fewer in the period

#: Expected organic CTR by position, (first, last, ctr): our rounding of published industry
#: averages. A rough yardstick, not Google's figure.
CTR_CURVE: Final[tuple[tuple[int, int, float], ...]] = (
    (1, 1, 0.28),
    (2, 2, 0.155),
    (3, 3, 0.11),
    (4, 4, 0.08),
    (5, 5, 0.06),
    (6, 6, 0.045),
    (7, 7, 0.035),
    (8, 8, 0.03),
    (9, 9, 0.025),
    (10, 10, 0.02),
    (11, 15, 0.012),
    (16, 20, 0.008),
)
CTR_CURVE_SOURCE: Final = (
    "SearchDesk's rounding of published industry averages of organic click-through rate by Google "
    "position (desktop and mobile together). A rough yardstick, not Google's own figure: real CTR "
    "varies with brand, search intent and what else the results page shows."
)


# --- one key's numbers ----------------------------------------------------------------------------


def ctr(clicks: float, impressions: float) -> float | None:
    """Clicks / impressions; None without impressions, so "no data" never reads as a 0% CTR."""
    return clicks / impressions if impressions else None


def position(weighted: float, weight: float) -> float | None:
    """The impression-weighted average position; None when no impression had a position."""
    return weighted / weight if weight else None


def change(now: float | None, before: float | None) -> float | None:
    """The absolute change; None when either side is unknown, rather than treating it as 0."""
    return None if now is None or before is None else now - before


def change_pct(now: float | None, before: float | None) -> float | None:
    """The change in % of `before`; undefined (None) when there is no base to divide by."""
    if now is None or before is None or before == 0:
        return None
    return (now - before) / before * 100


def as_count(value: float) -> int | float:
    """A summed count as a whole number when it is one, so results read 12, not 12.0."""
    return int(value) if float(value).is_integer() else round(value, 2)


def rounded(value: float | None, digits: int) -> float | None:
    """Rounded as shown; changes are taken from these values so they agree with the numbers beside them."""
    return None if value is None else round(value, digits) + 0.0  # + 0.0: never "-0.0"


def coverage(part: float, whole: float) -> float | None:
    """The share of the property's own total that the rows hold; None when the property has none."""
    return round(part / whole, 4) if whole else None


def expected_ctr(pos: float) -> float | None:
    """The curve's CTR for a position rounded to the nearest whole place (halves round up)."""
    place = math.floor(pos + 0.5)
    for first, last, value in CTR_CURVE:
        if first <= place <= last:
            return value
    return None


# --- sums over keys -------------------------------------------------------------------------------


def empty_sums(width: int) -> Sums:
    """Zeroed slots: 4 for one period, 8 for two side by side."""
    return [0.0] * width


def add_sums(into: Sums, entry: Entry, at: int = 0) -> None:
    """One entry's four numbers added into slots `at`…`at + 3`."""
    into[at] += entry[1]
    into[at + 1] += entry[2]
    into[at + 2] += entry[3]
    into[at + 3] += entry[4]


def tally(width: int, dims: int, at: int, sums: dict[Any, Sums]) -> Sink:
    """A sink adding each page's rows into per-key sums at slot `at` (memory grows with keys only)."""

    async def add(rows: list[Any]) -> None:
        # Inlined rather than add_sums: this runs once per row of up to 200,000.
        for key, clicks, impressions, weighted, weight in entries(rows, dims):
            cell = sums.get(key)
            if cell is None:
                cell = sums[key] = empty_sums(width)
            cell[at] += clicks
            cell[at + 1] += impressions
            cell[at + 2] += weighted
            cell[at + 3] += weight

    return add


def column(sums: Mapping[Any, Sums], at: int) -> float:
    """One slot summed over all keys, exactly (fsum), for comparing the rows with the property total."""
    return math.fsum(s[at] for s in sums.values()) if sums else 0


def columns(sums: Mapping[Any, Sums], width: int) -> Sums:
    """Every slot summed over all keys, in one pass."""
    out = empty_sums(width)
    for s in sums.values():
        for k in range(width):
            out[k] += s[k]
    return out
