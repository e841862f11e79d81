"""The tray icon and its menu: state at a glance, and every action of the main window.

The menu is rebuilt each time it opens, so it always shows the present state: signed in as whom,
Claude Desktop added and connected or not, approval questions waiting.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from .approval.words import ASKED_AGAIN, first_sentence
from .core import Core
from .help import HELP, open_help
from .icons import tray_icon
from .lifecycle.autostart import Autostart
from .titles import app_name
from .widgets import plural

CLOSED_TO_TRAY = (
    "SearchDesk keeps running here, in the tray, so it can ask you before Claude changes anything. "
    "To stop it, choose Quit SearchDesk in this icon's menu."
)

ASKED_AGAIN_ITEMS = 3


class Tray(QSystemTrayIcon):
    #: The menu's line about a newer SearchDesk was chosen (the app opens its release page).
    news_chosen = Signal()

    def __init__(
        self,
        core: Core,
        *,
        open_window: Callable[[], None],
        review: Callable[[], None],
        show_activity: Callable[[], None],
        show_about: Callable[[], None],
        quit_app: Callable[[], None],
        autostart: Autostart | None = None,
        show_settings: Callable[[], None] | None = None,
        change_my_mind: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(tray_icon())
        self.core = core
        self.autostart = autostart or Autostart(demo=core.demo)
        self._open_window = open_window
        self._review = review
        self._show_activity = show_activity
        self._show_about = show_about
        self._show_settings = show_settings or (lambda: None)
        self._change_my_mind = change_my_mind or (lambda fp: None)
        self._quit = quit_app
        #: A newer SearchDesk: the menu's line about it ("": none), as the app last said (`show_news`).
        self.news = ""
        self.last_message: tuple[str, str] | None = None
        self._told_closed = False
        self.menu = QMenu()
        self.menu.aboutToShow.connect(self.rebuild)
        self.setContextMenu(self.menu)
        self.activated.connect(self._activated)
        core.changed.connect(self._update_tooltip)
        self.rebuild()
        self._update_tooltip()

    def _update_tooltip(self) -> None:
        waiting = self.core.pending_count()
        label = app_name(self.core.demo)
        self.setToolTip(f"{label}: {plural(waiting, 'question')} waiting" if waiting else label)

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            if self.core.pending_count():
                self._review()
            else:
                self._open_window()

    def rebuild(self) -> None:
        menu = self.menu
        menu.clear()
        # The demo says so once: its account line would only repeat it.
        menu.addAction(
            self._info("DEMO: made-up data, no Google account" if self.core.demo else self.core.account.short)
        )
        menu.addAction(self._info(self.core.claude_status().short))
        waiting = self.core.pending_count()
        label = f"{plural(waiting, 'approval question')} waiting: review" if waiting else "No approvals waiting"
        review = QAction(label, menu)
        review.setEnabled(bool(waiting))
        review.triggered.connect(self._review)
        menu.addAction(review)
        for entry in self.core.book.asked_again_entries()[:ASKED_AGAIN_ITEMS]:
            sentence = first_sentence(entry.request.what)
            if len(sentence) > 70:
                sentence = sentence[:69] + "…"
            label = f"{ASKED_AGAIN}: {sentence} Change my mind…".replace("&", "&&")  # & marks a shortcut
            again = QAction(label, menu)
            again.triggered.connect(lambda _checked=False, fp=entry.key: self._change_my_mind(fp))
            menu.addAction(again)
        if self.news:
            line = QAction(self.news, menu)
            line.triggered.connect(self.news_chosen)
            menu.addAction(line)
        menu.addSeparator()
        for label, slot in (
            ("Open SearchDesk" + (" (Demo)" if self.core.demo else ""), self._open_window),
            ("Settings", self._show_settings),
            ("Activity", self._show_activity),
            ("About SearchDesk", self._show_about),
            (HELP, lambda: open_help("help", demo=self.core.demo)),
        ):
            action = QAction(label, menu)
            action.triggered.connect(slot)
            menu.addAction(action)
        start = QAction("Start at login", menu)
        start.setCheckable(True)
        start.setChecked(self.autostart.is_enabled())
        start.toggled.connect(self.autostart.set_enabled)
        menu.addAction(start)
        menu.addSeparator()
        quit_action = QAction("Quit SearchDesk", menu)
        quit_action.triggered.connect(self._quit)
        menu.addAction(quit_action)

    def show_news(self, line: str) -> None:
        """The menu's line about a newer SearchDesk ("": none), from the next time the menu opens."""
        self.news = line

    def _info(self, text: str) -> QAction:
        action = QAction(text, self.menu)
        action.setEnabled(False)
        return action

    def texts(self) -> list[str]:
        return [a.text() for a in self.menu.actions() if not a.isSeparator()]

    def say(self, heading: str, text: str) -> None:
        """A notification from the tray icon; the last one is kept for the tests to read."""
        self.last_message = (heading, text)
        self.showMessage(heading, text, QSystemTrayIcon.MessageIcon.Information, 10_000)

    def closed_to_tray(self) -> None:
        """Said once per run: where the window went when it was closed."""
        if not self._told_closed:
            self._told_closed = True
            self.say(app_name(self.core.demo) + " is still running", CLOSED_TO_TRAY)
