"""The main window: first run's three steps, the app's state, and what the tray menu offers.

It is what a person sees on first run, and also where there is no system tray (GNOME without the
extension): everything the tray menu offers is here too, so the app is never unreachable. The steps
are classes of their own that own their display and actions (`step_google`, `step_claude`,
`step_check`); this window lays them out, shows them again when anything changes, and holds the notes
above them and the sections below them. Every piece of text that could come from outside is set as
plain text. It fits a small screen: the content scrolls rather than squeezing, text wraps, rows of
buttons flow onto a second line.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QMetaMethod, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from searchdesk_server.approval.question import value_line

from ..accounts.model import AccountRow
from ..approval.words import ASKED_AGAIN, first_sentence
from ..core import Core
from ..help import HelpButton
from ..lifecycle.autostart import Autostart
from ..titles import title
from ..widgets import (
    FlowLayout,
    clear_layout,
    error_label,
    exec_yes,
    fit_to_screen,
    in_front,
    page_column,
    plain_label,
    plural,
    scrolling,
    set_error,
)
from .about import AboutDialog
from .activity import ActivityWindow
from .approvals_section import ASKED_AGAIN_ROWS, ApprovalsSection
from .parts import WHAT_IT_DOES
from .settings import SettingsWindow
from .step_check import CheckStep
from .step_claude import ClaudeStep
from .step_google import GoogleStep


class MainWindow(QMainWindow):
    """First run's three steps, the app's state, and what the tray menu offers."""

    quit_requested = Signal()
    #: The window closed while the app stays in the tray (the app says where it went, once).
    closed_to_tray = Signal()
    #: "Show the question": bring the waiting approval question forward (the app: ApprovalQueue.bring_forward).
    review_requested = Signal()
    #: "Change my mind" about a deny Claude asked again about, by its key (the app: ApprovalQueue.reconsider).
    reconsider_requested = Signal(str)

    def __init__(self, core: Core, *, autostart: Autostart | None = None, has_tray: bool = False) -> None:
        super().__init__()
        self.core = core
        self.autostart = autostart or Autostart(demo=core.demo)
        self.has_tray = has_tray
        self.quitting = False  # set before the app quits: Qt 6 aborts a quit when a window refuses to close
        self.activity_window: ActivityWindow | None = None
        self.about_dialog: AboutDialog | None = None
        self.settings_window: SettingsWindow | None = None
        self.asked_again_rows: list[tuple[str, QLabel, QPushButton]] = []
        self._asked_again_shown: list[tuple[str, int]] = []
        #: Asks the person a yes/no question (tests answer for them).
        self.ask: Callable[[QMessageBox], bool] = exec_yes
        #: Each step's last error, by its number (the steps read and write their own).
        self.step_errors: dict[int, str] = {}
        self.notice = ""  # one more plain line under the status (notifications turned off)
        self.lock_notice = ""  # and one more, once: whether the screen is locked cannot be read here
        self.setWindowTitle(title(core.demo))

        content, layout = page_column(core.demo, "Set up SearchDesk in three steps", 1.5)
        content.setObjectName("content")
        layout.addWidget(plain_label(WHAT_IT_DOES, selectable=False))
        #: Notes to see as the window opens (the first start's record of changes): above the steps.
        self.notices = QVBoxLayout()
        layout.addLayout(self.notices)
        self._add_steps(layout, core)
        self._add_below_steps(layout)
        layout.addStretch(1)

        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(0, 0, 0, 0)
        self.scroll_area = scrolling(content)
        outer.addWidget(self.scroll_area, 1)
        outer.addLayout(self._bottom())
        self.setCentralWidget(central)
        fit_to_screen(self, 760, 860)

        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)
        core.changed.connect(self.refresh)
        self.refresh()

    def _add_steps(self, layout: QVBoxLayout, core: Core) -> None:
        """The three steps, each a widget of its own that owns its display and actions."""
        ask = self._ask  # the steps ask through the window: tests answer for the person by setting `ask`
        self.step1 = GoogleStep(core, self.step_errors, ask)
        self.step2 = ClaudeStep(core, self.step_errors, ask)
        self.step3 = CheckStep(core, self.step_errors, ask)
        #: "Try the demo": the app restarts itself on the demo (see DesktopApp.restart_in_demo).
        self.demo_requested = self.step1.demo_requested
        self.signin_link = self.step1.signin_link
        self.account_list = self.step1.account_list
        self.check_result = self.step3.check_result
        for step in (self.step1, self.step2, self.step3):
            step.changed.connect(self.refresh)  # one step's action can change what the others show
            layout.addWidget(step)

    def _add_below_steps(self, layout: QVBoxLayout) -> None:
        """Below the steps: the sections a state of the app adds (approvals), the status line, and why
        approval questions cannot reach the app when they cannot."""
        #: One section a state of the app adds below the steps (approvals; others may follow).
        self.sections = QVBoxLayout()
        self.approvals = ApprovalsSection()
        self.approvals.review_requested.connect(self.review_requested)
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

    def _bottom(self) -> QVBoxLayout:
        """Outside what scrolls, always in view: start at login, and what the tray menu offers."""
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
        return bottom

    def _ask(self, box: QMessageBox) -> bool:
        return self.ask(box)

    def unconnected_signals(self) -> list[str]:
        """The requests nobody answers: the app connects every one as it makes the window, and a test
        says so (a forgotten connection would leave a button that silently does nothing)."""
        requests = {
            "quit_requested": (self, self.quit_requested),
            "review_requested": (self, self.review_requested),
            "reconsider_requested": (self, self.reconsider_requested),
            "demo_requested": (self.step1, self.demo_requested),
        }
        return [
            name
            for name, (owner, signal) in requests.items()
            if not owner.isSignalConnected(QMetaMethod.fromSignal(signal))
        ]

    def add_section(self, section: QWidget) -> None:
        """Add one part of the window below the steps (each is a widget of its own)."""
        self.sections.addWidget(section)

    def add_notice(self, notice: QWidget) -> None:
        """Add a note the person must see when the window opens: above the steps, since below them a small
        screen (1024×600) shows it only to someone who scrolls down."""
        self.notices.addWidget(notice)

    # --- state ------------------------------------------------------------------------------
    def refresh(self) -> None:
        for step in (self.step1, self.step2, self.step3):
            step.show_current()
        self._show_approvals()
        account = self.core.account
        claude = self.core.claude_status()
        line = f"{account.short} · {claude.short}"
        if self.step1.several():
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
        clear_layout(self.asked_again_box)
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
            button.clicked.connect(lambda _checked=False, fp=entry.key: self.reconsider_requested.emit(fp))
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
        in_front(self.activity_window)

    def show_settings(self) -> None:
        if self.settings_window is None:
            self.settings_window = SettingsWindow(self.core)
        elif not self.settings_window.isVisible():  # open already: its unsaved edits stay
            self.settings_window.load()
        in_front(self.settings_window, activate=True)

    def show_about(self) -> None:
        if self.about_dialog is None:
            self.about_dialog = AboutDialog(self.core)
        in_front(self.about_dialog)

    # --- the steps' actions, where tests and the screenshots call them on the window ------------
    def sign_in_with_client_file(self, path: Path) -> None:
        self.step1.sign_in_with_client_file(path)

    def use_service_account(self, path: Path) -> None:
        self.step1.use_service_account(path)

    def choose_client_file(self) -> None:
        self.step1.choose_client_file()

    def choose_service_account(self) -> None:
        self.step1.choose_service_account()

    def remove_account(self, email: str, *, confirm: Callable[[], bool] | None = None) -> None:
        self.step1.remove_account(email, confirm=confirm)

    def confirm_remove_account_box(self, row: AccountRow) -> QMessageBox:
        return self.step1.confirm_remove_account_box(row)

    def sign_out(self) -> None:
        self.step1.sign_out()

    def add_to_claude(self, *, confirm: Callable[[], bool] | None = None) -> None:
        self.step2.add_to_claude(confirm=confirm)

    def add_via_settings_file(self) -> None:
        self.step2.add_via_settings_file()

    def confirm_demo_box(self) -> QMessageBox:
        return self.step2.confirm_demo_box()

    def run_check(self) -> None:
        self.step3.run_check()

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
