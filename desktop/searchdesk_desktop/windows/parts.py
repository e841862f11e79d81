"""The pieces the windows share: a numbered step (`StepRow`; `Step`, one that owns its actions), the
sign-in link, the words several windows say, and small helpers (a tool's title, where a file picker opens).

Every piece of text that could come from outside is set as plain text; text colours come from the
palette (readable in a dark theme); fixed colours appear only in pairs (see ``widgets``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QStandardPaths, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLineEdit, QMenu, QMessageBox, QPushButton, QVBoxLayout, QWidget

from ..help import HelpButton
from ..titles import title
from ..widgets import ZWSP, FlowLayout, SupportDetails, bold, clear_layout, error_label, plain_label, set_error

if TYPE_CHECKING:
    from ..core import Core

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
        clear_layout(self.buttons)
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


class Step(StepRow):
    """A step of the main window that owns its display (`show_current`) and its actions.

    The steps' states depend on each other (the check reads Claude Desktop's entry, which reads the
    account), so an action does not show its own step alone: it emits `changed`, and the window, which
    connects it as it makes the step, shows every step again. Each step's last error is kept in the
    window's one table (`errors`, by step number): it outlives the step's redrawing."""

    #: An action changed what the window shows (connected by the window that makes the step).
    changed = Signal()

    def __init__(
        self,
        number: int,
        title: str,
        help_topic: str,
        core: Core,
        errors: dict[int, str],
        ask: Callable[[QMessageBox], bool],
    ) -> None:
        """`ask`: asks the person a yes/no question (the window's, which tests answer for them)."""
        super().__init__(number, title, help_topic)
        self.core = core
        self.errors = errors
        self.ask = ask

    def show_current(self) -> None:
        """Show the step as the core's state is now."""
        raise NotImplementedError

    def question_box(self, heading: str, text: str) -> QMessageBox:
        """A yes/no question whose safe answer, No, is the default (Enter never changes anything)."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            title(self.core.demo, heading),
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self.window(),
        )
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box
