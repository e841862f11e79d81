"""Result size budgets: every tool result fits 100,000 UTF-8 bytes per channel and says what it left out.

A result has two channels, the text a person (and the model) reads and ``structuredContent`` as
compact JSON; each gets the whole budget. Lists drop whole entries from the end, never slice JSON,
and lead with a note saying how many were shown of how many and how to see the rest. One oversized
object has its largest strings shortened, then its largest lists trimmed, each cut marked.

Pure stdlib and cheap to import; everything here is linear or O(n log n) in the number of fields
and measures each entry once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from searchdesk_server.text.cleaning import MAX_DEPTH, TOO_DEEP, cut_bytes

__all__ = [
    "MAX_BYTES",
    "MIN_SHRINK_BYTES",
    "WRAP_MARGIN",
    "BudgetError",
    "Listing",
    "fit_listing",
    "fit_prefix",
    "json_size",
    "limit_words",
    "shrink",
    "text_size",
]

MAX_BYTES: Final = 100_000
#: Bytes held back from the structured channel for a wrapper that is not exactly additive (for
#: example one that also writes ``len(rows)``). The wrapped result is measured once at the end
#: anyway; the margin only makes a second try unlikely.
WRAP_MARGIN: Final = 256
#: Below this, :func:`shrink` cannot promise a meaningful result (its own notes need room).
MIN_SHRINK_BYTES: Final = 256

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=True)


class BudgetError(ValueError):
    """The fixed parts of a result (header, wrapper, note) alone exceed the limit: a bug in the caller."""


def json_size(value: object) -> int:
    """Compact JSON size in UTF-8 bytes, as the structured channel is measured.

    Lone surrogates count three bytes each (what U+FFFD becomes after cleaning) rather than raising.
    """
    return len(_ENCODER.encode(value).encode("utf-8", "surrogatepass"))


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
    total = len(entries)
    base_json = json_size(wrap([]))
    if note_key is not None:  # room for `,"note":"…"` when entries are left out (measured again below)
        base_json += json_size({note_key: _note(total, total, noun, limit, narrow)}) + 1
    json_room = limit - base_json - WRAP_MARGIN
    text_room = limit - _fixed_text_size(preface, "", header_text, footer_text)
    if json_room < 0 or text_room < 0:
        raise BudgetError(
            f"The fixed parts of this result are {base_json:,} bytes (structured) and "
            f"{limit - text_room:,} bytes (text), over the {limit:,}-byte limit."
        )

    rows: list[str] = []
    row_sizes: list[int] = []
    json_sizes: list[int] = []

    def rendered() -> Iterator[int]:
        for entry in entries:
            row = render_row(entry)
            rows.append(row)
            row_sizes.append(text_size(row) + 1)
            yield row_sizes[-1]

    def measured() -> Iterator[int]:
        for entry in entries:
            json_sizes.append(json_size(entry) + 1)
            yield json_sizes[-1]

    kept = fit_prefix(rendered(), measured(), text_room, json_room)

    def settle(kept: int) -> tuple[int, str]:
        if kept == total:
            return kept, ""
        return _fit_note(
            kept,
            row_sizes,
            limit,
            lambda n: _note(n, total, noun, limit, narrow),
            lambda note: _fixed_text_size(preface, note, header_text, footer_text),
        )

    def wrapped(kept: list[Mapping[str, Any]], note: str) -> dict[str, Any]:
        out = wrap(kept)
        if note and note_key is not None:
            out[note_key] = note
        return out

    kept, note = settle(kept)
    shown = list(entries[:kept])
    structured = wrapped(shown, note)
    if json_size(structured) > limit:
        # The wrapper is not additive: find the count by measuring, then step down until both fit
        # (a note whose wording depends on the count may still move a byte or two).
        def with_note(some: list[Mapping[str, Any]]) -> dict[str, Any]:
            return wrapped(some, "" if len(some) == total else _note(len(some), total, noun, limit, narrow))

        kept, note = settle(_search_wrapped(entries, with_note, limit, kept))
        shown = list(entries[:kept])
        structured = wrapped(shown, note)
        while json_size(structured) > limit:
            if kept == 0:
                raise BudgetError(f"The result's wrapper alone exceeds the {limit:,}-byte limit.")
            kept, note = settle(kept - 1)
            shown = list(entries[:kept])
            structured = wrapped(shown, note)
    text = _assemble(preface, note, header_text, rows[:kept], footer_text)
    return Listing(entries=shown, rows=rows[:kept], text=text, structured=structured, total=total, note=note)


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


# --- shrink ------------------------------------------------------------------------------------

#: A string is never cut below this many JSON bytes (quotes and marker included) by the
#: string phase: shorter than that, dropping whole entries tells the reader more.
_MIN_STRING_BYTES: Final = 128
_OMITTED_KEY: Final = "…omitted"
_MAX_INT_BITS: Final = 13_000  # json.dumps refuses ints of more than 4,300 digits


_NO_KEYS: Final[list[str]] = []  # shared and never written: lists have no keys
_NO_CHILDREN: Final[dict[int, Any]] = {}  # shared until a node gets its first child


class _Node:
    """One container of the working copy, with the sizes shrinking needs."""

    __slots__ = ("children", "detached", "keys", "member_sizes", "parent", "size", "slot", "value")

    def __init__(self, value: dict[str, Any] | list[Any], parent: _Node | None, slot: int) -> None:
        self.value = value
        self.parent = parent
        self.slot = slot  # this node's member index in its parent
        # Compact JSON bytes of each member: `"key":value` for a dict, the entry for a list.
        self.member_sizes: list[int] = []
        # Dict member index -> key. Created only for dicts, and children only when there are any:
        # fewer objects for the garbage collector to walk while a large value is copied.
        self.keys: list[str] = [] if isinstance(value, dict) else _NO_KEYS
        self.children: dict[int, _Node] = _NO_CHILDREN  # member index -> container
        self.size = 0
        self.detached = False


# A string value: (its container, member index, the text, its JSON size).
_Leaf = tuple[_Node, int, str, int]

_encode_str: Callable[[str], str] = json.encoder.encode_basestring


def _str_size(text: str) -> int:
    """JSON size of a string, quotes and escapes included (the C encoder, no JSON machinery)."""
    quoted = _encode_str(text)
    return len(quoted) if quoted.isascii() else len(quoted.encode("utf-8", "surrogatepass"))


def _scalar_size(value: object) -> int:
    kind = type(value)
    if kind is str:
        return _str_size(value)  # type: ignore[arg-type]
    if kind is int:
        return len(int.__repr__(value))
    if kind is float:
        return len(float.__repr__(value))
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    return json_size(value)


def _plain(value: object) -> object:
    """A scalar json.dumps can write as valid JSON (NaN, infinities and giant ints become null)."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, int):
        return int(value) if value.bit_length() <= _MAX_INT_BITS else None
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    raise TypeError(f"a value of type {type(value).__name__} cannot be written as JSON")


