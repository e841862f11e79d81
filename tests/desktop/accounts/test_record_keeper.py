"""How long the record of changes is kept, Clear the record, and the note on the first start (issue 25).

Real SQLite journals on disk (the server's own `Journal`, rows written at chosen times), the app's real
settings file, its real Settings window and main window offscreen, and the server's own check
(`check`, against the app's note of the newest row it saw) as the judge.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import pickle
import sqlite3
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from searchdesk_desktop.app import DesktopApp
from searchdesk_desktop.core import Core
from searchdesk_desktop.keeping import record_keeper as keeping
from searchdesk_desktop.settings import AppSettings
from searchdesk_desktop.windows.settings import SettingsWindow
from searchdesk_server.journal.check import Seen, check
from searchdesk_server.journal.paths import journal_path
from searchdesk_server.journal.store import Entry, Journal, Kind, Result, Row, Target
from tests.desktop.conftest import KeyringSession
from tests.desktop.helpers import core_args, finish, make_core
from tests.desktop.uicheck import layout_problems, out_of_view
from tests.desktop.xdisplay import Xvfb, gnome_on, require, walk_in_a_process


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own data folder: the journals the app looks after are in it."""
    home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    return home


def write(path: Path, *ages_in_days: float) -> list[Row]:
    """A journal with one submitted sitemap per age (days before now), oldest first, as a server writes
    them; the app's note of the newest row is saved as Activity saves it after a read."""
    journal = Journal(path)
    rows = []
    for age in sorted(ages_in_days, reverse=True):
        at = datetime.now().astimezone() - timedelta(days=age)
        change = journal.append(
            Entry(
                Kind.CHANGE,
                tool="submit_sitemap",
                account="owner@example.com",
                site="https://example.com/",
                targets=(Target("Sitemap", "https://example.com/sitemap.xml"),),
            ),
            at=at,
        )
        rows += [
            change,
            journal.append(Entry(Kind.OUTCOME, tool="submit_sitemap", result=Result.DONE, about=change.seq), at=at),
        ]
    Seen(rows[-1].seq, rows[-1].hash).save(path)
    return rows


def start_app(qapp: QApplication, core: Core, place: dict) -> DesktopApp:
    app = DesktopApp(qapp, core, autostart=place["autostart"], tray=False)  # type: ignore[arg-type]
    app.start(show_window=True)
    return app


def stop_app(app: DesktopApp) -> None:
    app.quit()
    app.core._record_pool.shutdown(wait=True)  # a removal still running must not outlive the core
    QApplication.processEvents()
    app.dispose()
    gc.collect()


def new_core(place: dict, **kw: object) -> Core:
    return Core(**core_args(place), **kw)  # type: ignore[arg-type]


def open_settings(qtbot: QtBot, core: Core) -> SettingsWindow:
    window = SettingsWindow(core)
    qtbot.addWidget(window)
    window.show()
    return window


def test_kept_for_is_a_year_until_chosen_and_the_choice_is_saved(qtbot: QtBot, place: dict, data_home: Path) -> None:
    core = make_core(place, demo=True)
    window = open_settings(qtbot, core)
    assert window.kept_for.currentText() == "A year" and window.chosen_kept_for() == 365
    assert [window.kept_for.itemText(i) for i in range(window.kept_for.count())] == [
        "30 days",
        "90 days",
        "A year",
        "Forever",
    ]
    window.kept_for.setCurrentIndex(window.kept_for.findText("90 days"))
    qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    assert AppSettings.load(place["settings_path"]).kept_for_days == 90
    again = open_settings(qtbot, new_core(place, demo=True))
    assert again.kept_for.currentText() == "90 days"  # read back from the settings file
    finish(again.core)
    finish(core)


def test_pruning_at_start_removes_what_is_older_and_the_record_still_checks(
    qtbot: QtBot, qapp: QApplication, place: dict, data_home: Path
) -> None:
    path = journal_path()
    rows = write(path, 400, 380, 10, 1)  # two changes older than a year, two within it
    assert check(Journal(path)).ok
    app = start_app(qapp, new_core(place), place)
    qtbot.waitUntil(lambda: len(Journal(path).rows()) == 5, timeout=10_000)
    kept = Journal(path).rows()
    assert [r.seq for r in kept[:4]] == [r.seq for r in rows[4:]]  # the newest four rows, untouched
    checkpoint = kept[-1]
    assert checkpoint.kind == Kind.CHECKPOINT.value and checkpoint.about == rows[3].seq
    day = keeping.day_words((datetime.now().astimezone() - timedelta(days=365)).date())
    assert checkpoint.words == f"Changes before {day} removed: SearchDesk keeps them for a year (Settings)."
    # The app's note moved to the checkpoint, so its own removal is not rows taken away...
    qtbot.waitUntil(lambda: Seen.load(path) == Seen(checkpoint.seq, checkpoint.hash), timeout=5000)
    report = check(Journal(path))
    assert report.ok and report.seen_checked, report.render()
    # ...and a row taken from the end afterwards is still found.
    app.core.keep_record()  # the same day again: nothing more is removed, no second checkpoint
    qtbot.wait(200)
    assert len(Journal(path).rows()) == 5
    stop_app(app)
    import sqlite3

    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM journal WHERE seq = ?", [checkpoint.seq])
    assert not check(Journal(path)).ok


