"""Activity speaks to the person (issue 36, item 8).

"Not done" lines used to show the sentence the server wrote for Claude ("…then call 'Remove a property'
again with the same arguments…"), fifteen lines tall, and a long address was cut with "…" at its column's
edge, whole only in a tooltip. Now each line says in a line what happened and what the person can do, and
Enter on a line (or Show the whole line) opens every value of it whole, to read, select and copy.

Real parts: the journal is a real SQLite file written with the server's own `Journal.append`, each answer
row holding exactly what the server records for that outcome (its own result, through its own
`_journal_answer`); Activity is the app's real window, offscreen, driven by the keyboard.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mcp import types
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QWidget
from pytestqt.qtbot import QtBot

from searchdesk_desktop import history
from searchdesk_desktop.windows.activity import ActivityWindow
from searchdesk_server.approval import ask_app, chain, outcomes
from searchdesk_server.journal.paths import journal_path
from searchdesk_server.journal.store import Entry, Journal, Kind, Target
from searchdesk_server.result import error_result
from tests.desktop.helpers import finish, make_core

LONG_SITE = "https://www.the-very-long-named-garden-supplies-and-outdoor-furniture-shop.example.com/"
LONG_ACCOUNT = "search-console-reports-for-the-garden-shop@an-agency-with-a-long-name.example.com"
CLAUDE = "a program that says it is Claude Desktop (version 0.14.10)"
MORNING = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
TOOL = "delete_site"

#: What the server answers Claude for each way a guarded call ends without acting (its own functions).
OUTCOMES: dict[str, types.CallToolResult] = {
    "waiting": ask_app.waiting_in_app(TOOL),
    "asked again": ask_app.asked_again(TOOL),
    "declined": error_result(f"The user declined; {TOOL} did nothing.", decision="declined"),
    "unanswered": error_result(
        f"The SearchDesk app closed before anyone answered; {TOOL} did nothing. Open SearchDesk and call again "
        "with the same arguments.",
        decision="unanswered",
    ),
    "code": error_result("Nobody could be asked.", decision="token"),
    "demo": outcomes.refused(TOOL, "the SearchDesk app is running the demo; start SearchDesk normally to approve."),
}
#: Words written for a program, never for the person, on screen.
FOR_CLAUDE = re.compile(r"same arguments|call .* again|\bcall again\b|did nothing", re.IGNORECASE)


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(folder))
    return folder


def record(journal: Journal) -> None:
    """One answer row per outcome, as the server records it (`_journal_answer`), for a long address."""
    for minute, reply in enumerate(OUTCOMES.values()):
        approval, words = chain._journal_answer(reply)
        values = (Target("Property", LONG_SITE),)
        entry = Entry(Kind.ANSWER, TOOL, LONG_ACCOUNT, LONG_SITE, values, CLAUDE, approval, words=words)
        journal.append(entry, at=MORNING + timedelta(minutes=minute))


def opened(qtbot: QtBot, place: dict) -> tuple[ActivityWindow, object]:
    record(Journal(journal_path()))
    core = make_core(place)
    window = ActivityWindow(core)
    qtbot.addWidget(window)
    window.resize(1024 - 40, 600 - 40)  # a 1024x600 screen, less the window's frame
    window.refresh()
    window.show()
    qtbot.waitExposed(window)
    return window, core


def approval_on_screen(window: ActivityWindow, row: int) -> str:
    return window.table.item(row, list(ActivityWindow.COLUMNS).index("Approval")).text()


def test_each_not_done_line_says_what_happened_and_what_to_do_in_a_line(qtbot: QtBot, place: dict, data: Path) -> None:
    window, core = opened(qtbot, place)
    lines = window.lines()
    assert len(lines) == len(OUTCOMES)
    said = {name: approval_on_screen(window, len(OUTCOMES) - 1 - n) for n, name in enumerate(OUTCOMES)}
    for name, text in said.items():
        assert not FOR_CLAUDE.search(text), (name, text)
    assert said == {
        "waiting": history.WAITING,
        "asked again": history.WAITING,
        "declined": history.DECLINED,
        "unanswered": history.UNANSWERED,
        "code": history.CODE_OFFERED,
        "demo": "Not done: The SearchDesk app is running the demo; start SearchDesk normally to approve.",
    }
    # What the person can do, in the same line, where there is something to do.
    assert "Answer there, then ask Claude again" in said["waiting"]
    assert "Ask Claude again" in said["unanswered"] and "Keep SearchDesk open" in said["code"]
    # No line is taller than a few lines of text (the sentence for Claude made one fifteen lines tall).
    tallest = max(window.table.rowHeight(r) for r in range(window.table.rowCount()))
    lines_tall = tallest / window.table.fontMetrics().lineSpacing()
    assert lines_tall < 10, f"a line is {lines_tall:.1f} lines of text tall"
    finish(core)


def line_window(qtbot: QtBot) -> QWidget:
    qtbot.waitUntil(
        lambda: any(w.objectName() == "activityLine" and w.isVisible() for w in QApplication.topLevelWidgets()),
        timeout=2000,
    )
    return next(w for w in QApplication.topLevelWidgets() if w.objectName() == "activityLine" and w.isVisible())


def test_enter_on_a_line_shows_every_value_whole_and_copies_it(qtbot: QtBot, place: dict, data: Path) -> None:
    window, core = opened(qtbot, place)
    table = window.table
    # On screen the long address does not fit its column: it is cut (or wrapped at its dots), never whole.
    details = list(ActivityWindow.COLUMNS).index("Property and details")
    assert table.columnWidth(details) < table.fontMetrics().horizontalAdvance(LONG_SITE)
    # By the keyboard alone: into the table, down to the waiting line (the oldest but one), Enter.
    table.setFocus()
    table.setCurrentCell(0, 0)
    for _ in range(len(OUTCOMES) - 1):
        qtbot.keyClick(table, Qt.Key.Key_Down)
    qtbot.keyClick(table, Qt.Key.Key_Return)
    shown = line_window(qtbot)
    assert window.isVisible()  # Enter opened the line; it did not close Activity
    text = shown.findChild(QPlainTextEdit, "wholeLine")
    assert text is not None and text.isReadOnly() and shown.focusWidget() is text  # the keyboard is in it
    whole = text.toPlainText()
    assert f"Property: {LONG_SITE}" in whole and LONG_ACCOUNT in whole and "\u200b" not in whole
    assert whole.startswith("When:\n") and history.WAITING in whole
    # The server's reason is kept in the details, said as what the program that asked was told.
    assert history.TOLD in whole
    assert shown.width() <= 1024 - 40 and shown.height() <= 600 - 40
    copy = next(b for b in shown.findChildren(type(window.csv_button)) if b.text() == "Copy")
    QGuiApplication.clipboard().clear()
    copy.click()
    assert QGuiApplication.clipboard().text() == whole
    shown.close()

    # The button does the same for the line chosen (here the newest).
    table.setCurrentCell(0, 0)
    window.line_button.click()
    assert (
        "Not done: The SearchDesk app is running the demo"
        in line_window(qtbot).findChild(QPlainTextEdit, "wholeLine").toPlainText()
    )
    finish(core)


def test_no_button_moves_when_copy_as_csv_says_copied(qtbot: QtBot, place: dict, data: Path) -> None:
    window, core = opened(qtbot, place)
    buttons = (window.line_button, window.check_button, window.csv_button)
    before = [b.geometry() for b in buttons]
    window.csv_button.click()
    qtbot.wait(20)
    assert window.csv_button.text() == "Copied as CSV"
    assert [b.geometry() for b in buttons] == before
    finish(core)
