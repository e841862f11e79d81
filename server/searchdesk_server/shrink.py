"""Shrinking one oversized JSON value until it fits the result budget, each cut marked.

A tool whose result is one object, not a list (a URL inspection, a sitemap's details), can still pass
100,000 bytes when Google's answer holds long strings or long lists. `shrink` shortens the largest
strings first, then trims the largest lists and objects from their ends, and says at each cut what it
left out. Lists of entries are `budget.fit_listing`'s: whole entries, never a cut inside one.

Pure stdlib and cheap to import; linear or O(n log n) in the number of fields, each measured once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from searchdesk_server.budget import COMPACT_JSON, MAX_BYTES, BudgetError, json_size, limit_words
from searchdesk_server.text.cleaning import MAX_DEPTH, TOO_DEEP, cut_bytes

__all__ = ["MIN_SHRINK_BYTES", "shrink"]

#: Below this, :func:`shrink` cannot promise a meaningful result (its own notes need room).
MIN_SHRINK_BYTES: Final = 256
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
        written: dict[str, int] = json.loads(COMPACT_JSON.encode({key: 0}))
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
