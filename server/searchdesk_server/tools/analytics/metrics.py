"""Search Analytics arithmetic, fixed in one place so every answer adds up the same way.

`query_search_analytics`, its all_rows export and every report use it over the same checked entries
(`rows.entries`): CTR = clicks / impressions, position weighted by the impressions that have one,
a change in % undefined (None, shown "new") when its base is 0, and numbers rounded as they are
shown. Per-key sums are flat lists of slots (`Sums`) so 200,000 rows add up without an object per row.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...gcpause import collection_paused
from .rows import Entry, entries

if TYPE_CHECKING:
    from .paging import Sink

Sums = list[float]  # clicks, impressions, position × impressions, impressions with a position


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

    async def add(rows: Sequence[Any]) -> None:
        add_rows(sums, entries(rows, dims), width, at)

    return add


def add_rows(sums: dict[Any, Sums], rows: Iterable[Entry], width: int, at: int) -> None:
    """Entries added into per-key sums at slot `at` (a new key's slots start at 0), with collection
    held off: every new key's slots are kept, so a collection mid-way would free nothing (gcpause.py)."""
    with collection_paused():
        # Inlined rather than add_sums: this runs once per row of up to 200,000.
        for key, clicks, impressions, weighted, weight in rows:
            cell = sums.get(key)
            if cell is None:
                cell = sums[key] = [0.0] * width
            cell[at] += clicks
            cell[at + 1] += impressions
            cell[at + 2] += weighted
            cell[at + 3] += weight


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


# --- totals of the rows an answer holds -----------------------------------------------------------


def summed(rows: Iterable[Entry]) -> Sums:
    """The four slots summed over entries (their keys aside): the totals of exactly those rows."""
    clicks = impressions = weighted = weight = 0.0
    for _, c, i, w, p in rows:  # inlined rather than add_sums: a 25,000-row answer runs it per row
        clicks += c
        impressions += i
        weighted += w
        weight += p
    return [clicks, impressions, weighted, weight]


def totals(sums: Sums) -> dict[str, float]:
    """Summed rows as a result states them: counts as counted, CTR and position when they exist."""
    out: dict[str, float] = {"clicks": as_count(sums[0]), "impressions": as_count(sums[1])}
    rate, place = ctr(sums[0], sums[1]), position(sums[2], sums[3])
    if rate is not None:
        out["ctr"] = round(rate, 6)
    if place is not None:
        out["position"] = round(place, 2)
    return out


def incomplete_from(day: str) -> str:
    """Where Google's numbers stop being final, the same in the answer and in its export (a clause)."""
    return f"numbers from {day} on are incomplete and may still change"


def totals_sentence(total: Mapping[str, float]) -> str:
    """The totals in words, the same in every answer that states them."""
    return (
        f"Totals of these rows: {total['clicks']:,} clicks, {total['impressions']:,} impressions"
        + (f", CTR {total['ctr'] * 100:.2f}%" if "ctr" in total else "")
        + (f", average position {total['position']:.1f}." if "position" in total else ".")
    )
