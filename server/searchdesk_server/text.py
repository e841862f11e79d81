"""Cleaning untrusted text: everything Google returns, and everything a caller passes, is hostile.

Search queries are typed by the public and page titles are written by whoever runs a crawled site, so
a string from Google may carry control characters that confuse terminals and JSON consumers, lone
surrogates that make UTF-8 encoders raise, bidi overrides that make a person read a different value
than the one we act on, or credential-shaped text that must never be echoed. This module imports only
the standard library and is cheap to import: it runs on every result (the `idna` package is loaded by
`show_url`, when a question is built).
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "MAX_DEPTH",
    "RESERVED_KEYS",
    "TOO_DEEP",
    "ShownUrl",
    "clean",
    "clean_json",
    "cut",
    "cut_bytes",
    "describe",
    "escaped",
    "flatten",
    "is_plain_text",
    "md_cell",
    "plural",
    "reads_like",
    "redact",
    "shorten",
    "show_url",
    "show_value",
    "too_long",
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
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
# Characters that end a line or separate fields; flatten turns them into spaces instead of deleting
# them so "a\nb" reads as "a b", not "ab".
_BREAKS = re.compile("[\t\n\x0b\x0c\r\x1c-\x1f\x85\u2028\u2029]")
# Invisible characters that change how a value reads without being seen: bidi embeddings,
# overrides, isolates and marks; zero-width characters; the soft hyphen; invisible math operators;
# deprecated format characters; interlinear annotation controls; and the tag block ("ASCII
# smuggling" in prompt injection).
_INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
_SPACES = re.compile(r"\s+")
_MD_SPECIAL = re.compile(r"[\\|`<]")
_PLAIN = re.compile(r"[A-Za-z0-9 ._:/@+\-]{1,40}")

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
    if _SURROGATE.search(s) is None:
        return s
    return _SURROGATE.sub(_join_surrogates, s)


def clean(s: str) -> str:
    """Strip control characters (keeping tab, newline, CR) and repair lone surrogates.

    Everything else, including emoji and every script, is kept: the text is data a person may
    need to read exactly. Idempotent.
    """
    if s.isprintable():  # no Cc (controls) and no Cs (surrogates): the common case, in C
        return s
    return _fix_surrogates(_CONTROL.sub("", s))


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
    s = _BREAKS.sub(" ", s)
    s = _INVISIBLE.sub("", clean(s))
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


# --- safe text: the one definition the question and the agent socket share ---------------------

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


# --- look-alike letters ------------------------------------------------------------------------

#: Letters (and a few marks) of other alphabets that read as an ASCII one in common fonts, folded to it:
#: Unicode's confusables (unicode.org/Public/security/latest/confusables.txt), cut to lower-case letters,
#: digits and separators that occur in host names and e-mail addresses. Width forms, ligatures and
#: mathematical letters need no entry: NFKC and NFKD fold them. One table for owner addresses
#: (`reads_like`) and host names (`show_url`).
LOOKALIKES: Final = str.maketrans(
    {
        # Cyrillic
        "а": "a",
        "б": "6",
        "в": "b",
        "г": "r",
        "е": "e",
        "з": "3",
        "к": "k",
        "н": "h",
        "о": "o",
        "п": "n",
        "р": "p",
        "с": "c",
        "т": "t",
        "у": "y",
        "х": "x",
        "ь": "b",
        "һ": "h",
        "і": "i",
        "ј": "j",
        "ѕ": "s",
        "ԁ": "d",
        "ԛ": "q",
        "ԝ": "w",
        "ӏ": "l",
        "ү": "y",
        "ҽ": "e",
        "ѵ": "v",
        # Greek
        "α": "a",
        "γ": "y",
        "ε": "e",
        "η": "n",
        "ι": "i",
        "κ": "k",
        "ν": "v",
        "ο": "o",
        "ρ": "p",
        "τ": "t",
        "υ": "u",
        "χ": "x",
        "ω": "w",
        "ϲ": "c",
        "ϳ": "j",
        # Armenian
        "ա": "w",
        "զ": "q",
        "հ": "h",
        "ո": "n",
        "ս": "u",
        "ց": "g",
        "օ": "o",
        # Latin letters outside ASCII that carry no mark
        "ı": "i",
        "ɑ": "a",
        "ɡ": "g",
        "ɩ": "i",
        "ȷ": "j",
        "ĸ": "k",
        "ǀ": "l",
        # Separators: dashes that read as a hyphen, full stops a browser reads as the dot between labels
        "‐": "-",
        "‒": "-",
        "–": "-",
        "−": "-",
        "。": ".",
        "｡": ".",
    }
)
#: Among ASCII characters themselves, what a person can mistake in an address (0 and o, 1 and l, …).
_ASCII_LOOKALIKES: Final = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l", "5": "s"})


def reads_like(address: str) -> str:
    """An address folded to how it reads: case, width, accents, invisible characters and look-alike
    letters do not count. Two owner addresses that fold alike are marked "reads like" in a question."""
    folded = unicodedata.normalize("NFKD", address).casefold()
    kept = "".join(ch for ch in folded if unicodedata.category(ch)[0] not in "CMZ")
    return (
        kept.translate(LOOKALIKES).translate(_ASCII_LOOKALIKES).replace("rn", "m").replace("vv", "w").replace("cl", "d")
    )


def _host_reads_as(host: str) -> str:
    """A host name as it reads: width forms and look-alike letters folded, invisible characters and marks
    left over after composing dropped. Unlike `reads_like`, accents count (bücher.de is not bucher.de) and
    so does ß (faß.de is not fass.de): only what looks the same folds."""
    folded = unicodedata.normalize("NFKC", host).lower()
    kept = "".join(ch for ch in folded if unicodedata.category(ch)[0] not in "CM")
    return kept.translate(LOOKALIKES)


# --- URLs and host names -----------------------------------------------------------------------

#: The scripts one host name may mix (Unicode's "highly restrictive" level, UTS #39 5.2): Japanese,
#: Chinese and Korean writing mix their scripts, each also with Latin; any other mix is one a spoof uses.
_SCRIPT_SETS: Final = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
# A URL's parts around its host (the host is shown in ASCII, the rest escaped): the scheme and any user
# name, or sc-domain:, or nothing (a bare host name); then the host; then port, path, query and fragment.
_URL = re.compile(
    r"(?P<head>(?i:sc-domain:)|[A-Za-z][A-Za-z0-9+.\-]*://(?:[^/?#@\\]*@)?)?"
    r"(?P<host>\[[^\]]*\]|[^/?#:@\\]*)(?P<rest>.*)",
    re.DOTALL,
)


def _script(ch: str) -> str | None:
    """The script a letter or digit is written in, from its Unicode name (the standard library has no
    script property); None for what every script uses (marks, punctuation, symbols)."""
    if unicodedata.category(ch)[0] not in "LN":
        return None
    if ch.isascii():
        return "LATIN" if ch.isalpha() else None
    name = unicodedata.name(ch, "")
    if name.startswith(("CJK ", "IDEOGRAPHIC ")):
        return "HAN"
    if name.startswith("KATAKANA-HIRAGANA "):  # the prolonged sound mark: both kana scripts use it
        return None
    word = name.split(" ", 1)[0]
    return word.split("-", 1)[0] or None  # ARABIC-INDIC DIGIT ONE: ARABIC


def _one_script(scripts: set[str]) -> bool:
    return len(scripts) <= 1 or any(scripts <= allowed for allowed in _SCRIPT_SETS)


@dataclass(frozen=True)
class ShownUrl:
    """A URL or host name as a question shows it. `text` is its whole shown form (not shortened: `shorten`
    makes that). `looks_like` says whether the host is a look-alike: None when not; else the ASCII host it
    reads like, or "" when it mixes alphabets and reads like no one ASCII host."""

    text: str
    looks_like: str | None = None


def show_url(url: str) -> ShownUrl:
    """A property, sitemap or website address as a person is shown it: every character visible, the host
    in ASCII.

    An international host (IDN) is shown in its ASCII form, each label as IDNA 2008 writes it (``xn--``);
    only one written in one script that reads like no ASCII host also gets its own form beside the URL
    (``https://xn--bcher-kva.de/ (bücher.de)``). One that mixes scripts, or reads like an ASCII host once its
    look-alike letters are folded (`LOOKALIKES`: a Cyrillic "а" as an "a"), is shown in ASCII alone and
    named in `looks_like`, for the question to mark. A label IDNA 2008 refuses (upper case, width forms,
    joiners, symbols) is shown escaped, as is every other non-ASCII character of the URL (``\\u0430``):
    two different addresses never read the same.
    """
    parts = _URL.fullmatch(url)
    assert parts is not None  # every part of the pattern may be empty
    head, host, rest = parts["head"] or "", parts["host"], parts["rest"]
    if host.isascii():
        return ShownUrl(escaped(url, ascii_only=True))
    shown_host, looks_like, own_form = _show_host(host)
    text = escaped(head, ascii_only=True) + shown_host + escaped(rest, ascii_only=True)
    return ShownUrl(f"{text} ({own_form})" if own_form else text, looks_like)


def _show_host(host: str) -> tuple[str, str | None, str]:
    """A host with some non-ASCII label: its shown ASCII form, whether it is a look-alike (as in
    `ShownUrl`), and its own form to show beside it ("" when it must not be)."""
    import idna  # IDNA 2008 (RFC 5891): the standard library's codec is IDNA 2003 (faß.de as fass.de)

    labels = host.split(".")
    shown: list[str] = []
    valid = True
    for label in labels:
        if label.isascii():
            shown.append(escaped(label, ascii_only=True))
            continue
        try:
            shown.append(idna.alabel(label).decode("ascii"))
        except (idna.IDNAError, UnicodeError):
            valid = False
            shown.append(escaped(label, ascii_only=True))
    foreign = [label for label in labels if not label.isascii()]
    scripts = {s for label in foreign for ch in label if (s := _script(ch)) is not None}
    reads_as = _host_reads_as(host)
    looks_like: str | None = None
    if reads_as.isascii():
        looks_like = escaped(reads_as, ascii_only=True)
    elif not _one_script(scripts):
        looks_like = ""
    own_form = escaped(host) if valid and looks_like is None else ""
    return ".".join(shown), looks_like, own_form


# --- credentials -------------------------------------------------------------------------------

_CRED_CHARS = r"[A-Za-z0-9_\-.~+/=]"
_SECRET_PATTERNS: Final = (
    # A PEM private key, with or without its end line (a cut-off message still holds the key). The
    # body may hold real newlines or JSON's "\n" escapes.
    re.compile(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY-----[A-Za-z0-9+/=\s\\]*"
        r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY-----)?"
    ),
    re.compile(r"ya29\." + _CRED_CHARS + "*"),  # OAuth access token
    re.compile(r"1//" + _CRED_CHARS + "{8,}"),  # OAuth refresh token
    re.compile(r"GOCSPX-" + _CRED_CHARS + "*"),  # OAuth client secret
    re.compile(r"AIza" + _CRED_CHARS + "{8,}"),  # API key
    # A DER private key's base64 without its PEM header (the message was cut before it).
    re.compile(r"MII[A-Za-z0-9+/]{2}(?:[A-Za-z0-9+/=]|\\n|\s){60,}"),
)
# JSON (or Python repr) values of credential fields; only the value is replaced.
_SECRET_VALUE = re.compile(
    r"""\\?["'](?:private_key|client_secret|refresh_token|access_token)\\?["']\s*:\s*"""
    r"""(?P<v>"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|\\"(?:[^"\\]|\\[^"])*(?:\\")?)""",
    re.DOTALL,
)
# Whatever follows "Bearer" (any kind of token, not only Google's shapes); the word itself stays.
_BEARER = re.compile(r"""(?i)\bbearer\s+(?P<v>[^\s"',;]+)""")
_PEM_END = re.compile(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY-----")
_PEM_BODY_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\\ \t\r\n")
REDACTED: Final = "[redacted]"


#: A secret we hold is redacted wherever it appears, whatever its shape; shorter ones are too likely
#: to match ordinary text.
KNOWN_MIN: Final = 8


def _secret_spans(s: str, known: Iterable[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for secret in known:
        if len(secret) >= KNOWN_MIN:
            at = s.find(secret)
            while at != -1:
                spans.append((at, at + len(secret)))
                at = s.find(secret, at + len(secret))
    for pattern in _SECRET_PATTERNS:
        spans.extend(m.span() for m in pattern.finditer(s))
    spans.extend(m.span("v") for m in _SECRET_VALUE.finditer(s))
    spans.extend(m.span("v") for m in _BEARER.finditer(s))
    # An end line whose beginning was cut away: take the key body before it. Walking back by hand
    # keeps this linear (a regex anchored on the end line would rescan the body from every start).
    for m in _PEM_END.finditer(s):
        start = m.start()
        while start > 0 and s[start - 1] in _PEM_BODY_CHARS:
            start -= 1
        spans.append((start, m.end()))
    return spans


def redact(s: str, known: Iterable[str] = ()) -> str:
    """Replace credential shapes anywhere in ``s``, and every secret in ``known`` (the tokens a call
    used, which Google may echo back), with "[redacted]".

    Each pattern is matched on the original text independently and the spans are merged, so one
    secret ending where another begins cannot shield the second one's tail.
    """
    spans = sorted(span for span in _secret_spans(s, known) if span[1] > span[0])
    if not spans:
        return s
    out: list[str] = []
    pos = 0
    cur_start, cur_end = spans[0]
    for start, end in spans[1:]:
        if start <= cur_end:
            cur_end = max(cur_end, end)
            continue
        out.append(s[pos:cur_start])
        out.append(REDACTED)
        pos = cur_end
        cur_start, cur_end = start, end
    out.append(s[pos:cur_start])
    out.append(REDACTED)
    out.append(s[cur_end:])
    return "".join(out)


# --- describing a rejected value ---------------------------------------------------------------


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
    if _CONTROL.search(value) or _BREAKS.search(value):
        return f"{size} with control characters or line breaks"
    if _SURROGATE.search(value):
        return f"{size} with invalid characters"
    if _INVISIBLE.search(value):
        return f"{size} with invisible formatting characters"
    if not value.strip():
        return f"{size} of only spaces"
    if not value.isascii():
        return f"{size} with non-ASCII characters"
    if len(value) > 40:
        return size
    return f"{size} with unusual punctuation"
