"""The archive's copier against the fake Google over real HTTPS, with Google's quotas enforced.

The fake's request log and its quota counters (tests/fakegoogle/quotas.py) are the judges. Time is
accelerated where a test copies 16 months: the copier's pace and the fake's "minute" shrink by the same
factor, so the ratio between them — the thing that keeps a copy within the quotas — is the real one.
Tokens come from the app's own ServiceAccountTokens (the fake's token endpoint), as the app's copier
gets them from its providers.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from searchdesk_desktop.accounts.signin import load_service_account_file
from searchdesk_desktop.accounts.tokens import ServiceAccountTokens
from searchdesk_desktop.keeping.archive_copier import DEFAULT_PER_MINUTE, Backoff, Copier, Pace, Scope, Stopped
from searchdesk_desktop.keeping.archive_keeper import Archives
from searchdesk_desktop.keeping.archive_sync import ArchiveSync, google_caller
from searchdesk_server.archive.store import Archive
from tests import REPO
from tests.fakegoogle import FakeGoogle, Quotas
from tests.fakegoogle.history import HistoryGoogle, rows_for

SITE = "https://archive.example/"  # 16 months at Google
SMALL = "https://small.example/"  # added to Search Console 40 days ago: a short copy
TODAY = datetime.date(2026, 11, 20)


@pytest.fixture
def google(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FakeGoogle, HistoryGoogle]]:
    api = HistoryGoogle(
        TODAY, {SITE: "siteOwner", SMALL: "siteOwner"}, since={SMALL: TODAY - datetime.timedelta(days=40)}
    )
    fake = FakeGoogle(tmp_path / "google", api=api, today=TODAY)
    fake.apply_env(monkeypatch)
    try:
        yield fake, api
    finally:
        fake.close()


def app_tokens(fake: FakeGoogle) -> ServiceAccountTokens:
    return ServiceAccountTokens(load_service_account_file(fake.service_account_file()))


def copy_once(
    fake: FakeGoogle,
    archives: Archives,
    site: str,
    pace: Pace,
    backoff: Backoff | None = None,
    stopped: Callable[[], bool] = lambda: False,
) -> Copier:
    """One copy of everything missing for ``site``, in this process (its own event loop); ``stopped``
    ends it early (the copier raises Stopped, which is how a stop looks from inside)."""
    tokens = app_tokens(fake)
    scope = Scope(accounts=(tokens.account,), allowed_sites=(site,))
    holder: list[Copier] = []

    async def run() -> None:
        call, close = google_caller(lambda a, s, f: tokens.access_token(s, force_refresh=f).token)
        copier = Copier(
            archives, call, lambda: scope, pace=pace, backoff=backoff, search_types=("web",),
            today=lambda: TODAY, stopped=stopped,
        )  # fmt: skip
        holder.append(copier)
        try:
            await copier.run_once()
        except Stopped:
            pass
        finally:
            await close()

    anyio.run(run)
    return holder[0]


def child_command(fake: FakeGoogle, folder: Path, site: str, per_minute: float, minute: float) -> list[str]:
    """A copier in a process of its own (tests/desktop/archive_child.py): it runs on the other core."""
    key = str(fake.service_account_file())
    args = [str(folder), key, site, TODAY.isoformat(), str(per_minute), str(minute)]
    return [sys.executable, "-m", "tests.desktop.archive_child", *args]


def child_env(fake: FakeGoogle) -> dict[str, Any]:
    env = {**os.environ, **fake.env, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
    return {"env": env, "cwd": REPO, "check": True, "timeout": 60}


def analytics(fake: FakeGoogle) -> list[dict[str, Any]]:
    """The searchAnalytics/query bodies Google received, in order."""
    return [json.loads(e.body) for e in fake.log if e.path.endswith("/searchAnalytics/query")]


def day_requests(bodies: list[dict[str, Any]]) -> Counter[tuple[str, tuple[str, ...]]]:
    """How often each (day, table) was asked for (the one-day requests only)."""
    return Counter(
        (b["startDate"], tuple(b.get("dimensions", [])))
        for b in bodies
        if b["startDate"] == b["endDate"] and b.get("dimensions") != ["date"]
    )


def kept_days(folder: Path, account: str, site: str) -> list[datetime.date]:
    """What the archive keeps, read as a server reads it (never a writer beside the copier's)."""
    archive = Archive.open_readonly(Archives(folder).path(account))
    if archive is None:
        return []
    with archive:
        return sorted(archive.days(site, "web"))


def assert_whole_and_once(folder: Path, account: str, site: str, api: HistoryGoogle) -> None:
    """Every final day Google has is kept, once, with exactly the rows Google served for it."""
    path = Archives(folder).path(account)
    archive = Archive.open_readonly(path)
    assert archive is not None
    with archive:
        assert sorted(archive.days(site, "web")) == api.final_days(site), "a gap, or a day Google never served"
        for day in api.final_days(site)[:: max(1, len(api.final_days(site)) // 12)]:
            for dims in ((), ("page",), ("query",), ("country",), ("device",), ("query", "page")):
                served = rows_for(site, day, list(dims))
                got = archive.query(site, day, day, dims, row_limit=25_000).rows
                assert len(got) == len(served), (day, dims)
                assert {tuple(r.get("keys", [])): (r["clicks"], r["impressions"]) for r in got} == {
                    tuple(r.get("keys", [])): (r["clicks"], r["impressions"]) for r in served
                }, (day, dims)
    with sqlite3.connect(path) as db:  # one progress record per (part, day): never two copies of a day
        doubled = db.execute("SELECT part, day, count(*) FROM days GROUP BY part, day HAVING count(*) > 1").fetchall()
    assert doubled == []


# --- the quotas --------------------------------------------------------------------------------------


def test_a_16_month_backfill_keeps_within_googles_quotas(
    google: tuple[FakeGoogle, HistoryGoogle], tmp_path: Path
) -> None:
    """The default pace (300 a minute: a quarter of the per-site and per-user quotas), with time run
    24 times faster on both sides, copies all 16 months without one 429, each day's six tables once."""
    fake, api = google
    minute = 60.0 / 24
    quotas = fake.enforce_quotas(Quotas(minute=minute))
    started = time.monotonic()
    subprocess.run(child_command(fake, tmp_path / "archive", SITE, DEFAULT_PER_MINUTE, minute), **child_env(fake))
    took = time.monotonic() - started
    assert quotas.refused == [], f"{len(quotas.refused)} requests refused, first: {quotas.refused[:1]}"
    asked = day_requests(analytics(fake))
    assert len(asked) == 6 * len(api.final_days(SITE)) and set(asked.values()) == {1}
    assert len(analytics(fake)) == quotas.answered
    # The pace held: no more than the pace's share of a "minute" in any window of one.
    assert quotas.answered / took <= DEFAULT_PER_MINUTE / minute * 1.05
    assert_whole_and_once(tmp_path / "archive", app_tokens(fake).account, SITE, api)


def test_without_its_pace_the_copy_breaks_googles_quotas(
    google: tuple[FakeGoogle, HistoryGoogle], tmp_path: Path
) -> None:
    """The same copy against Google's quotas in real time: paced, two seconds of it are ten requests and
    no refusal; unpaced, it runs into the short-term load quota (200 requests in 5 s) within seconds."""
    fake, _ = google
    quotas = fake.enforce_quotas(Quotas())
    results = {}
    for name, pace in (("paced", Pace()), ("unpaced", Pace(None))):
        quotas.reset()
        deadline = time.monotonic() + (2.0 if pace.per_minute else 10.0)
        copy_once(
            fake, Archives(tmp_path / name), SITE, pace, Backoff(first=5.0),
            stopped=lambda d=deadline: time.monotonic() > d or bool(quotas.refused),
        )  # fmt: skip
        results[name] = (quotas.answered, [r.quota for r in quotas.refused])
    answered, refused = results["paced"]
    assert refused == [] and answered <= 11, results
    answered, refused = results["unpaced"]
    assert "load" in refused, results


def test_a_429_is_waited_out_then_the_copy_goes_on(google: tuple[FakeGoogle, HistoryGoogle], tmp_path: Path) -> None:
    """Google's Retry-After is honoured; without one, the waits double; a connection cut mid-answer (a
    lost network) is waited out the same way. Nothing is lost or doubled."""
    fake, api = google
    fake.fail("searchAnalytics/query$", status=429, headers={"retry-after": "1"}, times=1)
    fake.fail("searchAnalytics/query$", status=429, times=3)
    fake.fail("searchAnalytics/query$", status=200, body=b'{"rows": [' + b" " * 4096, reset_after=100, times=2)
    archives = Archives(tmp_path / "archive")
    started = time.monotonic()
    copier = copy_once(fake, archives, SMALL, Pace(None), Backoff(first=0.1, most=5.0))
    assert time.monotonic() - started >= 1.0 + 0.1 * 0.75 * (1 + 2 + 4 + 8 + 16)
    assert len(fake.api_requests()) == copier.requests  # the 429s are the only requests sent twice
    assert len(fake.api_requests()) == 1 + 1 + 6 * len(api.final_days(SMALL)) + 4 + 2  # sites, days, tables, refused
    assert_whole_and_once(tmp_path / "archive", app_tokens(fake).account, SMALL, api)


# --- kill, restart -----------------------------------------------------------------------------------


def test_a_copy_killed_midway_resumes_without_gaps_or_duplicates(
    google: tuple[FakeGoogle, HistoryGoogle], tmp_path: Path
) -> None:
    """A real process copying is killed (SIGKILL) halfway; a new one finishes: every day once, whole,
    and the days kept before the kill are not asked for again."""
    fake, api = google
    folder = tmp_path / "archive"
    account = app_tokens(fake).account
    child = subprocess.Popen(child_command(fake, folder, SMALL, 1000, 6), env=child_env(fake)["env"], cwd=REPO)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and child.poll() is None:
            if folder.exists() and len(kept_days(folder, account, SMALL)) >= 12:
                break
            time.sleep(0.02)
        assert child.poll() is None, "the copy ended before it could be killed"
        child.send_signal(signal.SIGKILL)
        child.wait(5)
    finally:
        if child.poll() is None:
            child.kill()
    before = kept_days(folder, account, SMALL)
    assert 12 <= len(before) < len(api.final_days(SMALL))
    assert before == api.final_days(SMALL)[: len(before)], "oldest first, no holes"
    seen_before = len(fake.log)
    subprocess.run(child_command(fake, folder, SMALL, 1000, 0.6), **child_env(fake))
    assert_whole_and_once(folder, account, SMALL, api)
    again = day_requests([json.loads(e.body) for e in fake.log[seen_before:] if e.path.endswith("/query")])
    assert not {day for day, _ in again} & {d.isoformat() for d in before}, "a kept day was copied again"


# --- off the Qt thread -------------------------------------------------------------------------------


def test_hello_and_the_dialogs_timers_keep_time_during_a_backfill(
    google: tuple[FakeGoogle, HistoryGoogle], tmp_path: Path, qtbot: Any
) -> None:
    """While the copier runs flat out, the app's real listener answers `hello` within 100 ms and a
    100 ms QTimer on the Qt thread (the approval dialog's countdown is one) never runs late by 100 ms."""
    from PySide6.QtCore import QElapsedTimer, QTimer

    from tests.agentref import Script
    from tests.desktop.agent_harness import DesktopListener

    fake, _ = google
    tokens = app_tokens(fake)
    sync = ArchiveSync(
        Archives(tmp_path / "archive"),
        lambda a, s, f: tokens.access_token(s, force_refresh=f).token,
        pace=Pace(None),
        search_types=("web",),
        today=lambda: TODAY,
    )
    sync.update(Scope(accounts=(tokens.account,), allowed_sites=(SITE,)))
    folder = Path(os.path.realpath(os.environ.get("TMPDIR", "/tmp"))) / f"sd-ar-{os.getpid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    harness = DesktopListener()
    harness.start(str(folder / "agent.sock"), Script())
    gaps: list[int] = []
    clock = QElapsedTimer()
    timer = QTimer()
    timer.setInterval(100)

    def tick() -> None:
        gaps.append(clock.restart())

    timer.timeout.connect(tick)
    hellos: list[float] = []
    try:
        sync.start()
        qtbot.waitUntil(lambda: sync.copier is not None and sync.copier.requests > 20, timeout=10_000)
        clock.start()
        timer.start()
        for n in range(15):
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(2)
                s.connect(str(folder / "agent.sock"))
                started = time.perf_counter()
                s.sendall(b'{"jsonrpc":"2.0","id":%d,"method":"hello","params":{"protocol":1}}\n' % n)
                answer = s.recv(65536)
                hellos.append(time.perf_counter() - started)
            assert b'"SearchDesk"' in answer
            qtbot.wait(100)
        timer.stop()
        still_copying = sync.running and sync.copier is not None and sync.copier.requests
    finally:
        sync.stop()
        harness.stop()
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()
    assert still_copying, "the backfill ended before the measurement"
    assert max(hellos) < 0.100, hellos
    assert gaps and max(gaps[1:]) < 200, gaps


# --- the person's yes, and their controls ------------------------------------------------------------


def test_nothing_is_asked_of_google_before_the_yes(
    google: tuple[FakeGoogle, HistoryGoogle], tmp_path: Path, place: dict[str, object], qtbot: Any
) -> None:
    """The real Core with an account Claude may use: before the yes the fake's log stays empty; after
    it the property is copied, then each new final day; Settings shows its line; a withheld account is
    not copied for again, and its copy stays until the person deletes it."""
    from searchdesk_desktop.core import Core
    from searchdesk_desktop.windows.settings import SettingsWindow
    from tests.desktop.helpers import core_args, finish

    fake, api = google
    days = {"today": TODAY}  # Google's today, for the copier and the fake alike
    options = {"archives": Archives(tmp_path / "archive"), "today": lambda: days["today"], "search_types": ("web",)}
    core = Core(**core_args(place), archive_options={**options, "pace": Pace(None), "recheck": 0.2})  # type: ignore[arg-type]
    try:
        core.start()
        core.settings.allowed_sites = [SMALL]
        core.use_service_account(fake.service_account_file())
        account = app_tokens(fake).account
        qtbot.wait(600)
        assert core.archive.should_ask  # the question is due: asked once, after the sign-in
        assert fake.log == [], "something was asked of Google before the person said yes"
        core.archive.set_on(True)  # the question's "Yes, keep it"
        assert not core.archive.should_ask
        qtbot.waitUntil(
            lambda: kept_days(tmp_path / "archive", account, SMALL) == api.final_days(SMALL), timeout=15_000
        )
        settings = SettingsWindow(core)
        qtbot.addWidget(settings)
        settings.archive_box.refresh()
        (line,) = settings.archive_box.lines
        assert (
            line.site == SMALL
            and line.text.startswith("Kept since ")
            and " on this computer · last copied " in line.text
        )
        before = len(api.final_days(SMALL))
        days["today"] = api.today = TODAY + datetime.timedelta(days=2)  # two days on: two more final days
        qtbot.waitUntil(lambda: kept_days(tmp_path / "archive", account, SMALL) == api.final_days(SMALL), timeout=5000)
        assert len(api.final_days(SMALL)) == before + 2
        core.set_claude_may_use(account, False)  # withheld
        qtbot.wait(300)
        seen = len(fake.log)
        days["today"] = api.today = TODAY + datetime.timedelta(days=4)
        qtbot.wait(800)
        assert len(fake.log) == seen, "a withheld account was copied for"
        settings.archive_box.refresh()
        assert [ln.copied for ln in settings.archive_box.lines] == [False]  # kept, until the person deletes it
        core.remove_account(account)  # removed: still listed, to keep or delete
        settings.archive_box.refresh()
        assert [ln.account for ln in settings.archive_box.lines] == [account.casefold()]
        deleted: list[bool] = []
        core.archive.delete(account, SMALL, done=lambda: deleted.append(True))
        qtbot.waitUntil(lambda: deleted == [True], timeout=5000)
        settings.archive_box.refresh()
        assert settings.archive_box.lines == [] and kept_days(tmp_path / "archive", account, SMALL) == []
        assert len(fake.log) == seen
    finally:
        core.archive.stop()
        finish(core)
