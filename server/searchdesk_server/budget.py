"""Result size budgets: every tool result fits 100,000 UTF-8 bytes per channel and says what it left out.

A result has two channels, the text a person (and the model) reads and ``structuredContent`` as
compact JSON; each gets the whole budget. Lists drop whole entries from the end, never slice JSON,
and lead with a note saying how many were shown of how many and how to see the rest (`fit_listing`).
One oversized object is `shrink.shrink`'s: its largest strings shortened, then its largest lists
trimmed, each cut marked.

Pure stdlib and cheap to import; everything here is linear or O(n log n) in the number of fields
and measures each entry once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "COMPACT_JSON",
    "MAX_BYTES",
    "WRAP_MARGIN",
    "BudgetError",
    "Listing",
    "fit_listing",
    "fit_prefix",
    "json_size",
    "limit_words",
    "text_size",
]

MAX_BYTES: Final = 100_000
#: Bytes held back from the structured channel for a wrapper that is not exactly additive (for
#: example one that also writes ``len(rows)``). The wrapped result is measured once at the end
#: anyway; the margin only makes a second try unlikely.
WRAP_MARGIN: Final = 256
#: How both channels' JSON is measured: compact, as the structured channel is written.
COMPACT_JSON: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=True)


class BudgetError(ValueError):
    """The fixed parts of a result (header, wrapper, note) alone exceed the limit: a bug in the caller."""


def json_size(value: object) -> int:
    """Compact JSON size in UTF-8 bytes, as the structured channel is measured.

    Lone surrogates count three bytes each (what U+FFFD becomes after cleaning) rather than raising.
    """
    return len(COMPACT_JSON.encode(value).encode("utf-8", "surrogatepass"))


def text_size(text: str) -> int:
    """UTF-8 size of a text channel (lone surrogates counted as three bytes each, never raising)."""
    return len(text.encode("utf-8", "surrogatepass"))


def limit_words(limit: int) -> str:
    """The limit as an adjective a person reads easily: "100 kB" (or "1,234-byte")."""
    if limit % 1000 == 0:
        return f"{limit // 1000:,} kB"
    return f"{limit:,}-byte"


def fit_prefix(text_sizes: Iterable[int], json_sizes: Iterable[int], text_room: int, json_room: int) -> int:
    """How many leading entries fit both rooms, whole entries only.

    Sizes must include each entry's separator (a row's newline, an array's comma). The sizes may
    be lazy iterables: they are consumed only up to the first entry that does not fit, so no entry
    after it is ever rendered or measured.
    """
    used_text = used_json = count = 0
    for t, j in zip(text_sizes, json_sizes, strict=False):
        used_text += t
        used_json += j
        if used_text > text_room or used_json > json_room:
            break
        count += 1
    return count


# --- fit_listing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Listing:
    """A listing cut to the budget: the kept prefix, both channels built, and what was left out."""

    entries: list[Mapping[str, Any]]
    rows: list[str]
    text: str
    structured: dict[str, Any]
    total: int
    note: str = ""
    shown: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shown", len(self.entries))

    @property
    def omitted(self) -> int:
        return self.total - self.shown


def _note(shown: int, total: int, noun: str, limit: int, narrow: str | Callable[[int], str]) -> str:
    how = narrow(shown) if callable(narrow) else narrow
    sentence = f"Showing {shown:,} of {total:,} {noun} (the rest would exceed the {limit_words(limit)} result limit)."
    return f"{sentence} {how}".rstrip()


def _assemble(preface: str, note: str, header: str, rows: Sequence[str], footer: str) -> str:
    parts = [p for p in (preface, note) if p]
    body = header + "".join("\n" + row for row in rows)
    parts.append(body)
    if footer:
        parts.append(footer)
    return "\n\n".join(parts)


def _fixed_text_size(preface: str, note: str, header: str, footer: str) -> int:
    """Size of the text with no rows; each row then adds its bytes plus one newline."""
    return text_size(_assemble(preface, note, header, (), footer))


@dataclass(frozen=True)
class _Frame:
    """What stays the same while `fit_listing` looks for its count: the fixed parts of both channels."""

    entries: Sequence[Mapping[str, Any]]
    wrap: Callable[[list[Mapping[str, Any]]], dict[str, Any]]
    header_text: str
    limit: int
    narrow: str | Callable[[int], str]
    noun: str
    preface: str
    footer_text: str
    note_key: str | None

    @property
    def total(self) -> int:
        return len(self.entries)

    def note(self, shown: int) -> str:
        return "" if shown == self.total else _note(shown, self.total, self.noun, self.limit, self.narrow)

    def fixed_text_size(self, note: str) -> int:
        return _fixed_text_size(self.preface, note, self.header_text, self.footer_text)

    def rooms(self) -> tuple[int, int]:
        """Room for the entries in the text and the structured channel; BudgetError when there is none."""
        base_json = json_size(self.wrap([]))
        if self.note_key is not None:  # room for `,"note":"…"` when entries are left out (measured again later)
            base_json += json_size({self.note_key: _note(self.total, self.total, self.noun, self.limit, self.narrow)})
            base_json += 1
        json_room = self.limit - base_json - WRAP_MARGIN
        text_room = self.limit - self.fixed_text_size("")
        if json_room < 0 or text_room < 0:
            raise BudgetError(
                f"The fixed parts of this result are {base_json:,} bytes (structured) and "
                f"{self.limit - text_room:,} bytes (text), over the {self.limit:,}-byte limit."
            )
        return text_room, json_room

    def settle(self, kept: int, row_sizes: Sequence[int]) -> tuple[int, str]:
        """The count and its note once the note (whose words depend on the count) has room."""
        if kept == self.total:
            return kept, ""
        return _fit_note(kept, row_sizes, self.limit, self.note, self.fixed_text_size)

    def wrapped(self, kept: int, note: str) -> dict[str, Any]:
        """The structured channel for the first ``kept`` entries, with ``note`` when there is one."""
        return self._noted(self.wrap(list(self.entries[:kept])), note)

    def wrapped_with_note(self, some: list[Mapping[str, Any]]) -> dict[str, Any]:
        """The structured channel for ``some`` entries, with the note their count calls for."""
        return self._noted(self.wrap(some), self.note(len(some)))

    def _noted(self, out: dict[str, Any], note: str) -> dict[str, Any]:
        if note and self.note_key is not None:
            out[self.note_key] = note
        return out

    def refit(self, kept: int, row_sizes: Sequence[int]) -> tuple[int, str, dict[str, Any]]:
        """For a wrapper that is not additive: find the count by measuring, then step down until both
        fit (a note whose wording depends on the count may still move a byte or two)."""
        kept, note = self.settle(_search_wrapped(self.entries, self.wrapped_with_note, self.limit, kept), row_sizes)
        structured = self.wrapped(kept, note)
        while json_size(structured) > self.limit:
            if kept == 0:
                raise BudgetError(f"The result's wrapper alone exceeds the {self.limit:,}-byte limit.")
            kept, note = self.settle(kept - 1, row_sizes)
            structured = self.wrapped(kept, note)
        return kept, note, structured


def fit_listing(
    entries: Sequence[Mapping[str, Any]],
    render_row: Callable[[Mapping[str, Any]], str],
    *,
    header_text: str,
    wrap: Callable[[list[Mapping[str, Any]]], dict[str, Any]],
    limit: int = MAX_BYTES,
    narrow: str | Callable[[int], str] = "Narrow the request to see the rest.",
    noun: str = "entries",
    preface: str = "",
    footer_text: str = "",
    note_key: str | None = None,
) -> Listing:
    """Keep the longest prefix of ``entries`` whose text and structured channels both fit ``limit``.

    The text is ``preface``, the note (only when entries were left out), ``header_text`` followed
    by one rendered row per line, and ``footer_text``, separated by blank lines; ``preface`` is
    where the "this came from Google" line goes, so the text still opens with it. ``narrow`` says
    how to see the rest; a callable gets the number shown (so it can say ``start_row=<n>``).
    With ``note_key``, the note is also put in the structured result under that key (only when
    entries were left out) and is counted there: use ``Listing.structured``, which is exactly what
    was measured, rather than adding fields to it afterwards.

    Each entry is rendered and measured at most once, and none after the first that does not fit.
    The wrapper is assumed additive (``wrap(kept)`` = ``wrap([])`` plus the entries as one JSON
    array) with :data:`WRAP_MARGIN` of slack; the final ``wrap(kept)`` is measured, and a wrapper
    that breaks the assumption costs a binary search, never an oversized result.

    A single entry larger than the whole budget is left out (with the note): shrink such entries
    before calling this. Raises :class:`BudgetError` when the fixed parts alone do not fit.
    """
    frame = _Frame(entries, wrap, header_text, limit, narrow, noun, preface, footer_text, note_key)
    text_room, json_room = frame.rooms()
    rows: list[str] = []
    row_sizes: list[int] = []

    def rendered() -> Iterator[int]:
        for entry in entries:
            row = render_row(entry)
            rows.append(row)
            row_sizes.append(text_size(row) + 1)
            yield row_sizes[-1]

    measured = (json_size(entry) + 1 for entry in entries)
    kept, note = frame.settle(fit_prefix(rendered(), measured, text_room, json_room), row_sizes)
    structured = frame.wrapped(kept, note)
    if json_size(structured) > limit:
        kept, note, structured = frame.refit(kept, row_sizes)
    text = _assemble(preface, note, header_text, rows[:kept], footer_text)
    return Listing(
        entries=list(entries[:kept]), rows=rows[:kept], text=text, structured=structured, total=len(entries), note=note
    )


def _fit_note(
    kept: int,
    row_sizes: Sequence[int],
    limit: int,
    note_for: Callable[[int], str],
    fixed_with: Callable[[str], int],
) -> tuple[int, str]:
    """Walk back from ``kept`` until the rows plus the note (which depends on the count) fit."""
    used = sum(row_sizes[:kept])
    while True:
        note = note_for(kept)
        fixed = fixed_with(note)
        if fixed > limit:
            raise BudgetError(f"The listing's note and header alone exceed the {limit:,}-byte limit.")
        if fixed + used <= limit or kept == 0:
            return kept, note
        kept -= 1
        used -= row_sizes[kept]


def _search_wrapped(
    entries: Sequence[Mapping[str, Any]],
    wrap: Callable[[list[Mapping[str, Any]]], dict[str, Any]],
    limit: int,
    high: int,
) -> int:
    """The most entries (≤ high) whose wrapped JSON fits: for wrappers that are not additive."""
    low = 0
    if json_size(wrap([])) > limit:
        raise BudgetError(f"The result's wrapper alone exceeds the {limit:,}-byte limit.")
    while low < high:
        mid = (low + high + 1) // 2
        if json_size(wrap(list(entries[:mid]))) <= limit:
            low = mid
        else:
            high = mid - 1
    return low
