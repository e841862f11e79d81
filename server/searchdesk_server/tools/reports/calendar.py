"""The calendar the new reports count in: full Monday-Sunday weeks and full months, in Google's day.

Google's days are Pacific time (`analytics.dates`), and a report reads final days only; a week or a
month that is not yet whole would read as a fall, so only whole ones are counted, and the answer
says which.
"""

from __future__ import annotations

import datetime as dt

from .periods import Period


def last_full_week(last_final: dt.date) -> Period:
    """The last Monday-Sunday week whose every day is final: it ends on the Sunday on or before `last_final`."""
    end = last_final - dt.timedelta(days=(last_final.weekday() + 1) % 7)
    return Period(end - dt.timedelta(days=6), end)


def month_of(day: dt.date) -> Period:
    """The calendar month holding `day`."""
    first = day.replace(day=1)
    following = (first + dt.timedelta(days=32)).replace(day=1)
    return Period(first, following - dt.timedelta(days=1))


def full_months(first_day: dt.date, last_final: dt.date, most: int) -> list[Period]:
    """The whole calendar months within [first_day, last_final], oldest first, at most `most` of them
    (the most recent ones)."""
    months: list[Period] = []
    month = month_of(last_final)
    if month.end > last_final:
        month = month_of(month.start - dt.timedelta(days=1))
    while len(months) < most and month.start >= first_day:
        months.append(month)
        month = month_of(month.start - dt.timedelta(days=1))
    return months[::-1]


def buckets(period: Period, weekly: bool) -> list[Period]:
    """`period` cut into Monday-Sunday weeks (`weekly`) or calendar months; the first and last may be
    partial (each bucket says its own dates)."""
    out: list[Period] = []
    start = period.start
    while start <= period.end:
        end = start + dt.timedelta(days=6 - start.weekday()) if weekly else month_of(start).end
        end = min(end, period.end)
        out.append(Period(start, end))
        start = end + dt.timedelta(days=1)
    return out
