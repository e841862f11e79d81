"""The windows: the main window (first run's three steps and the app's state), Activity, About.

The main window is what a person sees on first run, and also where there is no system tray (GNOME
without the extension): everything the tray menu offers is here too, so the app is never
unreachable. Every piece of text that could come from outside is set as plain text.

Every window fits a small screen: the content scrolls rather than squeezing, text wraps, rows of
buttons flow onto a second line. Text colours come from the palette (readable in a dark theme);
fixed colours appear only in pairs (see ``widgets``).
"""

from __future__ import annotations

import csv
import functools
import io
import platform
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from PySide6.QtCore import QEvent, QObject, QSize, QStandardPaths, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDesktopServices,
    QGuiApplication,
    QHideEvent,
    QKeySequence,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from searchdesk_server.agent.protocol import QUESTION_OPEN_S, minutes
from searchdesk_server.approval.question import ACTIONS, action_name, value_line
from searchdesk_server.journal.check import Report
from searchdesk_server.journal.paths import all_journals, journal_path

from . import __version__, history
from . import claude_config as cc
from .account_list import AccountRow
from .account_view import AccountsList
from .approval.book import Entry, State
from .approval.words import ASKED_AGAIN, first_sentence, late_yes_words
from .autostart import Autostart
from .core import Account, CheckSubject, Core, check_verdict
from .help import HelpButton, check_topic
from .history import values_text
from .keystore import KeystoreError
from .settings_window import SettingsWindow
from .signin import NoOAuthClient, SignInError
from .titles import app_name, title
from .widgets import (
    ZWSP,
    FlowLayout,
    SupportDetails,
    bold,
    breakable,
    breakable_path,
    demo_banner,
    error_label,
    exec_yes,
    fit_to_screen,
    plain_label,
    plural,
    scrolling,
    set_error,
)

ASKED_AGAIN_ROWS = 3  # the main window lists at most this many; the next appear as these go
OK, TODO, PROBLEM, BUSY = "ok", "todo", "problem", "busy"
MARKS = {OK: "✓", TODO: "○", PROBLEM: "!", BUSY: "…"}
#: Badge backgrounds; the mark on them is white (each pair reaches 4.5:1).
COLOURS = {OK: "#15803d", TODO: "#5f6773", PROBLEM: "#b45309", BUSY: "#2563eb"}
RESTART = "Restart Claude Desktop (quit it fully) so it loads SearchDesk."
NOT_FOUND = (
    "Install Claude Desktop from claude.ai/download and sign in to it; SearchDesk's entry is ready for it, and "
    "this step turns green once Claude Desktop is there."
)
ADD_ACCOUNT = "Add another Google account"
#: What SearchDesk is, in one sentence (the main window's and About's).
WHAT_IT_DOES = (
    "SearchDesk lets Claude read your Google Search Console data, and asks you before anything that cannot be undone."
)
#: What the first step says once there are several accounts (docs/getting-started.md says the same).
ROUTING = (
    "Claude uses the account that can see the property it asks about (the one with the most rights, if "
    "several can); for anything else, the default account."
)


@functools.cache
def tool_title(tool: str) -> str:
    """A tool as a site owner reads it: a guarded action as the question names it ("Remove a sitemap",
    `question.ACTIONS`, the dialog's and notification's word), any other from the one table of tools."""
    from searchdesk_server.catalogue import TOOLS

    if tool in ACTIONS:
        return action_name(tool)
    return next((t.title for t in TOOLS if t.name == tool), "A change")


def start_folder() -> str:
    """Where a file picker opens: Downloads (where a key or client file usually is), else home."""
    downloads = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DownloadLocation)
    return downloads if downloads and Path(downloads).is_dir() else str(Path.home())


class StepRow(QFrame):
    """One numbered step: a title, a status with a mark, a detail, an error, extras and its buttons."""

    def __init__(self, number: int, title: str, help_topic: str = "help") -> None:
        """`help_topic`: the page its Help button opens while it shows a problem (`help.TOPICS`)."""
        super().__init__()
        self.number = number
        self.help_topic = help_topic
        self.setObjectName(f"step{number}")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        outer = QHBoxLayout(self)
        self.badge = plain_label(str(number), wrap=False, selectable=False)
        self.badge.setObjectName("badge")
        self.badge.setFixedSize(32, 32)
        self.badge.setAlignment(Qt.AlignmentFlag.AlignCenter)
        outer.addWidget(self.badge, 0, Qt.AlignmentFlag.AlignTop)
        body = QVBoxLayout()
        self.title = bold(plain_label(title, selectable=False), 1.1)
        self.status = bold(plain_label(""))
        self.detail = plain_label("")
        self.error = error_label()
        self.extras = QVBoxLayout()
        self.buttons = FlowLayout(align_right=True)
        for item in (self.title, self.status, self.detail, self.error):
            body.addWidget(item)
        #: Under a problem: the technical words, collapsed, and Help (the page about this problem).
        self.support = SupportDetails()
        self.help = HelpButton(help_topic)
        self.help.setVisible(False)
        # In a widget of its own, hidden with nothing to show: a box layout whose items are all hidden
        # reports a maximum width of 0, and the step's text column then shrinks to its minimum width.
        self.trouble = QWidget()
        trouble = QHBoxLayout(self.trouble)
        trouble.setContentsMargins(0, 0, 0, 0)
        trouble.addWidget(self.support, 1)
        trouble.addWidget(self.help, 0, Qt.AlignmentFlag.AlignTop)
        self.trouble.setVisible(False)
        body.addWidget(self.trouble)
        body.addLayout(self.extras)
        body.addLayout(self.buttons)
        outer.addLayout(body, 1)
        self.button_widgets: dict[str, QPushButton] = {}
        self.state = TODO

    def show_state(
        self, state: str, status: str, detail: str = "", error: str = "", *, topic: str = "", support: str = ""
    ) -> None:
        """`topic`: the help page about this state (default: the step's own, shown only for a problem or an error);
        `support`: technical details, shown only under "Details for support"."""
        self.state = state
        self.help.set_topic(topic or self.help_topic)
        helps = bool(topic) or state == PROBLEM or bool(error)
        self.help.setVisible(helps)
        self.support.set_text(support)
        self.trouble.setVisible(helps or bool(support))
        self.badge.setText(str(self.number) if state == TODO else MARKS[state])
        self.badge.setStyleSheet(
            f"background:{COLOURS[state]};color:white;border-radius:16px;font-weight:bold;font-size:15px;"
        )
        self.status.setText(status)
        self.detail.setText(detail)
        self.detail.setVisible(bool(detail))
        # A path made to wrap (breakable_path) would be copied with its invisible breaks: not selectable then.
        self.detail.setTextInteractionFlags(
            Qt.TextInteractionFlag.NoTextInteraction if ZWSP in detail else Qt.TextInteractionFlag.TextSelectableByMouse
        )
        set_error(self.error, error)

    def set_buttons(self, buttons: list[tuple[str, Callable[[], None]]], primary: str = "") -> None:
        while self.buttons.count():
            item = self.buttons.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()
                widget.deleteLater()
        self.button_widgets = {}
        for label, action in buttons:
            button = QPushButton(label)
            button.setAutoDefault(False)
            if label == primary:
                font = button.font()
                font.setBold(True)
                button.setFont(font)
            button.clicked.connect(action)
            self.buttons.addWidget(button)
            self.button_widgets[label] = button

    def add_menu_button(self, label: str, items: list[tuple[str, Callable[[], None]]]) -> QPushButton:
        """A button that opens a short menu of choices (after ``set_buttons``, which removes it again)."""
        button = QPushButton(label)
        button.setAutoDefault(False)
        menu = QMenu(button)
        for text, action in items:
            menu.addAction(text).triggered.connect(action)
        button.setMenu(menu)
        self.buttons.addWidget(button)
        self.button_widgets[label] = button
        return button