def _json_key(key: object) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool | int | float):
        written: dict[str, int] = json.loads(_ENCODER.encode({key: 0}))
        return next(iter(written))
    raise TypeError(f"a key of type {type(key).__name__} cannot be written as JSON")


def _container_size(member_sizes: Sequence[int]) -> int:
    return 2 + sum(member_sizes) + max(0, len(member_sizes) - 1)


_CONTAINERS: Final = (dict, list, tuple)


def _copy(value: dict[Any, Any] | list[Any] | tuple[Any, ...]) -> tuple[_Node, list[_Leaf], list[_Node]]:
    """A mutable copy with exact sizes, built iteratively so depth cannot overflow the stack.

    Containers deeper than MAX_DEPTH become TOO_DEEP (json.dumps itself recurses); keys become
    strings as json.dumps writes them (a repeated key keeps its first value); tuples become lists.
    Each container's members are copied in one loop; sizes are summed bottom-up at the end. Only
    strings long enough to be cut are recorded as leaves.
    """
    leaves: list[_Leaf] = []
    root = _Node({} if isinstance(value, dict) else [], None, 0)
    nodes = [root]
    work: list[tuple[_Node, object, int]] = [(root, value, 1)]

    def convert(raw: object, node: _Node, slot: int, depth: int) -> tuple[object, int]:
        """The copy of one member value and its JSON size (0 for a container: summed later)."""
        if type(raw) is str:
            size = _str_size(raw)
            if size > _MIN_STRING_BYTES:
                leaves.append((node, slot, raw, size))
            return raw, size
        if isinstance(raw, _CONTAINERS):
            if depth >= MAX_DEPTH:
                return TOO_DEEP, _str_size(TOO_DEEP)
            sub = _Node({} if isinstance(raw, dict) else [], node, slot)
            nodes.append(sub)
            if node.children is _NO_CHILDREN:
                node.children = {}
            node.children[slot] = sub
            work.append((sub, raw, depth + 1))
            return sub.value, 0
        plain = _plain(raw)
        size = _scalar_size(plain)
        if size > _MIN_STRING_BYTES and type(plain) is str:
            leaves.append((node, slot, plain, size))
        return plain, size

    while work:
        node, source, depth = work.pop()
        sizes = node.member_sizes
        out = node.value
        if isinstance(out, dict):
            assert isinstance(source, dict)
            keys = node.keys
            for raw_key, raw in source.items():
                key = raw_key if type(raw_key) is str else _json_key(raw_key)
                if key in out:
                    continue
                child, size = convert(raw, node, len(sizes), depth)
                keys.append(key)
                sizes.append(_str_size(key) + 1 + size)
                out[key] = child
        else:
            assert isinstance(source, list | tuple)
            for raw in source:
                child, size = convert(raw, node, len(sizes), depth)
                sizes.append(size)
                out.append(child)
    for node in reversed(nodes):  # children were created after their parents
        node.size = _container_size(node.member_sizes)
        if node.parent is not None:
            node.parent.member_sizes[node.slot] += node.size
    return root, leaves, nodes


