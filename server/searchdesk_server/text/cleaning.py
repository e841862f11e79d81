"""Cleaning untrusted text: everything Google returns, and everything a caller passes, is hostile.

Search queries are typed by the public and page titles are written by whoever runs a crawled site, so
a string from Google may carry control characters that confuse terminals and JSON consumers, lone
surrogates that make UTF-8 encoders raise, or bidi overrides that make a person read a different value
than the one we act on. This module cleans and cuts such text (`clean`, `clean_json`, `cut`, `flatten`,
`md_cell`); how a value is shown in an approval question is `text.display`'s, and credential-shaped text
is `text.redaction`'s. It imports only the standard library and is cheap to import: it runs on every
result.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any, Final

__all__ = [
    "BREAKS",
    "CONTROL",
    "INVISIBLE",
    "MAX_DEPTH",
    "RESERVED_KEYS",
    "SURROGATE",
    "TOO_DEEP",
    "clean",
    "clean_json",
    "cut",
    "cut_bytes",
    "flatten",
    "md_cell",
]


#: Containers nested deeper than this are replaced by :data:`TOO_DEEP`. Google's deepest documented
#: shape (URL inspection, rich results) is well under ten levels; 32 leaves room and keeps every
#: later recursive step (``json.dumps``) far from Python's recursion limit.
MAX_DEPTH: Final = 32
TOO_DEEP: Final = f"[omitted: nested deeper than {MAX_DEPTH} levels]"
CIRCULAR: Final = "[omitted: circular reference]"

#: Keys dropped at every level: prototype-pollution names that hurt JavaScript consumers, and the
#: two keys the server uses for its own top-level marker (Google's data must not forge or hide it).
RESERVED_KEYS: Final = frozenset({"__proto__", "constructor", "prototype", "untrusted", "source"})

# C0 (minus tab, LF, CR), DEL and C1.
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
SURROGATE = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
# Characters that end a line or separate fields; flatten turns them into spaces instead of deleting
# them so "a\nb" reads as "a b", not "ab".
BREAKS = re.compile("[\t\n\x0b\x0c\r\x1c-\x1f\x85\u2028\u2029]")
# Invisible characters that change how a value reads without being seen: bidi embeddings,
# overrides, isolates and marks; zero-width characters; the soft hyphen; invisible math operators;
# deprecated format characters; interlinear annotation controls; and the tag block ("ASCII
# smuggling" in prompt injection).
INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_SPACES = re.compile(r"\s+")
_MD_SPECIAL = re.compile(r"[\\|`<]")

_REPLACEMENT: Final = "\ufffd"


def _join_surrogates(match: re.Match[str]) -> str:
    pair = match.group()
    if len(pair) == 2:
        return chr(0x10000 + ((ord(pair[0]) - 0xD800) << 10) + (ord(pair[1]) - 0xDC00))
    return _REPLACEMENT


def _fix_surrogates(s: str) -> str:
    """Join surrogate pairs into the character they encode; replace lone ones with U+FFFD.

    A Python string can hold surrogates (from ``surrogatepass``/``surrogateescape`` decoding or a
    JSON ``\\ud83d`` escape with no partner); they cannot be encoded as UTF-8, so one of them would
    make the whole result unsendable.
    """
    if SURROGATE.search(s) is None:
        return s
    return SURROGATE.sub(_join_surrogates, s)


def clean(s: str) -> str:
    """Strip control characters (keeping tab, newline, CR) and repair lone surrogates.

    Everything else, including emoji and every script, is kept: the text is data a person may
    need to read exactly. Idempotent.
    """
    if s.isprintable():  # no Cc (controls) and no Cs (surrogates): the common case, in C
        return s
    return _fix_surrogates(CONTROL.sub("", s))


def _clean_key(key: object) -> str:
    if isinstance(key, str):
        return clean(key)
    if key is None or isinstance(key, bool):
        return "null" if key is None else ("true" if key else "false")
    if isinstance(key, bytes | bytearray):
        return clean(bytes(key).decode("utf-8", "replace"))
    if isinstance(key, float) and not math.isfinite(key):
        return "NaN" if math.isnan(key) else ("Infinity" if key > 0 else "-Infinity")
    return clean(str(key))


_DROP: Final = object()  # a scalar that must be left out (a number JSON cannot carry)
_MAX_INT_BITS: Final = 1024  # far beyond any count; keeps json.dumps clear of its 4,300-digit limit


def _clean_scalar(value: object) -> object:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, int):
        return int(value) if value.bit_length() <= _MAX_INT_BITS else _DROP
    if isinstance(value, float):
        if not math.isfinite(value):
            return _DROP
        return float(value) + 0.0  # -0.0 + 0.0 == 0.0; also turns a float subclass into a float
    if isinstance(value, bytes | bytearray):
        return clean(bytes(value).decode("utf-8", "replace"))
    return clean(str(value))


_CONTAINERS: Final = (dict, list, tuple)


def clean_json(value: object) -> object:
    """Return a cleaned copy of a decoded JSON value that is safe to re-serialise and to show.

    Strings and keys are cleaned; a non-string key is stringified the way JSON would; reserved
    keys are dropped; non-finite numbers are left out (JSON has no NaN); -0.0 becomes 0.0;
    tuples become lists; containers nested deeper than :data:`MAX_DEPTH` become :data:`TOO_DEEP`.
    When two keys clean to the same string the first one wins. Iterative (depth-first with an
    explicit stack, scalars copied in a tight loop), linear in the size of the tree; a container
    that contains itself is cut at the repeat, never followed forever.
    """
    if not isinstance(value, _CONTAINERS):
        scalar = _clean_scalar(value)
        return None if scalar is _DROP else scalar

    root: dict[str, object] | list[object] = {} if isinstance(value, dict) else []
    # Each frame: the output container, the input's remaining members, the input's id.
    stack: list[tuple[dict[str, object] | list[object], Iterator[Any], int]] = [
        (root, iter(value.items() if isinstance(value, dict) else value), id(value))
    ]
    on_path = {id(value)}
    while stack:
        out, members, source_id = stack[-1]
        deeper: tuple[object, dict[str, object] | list[object]] | None = None
        if isinstance(out, dict):
            for raw_key, raw in members:
                key = clean(raw_key) if type(raw_key) is str else _clean_key(raw_key)
                if key in RESERVED_KEYS or key in out:
                    continue
                if isinstance(raw, _CONTAINERS):
                    child = _enter(raw, len(stack), on_path)
                    out[key] = child
                    if not isinstance(child, str):
                        deeper = (raw, child)
                        break
                    continue
                scalar = clean(raw) if type(raw) is str else _clean_scalar(raw)
                if scalar is not _DROP:
                    out[key] = scalar
        else:
            for raw in members:
                if isinstance(raw, _CONTAINERS):
                    child = _enter(raw, len(stack), on_path)
                    out.append(child)
                    if not isinstance(child, str):
                        deeper = (raw, child)
                        break
                    continue
                scalar = clean(raw) if type(raw) is str else _clean_scalar(raw)
                if scalar is not _DROP:
                    out.append(scalar)
        if deeper is None:
            stack.pop()
            on_path.discard(source_id)
        else:
            raw, child = deeper
            assert isinstance(raw, _CONTAINERS)
            stack.append((child, iter(raw.items() if isinstance(raw, dict) else raw), id(raw)))
            on_path.add(id(raw))
    return root


def _enter(raw: dict[Any, Any] | list[Any] | tuple[Any, ...], depth: int, on_path: set[int]) -> Any:
    """The empty copy of a nested container, or the marker that replaces it."""
    if id(raw) in on_path:
        return CIRCULAR
    if depth >= MAX_DEPTH:
        return TOO_DEEP
    return {} if isinstance(raw, dict) else []


def _repaired_head(s: str, limit: int) -> tuple[str, bool]:
    """Repair the part of ``s`` that can matter for a cut at ``limit``; say whether it is all of s.

    Every repaired character comes from at most two raw ones, so ``2 * (limit + 1)`` raw characters
    always yield more than ``limit`` repaired ones when the string goes on; a pair split by that
    raw boundary lands beyond ``limit`` and is cut away by the caller.
    """
    raw = s[: 2 * (limit + 1)]
    return _fix_surrogates(raw), len(raw) == len(s)


def cut(s: str, limit: int, marker: str = "…") -> str:
    """Shorten to at most ``limit`` characters, ending with ``marker`` when anything was cut.

    Surrogates are repaired first, so the result never holds half a pair or a lone surrogate. Work
    is proportional to ``limit``, not to the length of ``s``.
    """
    if limit <= 0:
        return ""
    head, whole = _repaired_head(s, limit)
    if whole and len(head) <= limit:
        return head
    marker = _fix_surrogates(marker)
    if len(marker) >= limit:
        return marker[:limit]
    return head[: limit - len(marker)] + marker


def cut_bytes(s: str, limit: int) -> str:
    """Shorten to at most ``limit`` UTF-8 bytes, on a character boundary (no marker is added)."""
    if limit <= 0:
        return ""
    head, whole = _repaired_head(s, limit)
    data = head.encode("utf-8")
    if whole and len(data) <= limit:
        return head
    # "ignore" only drops the character the byte cut went through: the rest is valid UTF-8.
    return data[:limit].decode("utf-8", "ignore")


def flatten(s: str, limit: int | None = 200) -> str:
    """One line a person can read safely in an approval question or an error message.

    Line breaks become spaces; control, bidi and zero-width characters go (they can make a value
    read differently from what it is); whitespace runs collapse; then the value is cut at
    ``limit`` characters with "…" (``None``: not cut, for a caller that redacts before cutting).
    """
    s = BREAKS.sub(" ", s)
    s = INVISIBLE.sub("", clean(s))
    s = _SPACES.sub(" ", s).strip()
    return s if limit is None else cut(s, limit)


def md_cell(s: str, limit: int = 200) -> str:
    """A value for a Markdown table cell: one line, no way out of its cell or into markup.

    ``\\``, ``|``, backticks and ``<`` are backslash-escaped (so no code span, raw HTML or extra
    column can start), and the escaped text is cut at ``limit`` characters without splitting an
    escape.
    """
    flat = flatten(s, limit)
    escaped = _MD_SPECIAL.sub(lambda m: "\\" + m.group(), flat)
    if len(escaped) <= limit:
        return escaped
    out: list[str] = []
    used = 0
    room = limit - 1  # leave room for "…"
    for ch in flat:
        piece = "\\" + ch if ch in "\\|`<" else ch
        if used + len(piece) > room:
            break
        out.append(piece)
        used += len(piece)
    return "".join(out) + "…"
