"""Google's rows as the archive's integers: what `Archive.write_day` binds, built at C speed.

The daily copy writes a day at Google's row limit (150,000 rows over the three big tables) and its
CPU is a target of its own (issue 28: ≤ 0.5 s). So a table whose every row is the common one (a dict
with text keys, whole non-negative counts, a float position) is checked and encoded a column at a
time by C loops (`common_columns`, `_Columns`), and any other goes row by row by the general rules
(`_encode_row`), which give the common row the very same tuple (tests/server/archive/
test_write_speed_paths.py). Rows are written sorted by key, a hundred to a statement (`write_rows`).
"""

from __future__ import annotations

import itertools
import math
import operator
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

Rows = Sequence[Mapping[str, Any]]

_KEYS: Final = operator.itemgetter("keys")


def column(rows: Rows, i: int) -> set[str]:
    """The text values at `keys[i]` of these rows: in C in the common case (every row well formed),
    row by row only when one is not."""
    try:
        found = set(map(operator.itemgetter(i), map(_KEYS, rows)))
        if set(map(type, found)) <= {str}:  # the common case, checked in C
            return found
    except (KeyError, IndexError, TypeError):
        found = set()
        for row in rows:
            keys = row.get("keys") if isinstance(row, Mapping) else None
            if isinstance(keys, list) and len(keys) > i and isinstance(keys[i], str):
                found.add(keys[i])
        return found
    return {value for value in found if type(value) is str}


def _count(value: object) -> int | None:
    if type(value) is int:
        return value if value >= 0 else None
    if type(value) is float and math.isfinite(value) and value >= 0:
        return int(value)
    if type(value) is str and value.isdigit():
        return int(value)
    return None


def _insert_rows(part: int, day: int, count: int = 1) -> str:
    """The statement that writes `_encode`'s rows into one table of one day.

    One table of one day has one part and one day, so they are written into the statement (integers
    formatted as integers: nothing from Google) and each row binds only (k1, k2, clicks, impressions,
    position): a day at the row limit is 150,000 rows, and every bound value costs. The tuples start
    with the key, so sorting them compares k1 (and k2) with Python's fast integer comparison, where
    part and day first cost two comparisons of equal values each time (issue 28 measured the sort of
    (part, day, k1, k2, ...) at a sixth of a copied day's CPU)."""
    one = f"({int(part):d},{int(day):d},?,?,?,?,?)"
    return "INSERT OR REPLACE INTO rows(part, day, k1, k2, clicks, impressions, position) VALUES" + ",".join(
        [one] * count
    )


#: Rows per INSERT in `write_rows`: 500 bound values, far below SQLite's limit of 32,766.
_BATCH: Final = 100
#: Values per row in `encode_sorted`'s flat list: (k1, k2, clicks, impressions, position).
WIDTH: Final = 5


def write_rows(conn: sqlite3.Connection, part: int, day: int, flat: list[Any]) -> None:
    """Insert `encode_sorted`'s rows, `_BATCH` rows to a statement and the rest one by one.

    One statement per row ran SQLite's statement step and reset, and the driver's per-call work,
    150,000 times for a day at the row limit: a hundred rows to a statement (one multi-row VALUES,
    inserted in order with the same OR REPLACE, so the table ends the same) halves the insert's CPU
    (issue 28). The rows come laid end to end, so each statement's values are one slice of the list
    (a copy of 500 pointers in C) rather than a hundred tuples chained into a new list."""
    rows = len(flat) // WIDTH
    full = rows - rows % _BATCH
    step = _BATCH * WIDTH
    if full:
        conn.executemany(_insert_rows(part, day, _BATCH), (flat[at : at + step] for at in range(0, full * WIDTH, step)))
    if full < rows:
        conn.executemany(
            _insert_rows(part, day),
            (flat[at : at + WIDTH] for at in range(full * WIDTH, rows * WIDTH, WIDTH)),
        )