def _cut_string(text: str, room: int) -> str:
    """``text`` shortened so its JSON form is at most ``room`` bytes, marked with its old length."""
    marker = f"… [cut from {len(text):,} characters]"
    prefix_room = room - 2 - len(marker.encode("utf-8"))
    prefix = cut_bytes(text, prefix_room)
    while prefix:
        overshoot = _scalar_size(prefix) - 2 - prefix_room  # escapes (\", \n, \u0001) take more room
        if overshoot <= 0:
            break
        prefix = cut_bytes(prefix, len(prefix.encode("utf-8")) - overshoot)
    return prefix + marker if prefix_room > 0 else cut_bytes(marker, room - 2)


def _resize(node: _Node, slot: int, delta: int) -> None:
    """Change one member's size by ``delta`` and carry it up to the root (depth ≤ MAX_DEPTH)."""
    node.member_sizes[slot] += delta
    current: _Node | None = node
    while current is not None:
        current.size += delta
        if current.parent is not None:
            current.parent.member_sizes[current.slot] += delta
        current = current.parent


def _string_cap(sizes: Sequence[int], excess: int) -> int:
    """Water level: the largest cap such that cutting every string above it saves ``excess`` bytes.

    ``sizes`` is sorted largest first. Never below _MIN_STRING_BYTES (then the string phase alone
    cannot reach the budget and entries are dropped next).
    """
    total = 0
    for k, size in enumerate(sizes, start=1):
        total += size
        cap = (total - excess) // k
        following = sizes[k] if k < len(sizes) else 0
        if cap >= following:
            return max(cap, _MIN_STRING_BYTES)
    return _MIN_STRING_BYTES  # even cutting every string to nothing would not be enough


def _shrink_strings(root: _Node, leaves: list[_Leaf], max_bytes: int) -> None:
    excess = root.size - max_bytes
    candidates = sorted(leaves, key=lambda lf: -lf[3])
    if excess <= 0 or not candidates:
        return
    cap = _string_cap([leaf[3] for leaf in candidates], excess)
    for owner, slot, text, size in candidates:
        if size <= cap:
            break
        short = _cut_string(text, cap)
        if isinstance(owner.value, dict):
            owner.value[owner.keys[slot]] = short
        else:
            owner.value[slot] = short
        _resize(owner, slot, _str_size(short) - size)


