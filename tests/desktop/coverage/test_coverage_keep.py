"""Keep or delete the watch's results (issue 37), as the archive's copy is: when an account with a watch
file here is withheld from Claude (Settings) or signed out, the person is asked once; Keep leaves the
file (unread, nothing more inspected for it: the watch's scope no longer lists the account), Delete
removes it. Real parts: the real Core and Settings (offscreen Qt), the watch's SQLite file on disk
written by the server's own store."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop.core import Core
from searchdesk_desktop.keeping.archive_keeper import Archives
from searchdesk_server.coverage.records import WatchState, Why
from searchdesk_server.coverage.store import CoverageStore
from tests.desktop.accounts.test_accounts import key_file
from tests.desktop.archive.test_archive_keep import FIRST, SECOND, Asked, withhold
from tests.desktop.helpers import finish, make_core

SITE = "https://watched.example/"


def watch_of(core: Core, account: str) -> Path:
    path = core.coverage.path(account)
    with CoverageStore.open(path) as store:
        store.add_pages(SITE, [f"{SITE}a", f"{SITE}b"], Why.SITEMAP, now=dt.datetime.now(dt.UTC))
        store.set_watch(SITE, WatchState(switched_on=True))
    return path


@pytest.fixture
def core(place: dict[str, object], tmp_path: Path) -> Iterator[Core]:
    core = make_core(
        place,
        archive_options={"archives": Archives(tmp_path / "archive")},
        coverage_options={"folder": tmp_path / "coverage", "idle": 3600.0},
    )
    for email in (FIRST, SECOND):
        core.use_service_account(key_file(tmp_path / f"{email.split('@')[0]}.json", email))
    try:
        yield core
    finally:
        core.coverage.stop()
        core.archive.stop()
        finish(core)


def test_withholding_asks_once_and_keep_keeps_the_file_unwatched(qtbot: QtBot, core: Core) -> None:
    path = watch_of(core, SECOND)
    core.coverage.set_on(True)
    assert SECOND in core.coverage.scope().accounts
    asked = Asked(False)  # Keep
    withhold(qtbot, core, SECOND, asked)
    (box,) = asked.boxes
    assert box["name"] == "keepOrDeleteWatch" and box["default"]
    assert box["yes"] == "Delete the results" and box["no"] == "Keep"
    assert box["text"].startswith(f"Keep what SearchDesk found about which of {SECOND}'s pages are in Google?")
    assert path.exists()
    assert SECOND not in core.coverage.scope().accounts and FIRST in core.coverage.scope().accounts
    lines = core.coverage.lines()
    assert [(ln.account, ln.watched) for ln in lines] == [(SECOND, False)]
    withhold(qtbot, core, FIRST, asked, share=SECOND)  # no watch file: nothing asked
    assert len(asked.boxes) == 1


def test_delete_removes_the_file(qtbot: QtBot, core: Core) -> None:
    path = watch_of(core, SECOND)
    other = watch_of(core, FIRST)
    withhold(qtbot, core, SECOND, Asked(True))
    qtbot.waitUntil(lambda: not path.exists(), timeout=3000)
    assert other.exists()


def test_a_damaged_copy_set_aside_is_asked_about_and_deleted_too(qtbot: QtBot, core: Core) -> None:
    """As the archive's: a file the store set aside (damaged) is the account's too, so withholding the
    account asks about it, and Delete removes it with the file."""
    path = watch_of(core, SECOND)
    aside = path.with_name(f"{path.name}.damaged-20261204T120000Z")
    path.rename(aside)  # only the set-aside copy is left
    assert core.coverage.has_copy(SECOND)
    asked = Asked(True)  # Delete
    withhold(qtbot, core, SECOND, asked)
    assert [box["name"] for box in asked.boxes] == ["keepOrDeleteWatch"]
    qtbot.waitUntil(lambda: not aside.exists(), timeout=3000)


def test_nothing_is_made_before_the_yes(core: Core) -> None:
    core.coverage.start()
    assert core.coverage.sync is None and core.coverage.scope().accounts == ()
