"""How an address reads and how a question shows it: look-alike letters, URLs and host names.

An owner's e-mail address or a site's host can be written with letters of another alphabet that read as
ASCII ones (a Cyrillic "а" for an "a"), so a person approving a change could read one address and
approve another. `reads_like` folds an owner address to how it reads; `show_url` shows a property,
sitemap or website address with its host in ASCII and says when the host is a look-alike. Both use one
table of look-alike letters (`LOOKALIKES`). The `idna` package is loaded by `show_url`, when a question
is built, not when this module is imported.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

from .display import escaped

__all__ = ["LOOKALIKES", "ShownUrl", "reads_like", "show_url"]

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
