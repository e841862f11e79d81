"""A property's brand terms: derived from its domain name, escaped, and joined into one Google filter.

One definition for the app (which seeds each property's list in Settings from the domain name) and
the server (report_brand_split, which falls back to the same terms when the person kept none).
Standard library only: the app imports it, and it is on no start-up path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import urlsplit

MAX_TERMS: Final = 20
MAX_TERM_LENGTH: Final = 100
#: Second-level labels under a two-letter country code that are not the brand (example.co.uk).
_SECOND_LEVEL: Final = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or"})


def host_of(site: str) -> str:
    """The host name a property stands for: sc-domain:example.com → example.com; a URL prefix's host."""
    if site.startswith("sc-domain:"):
        return site.removeprefix("sc-domain:").strip().lower().rstrip(".")
    return (urlsplit(site).hostname or "").lower().rstrip(".")


def domain_terms(site: str) -> tuple[str, ...]:
    """The brand terms a domain name suggests: its registrable name (the label before the public
    suffix: shop.example.co.uk → example), and, for a hyphenated name, it with spaces and run together
    (my-garden → my-garden, my garden, mygarden). Empty for a host with no such label (an IP address)."""
    labels = [label for label in host_of(site).split(".") if label]
    if len(labels) < 2 or all(label.isdigit() for label in labels):
        return ()
    suffix = 2 if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in _SECOND_LEVEL else 1
    name = labels[-1 - suffix]
    variants = [name]
    if "-" in name:
        variants += [name.replace("-", " "), name.replace("-", "")]
    return tuple(dict.fromkeys(variants))


def clean_terms(terms: Iterable[object]) -> tuple[str, ...]:
    """Terms as matched: strings only, trimmed, lower-cased (Google's queries are lower case), no
    empty or repeated ones, at most `MAX_TERMS` of at most `MAX_TERM_LENGTH` characters. A term holding
    a control or invisible character (`printable` is False) is left out: no query a person typed holds
    one, and the answer names every term it used."""
    out: list[str] = []
    for term in terms:
        if isinstance(term, str) and printable(word := " ".join(term.split()).lower()[:MAX_TERM_LENGTH]):
            out.append(word)
    return tuple(dict.fromkeys(out))[:MAX_TERMS]


def printable(term: str) -> bool:
    """A term a person could have typed: not empty, and no control, format (bidi, zero-width) or
    unassigned character (`str.isprintable`; the one space between words is kept)."""
    return bool(term) and term.isprintable()


def escaped(term: str) -> str:
    """A term as a literal in an RE2 pattern, the only way a term enters one.

    `re.escape` puts a backslash before each ASCII character that has a meaning in a pattern, never
    before a letter, a digit or a non-ASCII character; RE2 reads a backslash before any ASCII
    character that is neither a letter nor a digit as that character itself (re2/parse.cc,
    ParseEscape: "Escaped non-word characters are always themselves"). So the escaped term matches
    exactly its own characters in RE2 (Google; the archive's filters) and in Python's re (the demo)."""
    return re.escape(term)


def brand_pattern(terms: Iterable[str]) -> str:
    """One case-insensitive RE2 pattern matching a query that contains any of `terms` (each escaped)."""
    return "(?i)" + "|".join(escaped(t) for t in terms)
