"""How an approval question shows a value: one line, every character visible, at most 240 characters.

The one definition of safe text the question and the agent socket share (`is_plain_text`: the socket
refuses exactly what the server escapes), a value's whole shown form (`escaped`, what the app's dialog
shows) and its shortening (`shorten`: start, end, how much is left out and a digest, so two different
values never read the same). Addresses are shown by `text.addresses`, which builds on this.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Final

__all__ = [
    "DIGEST_BITS",
    "ELLIPSIS",
    "SHOWN_LIMIT",
    "SHOWN_MAX",
    "SHOWN_TAIL",
    "UNSAFE_CATEGORIES",
    "digest_groups",
    "escaped",
    "is_plain_text",
    "is_safe_char",
    "shorten",
    "show_value",
]

#: Unicode categories a person cannot see, or cannot see reliably: controls, format characters (bidi
#: overrides, zero-width, Arabic number signs, …), surrogates, private use, unassigned, and the line
#: and paragraph separators. A dialog must never receive one raw: it could reorder, hide or fake text.
UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def is_safe_char(ch: str) -> bool:
    """Whether one character may be shown as itself. Every space but U+0020 is unsafe too: a no-break
    or ideographic space reads as a plain space, so two different values would read the same."""
    category = unicodedata.category(ch)
    return category not in UNSAFE_CATEGORIES and (category != "Zs" or ch == " ")


def is_plain_text(text: str) -> bool:
    """No character `is_safe_char` refuses. The agent socket's validation uses exactly this rule, and
    the server escapes exactly these characters, so it never builds a question the app refuses."""
    return (text.isascii() and text.isprintable()) or all(is_safe_char(ch) for ch in text)


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


#: The mark a shortened value uses for what it leaves out: escaped wherever a value holds it, so a value
#: shown whole can never read like another one shown shortened.
ELLIPSIS: Final = "…"


def _shown_chars(s: str, *, ascii_only: bool) -> list[str]:
    """One shown piece per character: backslashes doubled, then every unsafe character (or, with
    ``ascii_only``, every non-ASCII one: homoglyphs too) as a visible escape, and the ellipsis a shortened
    value is marked with. In a string that is not NFC-normalised, combining marks are escaped as well, so
    "é" and "e" + U+0301 never read alike."""
    marks_escaped = not unicodedata.is_normalized("NFC", s)
    pieces: list[str] = []
    for ch in s:
        if ch == "\\":
            pieces.append("\\\\")
        elif (
            (ascii_only and not " " <= ch <= "~")
            or not is_safe_char(ch)
            or ch == ELLIPSIS
            or (marks_escaped and unicodedata.category(ch) in ("Mn", "Mc", "Me"))
        ):
            pieces.append(_escape(ch))
        else:
            pieces.append(ch)
    return pieces


def escaped(s: str, *, ascii_only: bool = False) -> str:
    """A value whole, as a person is shown it: one line, every character visible (see `show_value`), not
    shortened. This is what the app's dialog shows (``values[].whole``); `shorten` makes the rest's form."""
    return "".join(_shown_chars(s, ascii_only=ascii_only))


#: A value longer than this (once escaped) shows its start and end, how much is left out and a digest.
SHOWN_MAX: Final = 200
#: The most a shortened value takes (the agent socket's ``MAX_VALUE_CHARS`` is this).
SHOWN_LIMIT: Final = 240
SHOWN_TAIL: Final = 56
#: How many bits of the value's SHA-256 a shortened value shows: enough that no machine finds two values
#: that read the same (at 32 bits a laptop found a pair in 0.2 s), written in groups of four hex digits
#: a person can compare one by one.
DIGEST_BITS: Final = 128
# One piece a shortening never splits: an escape made by `_shown_chars`, or one character.
_PIECE = re.compile(r"\\(?:\\|u[0-9a-f]{4}|U[0-9a-f]{8})|.", re.DOTALL)


def digest_groups(whole: str) -> str:
    """The first 128 bits of the SHA-256 of a shown value, as eight groups of four hex digits."""
    digits = hashlib.sha256(whole.encode("utf-8")).hexdigest()[: DIGEST_BITS // 4]
    return " ".join(digits[i : i + 4] for i in range(0, len(digits), 4))


def shorten(whole: str) -> str:
    """A shown value (`escaped`, `show_url`) in at most 240 characters: itself up to 200, else its start,
    how many characters are left out, its end and `digest_groups` of the whole — the digest decides even
    when two values share their start and end. Never splits an escape. A pure function of what the app's
    dialog shows whole, so anyone holding both can check that one is the other's shortening."""
    if len(whole) <= SHOWN_MAX:
        return whole
    digest = f" [sha256 {digest_groups(whole)}]"
    most_left_out = f"{ELLIPSIS}({len(whole):,} characters left out){ELLIPSIS}"
    room = SHOWN_LIMIT - len(digest) - len(most_left_out) - SHOWN_TAIL  # for the start
    pieces = _PIECE.findall(whole)
    head: list[str] = []
    used = 0
    for piece in pieces:
        if used + len(piece) > room:
            break
        head.append(piece)
        used += len(piece)
    tail: list[str] = []
    used = 0
    for piece in reversed(pieces[len(head) :]):
        if used + len(piece) > SHOWN_TAIL:
            break
        tail.append(piece)
        used += len(piece)
    tail.reverse()
    start, end = "".join(head), "".join(tail)
    left_out = len(whole) - len(start) - len(end)
    return f"{start}{ELLIPSIS}({left_out:,} characters left out){ELLIPSIS}{end}{digest}"


def show_value(s: str, *, ascii_only: bool = False) -> str:
    """A value as a person is shown it in an approval question: one line, every character visible.

    What is shown is what is sent: nothing is dropped, escapes are reversible (backslashes are
    doubled first), and a value too long to show whole is `shorten`-ed: its start and end, how many
    characters are left out and a 128-bit digest, so two different values never read the same. The
    result is at most 240 characters.
    """
    return shorten(escaped(s, ascii_only=ascii_only))
