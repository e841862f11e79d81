"""The coverage watch's inspector against the fake Google over real HTTPS, URL Inspection's quotas on.

The fake's counters (tests/fakegoogle/inspection_quotas.py: 600 a minute and a day's count per
property) and its request log are the judges. Time runs ``SPEED`` times faster for every clock that
counts a minute or a day — the fake's, the QuotaBook's and the inspector's pace — so the ratios that
keep the watch inside its share are the real ones. A property's day is shortened to ``DAY`` inspections
(the QuotaBook's and the fake's, the same figure), so the watch's share is DAY - 500.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from searchdesk_desktop.accounts.signin import load_service_account_file
from searchdesk_desktop.accounts.tokens import ServiceAccountTokens
from searchdesk_desktop.keeping.archive_copier import Backoff, Pace, Scope
from searchdesk_desktop.keeping.coverage_inspector import Inspector, Stopped, Target, first_pass_words
from searchdesk_desktop.keeping.coverage_sync import CoverageSync, google_inspect
from searchdesk_server.coverage.records import WatchState, Why
from searchdesk_server.coverage.store import CoverageStore
from searchdesk_server.quota import WATCH_SPARE, QuotaBook, QuotaKind
from tests import REPO
from tests.fakegoogle import FakeGoogle, InspectionQuotas

SITE = "https://watch.example/"
OTHER = "https://other.example/"
SPEED = 100.0
DAY = 700  # a property's inspections a day, shortened (Google's is 2,000)
START = datetime.datetime(2026, 12, 4, 18, 0, tzinfo=datetime.UTC)  # 10:00 Pacific: a whole day ahead


class Fast:
    """A clock running SPEED times faster than the real one."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()

    def __call__(self) -> datetime.datetime:
        return START + datetime.timedelta(seconds=(time.monotonic() - self.t0) * SPEED)


