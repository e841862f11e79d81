"""What the archive answers with: rows for a range of days and where each day came from, what is kept
per property, and what a damaged file lost."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Kept:
    """What the app shows per property: "Kept since <since> · <size> on this computer · last copied <time>".
    `size_bytes` is this site's share of the file (its rows' share of the file's size, estimated)."""

    since: dt.date | None
    until: dt.date | None
    days: int
    size_bytes: int
    last_copied: dt.datetime | None


@dataclass(frozen=True)
class Loss:
    """Days a damaged file no longer gave back when it was set aside."""

    noted_at: dt.datetime
    set_aside: Path
    site: str
    search_type: str
    day: dt.date


@dataclass(frozen=True)
class Recovery:
    """What `recover` did: where the damaged file went, the days it copied, and the days it lost
    (`lost_unknown`: the file was too damaged to even say which days it held)."""

    set_aside: Path
    recovered: int
    lost: tuple[tuple[str, str, dt.date], ...]
    lost_unknown: bool = False


@dataclass(frozen=True)
class Columns:
    """Rows of an answer as columns, not Google's objects: each row's key as a report keys it (the word
    itself for one dimension, a tuple of words for more; a day as its ISO date), clicks, impressions
    and position. What `Archive.query` gives a reader that asks
    for it (`typed`): a report sums every row, and building 25,000 objects a page for it only to read
    them back was most of a long report's time over SearchDesk's copy (issue 38). A key whose word is
    missing is None; the reader's checks then read the page as Google's rows (`shaped`)."""

    dims: int
    keys: Sequence[Any]
    clicks: Sequence[int]
    impressions: Sequence[int]
    positions: Sequence[float]

    def __len__(self) -> int:
        return len(self.keys)

    def shaped(self) -> list[dict[str, Any]]:
        """The rows as Google returns them."""
        return [
            {
                "keys": [key] if self.dims == 1 else list(key),
                "clicks": clicks,
                "impressions": impressions,
                "ctr": clicks / impressions if impressions else 0.0,
                "position": position,
            }
            for key, clicks, impressions, position in zip(
                self.keys, self.clicks, self.impressions, self.positions, strict=True
            )
        ]


@dataclass
class Answer:
    """Rows shaped exactly as Google returns them (`keys`, `clicks`, `impressions`, `ctr`,
    `position`), or as `Columns` when asked for, sorted by clicks as Google sorts them, plus where each
    day came from.

    `copied`: each day of the range the archive had, with when it was copied; `gaps`: the days of the
    range it does not have (oldest first); `truncated`: days whose table Google cut at its row limit."""

    rows: list[dict[str, Any]] | Columns
    table: str
    copied: dict[dt.date, dt.datetime] = field(default_factory=dict)
    gaps: list[dt.date] = field(default_factory=list)
    truncated: list[dt.date] = field(default_factory=list)


def gap_ranges(days: Iterable[dt.date]) -> list[tuple[dt.date, dt.date]]:
    """Consecutive days folded into (first, last) ranges, for sentences about gaps."""
    out: list[tuple[dt.date, dt.date]] = []
    for day in sorted(days):
        if out and (day - out[-1][1]).days == 1:
            out[-1] = (out[-1][0], day)
        else:
            out.append((day, day))
    return out


def each_day(start: dt.date, end: dt.date) -> Iterator[dt.date]:
    """Every day from `start` to `end`, both included."""
    day = start
    while day <= end:
        yield day
        day += dt.timedelta(days=1)
