"""Phrases a person reads in the server's sentences: a rejected value described without echoing it
(`describe`), and a time in minutes (`minutes`)."""

from __future__ import annotations

import math
import re

from .cleaning import BREAKS, CONTROL, INVISIBLE, SURROGATE

__all__ = ["describe", "minutes", "plural", "too_long"]

_PLAIN = re.compile(r"[A-Za-z0-9 ._:/@+\-]{1,40}")


def minutes(seconds: float) -> str:
    """A time as a person reads it ("5 minutes"): the one way a sentence states a number of minutes, so
    that a time said to a person is always the figure the code keeps (tests/server/approval/test_contract.py)."""
    whole = round(seconds / 60)
    return f"{whole} minute" if whole == 1 else f"{whole} minutes"


def plural(n: int, one: str, many: str = "") -> str:
    """A count as a person reads it ("1 page", "2,000 pages"), never "page(s)": the one definition both
    programs use; ``many`` where adding an "s" is wrong ("property", "properties")."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def too_long(what: str, length: int, limit: int) -> str:
    """A refusal of a value longer than its limit, worded one way for every argument and address."""
    return f"{what} is {length:,} characters long; the limit is {limit:,}."


def describe(value: object) -> str:
    """How to mention a rejected value in an error message without echoing it.

    Short plain ASCII is quoted (a person recognises their typo); anything else is described by
    its length and the kind of trouble it holds, so hostile or secret text never reaches a message.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        digits = len(str(abs(value))) if value.bit_length() < 128 else None
        if digits is not None and digits <= 20:
            return str(value)
        return "a very large number"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "a number that is not finite"
    if isinstance(value, list | tuple):
        return f"a list of {plural(len(value), 'entry', 'entries')}"
    if isinstance(value, dict):
        return f"an object with {plural(len(value), 'field')}"
    if not isinstance(value, str):
        return "a value of an unexpected type"
    if _PLAIN.fullmatch(value):
        return f'"{value}"'
    if not value:
        return "an empty value"
    size = f"a {len(value):,}-character value"
    if CONTROL.search(value) or BREAKS.search(value):
        return f"{size} with control characters or line breaks"
    if SURROGATE.search(value):
        return f"{size} with invalid characters"
    if INVISIBLE.search(value):
        return f"{size} with invisible formatting characters"
    if not value.strip():
        return f"{size} of only spaces"
    if not value.isascii():
        return f"{size} with non-ASCII characters"
    if len(value) > 40:
        return size
    return f"{size} with unusual punctuation"
