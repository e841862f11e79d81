"""How the reports write numbers in their tables: one style for every report, so they read alike.

A missing value is "–" (not 0, which would be a claim), a CTR is a percentage, a position keeps
two decimals, and a change in % with no base reads "new".
"""

from __future__ import annotations

from typing import Final

#: What a report says when its table was cut to fit: fewer dates, fewer rows.
NARROW_DATES: Final = "Narrow the dates to see the rest."
NOUNS: Final = {"page": "pages", "query": "queries", "country": "countries", "device": "devices"}


def number(value: float | None, kind: str) -> str:
    """A value in a table cell; `kind` is "ctr", "position", or anything else for a count."""
    return _cell(value, kind, "", "%")


def signed(value: float | None, kind: str) -> str:
    """A change with its sign always shown, so a rise and a fall never look alike; CTR in points."""
    return _cell(value, kind, "+", " pt")


def _cell(value: float | None, kind: str, sign: str, ctr_unit: str) -> str:
    """One rule for a value and a change (`sign` "+" shows it always): two decimals for CTR (as a
    percentage, `ctr_unit`) and position, thousands separated for a count."""
    if value is None:
        return "–"
    if kind == "ctr":
        return f"{value * 100:{sign}.2f}{ctr_unit}"
    if kind == "position":
        return f"{value:{sign}.2f}"
    return f"{value:{sign},}"


def percent(value: float | None, now: float | None) -> str:
    """A change in %; "new" where there was nothing to compare with but there is something now."""
    if value is None:
        return "new" if now not in (None, 0) else "–"
    return f"{value:+.1f}%"


def share(value: float | None) -> str:
    """A share of a whole (0-1) as a percentage; "n/a" when there is no whole."""
    return "n/a" if value is None else f"{value * 100:.1f}%"
