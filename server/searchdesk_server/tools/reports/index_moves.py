"""Pages that left or entered Google's index in a week: what the weekly summary asks the coverage watch.

The coverage watch (issue 37, `coverage/`) is what knows which pages Google indexed on which day;
this module is the one small door the weekly summary goes through, so the summary never depends on
how the watch keeps its records. Until the watch answers, `index_moves` returns None and the summary
says that it has nothing to say about the index (it never guesses).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...runtime import Call
from .periods import Period


@dataclass(frozen=True)
class IndexMoves:
    """Pages the coverage watch saw leave (`left`) or enter (`entered`) Google's index within a week,
    as the watch recorded their URLs (Google's words: cleaned and marked untrusted like any other)."""

    left: tuple[str, ...]
    entered: tuple[str, ...]


async def index_moves(call: Call, site: str, week: Period) -> IndexMoves | None:
    """What the coverage watch saw for `site` in `week`; None when no watch runs for the property.

    Wired to the coverage store after issue 37 lands; until then no watch exists, so None."""
    del call, site, week
    return None
