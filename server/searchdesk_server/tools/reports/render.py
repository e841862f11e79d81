"""How the reports write numbers in their tables: one style for every report, so they read alike.

A missing value is "–" (not 0, which would be a claim), a CTR is a percentage, a position keeps
two decimals, and a change in % with no base reads "new".
"""

from __future__ import annotations

from typing import Final

NOUNS: Final = {"page": "pages", "query": "queries", "country": "countries", "device": "devices"}


def number(value: float | None, kind: str) -> str:
    """A value in a table cell; `kind` is "ctr", "position", or anything else for a count."""
    if value is None:
        return "–"
    if kind == "ctr":
        return f"{value * 100:.2f}%"
    if kind == "position":
        return f"{value:.2f}"
    return f"{value:,}"


def signed(value: float | None, kind: str) -> str:
    """A change with its sign always shown, so a rise and a fall never look alike; CTR in points."""
    if value is None:
        return "–"
    if kind == "ctr":
        return f"{value * 100:+.2f} pt"
    if kind == "position":
        return f"{value:+.2f}"
    return f"{value:+,}"


def percent(value: float | None, now: float | None) -> str:
    """A change in %; "new" where there was nothing to compare with but there is something now."""
    if value is None:
        return "new" if now not in (None, 0) else "–"
    return f"{value:+.1f}%"


def share(value: float | None) -> str:
    """A share of a whole (0-1) as a percentage; "n/a" when there is no whole."""
    return "n/a" if value is None else f"{value * 100:.1f}%"
