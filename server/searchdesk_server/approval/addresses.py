"""How an address is shown among a question's values: as `text.show_url` shows it (hosts in ASCII), a
look-alike host marked in its label, and the sentence a consequence then carries. The question's words
and its notification form both read the mark.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..agent import protocol
from ..text.addresses import show_url

#: The mark of an address whose host is a look-alike (`url_line`), and what the consequence then says.
LOOKS_LIKE = "looks like"
LOOKS_LIKE_WARNING = (
    "An address marked “looks like” is written with letters of other alphabets that look like the ones it "
    "resembles, so it is another address: check it letter by letter."
)


def url_line(label: str, url: str) -> tuple[str, str]:
    """A property, sitemap or website line, as (label, the value whole): the address as `text.show_url`
    shows it (hosts in ASCII), a look-alike host marked in the label as the owners' "reads like" is."""
    shown = show_url(url)
    if shown.looks_like is None:
        return label, shown.text
    marked = f"{label} ({LOOKS_LIKE} {shown.looks_like}, but is not)"
    if not shown.looks_like or len(marked) > protocol.MAX_LABEL_CHARS:
        marked = f"{label} ({LOOKS_LIKE} another address, but is not)"
    return marked, shown.text


def looks_like_warning(lines: Sequence[tuple[str, str]]) -> list[str]:
    """The sentence a consequence carries when an address in `lines` is marked "looks like" (`url_line`)."""
    return [LOOKS_LIKE_WARNING] if any(f"({LOOKS_LIKE} " in label for label, _ in lines) else []
