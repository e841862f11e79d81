"""The weekly summary's index section from a real coverage store on disk: a page's verdict at the
week's start against its verdict at the week's end, in Google's day (Pacific time)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from searchdesk_server.coverage.records import PageResult, WatchState, Why
from searchdesk_server.coverage.store import CoverageStore
from searchdesk_server.tools.reports.index_moves import IndexMoves, _moves
from searchdesk_server.tools.reports.periods import Period

SITE = "https://www.example.com/"
IN = PageResult("PASS", "Submitted and indexed", "INDEXING_ALLOWED", "ALLOWED", "SUCCESSFUL")
OUT = PageResult("NEUTRAL", "Crawled - currently not indexed", "INDEXING_ALLOWED", "ALLOWED", "SUCCESSFUL")
WEEK = Period(dt.date(2026, 11, 9), dt.date(2026, 11, 15))  # Monday to Sunday


def at(day: int, hour: int) -> dt.datetime:
    """A time in November 2026, UTC."""
    return dt.datetime(2026, 11, day, hour, tzinfo=dt.UTC)


def test_pages_that_left_and_entered_within_the_week(tmp_path: Path) -> None:
    with CoverageStore.open(tmp_path / "a.sqlite3") as store:
        pages = [SITE + name for name in ("gone", "back", "flapped", "early", "late", "still")]
        store.add_pages(SITE, pages, Why.SITEMAP, now=at(1, 0))
        for url in pages:
            store.record(SITE, url, OUT if url.endswith("back") else IN, inspected_at=at(2, 0))
        store.set_watch(SITE, WatchState(True))
        store.record(SITE, SITE + "gone", OUT, inspected_at=at(10, 12))  # left in the week
        store.record(SITE, SITE + "back", IN, inspected_at=at(11, 12))  # entered in the week
        store.record(SITE, SITE + "flapped", OUT, inspected_at=at(12, 12))  # left and came back: no move
        store.record(SITE, SITE + "flapped", IN, inspected_at=at(13, 12))
        # Monday 00:00 Pacific is 08:00 UTC: 07:00 UTC on the 9th is still the week before
        store.record(SITE, SITE + "early", OUT, inspected_at=at(9, 7))
        # Sunday 23:00 Pacific is Monday 07:00 UTC: still this week
        store.record(SITE, SITE + "late", OUT, inspected_at=at(16, 7))
        moves = _moves(store, SITE, WEEK)
    assert moves == IndexMoves(left=(SITE + "gone", SITE + "late"), entered=(SITE + "back",))


def test_no_watch_switched_on_says_nothing(tmp_path: Path) -> None:
    with CoverageStore.open(tmp_path / "a.sqlite3") as store:
        store.add_pages(SITE, [SITE + "a"], Why.SITEMAP, now=at(1, 0))
        store.record(SITE, SITE + "a", IN, inspected_at=at(2, 0))
        assert _moves(store, SITE, WEEK) is None  # never switched on
        store.set_watch(SITE, WatchState(False))
        assert _moves(store, SITE, WEEK) is None
        store.set_watch(SITE, WatchState(True))
        assert _moves(store, SITE, WEEK) == IndexMoves((), ())