def _detach(nodes: Iterable[_Node]) -> None:
    """Mark dropped containers (and everything inside) so they are never trimmed again."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node.detached:
            continue
        node.detached = True
        stack.extend(node.children.values())


def _drop_tail(node: _Node, excess: int, limit: int) -> None:
    """Drop the fewest trailing members of ``node`` that save ``excess`` bytes, leaving a note.

    When even dropping every member cannot save that much, drop what saves the most; when no cut
    saves anything (the note would be as large as what it replaces), leave the node alone.
    """
    sizes = node.member_sizes
    is_dict = isinstance(node.value, dict)
    one, many = ("field", "fields") if is_dict else ("entry", "entries")
    kept_keys = set(node.keys)
    note_key = _OMITTED_KEY
    removed = 0
    best: tuple[int, int, str, str] | None = None  # keep, saved, note, note_key
    for keep in range(len(sizes) - 1, -1, -1):
        removed += sizes[keep] + (1 if keep > 0 else 0)  # the member and the comma before it
        dropped = len(sizes) - keep
        note = f"{dropped:,} more {one if dropped == 1 else many} omitted to fit the {limit_words(limit)} limit"
        note_size = _scalar_size(note)
        if is_dict:
            kept_keys.discard(node.keys[keep])
            while note_key in kept_keys:
                note_key += "…"
            note_size += _scalar_size(note_key) + 1
        saved = removed - note_size - (1 if keep > 0 else 0)
        if best is None or saved > best[1]:
            best = (keep, saved, note, note_key)
        if saved >= excess:
            break
    if best is None or best[1] <= 0:
        return
    keep, _, note, note_key = best
    dropped_children = [node.children.pop(slot) for slot in list(node.children) if slot >= keep]
    _detach(dropped_children)
    if isinstance(node.value, dict):
        for key in node.keys[keep:]:
            del node.value[key]
        del node.keys[keep:]
        node.value[note_key] = note
        node.keys.append(note_key)
        note_member = _scalar_size(note_key) + 1 + _scalar_size(note)
    else:
        del node.value[keep:]
        node.value.append(note)
        note_member = _scalar_size(note)
    del sizes[keep:]
    sizes.append(note_member)
    delta = _container_size(sizes) - node.size
    node.size += delta
    if node.parent is not None:
        _resize(node.parent, node.slot, delta)


def _drop_entries(root: _Node, nodes: list[_Node], kind: type, max_bytes: int) -> None:
    """Trim the largest containers of ``kind`` first until the whole fits."""
    for node in sorted((n for n in nodes if isinstance(n.value, kind)), key=lambda n: -n.size):
        excess = root.size - max_bytes
        if excess <= 0:
            return
        if not node.detached and node.member_sizes:
            _drop_tail(node, excess, max_bytes)


def shrink(value: object, max_bytes: int = MAX_BYTES) -> object:
    """Fit one oversized JSON value into ``max_bytes`` of compact JSON, saying what was cut.

    First the largest strings at any depth are cut to a common length (largest first, never below
    about 100 bytes), each ending "… [cut from N characters]"; if that is not enough, the largest
    lists lose trailing entries (a note entry says how many), then the largest objects lose
    trailing fields (a "…omitted" field says how many). The input is never modified: the result
    is a copy, even when nothing had to be cut. O(n log n) in the number of fields. Containers
    nested deeper than MAX_DEPTH become a marker string and non-finite numbers become null, so
    the result is always writable as strict JSON.
    """
    if max_bytes < MIN_SHRINK_BYTES:
        raise BudgetError(f"shrink needs at least {MIN_SHRINK_BYTES} bytes to say what it cut.")
    if not isinstance(value, dict | list | tuple):
        plain = _plain(value)
        if isinstance(plain, str) and _scalar_size(plain) > max_bytes:
            return _cut_string(plain, max_bytes)
        return plain
    root, leaves, nodes = _copy(value)
    if root.size > max_bytes:
        _shrink_strings(root, leaves, max_bytes)
        _drop_entries(root, nodes, list, max_bytes)
        _drop_entries(root, nodes, dict, max_bytes)
    if root.size > max_bytes or json_size(root.value) > max_bytes:  # pragma: no cover - sizes are exact
        # A guard for a bug in the accounting above: say so rather than send an oversized result.
        note = f"the value was too large to show within the {limit_words(max_bytes)} limit"
        return {_OMITTED_KEY: note} if isinstance(root.value, dict) else [note]
    return root.value
