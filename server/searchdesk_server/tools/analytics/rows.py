"""Google's Search Analytics rows turned into plain entries, checked at the boundary.

Every report and the all_rows export read up to 200,000 rows through `entries`, so it keeps the
common case (printable strings, real numbers) on short paths and drops an odd row rather than
letting it into the sums.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final, overload

import msgspec

from ...gcpause import collection_paused
from ...google import jsonbody
from ...google import shapes as sh
from ...text.cleaning import clean

if TYPE_CHECKING:
    from ...archive.answers import Columns

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
    if isinstance(rows, CommonEntries):  # a typed answer (Google's or SearchDesk's copy): checked already
        with collection_paused():
            return rows.every()
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


_KEYS: Final = operator.itemgetter("keys")
_FIRST: Final = operator.itemgetter(0)
_CLICKS: Final = operator.itemgetter("clicks")
_IMPRESSIONS: Final = operator.itemgetter("impressions")
_POSITION: Final = operator.itemgetter("position")


class CommonEntries(Sequence[Entry]):
    """The entries of an answer whose every row has the common shape, each made only when read.

    Entry ``i`` is exactly what `checked` makes of row ``i``. A 25,000-row answer shows a few hundred
    rows; the others are only summed (`common_entries`), so their keys are never cleaned nor their
    entries made: a hostile string in a row that is not shown is never read.
    """

    __slots__ = ("_clicks", "_dims", "_flat", "_impressions", "_keys", "_positions")

    def __init__(
        self,
        keys: Sequence[Any],
        clicks: Sequence[Any],
        impressions: Sequence[Any],
        positions: Sequence[Any],
        dims: int,
        *,
        flat: bool = False,
    ):
        """`keys`: each row's keys as Google lists them, or (`flat`, SearchDesk's copy) as a report keys
        them: the word itself for one dimension."""
        self._keys, self._clicks, self._impressions, self._positions = keys, clicks, impressions, positions
        self._dims, self._flat = dims, flat and dims == 1

    def __len__(self) -> int:
        return len(self._keys)

    def _entry(self, i: int) -> Entry:
        # For text, `checked` keeps a printable value as it is and cleans any other (`_word`): clean().
        words, impressions = self._keys[i], self._impressions[i]
        if self._flat:
            key: Any = clean(words)
        else:
            key = clean(words[0]) if self._dims == 1 else tuple(map(clean, words))
        return (key, self._clicks[i], impressions, self._positions[i] * impressions, float(impressions))

    def every(self, first_in: AbstractSet[Any] | None = None) -> list[Entry]:
        """Every entry (`self[i]` for each i), made a column at a time: a report sums them all, and
        250,000 calls of `_entry` were a fifth of a long report's time over SearchDesk's copy.

        `first_in`: only the entries whose key's first word (cleaned) is in it. The others are never
        made and their other words never read: a report that keeps a few of a page's 25,000 rows
        (new queries' pages of its listed queries) spent most of its time on the words it dropped."""
        keys, clicks, impressions, positions = self._keys, self._clicks, self._impressions, self._positions
        if first_in is not None:
            firsts = keys if self._flat else list(map(_FIRST, keys))
            if not all(map(str.isprintable, firsts)):  # printable text is kept as it is (`clean`)
                firsts = list(map(clean, firsts))
            kept = list(map(first_in.__contains__, firsts))
            keys, clicks, impressions, positions = (
                list(itertools.compress(column, kept)) for column in (keys, clicks, impressions, positions)
            )
        if self._dims == 1:
            words: Sequence[Any] = keys if self._flat else list(map(_FIRST, keys))
            if not all(map(str.isprintable, words)):
                words = list(map(clean, words))
        elif all(map(str.isprintable, itertools.chain.from_iterable(keys))):
            words = keys if set(map(type, keys)) <= {tuple} else list(map(tuple, keys))
        else:
            words = list(map(tuple, map(functools.partial(map, clean), keys)))
        return list(
            zip(
                words,
                clicks,
                impressions,
                map(operator.mul, positions, impressions),
                map(float, impressions),
                strict=True,
            )
        )

    @overload
    def __getitem__(self, index: int) -> Entry: ...
    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...
    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if isinstance(index, slice):
            return [self._entry(i) for i in range(*index.indices(len(self)))]
        return self._entry(range(len(self))[index])  # negative indexes, and IndexError, as a list's


def common_entries(rows: object, dims: int) -> tuple[CommonEntries, list[float]] | None:
    """`checked` and its sums (`metrics.summed`) for an answer whose every row has the common shape:
    ``dims`` keys that are all text, whole counts and a float position in range. Else None, and the
    caller takes `checked`, which cleans or drops an odd row exactly as before.

    Such a row is never dropped (text is cleaned, never refused), so the entries are the rows, one
    for one, and the totals need only the numbers. Each condition is tested a column at a time by C
    loops (``map``, ``set``, ``all``) instead of per row in Python, and the four sums are the same
    left-to-right float additions as `metrics.summed` (``reduce`` over ``operator.add``), identical
    to the bit. Only the rows a result shows become entries (`CommonEntries`), their keys cleaned
    then: this is most of a 25,000-row answer's CPU saved (issue 28).
    """
    if not isinstance(rows, list) or dims < 1:
        return None
    try:
        # A row that is not an object, or lacks a field, raises here (KeyError, TypeError).
        keys, clicks = list(map(_KEYS, rows)), list(map(_CLICKS, rows))
        impressions, positions = list(map(_IMPRESSIONS, rows)), list(map(_POSITION, rows))
    except (KeyError, TypeError):
        return None
    if not _is_common(keys, clicks, impressions, positions, dims, list):
        return None
    found = CommonEntries(keys, clicks, impressions, positions, dims)
    return found, _sums(found)


def _is_common(
    keys: Sequence[Any],
    clicks: Sequence[Any],
    impressions: Sequence[Any],
    positions: Sequence[Any],
    dims: int,
    key_type: type,
) -> bool:
    """Whether every row has the common shape (`common_entries`), tested a column at a time. Keys of
    `key_type` (Google's lists; the copy's tuples) hold `dims` words each; a `str` key is the word."""
    if key_type is str:
        words_common = dims == 1 and set(map(type, keys)) <= {str}
    else:
        words_common = (
            set(map(type, keys)) <= {key_type}
            and set(map(len, keys)) <= {dims}
            and set(map(type, itertools.chain.from_iterable(keys))) <= {str}
        )
    return (
        words_common
        and set(map(type, clicks)) <= {int}
        and set(map(type, impressions)) <= {int}
        and set(map(type, positions)) <= {float}
        and _whole(clicks)
        and _whole(impressions)
        and all(map(MAX_AMOUNT.__gt__, positions))  # NaN fails both comparisons
        and all(map((0.0).__lt__, positions))
    )


def _whole(counts: Sequence[int]) -> bool:
    """Ints (`_is_common` has checked their type) that are counts: from 0, below `_MAX_WHOLE`. By
    their least and greatest, a third of testing each twice."""
    return not counts or (min(counts) >= 0 and max(counts) < _MAX_WHOLE)


def common_columns(columns: Columns, dims: int) -> CommonAnswer | None:
    """SearchDesk's copy's rows as columns (`archive.answers.Columns`) read as `common_answer` reads
    Google's: the same conditions, the same entries and sums. None for a page with an odd row (a word
    the copy no longer has), which the caller reads as Google's rows (`Columns.shaped`) instead."""
    keys, clicks, impressions, positions = columns.keys, columns.clicks, columns.impressions, columns.positions
    flat = dims == 1
    if (
        dims < 1
        or columns.dims != dims
        or not _is_common(keys, clicks, impressions, positions, dims, str if flat else tuple)
    ):
        return None
    return CommonAnswer(CommonEntries(keys, clicks, impressions, positions, dims, flat=flat), None)


def _sums(entries: CommonEntries) -> list[float]:
    """The sums of entries whose every column has passed `common_entries`' conditions."""
    add, clicks, impressions, positions = operator.add, entries._clicks, entries._impressions, entries._positions
    return [
        float(functools.reduce(add, clicks, 0.0)),
        float(functools.reduce(add, impressions, 0.0)),
        float(functools.reduce(add, map(operator.mul, positions, impressions), 0.0)),
        float(functools.reduce(add, map(float, impressions), 0.0)),
    ]


_Count = Annotated[int, msgspec.Meta(ge=0, lt=_MAX_WHOLE)]


class _Row(msgspec.Struct, gc=False):
    """A row of the common shape (`common_entries`), as Google's JSON spells it. A count outside its
    range fails the decode; a whole-number position is kept an int so that it can be told apart."""

    keys: list[str]
    clicks: _Count
    impressions: _Count
    position: Annotated[float, msgspec.Meta(gt=0.0, lt=MAX_AMOUNT)] | int


class _Answer(msgspec.Struct, gc=False):
    """The fields of Google's answer the analytics tool reads (tool.py); any other is ignored there too."""

    rows: list[_Row] = []
    metadata: Any = None


_ANSWER: Final = msgspec.json.Decoder(_Answer)
_ROW_KEYS: Final = operator.attrgetter("keys")
_ROW_CLICKS: Final = operator.attrgetter("clicks")
_ROW_IMPRESSIONS: Final = operator.attrgetter("impressions")
_ROW_POSITION: Final = operator.attrgetter("position")


@dataclass(frozen=True, slots=True)
class CommonAnswer:
    """A Search Analytics answer whose every row has the common shape, read without a dict per row:
    `entries` and `sums` are exactly `common_entries` of the same answer decoded with `jsonbody.loads`,
    and `metadata` is its ``metadata`` field (None when absent)."""

    entries: CommonEntries
    metadata: Any

    @property
    def sums(self) -> list[float]:
        """The entries' sums, worked out when asked: a report's reader sums each row itself and never
        asks (2.6 ms of each 25,000-row page)."""
        return _sums(self.entries)


def common_answer(dims: int) -> Callable[[bytes], CommonAnswer | None]:
    """A decoder of Google's answer for the Google client (`GoogleClient.call`'s ``decode``): the
    body decoded straight into typed rows and checked a column at a time, or None for any body that
    is not exactly of the common shape with ``dims`` keys a row, which the client then decodes as it
    decodes every answer, for `common_entries` and `checked` to judge row by row. This is most of a
    25,000-row answer's decode and check saved (issue 28; msgspec's values are the standard
    library's, google/jsonbody.py)."""

    def decode(body: bytes) -> CommonAnswer | None:
        answer = jsonbody.typed(_ANSWER, body) if dims >= 1 else None
        if answer is None:
            return None
        rows = answer.rows
        keys, positions = list(map(_ROW_KEYS, rows)), list(map(_ROW_POSITION, rows))
        if not (set(map(len, keys)) <= {dims} and set(map(type, positions)) <= {float}):
            return None
        clicks, impressions = list(map(_ROW_CLICKS, rows)), list(map(_ROW_IMPRESSIONS, rows))
        return CommonAnswer(CommonEntries(keys, clicks, impressions, positions, dims), answer.metadata)

    return decode


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