def test_a_shorter_time_applies_on_save_and_forever_removes_nothing(qtbot: QtBot, place: dict, data_home: Path) -> None:
    path = journal_path()
    rows = write(path, 100, 50, 5)
    assert keeping.prune([path], keeping.FOREVER) == [keeping.Removal(path)]
    assert Journal(path).rows() == rows  # forever: nothing removed, no checkpoint
    core = make_core(place)
    window = open_settings(qtbot, core)
    window.kept_for.setCurrentIndex(window.kept_for.findText("30 days"))
    qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: Journal(path).rows()[0].seq == rows[4].seq, timeout=10_000)
    after = Journal(path).rows()
    assert after[-1].kind == Kind.CHECKPOINT.value and "for 30 days" in after[-1].words
    qtbot.waitUntil(lambda: Seen.load(path) == Seen(after[-1].seq, after[-1].hash), timeout=5000)
    assert check(Journal(path)).ok
    finish(core)


def test_a_record_that_does_not_check_is_not_shortened(place: dict, data_home: Path) -> None:
    """Removing rows would remove the evidence, and moving the note would hide rows taken from the end."""
    path = journal_path()
    rows = write(path, 400, 5)
    Seen(rows[-1].seq + 3, "f" * 64).save(path)  # SearchDesk saw three rows more than are there
    [removal] = keeping.prune([path], 365)
    assert removal.checkpoint is None and "does not check" in removal.not_checked
    assert Journal(path).rows() == rows
    assert "Check the record" in keeping.problems([removal])


def test_clear_asks_first_then_leaves_one_checkpoint_and_the_record_checks(
    qtbot: QtBot, place: dict, data_home: Path
) -> None:
    path = journal_path()
    write(path, 30, 2)
    core = make_core(place)
    window = open_settings(qtbot, core)
    asked: list[str] = []

    def answer(yes: bool):  # type: ignore[no-untyped-def]
        def ask(box: QMessageBox) -> bool:
            asked.append(box.text())
            assert box.defaultButton() is box.button(QMessageBox.StandardButton.No)  # Enter changes nothing
            box.deleteLater()
            return yes

        return ask

    window.ask = answer(False)
    qtbot.mouseClick(window.clear_button, Qt.MouseButton.LeftButton)
    assert len(Journal(path).rows()) == 4  # Cancel: nothing removed
    text = asked[0]
    assert "removed from this computer" in text and "Google keeps its own record" in text
    assert "cannot be undone" in text
    window.ask = answer(True)
    qtbot.mouseClick(window.clear_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.record_status.text().startswith("Cleared."), timeout=10_000)
    [only] = Journal(path).rows()
    assert only.kind == Kind.CHECKPOINT.value
    assert only.words.startswith("Cleared by you on ") and only.words.endswith(".")
    assert Seen.load(path) == Seen(only.seq, only.hash)
    report = check(Journal(path))
    assert report.ok and report.seen_checked, report.render()
    assert window.clear_button.isEnabled() and window.record_error.isHidden()
    finish(core)


def test_a_busy_record_keeps_the_window_alive_and_says_so(qtbot: QtBot, place: dict, data_home: Path) -> None:
    """A server holding the journal's lock makes a removal wait five seconds: on the core's worker, so
    the Qt thread's timers (an approval dialog's among them) keep running, and then Settings says why."""
    path = journal_path()
    rows = write(path, 2)
    core = make_core(place)
    window = open_settings(qtbot, core)
    window.ask = lambda box: (box.deleteLater(), True)[1]
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # as a server appending holds it
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(50)
    started = time.monotonic()
    window.clear_record()
    try:
        qtbot.waitUntil(lambda: window.record_error.isVisibleTo(window), timeout=15_000)
    finally:
        timer.stop()
        holder.execute("ROLLBACK")
        holder.close()
    assert time.monotonic() - started >= 4.5  # it did wait for the lock
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    # The Qt thread never stopped for it: its timer kept firing all along.
    assert len(ticks) > 20 and max(gaps, default=99.0) < 1.0, (len(ticks), max(gaps, default=None))
    assert "kept it busy for more than 5 seconds" in window.record_error.text()
    assert window.clear_button.isEnabled() and window.record_status.isHidden()
    assert Journal(path).rows() == rows and check(Journal(path)).ok  # nothing removed
    finish(core)


def test_the_demo_keeps_and_clears_its_own_record_only(qtbot: QtBot, place: dict, data_home: Path) -> None:
    real, demo = journal_path(), journal_path(demo=True)
    real_rows = write(real, 3)
    write(demo, 3)
    core = make_core(place, demo=True)
    window = open_settings(qtbot, core)
    window.ask = lambda box: (box.deleteLater(), True)[1]
    window.clear_record()
    qtbot.waitUntil(lambda: window.record_status.text().startswith("Cleared."), timeout=10_000)
    assert len(Journal(demo).rows()) == 1
    assert Journal(real).rows() == real_rows
    finish(core)