def inspection_api(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    verdict = "PASS" if hash(body["inspectionUrl"]) % 3 else "NEUTRAL"
    state = "Submitted and indexed" if verdict == "PASS" else "Crawled - currently not indexed"
    result = {"indexStatusResult": {"verdict": verdict, "coverageState": state, "robotsTxtState": "ALLOWED"}}
    return httpx.Response(200, json={"inspectionResult": result})


@pytest.fixture
def google(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGoogle]:
    fake = FakeGoogle(tmp_path / "google", api=inspection_api)
    fake.apply_env(monkeypatch)
    try:
        yield fake
    finally:
        fake.close()


def pages(site: str, n: int) -> list[str]:
    return [f"{site}page/{i}" for i in range(n)]


def watched(tmp_path: Path, sites: dict[str, int]) -> CoverageStore:
    store = CoverageStore.open(tmp_path / "coverage.sqlite")
    for site, n in sites.items():
        store.add_pages(site, pages(site, n), Why.SITEMAP, now=START)
        store.set_watch(site, WatchState(switched_on=True))
    return store


def inspected(fake: FakeGoogle) -> list[tuple[str, str]]:
    """(site, url) of every inspection Google answered, in order."""
    out = []
    for entry in fake.log:
        if entry.path.endswith("index:inspect"):
            body = json.loads(entry.body)
            out.append((body["siteUrl"], body["inspectionUrl"]))
    return out


def run(
    fake: FakeGoogle,
    store: CoverageStore,
    book: QuotaBook,
    clock: Fast,
    targets: list[Target],
    *,
    pacing: bool = True,
    stop_after: int | None = None,
) -> Inspector:
    tokens = ServiceAccountTokens(load_service_account_file(fake.service_account_file()))
    holder: list[Inspector] = []

    async def go() -> None:
        inspect, close = google_inspect(lambda a, s, f: tokens.access_token(s, force_refresh=f).token)
        inspector = Inspector(
            lambda account: store,
            book,
            inspect,
            lambda: targets,
            pacing=pacing,
            pace=Pace(per_minute=60 if pacing else None, minute=60 / SPEED),
            backoff=Backoff(first=0.01, most=0.05),
            now=clock,
            stopped=lambda: stop_after is not None and holder[0].inspected >= stop_after,
        )
        holder.append(inspector)
        try:
            # Rounds as the watch's thread runs them: a round ends when the property's share is used for
            # now (the one count's 60 a minute may refuse one when a loaded machine bunches requests up),
            # and the next starts after a pause. Two empty rounds a (fast) minute apart: nothing is left.
            empty = 0
            while empty < 2:
                empty = empty + 1 if await inspector.run_once() == 0 else 0
                if empty:
                    await anyio.sleep(60 / SPEED)
        except Stopped:
            pass
        finally:
            await close()

    anyio.run(go)
    return holder[0]


def fake_quotas(fake: FakeGoogle, **kw: Any) -> InspectionQuotas:
    return fake.enforce_inspection_quotas(InspectionQuotas(per_day=DAY, minute=60 / SPEED, day=86_400 / SPEED, **kw))


def book_for(tmp_path: Path, clock: Fast) -> QuotaBook:
    return QuotaBook(tmp_path / "quota.json", clock=clock, limits={QuotaKind.INSPECTION: DAY})


def test_stays_within_its_share_and_leaves_the_last_500(google: FakeGoogle, tmp_path: Path) -> None:
    clock = Fast()
    quotas = fake_quotas(google)
    store = watched(tmp_path, {SITE: DAY})
    book = book_for(tmp_path, clock)
    run(google, store, book, clock, [Target("me", SITE)])
    done = inspected(google)
    assert len(done) == DAY - WATCH_SPARE and quotas.refused == []
    assert len(set(done)) == len(done)
    # At most 60 in any (fast) minute, by the fake's own clock of when requests arrived; a quarter of a
    # minute's slack for arrival jitter on a loaded machine (the pace itself is the QuotaBook's count).
    stamps = list(quotas._day[SITE])
    for i in range(len(stamps) - 60):
        assert stamps[i + 60] - stamps[i] >= 60 / SPEED * 0.75, "more than 60 inside a minute"
    # Claude's own inspect_url still has the last 500 of the day, in the one count
    assert all(book.try_spend(QuotaKind.INSPECTION, SITE) for _ in range(WATCH_SPARE))
    assert not book.try_spend(QuotaKind.INSPECTION, SITE)
    counts = store.counts(SITE)
    assert counts.inspected == DAY - WATCH_SPARE and counts.known == DAY


def test_without_pacing_it_breaks_googles_quota(google: FakeGoogle, tmp_path: Path) -> None:
    """The positive control: the same watch with its share and pace taken away runs into Google's 429."""
    clock = Fast()
    quotas = fake_quotas(google)
    store = watched(tmp_path, {SITE: DAY + 50})
    run(google, store, book_for(tmp_path, clock), clock, [Target("me", SITE)], pacing=False)
    assert quotas.refused, "Google refused nothing"
    assert quotas.answered[SITE] == DAY


def test_resumes_after_a_stop_without_repeats(google: FakeGoogle, tmp_path: Path) -> None:
    clock = Fast()
    fake_quotas(google)
    store = watched(tmp_path, {SITE: 120})
    book = book_for(tmp_path, clock)
    run(google, store, book, clock, [Target("me", SITE)], stop_after=50)
    first = len(inspected(google))
    store.close()  # the process is gone: a new store connection, a new inspector
    again = CoverageStore.open(tmp_path / "coverage.sqlite")
    run(google, again, book, clock, [Target("me", SITE)])
    done = inspected(google)
    assert 50 <= first < 120
    assert Counter(done).most_common(1)[0][1] == 1, "a page inspected twice in one pass"
    assert {u for _, u in done} == set(pages(SITE, 120))
    state = again.watch(SITE)
    assert state is not None and state.pass_started is None and state.next_pass is not None
    assert state.next_pass >= START + datetime.timedelta(days=7)


def test_a_429_is_waited_out_and_the_page_inspected_once(google: FakeGoogle, tmp_path: Path) -> None:
    clock = Fast()
    quotas = fake_quotas(google, per_minute=5)  # Google's minute is tighter than the watch's pace here
    store = watched(tmp_path, {SITE: 12})
    run(google, store, book_for(tmp_path, clock), clock, [Target("me", SITE)])
    assert any(which == "minute" for _, which, _ in quotas.refused)
    done = inspected(google)
    assert len(set(done)) == 12 == quotas.answered[SITE]


def test_a_project_wide_quota_answer_rests_every_watch_for_the_day(google: FakeGoogle, tmp_path: Path) -> None:
    clock = Fast()
    quotas = fake_quotas(google, project_per_day=5)
    store = watched(tmp_path, {SITE: 20, OTHER: 20})
    inspector = run(google, store, book_for(tmp_path, clock), clock, [Target("me", SITE), Target("me", OTHER)])
    assert sum(quotas.answered.values()) == 5
    assert [which for _, which, _ in quotas.refused] == ["project"], "it kept asking after the project's day ended"
    assert "*" in inspector.done_for


def test_paused_or_switched_off_is_not_inspected(google: FakeGoogle, tmp_path: Path) -> None:
    clock = Fast()
    store = watched(tmp_path, {SITE: 5, OTHER: 5})
    store.set_watch(OTHER, WatchState(switched_on=True, paused=True))
    run(google, store, book_for(tmp_path, clock), clock, [Target("me", SITE), Target("me", OTHER)])
    assert {s for s, _ in inspected(google)} == {SITE}


def test_pause_stops_it_at_once(google: FakeGoogle, tmp_path: Path) -> None:
    """Settings' Pause, written to the store mid-pass, is seen before the next request."""
    clock = Fast()
    store = watched(tmp_path, {SITE: 20})
    pauser = CoverageStore.open(tmp_path / "coverage.sqlite")  # Settings' own connection

    class PauseAfterThree(Inspector):
        async def _nap(self, seconds: float) -> None:
            if self.inspected == 3:
                pauser.set_watch(SITE, WatchState(switched_on=True, paused=True))
            await super()._nap(seconds)

    tokens = ServiceAccountTokens(load_service_account_file(google.service_account_file()))

    async def go() -> None:
        inspect, close = google_inspect(lambda a, s, f: tokens.access_token(s, force_refresh=f).token)
        inspector = PauseAfterThree(
            lambda account: store, book_for(tmp_path, clock), inspect, lambda: [Target("me", SITE)],
            pace=Pace(per_minute=None), now=clock,
        )  # fmt: skip
        try:
            await inspector.run_once()
        finally:
            await close()

    anyio.run(go)
    assert len(inspected(google)) == 3


def test_first_pass_estimate() -> None:
    assert first_pass_words(10_000) == "about 7 days for 10,000 pages"
    assert first_pass_words(900) == "about a day for 900 pages"


def test_idle_wakes_at_most_once_a_minute(google: FakeGoogle, tmp_path: Path) -> None:
    tokens = ServiceAccountTokens(load_service_account_file(google.service_account_file()))
    sync = CoverageSync(
        lambda account: CoverageStore.in_memory(),
        book_for(tmp_path, Fast()),
        lambda a, s, f: tokens.access_token(s, force_refresh=f).token,
    )
    sync.start()
    try:
        time.sleep(2.0)
        assert sync.wakes == 1
        sync.update(Scope())  # the app's word wakes it at once
        time.sleep(0.3)
        assert sync.wakes == 2
    finally:
        sync.stop()
    assert not sync.running


def _woken(thread_id: int) -> int:
    """How many times Linux has woken this thread from a sleep (its voluntary context switches)."""
    status = Path(f"/proc/self/task/{thread_id}/status").read_text(encoding="ascii")
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("voluntary_ctxt_switches:")))


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts a thread's wake-ups through Linux's /proc")
def test_idle_thread_is_not_woken_between_rounds(google: FakeGoogle, tmp_path: Path) -> None:
    """Between rounds the watch's thread sleeps: it is not woken to look at the clock (a 50 ms poll woke
    it twenty times a second)."""
    tokens = ServiceAccountTokens(load_service_account_file(google.service_account_file()))
    sync = CoverageSync(
        lambda account: CoverageStore.in_memory(),
        book_for(tmp_path, Fast()),
        lambda a, s, f: tokens.access_token(s, force_refresh=f).token,
    )
    sync.start()
    try:
        time.sleep(1.0)
        assert sync.wakes == 1 and sync._thread is not None and sync._thread.native_id is not None
        before = _woken(sync._thread.native_id)
        time.sleep(2.0)
        assert _woken(sync._thread.native_id) - before <= 1
        assert sync.wakes == 1
    finally:
        sync.stop()
    assert not sync.running


