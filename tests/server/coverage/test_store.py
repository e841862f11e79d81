"""The coverage store (issue 37) on disk, through its own API as the app's watcher will use it: results
and their changes, counts, the watcher's order and its resumption after a kill, damage, and the one
URL Inspection count the watch spends from."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from searchdesk_server.coverage.records import CoverageDamaged, CoverageError, PageResult, WatchState, Why
from searchdesk_server.coverage.store import MAX_PAGES, CoverageStore, recover
from searchdesk_server.quota import WATCH_PER_MINUTE, WATCH_SPARE, QuotaBook

SITE = "https://www.example.com/"
T0 = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)
INDEXED = PageResult("PASS", "Submitted and indexed", "INDEXING_ALLOWED", "ALLOWED", "SUCCESSFUL")
CRAWLED = PageResult("NEUTRAL", "Crawled - currently not indexed", "INDEXING_ALLOWED", "ALLOWED", "SUCCESSFUL")
NOINDEX = PageResult("FAIL", "Excluded by ‘noindex’ tag", "BLOCKED_BY_META_TAG", "ALLOWED", "SUCCESSFUL")


def day(n: int) -> dt.datetime:
    return T0 + dt.timedelta(days=n)


def test_a_change_of_state_is_kept_with_its_date_and_found_by_changed_since(tmp_path: Path) -> None:
    with CoverageStore.open(tmp_path / "a.sqlite3") as store:
        store.add_pages(SITE, [SITE + "a", SITE + "b"], Why.SITEMAP, now=day(0))
        assert store.record(SITE, SITE + "a", INDEXED, inspected_at=day(1)) is None  # a first result is no change
        assert store.record(SITE, SITE + "b", CRAWLED, inspected_at=day(1)) is None
        assert store.record(SITE, SITE + "a", INDEXED, inspected_at=day(8)) is None  # the same state again
        change = store.record(SITE, SITE + "b", NOINDEX, inspected_at=day(9))
        assert change is not None and (change.from_coverage, change.to_coverage) == (CRAWLED.coverage, NOINDEX.coverage)
        assert store.record(SITE, SITE + "b", CRAWLED, inspected_at=day(5)) is None  # late and older: ignored
        assert store.changed_since(SITE, day(2)) == ([change], 1)
        assert store.changed_since(SITE, day(10)) == ([], 0)
        assert store.changed_since(SITE, day(2), day(9)) == ([], 0)  # `until` is exclusive
        page = store.page(SITE, SITE + "b")
        assert page is not None and page.result == NOINDEX and page.inspected_at == day(9)


def test_counts_by_verdict_and_state_with_the_pages_not_inspected_yet(tmp_path: Path) -> None:
    with CoverageStore.open(tmp_path / "a.sqlite3") as store:
        store.add_pages(SITE, [f"{SITE}p{i}" for i in range(5)], Why.SITEMAP, now=day(0))
        store.add_pages(SITE, [f"{SITE}p0", f"{SITE}q"], Why.IMPRESSIONS, now=day(0))
        for i, (result, when) in enumerate(((INDEXED, 2), (INDEXED, 3), (NOINDEX, 4))):
            store.record(SITE, f"{SITE}p{i}", result, inspected_at=day(when))
        counts = store.counts(SITE)
        page = store.page(SITE, f"{SITE}p0")
        assert page is not None and page.why == Why.SITEMAP | Why.IMPRESSIONS
    assert (counts.known, counts.inspected) == (6, 3)
    assert counts.by_verdict == {"PASS": 2, "FAIL": 1}
    assert counts.by_coverage == {"Submitted and indexed": 2, "Excluded by ‘noindex’ tag": 1}
    assert (counts.oldest, counts.newest) == (day(2), day(4))


def test_a_pass_resumed_after_a_kill_repeats_no_page_and_follows_the_order(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    with CoverageStore.open(path) as store:
        store.add_pages(SITE, [SITE + "old", SITE + "clicked", SITE + "new"], Why.SITEMAP, now=day(0))
        store.add_pages(SITE, [SITE + "clicked"], Why.IMPRESSIONS, now=day(0), clicks={SITE + "clicked": 40})
        store.record(SITE, SITE + "old", INDEXED, inspected_at=day(1))
        store.record(SITE, SITE + "clicked", INDEXED, inspected_at=day(2))
        store.set_watch(SITE, WatchState(True, pass_started=day(20), next_pass=day(27)))
        first = store.due(SITE, 10, now=day(20))
        store.record(SITE, first[0], INDEXED, inspected_at=day(20))
    # killed here; the app starts again and resumes the pass
    with CoverageStore.open(path, check=True) as store:
        rest = store.due(SITE, 10, now=day(20) + dt.timedelta(hours=3))
        state = store.watch(SITE)
    assert first == [SITE + "new", SITE + "clicked", SITE + "old"]  # never inspected, then clicks, then oldest
    assert rest == first[1:]
    assert state == WatchState(True, False, day(20), day(27))


def test_a_property_holds_at_most_the_cap_and_a_reader_cannot_write(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    with CoverageStore.open(path) as store:
        left_out = store.add_pages(SITE, (f"{SITE}{i}" for i in range(MAX_PAGES + 3)), Why.SITEMAP, now=day(0))
        assert left_out == 3 and store.counts(SITE).known == MAX_PAGES
    reader = CoverageStore.open_readonly(path)
    assert reader is not None
    with reader, pytest.raises(CoverageError):
        reader.record(SITE, SITE, INDEXED, inspected_at=day(1))
    assert CoverageStore.open_readonly(tmp_path / "none.sqlite3") is None
    assert not (tmp_path / "none.sqlite3").exists()


def test_a_damaged_store_is_set_aside_and_what_is_readable_recovered(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    with CoverageStore.open(path) as store:
        store.add_pages(SITE, [f"{SITE}{i}" for i in range(3000)], Why.SITEMAP, now=day(0))
        store.record(SITE, f"{SITE}1", INDEXED, inspected_at=day(1))
        store.set_watch(SITE, WatchState(True))
        store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2 : len(raw) // 2 + 8192] = b"\xff" * 8192  # pages in the middle of the pages table
    path.write_bytes(bytes(raw))
    with pytest.raises(CoverageDamaged):
        CoverageStore.open(path, check=True)
    done = recover(path)
    assert done.set_aside.exists() and done.set_aside.name.startswith("a.sqlite3.damaged-")
    with CoverageStore.open(path, check=True) as fresh:
        known = fresh.counts(SITE).known
        watch = fresh.watch(SITE)
    assert 0 < known <= 3000 and known == done.pages
    assert watch == WatchState(True)


def test_the_watch_spends_the_one_count_leaving_the_last_500_and_60_a_minute(tmp_path: Path) -> None:
    now = [dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)]
    book = QuotaBook(tmp_path / "quota.json", clock=lambda: now[0])
    taken = 0
    while book.try_spend_watch(SITE):
        taken += 1
    assert taken == WATCH_PER_MINUTE, "paced: at most 60 in a minute"
    assert book.used("inspection", SITE) == WATCH_PER_MINUTE, "one count with inspect_url's"
    for _ in range(40):  # forty minutes of watching
        now[0] += dt.timedelta(minutes=1)
        while book.try_spend_watch(SITE):
            taken += 1
    assert taken == 2_000 - WATCH_SPARE and book.remaining("inspection", SITE) == WATCH_SPARE
    for _ in range(WATCH_SPARE):  # Claude's own inspections still have all 500
        assert book.try_spend("inspection", SITE)
    assert not book.try_spend("inspection", SITE)
    now[0] += dt.timedelta(hours=20)  # 04:40 Pacific the next morning: past midnight in Google's day
    assert book.try_spend_watch(SITE), "a new day, a new count"