def encode_sorted(rows: Rows, ndims: int, ids: Mapping[str, int]) -> list[Any]:
    """`_encode`'s tuples in key order (so each insert lands where the last one did), laid end to end
    for `write_rows`: exactly ``list(chain(*sorted(_encode(rows, ndims, ids))))``."""
    columns = common_columns(rows, ndims, ids)
    flat = columns.sorted(ids) if columns is not None and columns.found(ids) else None
    if flat is not None:
        return flat
    values = _encode(rows, ndims, ids)
    values.sort()
    return list(itertools.chain.from_iterable(values))


def _encode(rows: Rows, ndims: int, ids: Mapping[str, int]) -> list[tuple[Any, ...]]:
    """Google's rows as (k1, k2, clicks, impressions, position) for `_insert_rows`; a row without text
    keys or with non-numeric counts is dropped (the reader's cleaning would drop it too).

    The common row (a dict with its keys, whole non-negative counts, a float position) is read with
    one C call (`_FIELDS`) and checked inline; any other goes through `_encode_row`, the general
    rules, which give the common row the same tuple."""
    common = _encode_common(rows, ndims, ids)
    if common is not None:
        return common
    get = ids.get
    fields = _FIELDS
    general = _encode_row
    out: list[tuple[Any, ...]] = []
    keep = out.append
    for row in rows:
        if ndims and type(row) is dict:
            try:
                keys, clicks, impressions, position = fields(row)
            except KeyError:
                pass
            else:
                if (
                    type(keys) is list
                    and len(keys) >= ndims
                    and type(clicks) is int
                    and clicks >= 0
                    and type(impressions) is int
                    and impressions >= 0
                    and type(position) is float
                    and 0 <= position < 1e9
                ):
                    k1 = get(keys[0], 0)
                    if not k1:
                        continue
                    k2 = 0
                    if ndims == 2:
                        k2 = get(keys[1], 0)
                        if not k2:
                            continue
                    keep((k1, k2, clicks, impressions, position))
                    continue
        encoded = general(row, ndims, get)
        if encoded is not None:
            keep(encoded)
    return out


_FIELDS: Final = operator.itemgetter("keys", "clicks", "impressions", "position")
_COLUMNS: Final = tuple(map(operator.itemgetter, ("keys", "clicks", "impressions", "position")))
_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)


def _encode_common(rows: Rows, ndims: int, ids: Mapping[str, int]) -> list[tuple[Any, ...]] | None:
    """`_encode` for a table whose every row is the common one, else None (`_encode` goes row by row):
    `common_columns` as tuples."""
    columns = common_columns(rows, ndims, ids)
    if columns is None or not columns.complete():
        return None
    return list(zip(columns.first, columns.second, columns.clicks, columns.impressions, columns.positions, strict=True))


@dataclass
class _Columns:
    """A common table's rows a column at a time: each key's id in `first` and `second` (None for a
    word that has none yet; `second` all 0 for a table of one dimension), and the three numbers."""

    ndims: int
    keys: list[list[Any]]
    first: list[int | None]
    second: list[int | None]
    clicks: list[int]
    impressions: list[int]
    positions: list[float]

    def _lookups(self) -> Iterator[tuple[list[int | None], Callable[[list[Any]], Any]]]:
        yield self.first, _FIRST
        if self.ndims == 2:
            yield self.second, _SECOND

    def unknown(self) -> set[str]:
        """The words of keys that have no id yet (a few a day, as a site's pages and queries change)."""
        out: set[str] = set()
        for ids, word in self._lookups():
            if not all(ids):  # a None (truth tested in C: `None in` compares every id with None)
                missing = itertools.compress(map(word, self.keys), map(operator.is_, ids, itertools.repeat(None)))
                out.update(w for w in missing if type(w) is str)
        return out

    def found(self, ids: Mapping[str, int]) -> bool:
        """Look up the keys that had no id in `ids` (just interned); True when every key now has one."""
        for column, word in self._lookups():
            if not all(column):
                for at in itertools.compress(range(len(column)), map(operator.is_, column, itertools.repeat(None))):
                    column[at] = ids.get(word(self.keys[at]))
        return self.complete()

    def complete(self) -> bool:
        """Every key has an id, as `_encode`'s inline path keeps a row only then."""
        return all(self.first) and (self.ndims < 2 or all(self.second))

    def sorted(self, ids: Mapping[str, int]) -> list[Any] | None:
        """The rows in key order laid end to end (see `encode_sorted`), or None when two rows share
        a key (Google never sends them): the whole tuple decides their order, the general path.

        The order is found by sorting row numbers on one integer per row (k1, or k1 and k2 in one)
        and each column is placed with one slice assignment, so no tuple is made per row: sorting
        50,000 five-tuples and chaining them into statements' lists was a fifth of a copied day's
        CPU (issue 37)."""
        first, second = self.first, self.second
        key: list[Any] = first
        if self.ndims == 2:
            if max(cast(list[int], second)) >= 1 << 32:  # `complete`: no None left
                return None
            # k1 and k2 in one integer that sorts as the pair does (k2 a positive id below 2**32).
            key = list(map(operator.or_, map(operator.lshift, first, itertools.repeat(32)), second))
        if len(set(key)) != len(key):
            return None
        order = sorted(range(len(key)), key=key.__getitem__)
        flat: list[Any] = [None] * (len(key) * WIDTH)
        columns: tuple[list[Any], ...] = (first, second, self.clicks, self.impressions, self.positions)
        for at, column in enumerate(columns):
            flat[at::WIDTH] = list(map(column.__getitem__, order))
        return flat