def test_a_pass_killed_midway_resumes_without_repeats(google: FakeGoogle, tmp_path: Path) -> None:
    """A real process inspecting is killed (SIGKILL) midway; a new one finishes the pass. No page is
    inspected twice, except at most the one whose answer was on its way when the process died (Google
    answered it, the store never heard): the kill cannot be timed between the two."""
    store_path = tmp_path / "coverage.sqlite"
    with CoverageStore.open(store_path) as store:
        store.add_pages(SITE, pages(SITE, 60), Why.SITEMAP, now=START)
        store.set_watch(SITE, WatchState(switched_on=True))
    env = {**os.environ, **google.env, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
    command = [
        sys.executable, "-m", "tests.desktop.coverage.inspector_child",
        str(store_path), str(tmp_path / "quota.json"), str(google.service_account_file()), SITE, "60", "3",
    ]  # fmt: skip
    child = subprocess.Popen(command, env=env, cwd=REPO)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and child.poll() is None and len(inspected(google)) < 15:
            time.sleep(0.02)
        assert child.poll() is None, "the pass ended before it could be killed"
        child.send_signal(signal.SIGKILL)
        child.wait(5)
    finally:
        if child.poll() is None:
            child.kill()
    first = len(inspected(google))
    assert 15 <= first < 60
    subprocess.run(command, env=env, cwd=REPO, check=True, timeout=60)
    done = [u for _, u in inspected(google)]
    assert set(done) == set(pages(SITE, 60))
    assert len(done) - len(set(done)) <= 1, Counter(done).most_common(3)
    with CoverageStore.open(store_path) as store:
        assert store.counts(SITE).inspected == 60