class SignInLink(QWidget):
    """While Google's sign-in page is open: its address to copy (the app cannot tell whether the
    browser opened) and how long SearchDesk keeps waiting."""

    def __init__(self) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.hint = plain_label(
            "No sign-in page in your browser? Copy this link and open it in your browser yourself:",
            selectable=False,
        )
        self.link = QLineEdit()
        self.link.setReadOnly(True)
        self.link.setObjectName("signInLink")
        row = QHBoxLayout()
        row.addWidget(self.link, 1)
        self.copy_button = QPushButton("Copy link")
        self.copy_button.setAutoDefault(False)
        self.copy_button.clicked.connect(self.copy)
        row.addWidget(self.copy_button)
        self.time_left = plain_label("", selectable=False)
        layout.addWidget(self.hint)
        layout.addLayout(row)
        layout.addWidget(self.time_left)

    def show_link(self, url: str, seconds_left: int) -> None:
        if self.link.text() != url:
            self.link.setText(url)
            self.link.setCursorPosition(0)
        minutes, seconds = divmod(seconds_left, 60)
        self.time_left.setText(f"SearchDesk waits {minutes}:{seconds:02d} more for you to finish.")

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.link.text())
        self.copy_button.setText("Copied")


def plain_properties(text: str) -> str:
    """Every Domain property in `text` as a site owner names it ("the domain example.com"), not in the
    "sc-domain:" spelling Google's programs use (the server's own wording, `selfcheck.shown`)."""
    from searchdesk_server.selfcheck import shown

    return DOMAIN_PROPERTY.sub(lambda m: shown(m.group(0)), text)


DOMAIN_PROPERTY = re.compile(r"sc-domain:[^\s),;]+")


@functools.cache
def hostile_rows() -> dict[str, str]:
    """The demo's deliberately hostile searches and pages, as the check shows them (cleaned and cut as the
    server's tables cut every cell), each with what it tests; the demo's own constants are the one list."""
    from searchdesk_server.demo import vocab
    from searchdesk_server.selfcheck import CELL_CHARS
    from searchdesk_server.text import flatten

    tests = {
        vocab.HOSTILE_INJECTION: "it tries to give Claude an order. Claude gets it as data, never as an "
        "instruction, and removing a property always asks you first.",
        vocab.HOSTILE_BIDI: "it hid a character that turns text backwards. SearchDesk removed it, so the words "
        "read as they are.",
        vocab.HOSTILE_ZERO_WIDTH: "it hid invisible characters between its words. SearchDesk removed them.",
        vocab.HOSTILE_PIPE: "it would break the layout of a table. SearchDesk keeps it in one cell.",
        vocab.HOSTILE_LONG: "it is very long. SearchDesk shortens it, and the … shows where.",
        vocab.HOSTILE_PAGE: "its address hid a character that changes a terminal's colours. SearchDesk removed it.",
    }
    return {flatten(text, CELL_CHARS): f"{HOSTILE} {why}" for text, why in tests.items()}


HOSTILE = "A test of SearchDesk's protections: the demo made this up on purpose, because"

#: What URL Inspection's verdict means for the page, in the words of Google's reference
#: (IndexStatusInspectionResult.verdict: PASS is "Valid", FAIL "Error", NEUTRAL "Excluded" in Search
#: Console), keyed by the word the check shows (`selfcheck.INSPECTION_WORDS`, the one translation).
VERDICT_MEANINGS = {
    "PASS": "Google has this page in its index: it can appear in search results.",
    "FAIL": "Google cannot index this page: the lines below say what stopped it.",
    "NEUTRAL": "This page is not in Google's index, usually on purpose: for example it redirects to "
    "another page, carries a 'noindex' rule, or is a copy of a page Google shows instead. The Coverage line "
    "says which. Nothing needs doing unless you want this very address in search results.",
}


def _verdict_row() -> str:
    from searchdesk_server.selfcheck import INSPECTION_FIELDS

    return dict(INSPECTION_FIELDS)["verdict"]


VERDICT_ROW = _verdict_row()
"""The label of URL Inspection's verdict row in the check's table ("Verdict")."""


def verdict_meaning(shown: str) -> str:
    """The plain meaning of the verdict the check shows ("Excluded"), or "" for one Google sent as is."""
    from searchdesk_server.selfcheck import INSPECTION_WORDS

    code = next((c for c, word in INSPECTION_WORDS["verdict"].items() if word == shown), "")
    return VERDICT_MEANINGS.get(code, "")


def check_summary(report: Any, demo: bool) -> str:
    """The report's first words: one or two sentences on what the check did and what it means."""
    if not getattr(report, "ok", False):
        return "SearchDesk tried to read your Search Console data the way Claude will, and could not."
    text = "SearchDesk read your Search Console data the way Claude will; below is a sample of what Claude would get."
    if demo:
        text += " It is the demo's made-up data, and a few searches in it are hostile on purpose to test SearchDesk's "
        text += "protections (each is marked)."
    return text


def _numeric(text: str) -> bool:
    return bool(text) and text.replace(",", "").replace(".", "", 1).replace("-", "", 1).isdigit()


class ReportTable(QFrame):
    """One answer of the check as a small grid of plain, selectable labels in the window's own font: a
    title, the column names, the rows (which scroll sideways on a narrow screen rather than widen the
    window); a row with something to explain gets a note under the grid, naming the row."""

    def __init__(self, table: Any, notes: Callable[[tuple[str, ...]], str]) -> None:
        super().__init__()
        self.setObjectName("reportTable")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        self.title = bold(plain_label(plain_properties(table.title)))
        layout.addWidget(self.title)
        self.inner = QWidget()
        grid = QGridLayout(self.inner)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(16)
        grid.setVerticalSpacing(2)
        columns = tuple(table.columns)
        numeric = [bool(table.rows) and all(_numeric(row[i]) for row in table.rows) for i in range(len(columns))]
        line = 0
        if any(columns):
            for c, name in enumerate(columns):
                grid.addWidget(bold(plain_label(name, wrap=False, selectable=False)), line, c, self._align(numeric[c]))
            line += 1
        #: Each row's cells as shown, and its note ("" when none): the tests read these.
        self.rows: list[tuple[tuple[str, ...], str]] = []
        self.note_labels: list[QLabel] = []
        for row in table.rows:
            cells = tuple(plain_properties(cell) for cell in row)
            for c, cell in enumerate(cells):
                grid.addWidget(plain_label(cell, wrap=False), line, c, self._align(numeric[c]))
            line += 1
            note = notes(tuple(row))
            self.rows.append((cells, note))
            if note:
                label = plain_label(note)
                label.setObjectName("rowNote")
                italic = label.font()
                italic.setItalic(True)
                label.setFont(italic)
                self.note_labels.append(label)
        grid.setColumnStretch(len(columns), 1)  # room to spare goes right of the last column
        self.area = SidewaysScroll(self.inner)
        layout.addWidget(self.area)
        for label in self.note_labels:
            layout.addWidget(label)
        if table.more:
            layout.addWidget(plain_label(f"… and {table.more} more", selectable=False))

    @staticmethod
    def _align(numeric: bool) -> Qt.AlignmentFlag:
        side = Qt.AlignmentFlag.AlignRight if numeric else Qt.AlignmentFlag.AlignLeft
        return side | Qt.AlignmentFlag.AlignTop


