"""Google's Search Analytics rows turned into plain entries, checked at the boundary.

Every report and the all_rows export read up to 200,000 rows through `entries`, so it keeps the
common case (printable strings, real numbers) on short paths and drops an odd row rather than
letting it into the sums.
"""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Iterator, Mapping
from typing import Any, Final

from ...gcpause import collection_paused
from ...google import shapes as sh

MAX_AMOUNT: Final = 1e15  # far above any real count; a larger one is an odd row and is dropped
_MAX_WHOLE: Final = 10**15  # MAX_AMOUNT as an int: a whole count is compared without a float

#: (key, clicks, impressions, position × impressions, impressions with a position)
Entry = tuple[Any, float, float, float, float]


def _word(value: object) -> str | None:
    # The common case (a printable string) without a call per row into the general cleaner.
    if type(value) is str and value.isprintable():
        return value
    return sh.text(value)


def _words(values: tuple[Any, ...]) -> tuple[str, ...] | None:
    """Several dimension values, each cleaned; None when one of them is not text."""
    words = tuple(word for word in map(_word, values) if word is not None)
    return words if len(words) == len(values) else None


def _amount(value: object) -> float | None:
    """A non-negative number below MAX_AMOUNT (Google's counts; int64 ones may come as strings).

    The ceiling keeps 200,000 rows' sums finite: an absurd 1e308 would otherwise add up to
    infinity and turn a change into NaN.
    """
    if type(value) is int or type(value) is float:
        number: float | None = value
    else:
        number = sh.number(value)
    return number if number is not None and 0 <= number < MAX_AMOUNT else None


def entries(rows: object, dims: int) -> Iterator[Entry]:
    """(key, clicks, impressions, position × impressions, impressions with a position) per usable row.

    The key is the cleaned dimension value (a tuple for several). A row that is not an object, lacks
    its keys or has a negative or non-numeric count is dropped, as elsewhere in SearchDesk. This runs
    once per row of up to 200,000, so the common case takes the short paths (`checked`).
    """
    return iter(checked(rows, dims))


_FIELDS: Final = operator.itemgetter("keys", "clicks", "impressions", "position")


def checked(rows: object, dims: int) -> list[Entry]:
    """`entries` as a list: every row checked in one synchronous pass with collection held off.

    The common row — exactly ``dims`` printable text keys, whole-number counts, a positive float
    position — is read with one C call (`_FIELDS`) and checked inline, which is most of a
    25,000-row answer's cost saved (issue 28); any other row, or one missing a field, goes through
    `_checked_row`, the general path, so an odd value is cleaned or dropped exactly as it always was
    (tests/server/tools/test_live_path.py holds the earlier code and compares).
    """
    if not isinstance(rows, list):
        return []
    out: list[Entry] = []
    keep = out.append
    fields = _FIELDS
    general = _checked_row
    printable = str.isprintable
    whole = _MAX_WHOLE
    most = MAX_AMOUNT
    with collection_paused():  # every entry is kept: a collection mid-way would free nothing
        for raw in rows:
            try:
                keys, clicks, impressions, pos = fields(raw)
                if (
                    type(keys) is list
                    and len(keys) == dims
                    and type(clicks) is int
                    and 0 <= clicks < whole
                    and type(impressions) is int
                    and 0 <= impressions < whole
                    and type(pos) is float
                    and 0.0 < pos < most
                    and all(map(printable, keys))
                ):
                    key: Any = keys[0] if dims == 1 else tuple(keys)
                    keep((key, clicks, impressions, pos * impressions, float(impressions)))
                    continue
            except (KeyError, TypeError):  # not an object, a field missing, a key that is not text
                pass
            entry = general(raw, dims)
            if entry is not None:
                keep(entry)
    return out


def _checked_row(raw: object, dims: int) -> Entry | None:
    """One row by the general rules: cleaned into an entry, or None when it is dropped."""
    if not isinstance(raw, dict):
        return None
    key: Any = ()
    if dims:
        keys = raw.get("keys")
        if not isinstance(keys, list) or len(keys) < dims:
            return None
        if dims == 1:
            key = _word(keys[0])
            if key is None:
                return None
        else:
            key = tuple(keys) if len(keys) == dims else tuple(keys[:dims])
            if not _printable(key):  # the common case, every value printable text, is kept as it is
                key = _words(key)
                if key is None:
                    return None
    clicks = raw.get("clicks")
    if type(clicks) is not int or not 0 <= clicks < _MAX_WHOLE:
        clicks = _amount(clicks)
        if clicks is None:
            return None
    impressions = raw.get("impressions")
    if type(impressions) is not int or not 0 <= impressions < _MAX_WHOLE:
        impressions = _amount(impressions)
        if impressions is None:
            return None
    pos = raw.get("position")
    if type(pos) is not float or not 0.0 < pos < MAX_AMOUNT:
        pos = _amount(pos)
    if not pos:
        return (key, clicks, impressions, 0.0, 0.0)
    return (key, clicks, impressions, pos * impressions, float(impressions))


def _printable(words: tuple[Any, ...]) -> bool:
    """Every value a printable str (a str subclass too: `_word` would keep it as it is)."""
    try:
        return all(map(str.isprintable, words))
    except TypeError:  # a value that is not text
        return False


def first_incomplete(raw: Mapping[str, Any]) -> str | None:
    """Google's metadata.firstIncompleteDate, only when it is a real date: it goes into our sentences."""
    meta = raw.get("metadata")
    value = meta.get("firstIncompleteDate") if isinstance(meta, dict) else None
    if not isinstance(value, str) or len(value) != 10:
        return None
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        return None
