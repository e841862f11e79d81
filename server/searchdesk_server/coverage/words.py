"""The coverage watch's words a person reads, in one place for the app and the server."""

from __future__ import annotations

import datetime as dt
from typing import Final

from ..text.phrases import plural

#: What the watch, and its tools' group in Settings, are called in the app.
TITLE: Final = "Which of your pages are in Google"
#: The question the app asks after sign-in and shows in Settings (the watch's one switch).
QUESTION: Final = "Keep track of which of your pages are in Google?"
#: How a person switches the watch on (a clause: it follows a colon).
SWITCH_ON: Final = f"in the SearchDesk app, open Settings and switch on “{QUESTION}”"


def figures_sentence(inspected: int, oldest: dt.datetime | None, newest: dt.datetime | None) -> str:
    """The sentence every coverage answer opens with: whose figures these are, and from when."""
    first = oldest.date().isoformat() if oldest else "—"
    last = newest.date().isoformat() if newest else "—"
    pages = plural(inspected, "page")
    return (
        f"These figures are SearchDesk's own inspection of {pages} between {first} and {last} — not Google's "
        "Page indexing report."
    )
