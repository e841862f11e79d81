"""Quitting with a yes Claude has not used yet (issue 36): the app asks first and says what is lost.

A late yes lives in the app's memory only (the book) and is kept for the server process that asked; quitting
the app drops it, and nothing is done until Claude asks again and the person approves again. The tray's and
the main window's Quit ask with this box when such a yes is waiting; "Keep SearchDesk running" is the
default and Escape, so a stray key loses nothing.
"""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from ..history import tool_title, values_text
from ..titles import title
from .book import ApprovalBook, Entry, State

QUIT_ANYWAY = "Quit and lose it"
KEEP_RUNNING = "Keep SearchDesk running"


def unused_yeses(book: ApprovalBook) -> list[Entry]:
    """Yeses the person gave that Claude has not used yet (a late yes still kept)."""
    return [e for e in book.late_answers() if e.state is State.APPROVED]


def lost_words(entries: list[Entry]) -> str:
    """What quitting loses, in a site owner's words: each change approved, and what happens then."""
    what = "; ".join(
        f"“{tool_title(e.activity.tool)}” ({values_text(e.activity.values, 2).replace(chr(10), ', ')})" for e in entries
    )
    it = "that approval" if len(entries) == 1 else "those approvals"
    return (
        f"You approved {what} after Claude stopped waiting, and Claude has not used {it} yet. If you quit "
        f"SearchDesk now, {it} {'is' if len(entries) == 1 else 'are'} lost and nothing is done: Claude must ask "
        "again, and you approve again."
    )


def quit_box(parent: QWidget | None, entries: list[Entry], *, demo: bool) -> QMessageBox:
    """The question before quitting: Yes quits (and loses the approvals), No keeps the app running (the
    default and Escape)."""
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        title(demo, "quit?"),
        lost_words(entries),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setObjectName("quitLosesApproval")
    box.button(QMessageBox.StandardButton.Yes).setText(QUIT_ANYWAY)
    box.button(QMessageBox.StandardButton.No).setText(KEEP_RUNNING)
    box.setDefaultButton(QMessageBox.StandardButton.No)
    box.setEscapeButton(QMessageBox.StandardButton.No)
    return box


def ask_by_showing(box: QMessageBox) -> bool:
    """Show the box and wait for the person: True when they chose to quit anyway."""
    return box.exec() == QMessageBox.StandardButton.Yes
