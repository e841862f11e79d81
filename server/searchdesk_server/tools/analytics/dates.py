"""Which days a Search Analytics question covers, in Google's day (Pacific time).

Search Console's dates are Google's days, not the computer's, so "today" and every period are
worked out in Pacific time; the reports' periods build on the same arithmetic.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from ...result import ToolFailure

GOOGLE_TZ = "America/Los_Angeles"
MONTHS = {"last3months": 3, "last6months": 6, "last12months": 12, "last16months": 16}
DAYS = {"last7days": 7, "last28days": 28}
#: Said when a date range runs backwards (the analytics tools and list_changes alike).
START_AFTER_END = "start_date is after end_date; swap them."


def google_today(pinned: dt.date | None = None) -> dt.date:
    """Today in Google's day (Pacific time), which is what Search Console's dates mean.

    `pinned` (the server's `Config.today`, from SEARCHDESK_DEMO_TODAY) wins, so the demo's data and
    the periods asked of it stay aligned on any date the tests run.
    """
    if pinned is not None:
        return pinned
    from zoneinfo import ZoneInfo

    return dt.datetime.now(ZoneInfo(GOOGLE_TZ)).date()


def months_back(day: dt.date, months: int) -> dt.date:
    """The same day `months` earlier, or the month's last day when it has no such day (31 March -> 28/29 Feb)."""
    year, month = divmod(day.year * 12 + day.month - 1 - months, 12)
    month += 1
    for d in (day.day, 30, 29, 28):
        try:
            return dt.date(year, month, d)
        except ValueError:
            continue
    raise AssertionError("unreachable")


def resolve_period(period: str, today: dt.date) -> tuple[dt.date, dt.date]:
    """Both ends inclusive. `lastN…` are the whole days before today (today is always partial)."""
    yesterday = today - dt.timedelta(days=1)
    if period == "today":
        return today, today
    if period == "yesterday":
        return yesterday, yesterday
    if period in DAYS:
        return today - dt.timedelta(days=DAYS[period]), yesterday
    if period in MONTHS:
        return months_back(today, MONTHS[period]), yesterday
    raise ToolFailure(f"Unknown period; use one of {', '.join(('today', 'yesterday', *DAYS, *MONTHS))}.")


def parse_day(key: str, value: str) -> dt.date:
    """A date argument (`key`) Claude wrote as YYYY-MM-DD, or a failure saying so."""
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise ToolFailure(f"{key} must be a real date written YYYY-MM-DD.") from None


def date_range(args: Mapping[str, Any], today: dt.date) -> tuple[dt.date, dt.date]:
    has_dates = "start_date" in args or "end_date" in args
    if has_dates and "period" in args:
        raise ToolFailure("Give either period or start_date and end_date, not both.")
    if has_dates:
        if "start_date" not in args or "end_date" not in args:
            raise ToolFailure("Give both start_date and end_date (YYYY-MM-DD), or a period instead.")
        start, end = parse_day("start_date", args["start_date"]), parse_day("end_date", args["end_date"])
        if start > end:
            raise ToolFailure(START_AFTER_END)
        if end > today:
            raise ToolFailure(f"end_date is in the future (today is {today.isoformat()} in Google's time zone).")
        # Days before Google's 16 months are answered from SearchDesk's copy, or refused there
        # (archive/reader.py) when it has none.
        return start, end
    return resolve_period(args.get("period", "last28days"), today)
