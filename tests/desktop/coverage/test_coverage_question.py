"""The coverage watch's question after a real sign-in (issue 37): "Keep track of which of your pages are
in Google?" is shown once in the main window, after the archive's question is answered; nothing is
made that could reach a website or Google before a yes; Yes turns the watch on, No leaves it off and
it is not asked again after a restart; Settings has the switch either way and a line per watched
property with Pause and Delete. Real parts: the app and its main window (offscreen Qt), the real
sign-in against the fake Google OAuth server, the keyring on a private bus, the settings file and the
watch's SQLite file on disk."""

from __future__ import annotations

import datetime
import gc
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QLabel, QPushButton
from pytestqt.qtbot import QtBot

from searchdesk_desktop.app import DesktopApp
from searchdesk_desktop.core import Core
from searchdesk_desktop.keeping.archive_keeper import Archives
from searchdesk_desktop.keeping.coverage_keeper import QUESTION, line_text
from searchdesk_desktop.settings import AppSettings
from searchdesk_desktop.windows.archive import ArchiveQuestion
from searchdesk_desktop.windows.coverage import CoverageQuestion
from searchdesk_server.coverage.records import PageResult, WatchState, Why
from searchdesk_server.coverage.store import CoverageStore
from tests.desktop.accounts.test_accounts import OWN, browser
from tests.desktop.fake_oauth import EMAIL, FakeOAuth, fake_oauth_server
from tests.desktop.helpers import core_args, open_settings

SITE = "https://watch.example/"


def start(qapp: QApplication, place: dict[str, object], tmp_path: Path, fake: FakeOAuth) -> DesktopApp:
    core = Core(
        **core_args(place),  # type: ignore[arg-type]
        auth_uri=fake.auth_uri,
        open_browser=browser(fake),
        archive_options={"archives": Archives(tmp_path / "archive")},
        coverage_options={"folder": tmp_path / "coverage", "idle": 3600.0},
    )
    app = DesktopApp(qapp, core, autostart=place["autostart"], tray=False)  # type: ignore[arg-type]
    app.start(show_window=True)
    return app


def stop(app: DesktopApp) -> None:
    app.core.archive.stop()
    app.core.coverage.stop()
    app.quit()
    QApplication.processEvents()
    app.dispose()
    gc.collect()


def shown(app: DesktopApp, kind: type) -> list[object]:
    return [q for q in app.window.findChildren(kind) if q.isVisibleTo(app.window)]


def sign_in(qtbot: QtBot, app: DesktopApp) -> None:
    with qtbot.waitSignal(app.core.signin_done, timeout=10_000) as done:
        app.core.sign_in(OWN)
    assert done.args == [""]


@pytest.mark.parametrize("yes", [True, False], ids=["yes", "no"])
def test_asked_once_after_the_archive_question_and_its_answer_kept(
    qapp: QApplication, qtbot: QtBot, place: dict[str, object], tmp_path: Path, real_keyring: object, yes: bool
) -> None:
    settings_path = Path(place["settings_path"])  # type: ignore[arg-type]
    with fake_oauth_server() as fake:
        app = start(qapp, place, tmp_path, fake)
        try:
            sign_in(qtbot, app)
            qtbot.waitUntil(lambda: shown(app, ArchiveQuestion) != [], timeout=2000)
            assert shown(app, CoverageQuestion) == []  # not before the archive's is answered
            assert app.core.coverage.sync is None  # nothing that could fetch or inspect
            (archive,) = shown(app, ArchiveQuestion)
            archive.no_button.click()  # type: ignore[attr-defined]
            qtbot.waitUntil(lambda: shown(app, CoverageQuestion) != [], timeout=2000)
            (question,) = shown(app, CoverageQuestion)
            assert QUESTION in [label.text() for label in question.findChildren(QLabel)]  # type: ignore[attr-defined]
            assert app.core.coverage.sync is None
            app.core.changed.emit()
            qtbot.wait(50)
            assert shown(app, CoverageQuestion) == [question]
            (question.yes_button if yes else question.no_button).click()  # type: ignore[attr-defined]
            assert shown(app, CoverageQuestion) == []
            saved = AppSettings.load(settings_path)
            assert saved.coverage_asked and saved.coverage_on is yes
            assert (app.core.coverage.sync is not None) is yes
        finally:
            stop(app)
        app = start(qapp, place, tmp_path, fake)
        try:
            qtbot.wait(100)
            assert shown(app, CoverageQuestion) == [], "asked again after a restart"
            settings = open_settings(qtbot, app.core)
            switch = settings.coverage_box.switch
            assert switch.isVisibleTo(settings) and switch.isChecked() is yes
            settings.close()
        finally:
            stop(app)


def test_settings_line_pause_and_delete(
    qapp: QApplication, qtbot: QtBot, place: dict[str, object], tmp_path: Path, real_keyring: object
) -> None:
    with fake_oauth_server() as fake:
        app = start(qapp, place, tmp_path, fake)
        try:
            sign_in(qtbot, app)
            now = datetime.datetime.now(datetime.UTC)
            with CoverageStore.open(app.core.coverage.path(EMAIL)) as store:
                store.add_pages(SITE, [f"{SITE}p/{i}" for i in range(4)], Why.SITEMAP, now=now)
                store.set_watch(SITE, WatchState(switched_on=True))
                store.record(
                    SITE, f"{SITE}p/0", PageResult(verdict="PASS", coverage="Submitted and indexed"), inspected_at=now
                )
                store.record(
                    SITE,
                    f"{SITE}p/1",
                    PageResult(verdict="NEUTRAL", coverage="Crawled - currently not indexed"),
                    inspected_at=now,
                )
            settings = open_settings(qtbot, app.core)
            box = settings.coverage_box
            (line,) = box.lines
            assert line.text.startswith("Watching 4 pages · 1 in Google · 1 not · 50% checked")
            pause = next(b for b in box.findChildren(QPushButton) if b.text() == "Pause")
            pause.click()
            with CoverageStore.open(app.core.coverage.path(EMAIL)) as store:
                state = store.watch(SITE)
                assert state is not None and state.paused
            assert box.lines[0].paused
            with qtbot.waitSignal(app.core.archive_deleted, timeout=5000):
                app.core.coverage.delete(EMAIL, SITE, done=lambda: app.core._later(app.core.archive_deleted.emit))
            qtbot.waitUntil(lambda: box.lines == [], timeout=2000)
            settings.close()
        finally:
            stop(app)


def test_a_watched_propertys_line_says_pages_in_google_and_the_next_pass() -> None:
    later = datetime.datetime(2026, 12, 11, 12, tzinfo=datetime.UTC)
    assert (
        line_text(10, 7, 10, later, True)
        == "Watching 10 pages · 7 in Google · 3 not · 100% checked · next pass 11 December"
    )
    assert line_text(10_000, 0, 0, None, True).endswith("about 7 days for 10,000 pages to go")
