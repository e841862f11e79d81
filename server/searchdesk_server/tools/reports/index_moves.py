"""Pages that left or entered Google's index in a week: what the weekly summary asks the coverage watch.

The coverage watch (issue 37, `coverage/`) is what knows which pages Google indexed on which day;
this module is the one small door the weekly summary goes through, so the summary never depends on
how the watch keeps its records. Where no watch runs for the property (none kept, switched off, or its
file cannot be read), `index_moves` returns None and the summary says that it has nothing to say about
the index (it never guesses). A page "left" when its verdict went from PASS (in Google) to anything else
within the week, and "entered" the other way round: Google's own verdict, the one the watch records.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from ...coverage.store import CoverageStore
from ...runtime import Call
from ..coverage import read_watch
from .periods import Period

#: Google's day, in which the week's dates are given.
PACIFIC = ZoneInfo("America/Los_Angeles")
#: Google's verdict for a page that is in its index.
IN_GOOGLE = "PASS"


@dataclass(frozen=True)
class IndexMoves:
    """Pages the coverage watch saw leave (`left`) or enter (`entered`) Google's index within a week,
    as the watch recorded their URLs (Google's words: cleaned and marked untrusted like any other)."""

    left: tuple[str, ...]
    entered: tuple[str, ...]


async def index_moves(call: Call, site: str, week: Period) -> IndexMoves | None:
    """What the coverage watch saw for `site` in `week`; None when no watch runs for the property.

    The report has already read the property's Search Analytics through the routed account, so access
    is confirmed; the store opened is that account's own, never a withheld one's."""
    return await read_watch(call, site, lambda store: _moves(store, site, week))


def _moves(store: CoverageStore, site: str, week: Period) -> IndexMoves | None:
    watch = store.watch(site)
    if watch is None or not watch.switched_on or store.counts(site).inspected == 0:
        return None
    start = dt.datetime.combine(week.start, dt.time(0), tzinfo=PACIFIC)
    end = dt.datetime.combine(week.end + dt.timedelta(days=1), dt.time(0), tzinfo=PACIFIC)
    changes, _ = store.changed_since(site, start.astimezone(dt.UTC), end.astimezone(dt.UTC))
    first: dict[str, str] = {}  # each page's verdict when the week began (its first change's "from")
    last: dict[str, str] = {}  # and when it ended (its last change's "to")
    for change in reversed(changes):  # oldest first
        first.setdefault(change.url, change.from_verdict)
        last[change.url] = change.to_verdict
    left = sorted(url for url, was in first.items() if was == IN_GOOGLE and last[url] != IN_GOOGLE)
    entered = sorted(url for url, was in first.items() if was != IN_GOOGLE and last[url] == IN_GOOGLE)
    return IndexMoves(tuple(left), tuple(entered))
