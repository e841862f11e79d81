"""The demo's watch: what SearchDesk's background inspections would have found for the demo's own
properties, built in memory for each answer (no file, no network), following the demo's pinned today.

Every page's latest result is exactly what the demo's URL Inspection says of it now (so `inspect_url`
and `index_coverage` agree), inspected over the last six days; about a quarter of the pages came
there from another state within the last eight weeks (a page found, then indexed; an indexed page
gone to 404, noindex or a server error), and a few pages are not inspected yet.
"""

from __future__ import annotations

import datetime as dt
from typing import Final

from .records import PageResult, WatchState, Why
from .store import CoverageStore

#: The demo properties SearchDesk watches (the two the demo account owns).
WATCHED: Final = ("sc-domain:example.com", "https://www.example.com/")
#: Where a page most plausibly was before it reached its state now (the demo's outcome names).
BEFORE: Final = {
    "not_found": "indexed",
    "server_error": "indexed",
    "soft_404": "indexed",
    "noindex": "indexed",
    "redirect": "indexed",
    "crawled_not_indexed": "discovered",
    "duplicate": "crawled_not_indexed",
    "blocked": "indexed",
}


def demo_watch(today: dt.date) -> CoverageStore:
    """The demo's watch as at `today` (an in-memory store: close it when done)."""
    from ..demo.clock import DemoClock
    from ..demo.prng import unit
    from ..demo.scope import covers
    from ..demo.state import initial_state
    from ..demo.url_inspection import FIXED, OUTCOMES, known_pages, outcome_for, result

    clock = DemoClock(today)
    state = initial_state(clock)
    store = CoverageStore.in_memory()
    noon = dt.datetime.combine(today, dt.time(12), tzinfo=dt.UTC)

    def at(days: float) -> dt.datetime:
        return (noon - dt.timedelta(days=days)).replace(microsecond=0)

    for site in WATCHED:
        pages = [u for u in sorted(known_pages() | set(FIXED)) if covers(site, u)]
        store.set_watch(site, WatchState(True, pass_started=at(6), next_pass=at(-1)))
        store.add_pages(site, pages, Why.SITEMAP, now=at(60))
        for url in pages:
            if unit("watch-new", url) < 0.06:
                continue  # found in a sitemap this week: not inspected yet
            now = PageResult.from_google(result(url, site, state)["indexStatusResult"])
            latest = at(0.2 + unit("watch-latest", url) * 5.5)
            if now.last_crawl:  # a result never names a crawl after the inspection that reported it
                crawled = dt.datetime.fromisoformat(now.last_crawl.replace("Z", "+00:00"))
                latest = max(latest, min(crawled + dt.timedelta(hours=6), at(0.1)))
            name = outcome_for(url)
            if unit("watch-changed", url) < 0.25 and (name in BEFORE or now.verdict == "PASS"):
                before = OUTCOMES[BEFORE.get(name, "discovered")]
                changed = at(7 + unit("watch-when", url) * 49)
                was = PageResult(before.verdict, before.coverage, before.indexing, before.robots, before.fetch)
                store.record(site, url, was, inspected_at=changed - dt.timedelta(days=7))
                store.record(site, url, now, inspected_at=changed)
            store.record(site, url, now, inspected_at=latest)
    return store