class SidewaysScroll(QScrollArea):
    """Content as tall as it is, scrolling sideways only when the window is narrower than it."""

    def __init__(self, content: QWidget) -> None:
        super().__init__()
        self.setWidget(content)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        widget = self.widget()
        content = widget.sizeHint() if widget is not None else QSize()
        room = self.horizontalScrollBar().sizeHint().height() if content.width() > self.viewport().width() else 0
        return QSize(content.width(), content.height() + room)

    def minimumSizeHint(self) -> QSize:
        return QSize(120, self.sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.updateGeometry()  # the scroll bar comes or goes with the width: the height follows


class CheckResult(QFrame):
    """The check as a result: "What Claude would see", a plain summary first, the verdict, then each answer
    as a small table; what the server said when it failed only under "Details for support"."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("checkResult")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        self.heading = bold(plain_label("What Claude would see", selectable=False), 1.1)
        self.summary = plain_label("")
        self.summary.setObjectName("checkSummary")
        self.verdict = bold(plain_label(""))
        self.subject = plain_label("")
        self.tables_box = QVBoxLayout()
        self.tables: list[ReportTable] = []
        self.support = SupportDetails()  # what the server said, when the check failed: for support only
        for widget in (self.heading, self.summary, self.verdict, self.subject):
            layout.addWidget(widget)
        layout.addLayout(self.tables_box)
        layout.addWidget(self.support)

    def show_report(self, verdict: str, subject: CheckSubject, report: Any, *, demo: bool = False) -> None:
        self.summary.setText(check_summary(report, demo))
        self.verdict.setText(plain_properties(verdict))
        self.subject.setText(f"Checked for {subject.account}, with {subject.entry}.")
        for table in self.tables:
            table.hide()
            table.deleteLater()
        self.tables = [ReportTable(t, self._notes(demo)) for t in getattr(report, "tables", [])]
        for table in self.tables:
            self.tables_box.addWidget(table)
        self.support.set_text(str(getattr(report, "error", "") or ""))

    @staticmethod
    def _notes(demo: bool) -> Callable[[tuple[str, ...]], str]:
        """What a row needs said under it: the demo's hostile rows, and URL Inspection's verdict."""
        hostile = hostile_rows() if demo else {}

        def note(row: tuple[str, ...]) -> str:
            if len(row) == 2 and row[0] == VERDICT_ROW:
                meaning = verdict_meaning(row[1])
                return f"{row[1]}: {meaning}" if meaning else ""
            return next((f"“{cell}”: {hostile[cell]}" for cell in row if cell in hostile), "")

        return note


class ApprovalsSection(QFrame):
    """Questions waiting, answers given after Claude stopped waiting (what to tell Claude), and denied
    questions Claude asked again."""

    def __init__(self, review: Callable[[], None]) -> None:
        super().__init__()
        self.setObjectName("approvals")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        layout.addWidget(bold(plain_label("Approval questions", selectable=False), 1.1))
        row = QHBoxLayout()
        self.waiting = plain_label("", selectable=False)
        self.review_button = QPushButton("Show the question")
        self.review_button.setAutoDefault(False)
        self.review_button.clicked.connect(review)
        row.addWidget(self.waiting, 1)
        row.addWidget(self.review_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(row)
        self.late = QVBoxLayout()
        layout.addLayout(self.late)
        self.late_labels: list[QLabel] = []
        #: Denied questions Claude asked again, each with "Change my mind" (the main window fills it).
        self.asked_again = QVBoxLayout()
        layout.addLayout(self.asked_again)

    def show_state(self, waiting: int, late: list[Entry]) -> None:
        self.waiting.setText(
            f"{plural(waiting, 'approval question')} waiting for you." if waiting else "No approval questions waiting."
        )
        self.review_button.setEnabled(bool(waiting))
        texts = [late_answer_text(e) for e in newest_per_target(late)]
        while len(self.late_labels) > len(texts):
            self.late_labels.pop().deleteLater()
        while len(self.late_labels) < len(texts):
            label = bold(plain_label(""))
            label.setObjectName("lateAnswer")
            self.late.addWidget(label)
            self.late_labels.append(label)
        for label, text in zip(self.late_labels, texts, strict=True):
            label.setText(text)


def newest_per_target(entries: list[Entry]) -> list[Entry]:
    """One entry per target (the tool and its targets: the fingerprint), the newest answer's: a question
    answered again for the same sitemap replaces the older line rather than contradicting it beside it."""
    newest: dict[str, Entry] = {}
    for entry in entries:
        held = newest.get(entry.fingerprint)
        if held is None or (entry.activity.answered_at or 0.0) >= (held.activity.answered_at or 0.0):
            newest[entry.fingerprint] = entry
    return [e for e in entries if newest.get(e.fingerprint) is e]


def late_answer_text(entry: Entry) -> str:
    """What the person does after answering a question Claude stopped waiting for."""
    a = entry.activity
    what = f"“{tool_title(a.tool)}” ({values_text(a.values, 3).replace(chr(10), '; ')})"
    answered = a.answered_at or time.time()
    if entry.state is State.APPROVED:
        return f"You approved {what} after Claude stopped waiting. {late_yes_words(answered)}"
    return (
        f"You said no to {what} after Claude stopped waiting: nothing will be done. If Claude asks again within "
        f"{minutes(QUESTION_OPEN_S)} it is told no; you can tell Claude you said no."
    )


class MainWindow(QMainWindow):
    """First run's three steps, the app's state, and what the tray menu offers."""

    quit_requested = Signal()
    #: The window closed while the app stays in the tray (the app says where it went, once).
    closed_to_tray = Signal()

    def __init__(self, core: Core, *, autostart: Autostart | None = None, has_tray: bool = False) -> None:
        super().__init__()
        self.core = core
        self.autostart = autostart or Autostart(demo=core.demo)
        self.has_tray = has_tray
        self.quitting = False  # set before the app quits: Qt 6 aborts a quit when a window refuses to close
        self.activity_window: ActivityWindow | None = None
        self.about_dialog: AboutDialog | None = None
        self.settings_window: SettingsWindow | None = None
        self.review: Callable[[], None] = lambda: None
        #: "Change my mind" about a deny Claude asked again about: set by the app (ApprovalQueue.reconsider).
        self.change_my_mind: Callable[[str], None] = lambda fp: None
        self.asked_again_rows: list[tuple[str, QLabel, QPushButton]] = []
        self._asked_again_shown: list[tuple[str, int]] = []
        #: "Try the demo": set by the app to restart itself on the demo (see DesktopApp.restart_in_demo).
        self.restart_in_demo: Callable[[], None] | None = None
        #: Asks the person a yes/no question (tests answer for them).
        self.ask: Callable[[QMessageBox], bool] = exec_yes
        self.step_errors: dict[int, str] = {}
        self.notice = ""  # one more plain line under the status (notifications turned off)
        self.lock_notice = ""  # and one more, once: whether the screen is locked cannot be read here
        self.setWindowTitle(title(core.demo))

        content = QWidget()
        content.setObjectName("content")
        layout = QVBoxLayout(content)
        if core.demo:
            layout.addWidget(demo_banner())
        layout.addWidget(bold(plain_label("Set up SearchDesk in three steps", selectable=False), 1.5))
        layout.addWidget(plain_label(WHAT_IT_DOES, selectable=False))
        #: Notes to see as the window opens (the first start's record of changes): above the steps.
        self.notices = QVBoxLayout()
        layout.addLayout(self.notices)
        self.step1 = StepRow(1, "Sign in with Google", "sign-in")
        self.step2 = StepRow(2, "Add to Claude Desktop", "claude")
        self.step3 = StepRow(3, "Check it works", "check")
        self.signin_link = SignInLink()
        self.step1.extras.addWidget(self.signin_link)
        #: Two or more accounts: one card each (with one, step 1 stays as it always was).
        self.account_list = AccountsList()
        self.account_list.make_default.connect(self.make_default)
        self.account_list.sign_in_again.connect(self.sign_in_again_as)
        self.account_list.remove.connect(self.remove_account)
        self.step1.extras.addWidget(self.account_list)
        self.check_result = CheckResult()
        self.step3.extras.addWidget(self.check_result)
        for step in (self.step1, self.step2, self.step3):
            layout.addWidget(step)
        #: One section a state of the app adds below the steps (approvals; others may follow).
        self.sections = QVBoxLayout()
        self.approvals = ApprovalsSection(lambda: self.review())
        self.add_section(self.approvals)
        layout.addLayout(self.sections)
        self.status_line = plain_label("")
        layout.addWidget(self.status_line)
        #: Approval questions cannot reach this app (its listener did not start): what, and Help.
        self.listener_problem = error_label()
        self.listener_help = HelpButton("approvals")
        problem_row = QHBoxLayout()
        problem_row.addWidget(self.listener_problem, 1)
        problem_row.addWidget(self.listener_help, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(problem_row)
        # Claude asked again after the person said no: one line each, with "Change my mind".
        self.asked_again_box = self.approvals.asked_again
        self._waiting_shown = 0  # questions waiting when the section was last shown
        layout.addStretch(1)

        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(0, 0, 0, 0)
        self.scroll_area = scrolling(content)
        outer.addWidget(self.scroll_area, 1)
        bottom = QVBoxLayout()
        bottom.setContentsMargins(9, 0, 9, 9)
        self.autostart_box = QCheckBox("Start SearchDesk when I log in")
        self.autostart_box.setChecked(self.autostart.is_enabled())
        self.autostart_box.toggled.connect(self._autostart_toggled)
        bottom.addWidget(self.autostart_box)
        buttons = FlowLayout(align_right=True)
        for label, slot in (
            ("Settings", self.show_settings),
            ("Activity", self.show_activity),
            ("About", self.show_about),
            ("Quit SearchDesk", self.quit_requested.emit),
        ):
            button = QPushButton(label)
            button.setAutoDefault(False)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        bottom.addLayout(buttons)
        outer.addLayout(bottom)
        self.setCentralWidget(central)
        fit_to_screen(self, 760, 860)

        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)
        core.changed.connect(self.refresh)
        core.signin_done.connect(self._signin_done)
        core.check_done.connect(self._check_done)
        self.refresh()

    def add_section(self, section: QWidget) -> None:
        """Add one part of the window below the steps (each is a widget of its own)."""
        self.sections.addWidget(section)

    def add_notice(self, notice: QWidget) -> None:
        """Add a note the person must see when the window opens: above the steps, since below them a small
        screen (1024×600) shows it only to someone who scrolls down."""
        self.notices.addWidget(notice)

    # --- state ------------------------------------------------------------------------------
    def refresh(self) -> None:
        self._show_signin()
        self._show_claude()
        self._show_check()
        self._show_approvals()
        account = self.core.account
        claude = self.core.claude_status()
        line = f"{account.short} · {claude.short}"
        if self._several():
            line = f"{len(self.core.accounts.rows)} Google accounts (default: {account.account}) · {claude.short}"
        listener = self.core.listener_error
        set_error(self.listener_problem, f"Approval questions cannot reach this app: {listener}" if listener else "")
        self.listener_help.setVisible(bool(listener))
        if self.notice:
            line += "\n" + self.notice
        if self.lock_notice:
            line += "\n" + self.lock_notice
        self.status_line.setText(line)
        self._show_asked_again()
        busy = self.core.signing_in or bool(self.core.book.late_answers())
        if busy != self._ticker.isActive():
            self._ticker.start() if busy else self._ticker.stop()

    def _tick(self) -> None:
        if self.core.signing_in:
            self.signin_link.show_link(self.core.signin_url, self.core.signin_seconds_left())
        self._show_approvals()  # a late answer's 5 minutes end

    def _show_approvals(self) -> None:
        waiting = self.core.pending_count()
        self.approvals.show_state(waiting, self.core.book.late_answers())
        if waiting > self._waiting_shown:
            # A new question waits: its Review button in view, even when notes above the steps and the
            # steps themselves fill a small screen (the person is in a hurry; Claude waits under a minute).
            QTimer.singleShot(0, lambda: self.scroll_area.ensureWidgetVisible(self.approvals))
        self._waiting_shown = waiting

    def _show_asked_again(self) -> None:
        """One line per deny that Claude asked about again, each with "Change my mind"."""
        entries = self.core.book.asked_again_entries()
        shown = [(e.key, e.asked_again) for e in entries]
        if shown == self._asked_again_shown:
            return
        self._asked_again_shown = shown
        while self.asked_again_box.count():
            item = self.asked_again_box.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.asked_again_rows = []
        for entry in entries[:ASKED_AGAIN_ROWS]:
            request = entry.request
            text = f"{ASKED_AGAIN}: {first_sentence(request.what)}"
            if request.values:
                text += "\n" + value_line(*request.pairs[0])
            row = QWidget()
            line = QHBoxLayout(row)
            line.setContentsMargins(0, 0, 0, 0)
            label = plain_label(text)
            button = QPushButton("Change my mind")
            button.setAutoDefault(False)
            button.clicked.connect(lambda _checked=False, fp=entry.key: self.change_my_mind(fp))
            line.addWidget(label, 1)
            line.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
            self.asked_again_box.addWidget(row)
            self.asked_again_rows.append((entry.key, label, button))
        more = len(entries) - ASKED_AGAIN_ROWS
        if more > 0:
            self.asked_again_box.addWidget(
                plain_label(f"And {plural(more, 'more question')} Claude asked again; they appear here in turn.")
            )

    def show_notice(self, text: str, shown: bool) -> None:
        self.notice = text if shown else ""
        self.refresh()

    def show_lock_notice(self, text: str) -> None:
        """Say once, beside the notifications line, that SearchDesk cannot tell whether the screen is
        locked (a notification's press then counts: see docs/security.md)."""
        self.lock_notice = text
        self.refresh()

    def status_lines(self) -> list[str]:
        """What the tray menu would show at a glance (tests read this)."""
        waiting = self.core.pending_count()
        return [
            self.core.account.short,
            self.core.claude_status().short,
            f"{plural(waiting, 'approval')} waiting" if waiting else "No approvals waiting",
        ]

    def _several(self) -> bool:
        """Two or more accounts: step 1 lists them."""
        return not self.core.demo and len(self.core.accounts.rows) > 1

    def _show_signin(self) -> None:
        step, core = self.step1, self.core
        account = core.account
        error = self.step_errors.get(1, "")
        self.signin_link.setVisible(core.signing_in)
        several = self._several() and account.state is not Account.KEYRING
        self.account_list.setVisible(several)
        if several:
            self.account_list.show_rows(core.accounts.rows)
        if core.signing_in:
            step.show_state(
                BUSY,
                "Waiting for you in the browser…",
                "SearchDesk opened Google's sign-in page in your browser. Sign in there, allow access, then "
                "come back here.",
            )
            self.signin_link.show_link(core.signin_url, core.signin_seconds_left())
            step.set_buttons([("Cancel", core.cancel_sign_in)])
            return
        if account.state is Account.DEMO:
            step.show_state(OK, "Demo: no Google account needed", account.detail)
            step.set_buttons([])
            return
        if several:
            self._show_accounts(core.accounts.rows, error)
            return
        if account.state is Account.SIGNED_IN:
            detail = "\n".join(x for x in (account.detail, account.warning) if x)
            due = account.warning_due
            step.show_state(PROBLEM if due else OK, account.short, detail, error, topic="testing" if due else "")
            step.set_buttons([("Sign in again", self.sign_in_again), ("Sign out", self.sign_out)])
            self._add_account_button()
            return
        if account.state is Account.EXPIRED:
            step.show_state(PROBLEM, account.short, account.detail, error, topic="expired")
            step.set_buttons([("Sign in again", self.sign_in_again), ("Sign out", self.sign_out)], "Sign in again")
            self._add_account_button()
            return
        if account.state is Account.SERVICE_ACCOUNT:
            step.show_state(OK, account.short, account.detail, error)
            step.set_buttons([("Stop using this key", self.sign_out)])
            self._add_account_button()
            return
        if account.state is Account.KEYRING and account.damaged:
            step.show_state(PROBLEM, "Your saved sign-in is damaged", account.detail, error, topic="damaged")
            step.set_buttons([("Sign out", self.sign_out)], "Sign out")
            return
        if account.state is Account.KEYRING:
            step.show_state(
                PROBLEM,
                "Your keyring is not available",
                account.detail,
                error,
                topic="keyring",
                support=account.details,  # which keyrings were tried, and why not
            )
            step.set_buttons([("Try again", core.refresh_account)])
            return
        try:
            core.oauth_client()
        except NoOAuthClient as exc:
            step.show_state(PROBLEM if error else TODO, account.short, str(exc), error, topic="no-client")
            step.set_buttons(
                [
                    ("Try the demo", self.try_demo),
                    ("Use my own OAuth client file…", self.choose_client_file),
                    ("Use a service-account key file…", self.choose_service_account),
                ],
                primary="Try the demo",
            )
            return
        except SignInError as exc:
            error = error or str(exc)
        step.show_state(PROBLEM if error else TODO, account.short, account.detail, error)
        step.set_buttons([("Sign in with Google", self.sign_in)], primary="Sign in with Google")

    def _show_accounts(self, rows: tuple[AccountRow, ...], error: str) -> None:
        """Step 1 with several accounts: how many, which need the person, the rule Claude follows, a card each."""
        waiting = [r for r in rows if not r.ok or r.warning_due]
        status = f"Signed in with {len(rows)} Google accounts"
        if waiting:
            status += f"; {len(waiting)} {'needs' if len(waiting) == 1 else 'need'} you (below)"
        self.step1.show_state(PROBLEM if waiting or error else OK, status, ROUTING, error)
        self.step1.set_buttons([])
        self._add_account_button()

    def _add_account_button(self) -> None:
        """The menu of ways to add an account: a sign-in (in a build without Google sign-in built in and
        no sign-in yet, with the person's own client file) or a service-account key file."""
        google = ("Sign in with another Google account", self.add_google_account)
        if not any(r.kind == "oauth" for r in self.core.accounts.rows):  # no sign-in's client to use again
            try:
                self.core.oauth_client()
            except NoOAuthClient:
                google = ("Sign in with my own OAuth client file…", self.choose_client_file)
            except SignInError:
                pass  # the sign-in says what is wrong
        self.step1.add_menu_button(
            ADD_ACCOUNT, [google, ("Add a service-account key file…", self.choose_service_account)]
        )

    def _show_claude(self) -> None:
        step, core = self.step2, self.core
        claude = core.claude_status()
        status = claude.check
        error = self.step_errors.get(2, "")
        where = f"Settings file: {breakable_path(cc.display_path(status.path))}"
        state = status.state
        if state is cc.EntryState.INVALID_FILE:
            problem = "Claude Desktop's settings file cannot be read"
            step.show_state(PROBLEM, problem, status.detail, error, topic="claude-unreadable")
            step.set_buttons([("Try again", core.changed.emit)])
        elif state is not cc.EntryState.ABSENT and claude.extension is not None:
            step.show_state(
                PROBLEM,
                "SearchDesk is in Claude Desktop twice",
                "It is installed as an extension and also listed in the settings file, so Claude sees every "
                "tool twice. Remove the settings-file entry.\n" + where,
                error,
                topic="claude-twice",
            )
            step.set_buttons([("Remove from the settings file", self.remove_from_claude)])
        elif state is cc.EntryState.OK:
            label = "Added to Claude Desktop" + (" (the demo)" if status.demo else "")
            if core.claude_evidence() is None:  # the entry is ready, but nothing shows Claude Desktop is here
                step.show_state(
                    TODO,
                    f"{label}, but Claude Desktop was not found",
                    f"{NOT_FOUND}\n{where}",
                    error,
                    topic="claude-not-found",
                )
            else:
                step.show_state(OK, label, f"{RESTART}\n{where}", error)
            step.set_buttons([("Remove from Claude Desktop", self.remove_from_claude)])
        elif state is cc.EntryState.OTHER_MODE:
            self._show_other_mode(status.demo, where, error)
        elif state is cc.EntryState.OWN_CREDENTIALS:
            step.show_state(
                PROBLEM,
                "Claude Desktop's entry uses other Google credentials",
                "SearchDesk's entry in Claude Desktop carries Google credentials of its own, so Claude would "
                "not use the account you set up here. SearchDesk can replace the entry with its own.\n" + where,
                error,
                topic="claude-credentials",
            )
            step.set_buttons(
                [("Use SearchDesk's sign-in instead", self.switch_claude)], "Use SearchDesk's sign-in instead"
            )
        elif state in (cc.EntryState.BROKEN, cc.EntryState.OTHER_COPY):
            step.show_state(PROBLEM, f"Needs repair: {status.detail}", where, error, topic="claude-repair")
            step.set_buttons(
                [("Repair", self.repair_claude), ("Remove from Claude Desktop", self.remove_from_claude)],
                primary="Repair",
            )
        elif claude.extension is not None:
            self._show_extension(claude, error)
        elif core.bundle_opened and core.add_method() == "bundle":
            detail = (
                "Claude Desktop should be showing SearchDesk's install dialog: click Install there, then "
                "come back. Nothing appeared? Add SearchDesk through the settings file instead."
            )
            step.show_state(TODO, "Opened in Claude Desktop", detail, error, topic="claude-opened")
            step.set_buttons(
                [("Open it again", self.add_to_claude), ("Use the settings file instead", self.add_via_settings_file)]
            )
        else:
            notes = []
            if core.claude_evidence() is None:
                notes.append("Claude Desktop was not found on this computer; SearchDesk can add itself anyway.")
            if core.add_method() == "config":
                notes.append(where)
            step.show_state(PROBLEM if error else TODO, "Not added yet", "\n".join(notes), error)
            label = "Add the demo to Claude Desktop" if core.demo else "Add to Claude Desktop"
            step.set_buttons([(label, self.add_to_claude)], primary=label)

    def _show_other_mode(self, entry_is_demo: bool, where: str, error: str) -> None:
        if entry_is_demo:  # the real app, the demo's entry
            status = "Claude Desktop uses the demo, not your account"
            detail = (
                "SearchDesk's entry in Claude Desktop runs the demo, so Claude answers with made-up data. "
                "Switch it to your Google account."
            )
            label = "Switch Claude Desktop to your account"
        else:  # the demo app, a real entry
            status = "Claude Desktop uses your real account, not the demo"
            detail = (
                "SearchDesk's entry in Claude Desktop uses your real Google account; this demo cannot answer "
                "for it. Switch it to the demo, or quit the demo and start SearchDesk normally."
            )
            label = "Switch Claude Desktop to the demo"
        self.step2.show_state(PROBLEM, status, f"{detail}\n{where}", error, topic="claude-demo")
        self.step2.set_buttons([(label, self.switch_claude)], primary=label)

    def _show_extension(self, claude: Any, error: str) -> None:
        step = self.step2
        if self.core.demo:
            label = "Switch Claude Desktop to the demo"
            step.show_state(
                PROBLEM,
                "Claude Desktop uses your real account, not the demo",
                "Claude Desktop has the SearchDesk extension, which uses your real Google account. To use the "
                "demo in Claude, first remove the extension in Claude Desktop (Settings, Extensions), then switch.",
                error,
            )
            step.set_buttons([(label, self.switch_claude)], primary=label)
        elif not claude.extension_is_ours:
            version = claude.extension_version or "unknown"
            step.show_state(
                PROBLEM,
                "The SearchDesk extension in Claude Desktop is another version",
                f"Claude Desktop has version {version}; this app is {__version__}. Update it: Claude Desktop shows "
                "its install dialog, click Install there.",
                error,
                topic="claude-extension",
            )
            step.set_buttons([("Update the extension", self.add_to_claude)], primary="Update the extension")
        else:
            detail = "Its settings are in Claude Desktop: Settings, Extensions, SearchDesk."
            step.show_state(OK, "Added to Claude Desktop as an extension", detail, error)
            step.set_buttons([])

    def _show_check(self) -> None:
        step, core = self.step3, self.core
        blocked = core.check_blocked()
        result = None if blocked else core.last_check
        self.check_result.setVisible(False)
        if blocked:
            step.show_state(TODO, "Not checked yet", blocked)
            step.set_buttons([])
            return
        if result is None:
            step.show_state(
                TODO,
                "Not checked yet",
                "Starts SearchDesk exactly as Claude Desktop would, and reads your Search Console data through it.",
            )
            step.set_buttons([("Check it works", self.run_check)], primary="Check it works")
            return
        if result == BUSY:
            step.show_state(BUSY, "Checking…", "Starting SearchDesk as Claude Desktop would.")
            step.set_buttons([])
            return
        if isinstance(result, str):
            step.show_state(PROBLEM, "The check could not run", "", result, topic="check-could-not-run")
        else:
            claude = core.claude_status()
            added = claude.check.entry is not None or claude.extension is not None
            seen = core.claude_seen()
            warning = str(getattr(result, "warning", ""))
            if result.ok and warning:  # a default property nobody can see: not a tick
                state, status = PROBLEM, "SearchDesk works, but the default property needs your attention"
                verdict = f"{result.verdict} {warning}"
            elif result.ok and added and core.claude_evidence() is None:
                state, status = TODO, "SearchDesk works; Claude Desktop was not found"
                verdict = f"{result.verdict} {NOT_FOUND}"
            elif result.ok and added and seen is None:
                state, status = TODO, "SearchDesk works; Claude Desktop has not started it yet"
                verdict = f"{result.verdict} {RESTART} Then ask Claude about your site; this step turns green then."
            elif result.ok and added:
                at, version = seen or (0.0, "")
                says = f" (it says it is version {version})" if version else ""
                state, status = OK, "It works"
                verdict = (
                    f"{result.verdict} Claude Desktop started SearchDesk at "
                    f"{time.strftime('%H:%M on %d %B', time.localtime(at))} and it answered{says}."
                )
            elif result.ok:
                state, status = TODO, "SearchDesk works; Claude Desktop does not have it yet"
                then = "Once you add SearchDesk to Claude Desktop (step 2), Claude can use it."
                if core.claude_evidence() is None:  # adding it alone would not let Claude use it
                    then = "Claude Desktop was not found: install it from claude.ai/download, then add SearchDesk."
                verdict = f"{result.verdict} {then}"
            else:
                state, status, verdict = PROBLEM, "The check found a problem", check_verdict(result)
            step.show_state(state, status, topic="" if result.ok else check_topic(str(result.kind)))
            self.check_result.show_report(verdict, core.check_subject(), result, demo=core.demo)
            self.check_result.setVisible(True)
        step.set_buttons([("Check again", self.run_check)])

    # --- actions ----------------------------------------------------------------------------
    def _step1(self, action: Callable[[], object]) -> None:
        self.step_errors.pop(1, None)
        try:
            action()
        except SignInError as exc:
            self.step_errors[1] = str(exc)
        self.refresh()

    def sign_in(self) -> None:
        self._step1(self.core.sign_in)

    def sign_in_again(self) -> None:
        self._step1(self.core.sign_in_again)

    def sign_in_again_as(self, email: str) -> None:
        self._step1(lambda: self.core.sign_in_again(email))

    def add_google_account(self) -> None:
        """Sign in once more: the account chosen in the browser joins the others (the same OAuth client
        as a sign-in already here, so a person's own client keeps working)."""
        signed_in = next((r.email for r in self.core.accounts.rows if r.kind == "oauth"), None)
        self._step1(lambda: self.core.sign_in_again(signed_in) if signed_in else self.core.sign_in())

    def make_default(self, email: str) -> None:
        self.core.set_default_account(email)

    def remove_account(self, email: str, *, confirm: Callable[[], bool] | None = None) -> None:
        """Asks first, saying what removing does: revoked at Google, gone from the keyring, its properties
        out of Claude's reach."""
        row = self.core.accounts.find(email)
        if row is None:
            return
        if not (confirm or (lambda: self.ask(self.confirm_remove_account_box(row))))():
            return
        self.step_errors.pop(1, None)
        self.core.remove_account(email)

    def confirm_remove_account_box(self, row: AccountRow) -> QMessageBox:
        if row.kind == "oauth":
            try:
                place = self.core.keystore.place
            except KeystoreError:
                place = "your system's keyring"
            does = (
                f"SearchDesk signs this account out at Google and deletes its sign-in from {place}. Claude can "
                "then no longer use the properties this account sees, unless another of your accounts sees them too."
            )
            again = "You can add it again at any time by signing in."
        else:
            does = (
                "SearchDesk stops using this service account's key file (the file itself stays where it is). "
                "Claude can then no longer use the properties this account sees, unless another of your accounts "
                "sees them too."
            )
            again = "You can add the key file again at any time."
        others = [r for r in self.core.accounts.rows if r.email != row.email]
        if row.default and others:
            again = f"{others[0].email} becomes the default account. {again}"
        box = QMessageBox(
            QMessageBox.Icon.Question,
            title(self.core.demo, "remove this account?"),
            f"Remove {row.email} from SearchDesk?\n\n{does}\n\n{again}",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        box.setObjectName("confirmRemoveAccount")
        box.button(QMessageBox.StandardButton.Yes).setText("Remove")
        box.button(QMessageBox.StandardButton.No).setText("Keep it")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box

    def sign_in_with_client_file(self, path: Path) -> None:
        self._step1(lambda: self.core.sign_in_with_client_file(path))

    def use_service_account(self, path: Path) -> None:
        self._step1(lambda: self.core.use_service_account(path))

    def choose_client_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, title(self.core.demo, "choose your OAuth client file"), start_folder(), "JSON files (*.json)"
        )
        if name:
            self.sign_in_with_client_file(Path(name))

    def choose_service_account(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, title(self.core.demo, "choose a service-account key file"), start_folder(), "JSON files (*.json)"
        )
        if name:
            self.use_service_account(Path(name))

    def try_demo(self) -> None:
        """Restart on the demo; a window without the app around it (screenshots) can only explain."""
        if self.restart_in_demo is not None:
            self.restart_in_demo()
            return
        QMessageBox.information(
            self,
            title(self.core.demo, "try the demo"),
            "Quit SearchDesk and start it again with the demo:\n\n    searchdesk --demo\n\n"
            "The demo answers with made-up data and never touches a Google account.",
        )

    def sign_out(self) -> None:
        self.core.sign_out()

    def add_to_claude(self, *, confirm: Callable[[], bool] | None = None) -> None:
        """The extension (.mcpb) when this build ships one; else, or when it cannot be opened, the settings file."""
        self.step_errors.pop(2, None)
        if self.core.add_method() == "bundle":
            if self.core.open_extension():
                self.refresh()
                return
            self.step_errors[2] = (
                "Claude Desktop did not open SearchDesk's extension file, so SearchDesk added itself to Claude "
                "Desktop's settings file instead."
            )
        self._write_entry(confirm)

    def add_via_settings_file(self) -> None:
        self.step_errors.pop(2, None)
        self._write_entry(None)

    def switch_claude(self, *, confirm: Callable[[], bool] | None = None) -> None:
        """Make Claude Desktop's entry this app's own: the other mode's entry, or one with credentials
        of its own, is replaced (the real app in a build with the extension: by the extension)."""
        self.step_errors.pop(2, None)
        status = self.core.claude_status()
        if self.core.demo and status.extension is not None and status.check.entry is None:
            self.step_errors[2] = (
                "The SearchDesk extension is still in Claude Desktop. Remove it there first (Settings, "
                "Extensions, SearchDesk): SearchDesk cannot remove it for you."
            )
            self.refresh()
            return
        if not self.core.demo and self.core.add_method() == "bundle":
            try:
                self.core.remove_from_claude()
            except cc.ClaudeConfigError as exc:
                self.step_errors[2] = str(exc)
                self.refresh()
                return
            self.add_to_claude()
            return
        self._write_entry(confirm, replace=True)

    def _write_entry(self, confirm: Callable[[], bool] | None, *, replace: bool = False) -> None:
        allow_demo = False
        if self.core.demo:
            if not (confirm or (lambda: self.ask(self.confirm_demo_box())))():
                return
            allow_demo = True
        try:
            self.core.add_to_claude(allow_demo=allow_demo, replace_real=replace and allow_demo)
        except cc.ClaudeConfigError as exc:
            self.step_errors[2] = str(exc)
        self.refresh()

    def confirm_demo_box(self) -> QMessageBox:
        return self._question_box(
            "add the demo to Claude Desktop?",
            "Claude Desktop will then use SearchDesk's demo: made-up Search Console data, labelled as demo. "
            "To go back to your real account, start SearchDesk normally and switch there.",
        )

    def confirm_remove_box(self) -> QMessageBox:
        return self._question_box(
            "remove from Claude Desktop?",
            "Remove SearchDesk from Claude Desktop? Claude will no longer reach your Search Console data "
            "through SearchDesk. You can add it again at any time.",
        )

    def _question_box(self, heading: str, text: str) -> QMessageBox:
        """A yes/no question whose safe answer, No, is the default (Enter never changes anything)."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            title(self.core.demo, heading),
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box

    def repair_claude(self) -> None:
        self.step_errors.pop(2, None)
        try:
            self.core.repair_claude()
        except cc.ClaudeConfigError as exc:
            self.step_errors[2] = str(exc)
        self.refresh()

    def remove_from_claude(self, *, confirm: Callable[[], bool] | None = None) -> None:
        """Asks first: removing breaks Claude's access until SearchDesk is added again."""
        if not (confirm or (lambda: self.ask(self.confirm_remove_box())))():
            return
        self.step_errors.pop(2, None)
        try:
            self.core.remove_from_claude()
        except cc.ClaudeConfigError as exc:
            self.step_errors[2] = str(exc)
        self.refresh()

    def run_check(self) -> None:
        self.core.run_check()
        self.refresh()

    def _signin_done(self, message: str) -> None:
        if message:
            self.step_errors[1] = message
        else:
            self.step_errors.pop(1, None)
        self.refresh()

    def _check_done(self, _result: object) -> None:
        self.refresh()

    def _autostart_toggled(self, enabled: bool) -> None:
        try:
            self.autostart.set_enabled(enabled)
        except OSError:
            QMessageBox.warning(
                self,
                title(self.core.demo, "start at login"),
                "SearchDesk could not change this: your system did not let it change what starts when you "
                "log in. SearchDesk's log says why.",
            )
        self.autostart_box.blockSignals(True)
        self.autostart_box.setChecked(self.autostart.is_enabled())
        self.autostart_box.blockSignals(False)

    def show_activity(self) -> None:
        if self.activity_window is None:
            self.activity_window = ActivityWindow(self.core)
        self.activity_window.refresh()
        self.activity_window.show()
        self.activity_window.raise_()

    def show_settings(self) -> None:
        if self.settings_window is None:
            self.settings_window = SettingsWindow(self.core)
        elif not self.settings_window.isVisible():  # open already: its unsaved edits stay
            self.settings_window.load()
        self.settings_window.show()
        self.settings_window.raise_()
        self.settings_window.activateWindow()

    def show_about(self) -> None:
        if self.about_dialog is None:
            self.about_dialog = AboutDialog(self.core)
        self.about_dialog.show()
        self.about_dialog.raise_()

    def bring_forward(self) -> None:
        self.showNormal()
        self.raise_()
        self.activateWindow()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.quitting:
            event.accept()
            return
        if self.has_tray:
            event.accept()  # the tray keeps the app reachable; the app says so
            self.closed_to_tray.emit()
            return
        # No tray: closing would leave questions nobody can see. Minimise; "Quit SearchDesk" quits.
        event.ignore()
        self.showMinimized()


class ActivityWindow(QDialog):
    """Every change SearchDesk made at Google, and every question it asked, read from the record the
    server keeps on this computer (``history``): it outlasts the app, and holds changes made without it.

    It reads again when the record changes: while the window is shown, a timer compares each journal's
    file and its write-ahead log (size, time changed) every ``POLL_MS``. Not a QFileSystemWatcher: a
    watcher on the folder hears only files coming and going, not a row appended to the write-ahead log,
    and it would wake for the app's own note of the newest row seen (written by every read); a watcher on
    the files loses the log each time SQLite removes it (the last connection closing) and must be set
    again, and on a network folder it may hear nothing at all. Four stat calls every two seconds, only
    while the window is open, cost nothing and work the same on every system."""

    COLUMNS = history.COLUMNS
    DETAILS = 2
    #: Columns whose long cells wrap, at about this many characters (the others fit their contents).
    WRAP_CHARS: ClassVar[dict[int, int]] = {0: 11, 1: 13, 3: 17, 4: 15, 5: 16, 6: 14, 7: 20}
    #: The details column never gets narrower than this many characters (the table scrolls instead).
    DETAILS_CHARS = 20
    #: A filter's box shows about this many characters.
    FILTER_CHARS = 24
    #: Lines shown at most (the newest); Copy as CSV has every one.
    MAX_SHOWN = 500
    POLL_MS = 2000

    def __init__(self, core: Core, journals: list[Path] | None = None) -> None:
        """`journals`: the files to read (default: every journal of this app, `all_journals`)."""
        super().__init__()
        self.core = core
        self._journals = journals
        self.history = history.History([])
        self._stamp: object = None
        self.check_dialog: RecordCheckDialog | None = None
        self.setWindowTitle(title(core.demo, "Activity"))
        layout = QVBoxLayout(self)
        if core.demo:
            layout.addWidget(demo_banner())
        folder = cc.display_path(journal_path(demo=core.demo).parent)
        layout.addWidget(
            plain_label(
                "Every change SearchDesk made at Google and every question it asked you, newest first, also "
                "those made without this app (by a program given its own Google credentials). SearchDesk "
                f"keeps this record on this computer, in {folder}; how long it is kept is set in Settings.",
                selectable=False,
            )
        )
        filters = FlowLayout()
        self.site_filter = QComboBox()
        self.account_filter = QComboBox()
        for label, box in (("Property:", self.site_filter), ("Google account:", self.account_filter)):
            # As wide as a usual address: a long one is cut in the box (its list and tooltip show it whole)
            # rather than widening the window past a small screen.
            box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            box.setMinimumContentsLength(self.FILTER_CHARS)
            box.currentIndexChanged.connect(self.show_lines)
            pair = QWidget()
            row = QHBoxLayout(pair)
            row.setContentsMargins(0, 0, 8, 0)
            row.addWidget(plain_label(label, selectable=False))
            row.addWidget(box)
            filters.addWidget(pair)
        layout.addLayout(filters)
        self.problem = error_label()
        layout.addWidget(self.problem)
        self.empty = plain_label(
            "Nothing yet. Each change SearchDesk makes at Google, and each question it asks you, appears here.",
            selectable=False,
        )
        self.empty.setObjectName("empty")
        layout.addWidget(self.empty)
        self.more = plain_label("", selectable=False)
        layout.addWidget(self.more)
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels(list(self.COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setWordWrap(True)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(False)
        copy = QAction("Copy", self.table)
        copy.setShortcut(QKeySequence.StandardKey.Copy)
        copy.triggered.connect(self.copy_selection)
        self.table.addAction(copy)
        layout.addWidget(self.table, 1)
        self.table.viewport().installEventFilter(self)
        buttons = FlowLayout(align_right=True)
        self.check_button = QPushButton("Check the record")
        self.check_button.setAutoDefault(False)
        self.check_button.clicked.connect(self.check_record)
        self.csv_button = QPushButton("Copy as CSV")
        self.csv_button.setAutoDefault(False)
        self.csv_button.clicked.connect(self.copy_csv)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        for button in (self.check_button, self.csv_button, close):
            buttons.addWidget(button)
        layout.addLayout(buttons)
        fit_to_screen(self, 1200, 560)  # every column in view where the screen allows
        self._poll = QTimer(self)
        self._poll.setInterval(self.POLL_MS)
        self._poll.timeout.connect(self._poll_record)

    @property
    def journals(self) -> list[Path]:
        """The journals shown: the demo app's own only, or the person's (with any Windows package wrote)."""
        return list(self._journals) if self._journals is not None else all_journals(demo=self.core.demo)

    def _record_stamp(self) -> object:
        """What changes when any journal is written: each file's and its write-ahead log's size and time."""
        stamp = []
        for path in self.journals:
            for file in (path, path.with_name(path.name + "-wal")):
                try:
                    info = file.stat()
                    stamp.append((str(file), info.st_mtime_ns, info.st_size))
                except OSError:
                    stamp.append((str(file), 0, -1))
        return tuple(stamp)

    def _poll_record(self) -> None:
        if self.isVisible() and self._record_stamp() != self._stamp:
            self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._poll.start()

    def hideEvent(self, event: QHideEvent) -> None:
        self._poll.stop()
        super().hideEvent(event)

    def refresh(self) -> None:
        """Read every journal again (and note the newest row of each that checks), then show it."""
        self.history = history.read(self.journals)
        self._stamp = self._record_stamp()
        problems = self.history.problems
        set_error(
            self.problem,
            " ".join(r.render().splitlines()[0] for r in problems)
            + (" Click Check the record for what the check found." if problems else ""),
        )
        self._fill_filter(self.site_filter, "All properties", self.history.sites())
        self._fill_filter(self.account_filter, "All accounts", self.history.accounts(), shown=history.account_name)
        self.show_lines()

    @staticmethod
    def _fill_filter(box: QComboBox, every: str, values: list[str], shown: Callable[[str], str] = str) -> None:
        """The choices, keeping the one made (while it is still in the record)."""
        chosen = box.currentData()
        box.blockSignals(True)
        box.clear()
        box.addItem(every, history.ALL)
        for value in values:
            box.addItem(shown(value), value)
        at = box.findData(chosen) if chosen is not None else 0
        for index in range(box.count()):
            box.setItemData(index, box.itemText(index), Qt.ItemDataRole.ToolTipRole)
        box.setCurrentIndex(max(at, 0))
        box.blockSignals(False)

    def lines(self) -> list[history.Line]:
        """The lines the filters let through, newest first."""
        site = self.site_filter.currentData() or history.ALL
        account = self.account_filter.currentData() or history.ALL
        return self.history.filtered(site, account)

    def rows(self, *, all_values: bool = False) -> list[list[str]]:
        return [line.cells(whole=all_values) for line in self.lines()]

    def show_lines(self) -> None:
        lines = self.lines()
        shown = lines[: self.MAX_SHOWN]
        self.empty.setVisible(not lines)
        self.table.setVisible(bool(lines))
        self.csv_button.setEnabled(bool(lines))
        self.more.setText(
            f"Showing the newest {len(shown):,} of {len(lines):,}; Copy as CSV copies every one."
            if len(lines) > len(shown)
            else ""
        )
        self.more.setVisible(len(lines) > len(shown))
        self.table.setRowCount(len(shown))
        for r, line in enumerate(shown):
            full = line.cells(whole=True)
            row = line.cells(whole=False)
            for c in (3, 6):  # an address (the account, or one Google named) wraps at its @ and dots on screen
                row[c] = breakable(row[c])  # copied (Copy, Copy as CSV, the tooltip) it is whole
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)  # items are always plain text
                item.setToolTip(full[c])  # whole, also where a long address is cut at its column's edge
                self.table.setItem(r, c, item)
        self.fit_columns()

    def fit_columns(self) -> None:
        """Every header whole; short columns fit their contents, long ones wrap; the details take the
        rest of the width (at least DETAILS_CHARS: on a narrow screen the table scrolls sideways)."""
        table, header = self.table, self.table.horizontalHeader()
        char = table.fontMetrics().horizontalAdvance("x")
        used = 0
        for c in range(len(self.COLUMNS)):
            if c == self.DETAILS:
                continue
            width = max(table.sizeHintForColumn(c), header.sectionSizeHint(c))
            if c in self.WRAP_CHARS:
                width = max(header.sectionSizeHint(c), min(width, self.WRAP_CHARS[c] * char))
            table.setColumnWidth(c, width)
            used += width
        least = max(header.sectionSizeHint(self.DETAILS), self.DETAILS_CHARS * char)
        table.setColumnWidth(self.DETAILS, max(table.viewport().width() - used, least))
        table.resizeRowsToContents()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # The table's own visible width, once it is known: the window's resize comes before its
        # layout has resized the table, and a scroll bar coming or going changes it too.
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self.fit_columns()
        return super().eventFilter(watched, event)

    def csv_text(self) -> str:
        """The lines the filters let through as CSV, every value in full, cells escaped as the server's
        CSV export does."""
        from searchdesk_server.tools.analytics.export import safe_cell

        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(self.COLUMNS)
        for row in self.rows(all_values=True):
            writer.writerow([safe_cell(cell) for cell in row])
        return out.getvalue()

    def copy_csv(self) -> None:
        QGuiApplication.clipboard().setText(self.csv_text())
        self.csv_button.setText("Copied as CSV")

    def copy_selection(self) -> None:
        cells = sorted((i.row(), i.column(), i.text()) for i in self.table.selectedItems())
        lines: dict[int, list[str]] = {}
        for row, _col, text in cells:
            lines.setdefault(row, []).append(text.replace("\n", "; ").replace(ZWSP, ""))
        QGuiApplication.clipboard().setText("\n".join("\t".join(v) for v in lines.values()))

    def check_record(self) -> None:
        """Run the server's own check on every journal shown, and say what it found."""
        reports = history.check_all(self.journals)
        if self.check_dialog is None:
            self.check_dialog = RecordCheckDialog(self.core.demo)
        self.check_dialog.show_reports(reports)


class RecordCheckDialog(QDialog):
    """What Check the record found, as the command `searchdesk-server --check-journal` prints it."""

    def __init__(self, demo: bool) -> None:
        super().__init__()
        self.setWindowTitle(title(demo, "Check the record"))
        layout = QVBoxLayout(self)
        self.verdict = bold(plain_label("", selectable=False))
        layout.addWidget(self.verdict)
        self.report = plain_label("")
        body = QWidget()
        inner = QVBoxLayout(body)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addWidget(self.report)
        inner.addStretch(1)
        area = scrolling(body)
        area.setWidgetResizable(True)
        layout.addWidget(area, 1)
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(close)
        layout.addLayout(row)
        fit_to_screen(self, 640, 320)

    def show_reports(self, reports: list[Report]) -> None:
        if any(r.unreadable for r in reports):
            verdict = "The record could not be checked."
        elif any(r.problem for r in reports):
            verdict = "The record does not check: a row was changed, or removed without a note."
        else:
            verdict = "The record checks: no row was changed, and none was removed without a note."
        self.verdict.setText(verdict)
        self.report.setText(history.check_text(reports))
        self.show()
        self.raise_()
        self.activateWindow()


def accounts_text(core: Core) -> str:
    """The accounts in one line for About: each named, the default and any Claude may not use marked."""
    if core.demo:
        return "none (the demo uses made-up data)"
    names = [
        row.email
        + (" (service account)" if row.kind == "service_account" else "")
        + (" (default)" if row.default and len(core.accounts.rows) > 1 else "")
        + ("" if row.for_claude else " (Claude may not use it)")
        for row in core.accounts.rows
    ]
    return ", ".join(names) or "none yet"


def versions(core: Core) -> list[tuple[str, str]]:
    """What About says first, for the person: this version, the accounts, where the sign-in is kept."""
    try:
        store = core.keystore.place
    except Exception:
        store = "no keyring SearchDesk can use"
    return [
        ("Version", __version__ + (" (demo)" if core.demo else "")),
        ("Google accounts" if len(core.accounts.rows) > 1 else "Google account", accounts_text(core)),
        *([] if core.demo else [("Sign-in kept in", store)]),
    ]


def support_versions(core: Core) -> list[tuple[str, str]]:
    """What About keeps under "Details for support": the parts' versions and the log folder."""
    import PySide6
    from PySide6 import QtCore

    import searchdesk_server

    from .logs import log_dir

    try:
        keyring = core.keystore.backend_name
    except Exception:
        keyring = "none"
    return [
        ("SearchDesk server", searchdesk_server.__version__),
        ("Qt / PySide6", f"{QtCore.qVersion()} / {PySide6.__version__}"),
        ("Python", f"{platform.python_version()} on {sys.platform}"),
        ("Keyring", keyring),
        ("Log files", cc.display_path(log_dir())),
    ]


def open_log_folder() -> None:
    """Show the log folder in the system's file manager (made first: before the first log line it may not
    exist). A path in text would not do: on a Mac and on Windows the folder is hidden (Library, AppData)."""
    from .logs import log_dir

    folder = log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))


class AboutDialog(QDialog):
    """This version and who is signed in first; the technical versions under "Details for support"."""

    def __init__(self, core: Core) -> None:
        super().__init__()
        self.setWindowTitle(title(core.demo, "About"))
        layout = QVBoxLayout(self)
        layout.addWidget(bold(plain_label(app_name(core.demo), selectable=False), 1.4))
        first = versions(core)
        support = support_versions(core)
        self.rows = first + support
        self.summary = plain_label("\n".join(f"{name}: {value}" for name, value in first))
        self.summary.setObjectName("aboutSummary")
        layout.addWidget(self.summary)
        layout.addWidget(plain_label(WHAT_IT_DOES, selectable=False))
        self.support = SupportDetails("\n".join(f"{name}: {value}" for name, value in support))
        layout.addWidget(self.support)
        buttons = FlowLayout(align_right=True)
        self.log_button = QPushButton("Open the log folder")
        self.log_button.setAutoDefault(False)
        self.log_button.clicked.connect(open_log_folder)
        self.help = HelpButton("about")
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        for button in (self.log_button, self.help, close):
            buttons.addWidget(button)
        layout.addStretch(1)
        layout.addLayout(buttons)
        fit_to_screen(self, 620, 320)