def common_columns(rows: Rows, ndims: int, ids: Mapping[str, int]) -> _Columns | None:
    """The columns of a table whose every row is the common one, else None (`_encode` goes row by row).

    The conditions of `_encode`'s inline path are tested a column at a time by C loops (``map``,
    ``set``, ``min``, ``max``, ``sum``), so a day at the row limit (150,000 rows) costs no Python
    bytecode per row; a row that `_encode` would treat by the general rules (any odd value) sends
    the whole table back to it, so the values are the same. Keys without an id are None here."""
    if not ndims or not rows or not set(map(type, rows)) <= {dict}:
        return None
    get_keys, get_clicks, get_impressions, get_positions = _COLUMNS
    try:  # a field missing raises KeyError; a key that cannot be looked up (a list) TypeError
        keys, clicks = list(map(get_keys, rows)), list(map(get_clicks, rows))
        impressions, positions = list(map(get_impressions, rows)), list(map(get_positions, rows))
        if not (
            set(map(type, keys)) <= {list}
            and min(map(len, keys)) >= ndims
            and set(map(type, clicks)) <= {int}
            and set(map(type, impressions)) <= {int}
            and set(map(type, positions)) <= {float}
            and min(clicks) >= 0
            and min(impressions) >= 0
            and math.isfinite(sum(positions))  # so no NaN: min and max below are exact
            and min(positions) >= 0.0
            and max(positions) < 1e9
        ):
            return None
        first: list[int | None] = list(map(ids.get, map(_FIRST, keys)))
        second: list[int | None] = list(map(ids.get, map(_SECOND, keys))) if ndims == 2 else [0] * len(first)
    except (KeyError, TypeError):
        return None
    return _Columns(ndims, keys, first, second, clicks, impressions, positions)


def _encode_row(row: object, ndims: int, get: Callable[[str, int], int]) -> tuple[Any, ...] | None:
    """One row by the general rules, as `_encode` builds it; None when it is dropped."""
    if type(row) is not dict:
        return None
    k1 = k2 = 0
    if ndims:
        keys = row.get("keys")
        if type(keys) is not list or len(keys) < ndims:
            return None
        k1 = get(keys[0], 0)
        if not k1:
            return None
        if ndims == 2:
            k2 = get(keys[1], 0)
            if not k2:
                return None
    clicks = row.get("clicks")
    if type(clicks) is not int:
        clicks = _count(clicks)
    impressions = row.get("impressions")
    if type(impressions) is not int:
        impressions = _count(impressions)
    if clicks is None or impressions is None or clicks < 0 or impressions < 0:
        return None
    position = row.get("position", 0.0)
    if type(position) is not float:
        position = float(position) if type(position) is int else 0.0
    if not 0 <= position < 1e9:
        position = 0.0
    return k1, k2, clicks, impressions, position