def test_the_first_start_says_once_that_a_record_is_kept(
    qtbot: QtBot, qapp: QApplication, place: dict, data_home: Path
) -> None:
    app = start_app(qapp, new_core(place), place)
    notice = app.record_notice
    assert notice is not None and notice.isVisibleTo(app.window)
    text = notice.text.text()
    folder = str(journal_path().parent)
    assert folder in text and "for a year" in text and "Clear the record" in text and "this computer only" in text
    qtbot.wait(200)  # the window's layout settles
    assert not layout_problems(app.window, "main window with the record note")
    qtbot.mouseClick(notice.ok_button, Qt.MouseButton.LeftButton)
    assert not notice.isVisibleTo(app.window)
    assert AppSettings.load(place["settings_path"]).record_notice_done
    stop_app(app)

    again = start_app(qapp, new_core(place), place)
    assert again.record_notice is None  # the second start says nothing
    stop_app(again)


def test_the_record_note_is_in_view_as_the_window_opens_on_a_small_screen(
    qtbot: QtBot, qapp: QApplication, place: dict, data_home: Path
) -> None:
    """At 1024×600 the main window opens 760×560 (fit_to_screen): the note the app adds on the first start
    is there without scrolling, above the three steps (below them, only someone who scrolls would see it)."""
    app = start_app(qapp, new_core(place), place)
    notice = app.record_notice
    assert notice is not None
    app.window.resize(760, 560)
    qtbot.wait(200)  # the window's layout settles
    assert notice.height() > 0 and not out_of_view(notice), out_of_view(notice)
    stop_app(app)


def test_the_demo_app_says_nothing_about_the_real_record(
    qtbot: QtBot, qapp: QApplication, place: dict, data_home: Path
) -> None:
    app = start_app(qapp, new_core(place, demo=True), place)
    assert app.record_notice is None
    stop_app(app)


def test_settings_fits_with_the_record_box_and_its_messages(qtbot: QtBot, place: dict, data_home: Path) -> None:
    core = make_core(place)
    window = open_settings(qtbot, core)
    window.resize(780, 580)  # offscreen the screen is 800 wide: narrower than 1024 (ui_walk: 1024×600)
    window._record_said("Cleared. One line stays in the record, saying when you cleared it.")
    from searchdesk_desktop.widgets import set_error

    set_error(window.record_error, "SearchDesk could not write its record of changes at /x: the disk is full.")
    qtbot.wait(50)
    assert not layout_problems(window, "settings with the record's messages")
    finish(core)


def test_the_words_for_a_site_owner() -> None:
    moment = datetime(2026, 12, 1, 14, 5).astimezone()
    assert keeping.cleared_words(moment) == "Cleared by you on 1 December 2026 at 14:05."
    before = keeping.cutoff(365, moment)
    assert before is not None and (before.hour, before.minute) == (0, 0)
    assert keeping.pruned_words(365, before) == (
        "Changes before 1 December 2025 removed: SearchDesk keeps them for a year (Settings)."
    )
    assert keeping.cutoff(keeping.FOREVER, moment) is None
    assert keeping.kept_for(7) == keeping.DEFAULT_DAYS  # a hand-edited file: the default


def run_walk(check: str, env: dict[str, str], tmp_path: Path, *args: str) -> dict[str, object]:
    """`keeping_walk` in a process of its own, as test_readable runs the whole walk."""
    reports = tmp_path / "reports.pickle"
    reports.write_bytes(pickle.dumps({}))
    return walk_in_a_process("tests.desktop.keeping_walk", check, env, reports, *args)


@pytest.mark.parametrize("scale", ["1", "1.5"])
def test_the_record_fits_a_small_screen(scale: str, tmp_path: Path, real_keyring: KeyringSession) -> None:
    config = tmp_path / "screen.json"
    screen = {"name": "walk", "x": 0, "y": 0, "width": 1024, "height": 600, "logicalDpi": 96, "dpr": 1}
    config.write_text(json.dumps({"screens": [screen]}))
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": f"offscreen:configfile={config}",
        "QT_SCALE_FACTOR": scale,
        "DBUS_SESSION_BUS_ADDRESS": real_keyring.bus_address,
    }
    result = run_walk("layout", env, tmp_path, "--font-scale", "1.25")
    assert result["states"] == 12 and not result["problems"], result


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_record_reads_in_light_and_dark(scheme: str, tmp_path: Path, real_keyring: KeyringSession) -> None:
    server = Xvfb(require("Xvfb", "xvfb xauth"))
    env = gnome_on(server.display, real_keyring.bus_address)
    try:
        result = run_walk("contrast", env, tmp_path, "--scheme", scheme)
    finally:
        server.stop()
    assert result["states"] == 12 and not result["problems"], result
