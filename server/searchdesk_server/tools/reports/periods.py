"""Which days a report covers: the property's timeline, the period asked for, and the one before.

Reports read final data only, so the default period ends on the last final day Google reports and
a period asked for may not end later: no total ever ends in half-counted days.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from ...result import ToolFailure
from ...runtime import plural
from ..analytics.dates import date_range, google_today, months_back
from ..analytics.paging import PAGE_ROWS, Reader
from ..analytics.rows import entries, first_incomplete

DEFAULT_DAYS: Final = 28
YEAR_DAYS: Final = 364  # "a year earlier" = 52 weeks, so weekdays line up


@dataclass(frozen=True)
class Period:
    """Inclusive dates in Google's day (Pacific time)."""

    start: dt.date
    end: dt.date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def shifted(self, days: int) -> Period:
        """The same length of time `days` earlier (how "previous" and "year" are found)."""
        return Period(self.start - dt.timedelta(days=days), self.end - dt.timedelta(days=days))

    def data(self) -> dict[str, Any]:
        """The period for the structured half of a result."""
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "days": self.days}

    def words(self) -> str:
        """The period for the text half of a result."""
        return f"{self.start.isoformat()} to {self.end.isoformat()} ({plural(self.days, 'day')})"

    def body(self, dims: Sequence[str]) -> dict[str, Any]:
        """A Search Analytics request for the period: web search, final data asked for explicitly."""
        body: dict[str, Any] = {
            "startDate": self.start.isoformat(),
            "endDate": self.end.isoformat(),
            "type": "web",
            "dataState": "final",
        }
        if dims:
            body["dimensions"] = list(dims)
        return body


@dataclass
class Timeline:
    """The property's days: which have data and which are final.

    One by-date request over Search Console's 16 months with dataState all tells both: Google's
    metadata names the first incomplete date (only such a request carries it).
    """

    today: dt.date
    days: set[str] = field(default_factory=set)
    first_incomplete: str | None = None

    @property
    def last_final(self) -> dt.date | None:
        if self.first_incomplete:
            return dt.date.fromisoformat(self.first_incomplete) - dt.timedelta(days=1)
        # No incomplete date in a range reaching today means every day Google returned is final.
        return dt.date.fromisoformat(max(self.days)) if self.days else None

    @property
    def first_day(self) -> str | None:
        return min(self.days) if self.days else None


async def timeline(reader: Reader) -> Timeline:
    """The property's timeline from one by-date request over 16 months (see `Timeline`)."""
    today = google_today(reader.call.config.today)
    body = {
        "startDate": months_back(today, 16).isoformat(),
        "endDate": today.isoformat(),
        "dimensions": ["date"],
        "type": "web",
        "dataState": "all",
        "rowLimit": PAGE_ROWS,
        "startRow": 0,
    }
    raw = await reader.request(body)
    tl = Timeline(today, first_incomplete=first_incomplete(raw))
    for entry in entries(raw.get("rows"), 1):
        try:
            tl.days.add(dt.date.fromisoformat(entry[0]).isoformat())
        except ValueError:
            continue
    return tl


def current_period(args: Mapping[str, Any], tl: Timeline) -> Period:
    """The dates asked for, which must end on a final day; else the last 28 final days."""
    last = tl.last_final or tl.today - dt.timedelta(days=3)
    if "start_date" in args or "end_date" in args:
        if "start_date" not in args or "end_date" not in args:
            raise ToolFailure("Give both start_date and end_date (YYYY-MM-DD), or neither for the last 28 final days.")
        start, end = date_range({"start_date": args["start_date"], "end_date": args["end_date"]}, tl.today)
        if tl.last_final and end > tl.last_final:
            raise ToolFailure(
                f"end_date is after {tl.last_final.isoformat()}, the last day with final data; reports use "
                "final data only so no period ends in half-counted days. Choose an earlier end_date, or leave "
                "the dates out for the last 28 final days."
            )
        return Period(start, end)
    return Period(last - dt.timedelta(days=DEFAULT_DAYS - 1), last)


def earlier_period(args: Mapping[str, Any], now: Period) -> Period:
    """The period `vs` names (previous, a year earlier, or a start date), as long as `now` and before it."""
    vs = str(args.get("vs", "previous")).strip()
    if vs == "previous":
        return now.shifted(now.days)
    if vs == "year":
        return now.shifted(YEAR_DAYS)
    try:
        start = dt.date.fromisoformat(vs)
    except ValueError:
        raise ToolFailure("vs must be previous, year, or the earlier period's start date as YYYY-MM-DD.") from None
    before = Period(start, start + dt.timedelta(days=now.days - 1))
    if before.end >= now.start:
        raise ToolFailure(
            f"vs: the earlier period ({before.words()}, as long as the first) must end before "
            f"{now.start.isoformat()}; choose an earlier date."
        )
    return before
