"""Quitting with a yes Claude has not used yet asks first and says what is lost (issue 36, item 5): the
app's real Quit path (the main window's Quit button, as the tray's) with the real book and message box,
answered as a person would through the app's `confirm_quit`. Before issue 36 Quit ended the app at once and
the approval was lost without a word."""

from __future__ import annotations

import gc

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from searchdesk_desktop.approval.book import State
from searchdesk_desktop.approval.quitting import KEEP_RUNNING, QUIT_ANYWAY
from searchdesk_desktop.core import Core
from tests.desktop.helpers import REAL_SERVER, core_args, question


def quit_button(app: object) -> QPushButton:
    window = app.window  # type: ignore[attr-defined]
    return next(b for b in window.findChildren(QPushButton) if b.text() == "Quit SearchDesk")


def test_quit_with_an_unused_yes_asks_and_says_what_is_lost(qtbot: QtBot, qapp: object, place: dict) -> None:
    from searchdesk_desktop.app import DesktopApp

    core = Core(**core_args(place))  # type: ignore[arg-type]
    app = DesktopApp(qapp, core, autostart=place["autostart"], tray=False)  # type: ignore[arg-type]
    quits: list[str] = []
    app.quit = lambda: quits.append("quit")  # type: ignore[method-assign]  # the quit itself is not under test
    asked: list[QMessageBox] = []
    answer = {"quit": False}

    def person(box: QMessageBox) -> bool:
        asked.append(box)
        return answer["quit"]

    app.confirm_quit = person
    # Nothing approved and unused: Quit quits without a question.
    qtbot.mouseClick(quit_button(app), Qt.MouseButton.LeftButton)
    assert quits == ["quit"] and asked == []
    # A late yes Claude has not used yet.
    entry = core.book.ask(question("https://www.example.com/", requester=REAL_SERVER))
    core.book.stopped_waiting(entry.key)
    assert core.book.answer(entry.key, True, "dialog") and entry.state is State.APPROVED
    qtbot.mouseClick(quit_button(app), Qt.MouseButton.LeftButton)
    assert quits == ["quit"] and len(asked) == 1  # asked, and kept running
    box = asked[0]
    text = box.text()
    assert "https://www.example.com/" in text and "Claude has not used that approval yet" in text, text
    assert "lost and nothing is done" in text and "ask again" in text, text
    assert box.defaultButton().text() == KEEP_RUNNING and box.escapeButton() is box.button(
        QMessageBox.StandardButton.No
    )
    assert box.button(QMessageBox.StandardButton.Yes).text() == QUIT_ANYWAY
    answer["quit"] = True
    qtbot.mouseClick(quit_button(app), Qt.MouseButton.LeftButton)
    assert quits == ["quit", "quit"] and len(asked) == 2
    # Once Claude used it, nothing is lost: no question.
    core.book.take(entry.key)
    qtbot.mouseClick(quit_button(app), Qt.MouseButton.LeftButton)
    assert quits == ["quit", "quit", "quit"] and len(asked) == 2
    qtbot.wait(50)  # the window's own queued updates run before it is deleted
    app.gc.stop()
    app.dispose()
    gc.collect()
