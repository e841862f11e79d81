"""The demo's notion of time: one pinned "today" in Google's day (America/Los_Angeles).

Nothing in the demo reads the wall clock except to learn today's date when nobody pinned it; every
timestamp it serves is derived from that date, so answers never change within a day and tests can pin it.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

PACIFIC = ZoneInfo("America/Los_Angeles")
# The demo's "now" is this hour of today, Pacific time: today's data is partial up to it.
NOW_HOUR = 10


def resolve_today(today: date | None = None) -> date:
    """The pinned date (the server's `Config.today`, from SEARCHDESK_DEMO_TODAY), else today's date in
    Google's time zone."""
    return today if today is not None else datetime.now(PACIFIC).date()


def months_back(day: date, months: int) -> date:
    """The same day of the month `months` earlier, clamped to the month's length."""
    index = day.year * 12 + (day.month - 1) - months
    year, month = divmod(index, 12)
    month += 1
    for candidate in (day.day, 30, 29, 28):
        try:
            return date(year, month, min(day.day, candidate))
        except ValueError:
            continue
    raise AssertionError("unreachable: every month has 28 days")


@lru_cache(maxsize=4096)
def iso_day(ordinal: int) -> str:
    return date.fromordinal(ordinal).isoformat()


@lru_cache(maxsize=8192)
def hour_key(hour_ordinal: int) -> str:
    """Google's hour key: local Pacific time with its offset, e.g. 2026-11-03T14:00:00-08:00."""
    day_ordinal, hour = divmod(hour_ordinal, 24)
    local = datetime.combine(date.fromordinal(day_ordinal), time(hour), tzinfo=PACIFIC)
    return local.isoformat()


def rfc3339(moment: datetime) -> str:
    """A UTC timestamp with milliseconds, as Search Console writes them: 2026-11-03T18:04:05.123Z."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


class DemoClock:
    """Today, and timestamps expressed as "so many days and seconds before the demo's now"."""

    def __init__(self, today: date) -> None:
        self.today = today
        self.ordinal = today.toordinal()
        self.now = datetime.combine(today, time(NOW_HOUR), tzinfo=PACIFIC)

    def day(self, offset: int) -> date:
        return self.today - timedelta(days=offset)

    def moment(self, offset_days: int, seconds: float) -> datetime:
        """A moment `offset_days` before today, `seconds` into that Pacific day (capped at now)."""
        start = datetime.combine(self.day(offset_days), time(0), tzinfo=PACIFIC)
        moment = start + timedelta(seconds=seconds)
        return min(moment, self.now)

    def stamp(self, offset_days: int, seconds: float) -> str:
        return rfc3339(self.moment(offset_days, seconds))

    def stamp_seconds(self, seconds: float) -> str:
        """A timestamp with whole seconds (Google's crawl times have no fraction)."""
        return rfc3339(self.now + timedelta(seconds=seconds)).split(".")[0] + "Z"
