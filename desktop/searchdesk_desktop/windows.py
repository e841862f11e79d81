"""The windows: the main window (first run's three steps and the app's state), Activity, About.

The main window is what a person sees on first run, and also where there is no system tray (GNOME
without the extension): everything the tray menu offers is here too, so the app is never
unreachable. Every piece of text that could come from outside is set as plain text.
"""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from . import __version__
from . import claude_config as cc
from .approval_dialog import ASKED_AGAIN, first_sentence, plain_label
from .autostart import Autostart
from .core import Account, Core
from .settings_window import SettingsWindow
from .signin import NoOAuthClient, SignInError
from .titles import app_name, title
from .widgets import demo_banner

ASKED_AGAIN_ROWS = 3  # the main window lists at most this many; the next appear as these go
OK, TODO, PROBLEM, BUSY = "ok", "todo", "problem", "busy"
MARKS = {OK: "✓", TODO: "○", PROBLEM: "!", BUSY: "…"}
COLOURS = {OK: "#15803d", TODO: "#6b7280", PROBLEM: "#b45309", BUSY: "#2563eb"}


class StepRow(QFrame):
    """One numbered step: a title, a status with a mark, a detail line, and its buttons."""

    def __init__(self, number: int, title: str) -> None:
        super().__init__()
        self.number = number
        self.setObjectName(f"step{number}")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        outer = QHBoxLayout(self)
        self.badge = plain_label(str(number), wrap=False, selectable=False)
        self.badge.setFixedSize(32, 32)
        self.badge.setAlignment(Qt.AlignmentFlag.AlignCenter)
        outer.addWidget(self.badge, 0, Qt.AlignmentFlag.AlignTop)
        body = QVBoxLayout()
        self.title = plain_label(title, selectable=False)
        font = QFont(self.title.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.title.setFont(font)
        self.status = plain_label("")
        self.detail = plain_label("")
        self.detail.setStyleSheet("color:#374151;")
        self.buttons = QHBoxLayout()
        self.buttons.addStretch(1)
        body.addWidget(self.title)
        body.addWidget(self.status)
        body.addWidget(self.detail)
        body.addLayout(self.buttons)
        outer.addLayout(body, 1)
        self.button_widgets: dict[str, QPushButton] = {}
        self.state = TODO

    def show_state(self, state: str, status: str, detail: str = "") -> None:
        self.state = state
        colour = COLOURS[state]
        self.badge.setText(str(self.number) if state == TODO else MARKS[state])
        self.badge.setStyleSheet(f"background:{colour};color:white;border-radius:16px;font-weight:bold;font-size:15px;")
        self.status.setText(status)
        self.status.setStyleSheet(f"color:{colour};font-weight:bold;")
        self.detail.setText(detail)
        self.detail.setVisible(bool(detail))

    def set_buttons(self, buttons: list[tuple[str, Callable[[], None]]], primary: str = "") -> None:
        while self.buttons.count() > 1:
            item = self.buttons.takeAt(1)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.button_widgets = {}
        for label, action in buttons:
            button = QPushButton(label)
            button.setAutoDefault(False)
            if label == primary:
                button.setStyleSheet("font-weight:bold;")
            button.clicked.connect(action)
            self.buttons.addWidget(button)
            self.button_widgets[label] = button


class MainWindow(QMainWindow):
    """First run's three steps, the app's state, and what the tray menu offers."""

    quit_requested = Signal()

    def __init__(self, core: Core, *, autostart: Autostart | None = None, has_tray: bool = False) -> None:
        super().__init__()
        self.core = core
        self.autostart = autostart or Autostart()
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
        self.step_errors: dict[int, str] = {}
        self.notice = ""  # one more plain line under the status (notifications turned off)
        self.setWindowTitle(title(core.demo))
        self.setMinimumWidth(620)
        central = QWidget()
        layout = QVBoxLayout(central)
        if core.demo:
            layout.addWidget(demo_banner())
        heading = plain_label("Set up SearchDesk in three steps", selectable=False)
        font = QFont(heading.font())
        font.setPointSizeF(font.pointSizeF() * 1.5)
        font.setBold(True)
        heading.setFont(font)
        layout.addWidget(heading)
        layout.addWidget(
            plain_label(
                "SearchDesk lets Claude read your Google Search Console data, and asks you before anything "
                "that cannot be undone.",
                selectable=False,
            )
        )
        self.step1 = StepRow(1, "Sign in with Google")
        self.step2 = StepRow(2, "Add to Claude Desktop")
        self.step3 = StepRow(3, "Check it works")
        for step in (self.step1, self.step2, self.step3):
            layout.addWidget(step)
        self.check_output = QPlainTextEdit()
        self.check_output.setReadOnly(True)
        self.check_output.setMaximumHeight(140)
        self.check_output.setVisible(False)
        layout.addWidget(self.check_output)

        self.status_line = plain_label("")
        layout.addWidget(self.status_line)
        approvals = QHBoxLayout()
        self.approvals_label = plain_label("", selectable=False)
        self.review_button = QPushButton("Review")
        self.review_button.setAutoDefault(False)
        self.review_button.clicked.connect(lambda: self.review())
        approvals.addWidget(self.approvals_label, 1)
        approvals.addWidget(self.review_button)
        layout.addLayout(approvals)
        self.asked_again_box = QVBoxLayout()
        layout.addLayout(self.asked_again_box)

        bottom = QHBoxLayout()
        self.autostart_box = QCheckBox("Start SearchDesk when I log in")
        self.autostart_box.setChecked(self.autostart.is_enabled())
        self.autostart_box.toggled.connect(self._autostart_toggled)
        bottom.addWidget(self.autostart_box)
        bottom.addStretch(1)
        for label, slot in (
            ("Settings", self.show_settings),
            ("Activity", self.show_activity),
            ("About", self.show_about),
        ):
            button = QPushButton(label)
            button.setAutoDefault(False)
            button.clicked.connect(slot)
            bottom.addWidget(button)
        quit_button = QPushButton("Quit SearchDesk")
        quit_button.setAutoDefault(False)
        quit_button.clicked.connect(self.quit_requested)
        bottom.addWidget(quit_button)
        layout.addLayout(bottom)
        self.setCentralWidget(central)

        core.changed.connect(self.refresh)
        core.signin_done.connect(self._signin_done)
        core.check_done.connect(self._check_done)
        self.refresh()

    # --- state ------------------------------------------------------------------------------
    def refresh(self) -> None:
        self._show_signin()
        self._show_claude()
        self._show_check()
        account = self.core.account
        claude = self.core.claude_status()
        lines = [account.short, claude.short]
        if self.core.listener_error:
            lines.append("Approvals cannot reach this app: " + self.core.listener_error)
        if self.notice:
            lines.append(self.notice)
        self.status_line.setText("\n".join([" · ".join(lines[:2]), *lines[2:]]))
        waiting = self.core.pending_count()
        self.approvals_label.setText(
            f"{waiting} approval question(s) waiting for you." if waiting else "No approval questions waiting."
        )
        self.review_button.setEnabled(bool(waiting))
        self._show_asked_again()

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
                text += f"\n{request.values[0].label}: {request.values[0].value}"
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
                plain_label(f"And {more} more question(s) Claude asked again; they appear here in turn.")
            )
        QTimer.singleShot(0, self, self._grow_to_fit)  # once the new rows are shown (Qt shows them next)

    def _grow_to_fit(self) -> None:
        """Taller by what newly shown lines need; never shorter (the person may have sized it)."""
        central = self.centralWidget()
        layout = central.layout() if central is not None else None
        if central is None or layout is None or not self.isVisible():
            return
        layout.activate()
        need = layout.totalHeightForWidth(central.width()) if layout.hasHeightForWidth() else layout.sizeHint().height()
        if need > central.height():
            self.resize(self.width(), self.height() + need - central.height())

    def show_notice(self, text: str, shown: bool) -> None:
        self.notice = text if shown else ""
        self.refresh()

    def status_lines(self) -> list[str]:
        """What the tray menu would show at a glance (tests read this)."""
        waiting = self.core.pending_count()
        return [
            self.core.account.short,
            self.core.claude_status().short,
            f"{waiting} approval(s) waiting" if waiting else "No approvals waiting",
        ]

    def _show_signin(self) -> None:
        step, core = self.step1, self.core
        account = core.account
        error = self.step_errors.get(1, "")
        if core.signing_in:
            step.show_state(BUSY, "Waiting for you in the browser…", "Finish signing in there, then come back.")
            step.set_buttons([("Cancel", core.cancel_sign_in)])
            return
        if account.state is Account.DEMO:
            step.show_state(OK, "Demo: no Google account needed", account.detail)
            step.set_buttons([])
            return
        if account.state is Account.SIGNED_IN:
            detail = "\n".join(x for x in (account.detail, account.warning, error) if x)
            step.show_state(PROBLEM if account.warning_due else OK, account.short, detail)
            step.set_buttons([("Sign in again", self.sign_in_again), ("Sign out", self.sign_out)])
            return
        if account.state is Account.EXPIRED:
            step.show_state(PROBLEM, account.short, "\n".join(x for x in (account.detail, error) if x))
            step.set_buttons([("Sign in again", self.sign_in_again), ("Sign out", self.sign_out)], "Sign in again")
            return
        if account.state is Account.SERVICE_ACCOUNT:
            step.show_state(OK, account.short, account.detail)
            step.set_buttons([("Stop using this key", self.sign_out)])
            return
        if account.state is Account.KEYRING:
            step.show_state(PROBLEM, "Your keyring is not available", account.detail)
            step.set_buttons([("Try again", core.refresh_account)])
            return
        status = account.short
        try:
            core.oauth_client()
        except NoOAuthClient as exc:
            step.show_state(PROBLEM if error else TODO, status, "\n".join(x for x in (str(exc), error) if x))
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
        state = PROBLEM if account.state is Account.EXPIRED or error else TODO
        step.show_state(state, status, "\n".join(x for x in (account.detail, error) if x))
        step.set_buttons([("Sign in with Google", self.sign_in)], primary="Sign in with Google")

    def _show_claude(self) -> None:
        step, core = self.step2, self.core
        claude = core.claude_status()
        status = claude.check
        error = self.step_errors.get(2, "")
        where = f"Settings file: {cc.display_path(status.path)}"
        restart = "Restart Claude Desktop (quit it fully) so it loads SearchDesk."
        if status.state is cc.EntryState.OK and claude.extension is not None:
            step.show_state(
                PROBLEM,
                "SearchDesk is in Claude Desktop twice",
                "\n".join(
                    x
                    for x in (
                        "It is installed as an extension and also listed in the settings file, so Claude sees "
                        "every tool twice. Remove the settings-file entry.",
                        where,
                        error,
                    )
                    if x
                ),
            )
            step.set_buttons([("Remove from the settings file", self.remove_from_claude)])
        elif status.state is cc.EntryState.OK:
            label = "Added to Claude Desktop" + (" (the demo)" if status.demo else "")
            step.show_state(OK, label, "\n".join(x for x in (restart, where, error) if x))
            step.set_buttons([("Remove from Claude Desktop", self.remove_from_claude)])
        elif status.state in (cc.EntryState.BROKEN, cc.EntryState.OTHER_COPY):
            step.show_state(PROBLEM, f"Needs repair: {status.detail}", "\n".join(x for x in (where, error) if x))
            step.set_buttons(
                [("Repair", self.repair_claude), ("Remove from Claude Desktop", self.remove_from_claude)],
                primary="Repair",
            )
        elif status.state is cc.EntryState.INVALID_FILE:
            step.show_state(PROBLEM, "Claude Desktop's settings file cannot be read", status.detail)
            step.set_buttons([("Try again", core.changed.emit)])
        elif claude.extension is not None:
            detail = "Its settings are in Claude Desktop: Settings, Extensions, SearchDesk."
            step.show_state(OK, "Added to Claude Desktop as an extension", "\n".join(x for x in (detail, error) if x))
            step.set_buttons([])
        elif core.bundle_opened and core.add_method() == "bundle":
            detail = (
                "Claude Desktop should be showing SearchDesk's install dialog: click Install there, then "
                "come back. Nothing appeared? Add SearchDesk through the settings file instead."
            )
            step.show_state(TODO, "Opened in Claude Desktop", "\n".join(x for x in (detail, error) if x))
            step.set_buttons(
                [("Open it again", self.add_to_claude), ("Use the settings file instead", self.add_via_settings_file)]
            )
        else:
            installed = cc.claude_installed(status.path)
            note = (
                ""
                if installed
                else "Claude Desktop does not seem to be installed yet; SearchDesk can add itself anyway."
            )
            if core.add_method() == "config":
                note = "\n".join(x for x in (note, where) if x)
            step.show_state(PROBLEM if error else TODO, "Not added yet", "\n".join(x for x in (note, error) if x))
            label = "Add the demo to Claude Desktop" if core.demo else "Add to Claude Desktop"
            step.set_buttons([(label, self.add_to_claude)], primary=label)

    def _show_check(self) -> None:
        step, result = self.step3, self.core.last_check
        if result is None:
            step.show_state(TODO, "Not checked yet", "Starts the server exactly as Claude Desktop would, and asks it.")
            step.set_buttons([("Check it works", self.run_check)], primary="Check it works")
            return
        if result == BUSY:
            step.show_state(BUSY, "Checking…", "Starting the server as Claude Desktop would.")
            step.set_buttons([])
            return
        if isinstance(result, str):
            step.show_state(PROBLEM, "The check could not run", result)
        else:
            step.show_state(OK if result.ok else PROBLEM, result.verdict or ("Works" if result.ok else "Problem"))
            self.check_output.setPlainText("\n".join(result.lines))
            self.check_output.setVisible(bool(result.lines))
        step.set_buttons([("Check again", self.run_check)])

    # --- actions ----------------------------------------------------------------------------
    def sign_in(self) -> None:
        self.step_errors.pop(1, None)
        try:
            self.core.sign_in()
        except SignInError as exc:
            self.step_errors[1] = str(exc)
        self.refresh()

    def sign_in_again(self) -> None:
        self.step_errors.pop(1, None)
        try:
            self.core.sign_in_again()
        except SignInError as exc:
            self.step_errors[1] = str(exc)
        self.refresh()

    def sign_in_with_client_file(self, path: Path) -> None:
        self.step_errors.pop(1, None)
        try:
            self.core.sign_in_with_client_file(path)
        except SignInError as exc:
            self.step_errors[1] = str(exc)
        self.refresh()

    def use_service_account(self, path: Path) -> None:
        self.step_errors.pop(1, None)
        try:
            self.core.use_service_account(path)
        except SignInError as exc:
            self.step_errors[1] = str(exc)
        self.refresh()

    def choose_client_file(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, title(self.core.demo, "choose your OAuth client file"), "", "JSON files (*.json)"
        )
        if name:
            self.sign_in_with_client_file(Path(name))

    def choose_service_account(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, title(self.core.demo, "choose a service-account key file"), "", "JSON files (*.json)"
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
        self._add_to_settings_file(confirm)

    def add_via_settings_file(self) -> None:
        self.step_errors.pop(2, None)
        self._add_to_settings_file(None)

    def _add_to_settings_file(self, confirm: Callable[[], bool] | None) -> None:
        allow_demo = False
        if self.core.demo:
            ask = confirm or self._confirm_demo
            if not ask():
                return
            allow_demo = True
        try:
            self.core.add_to_claude(allow_demo=allow_demo)
        except cc.ClaudeConfigError as exc:
            self.step_errors[2] = str(exc)
        self.refresh()

    def confirm_demo_box(self) -> QMessageBox:
        box = QMessageBox(
            QMessageBox.Icon.Question,
            title(self.core.demo, "add the demo to Claude Desktop?"),
            "Claude Desktop will then see SearchDesk's demo: made-up Search Console data, labelled as demo. "
            "You can replace it with your real account later.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            self,
        )
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box

    def _confirm_demo(self) -> bool:
        box = self.confirm_demo_box()
        try:
            return box.exec() == QMessageBox.StandardButton.Yes
        finally:
            box.deleteLater()

    def repair_claude(self) -> None:
        self.step_errors.pop(2, None)
        try:
            self.core.repair_claude()
        except cc.ClaudeConfigError as exc:
            self.step_errors[2] = str(exc)
        self.refresh()

    def remove_from_claude(self) -> None:
        self.step_errors.pop(2, None)
        try:
            self.core.remove_from_claude()
        except cc.ClaudeConfigError as exc:
            self.step_errors[2] = str(exc)
        self.refresh()

    def run_check(self) -> None:
        self.core.last_check = BUSY
        self.refresh()
        self.core.run_check()

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
        except OSError as exc:
            QMessageBox.warning(
                self,
                title(self.core.demo, "start at login"),
                f"SearchDesk could not change this ({type(exc).__name__}).",
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
        else:
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
        if self.has_tray or self.quitting:
            event.accept()  # the tray keeps the app reachable (or the app is quitting anyway)
            return
        # No tray: closing would leave questions nobody can see. Minimise; "Quit SearchDesk" quits.
        event.ignore()
        self.showMinimized()


class ActivityWindow(QDialog):
    """What was asked, when, by which client (as it says), the decision, and whether it was used."""

    COLUMNS = ("Asked", "Tool", "What was asked (values are not kept)", "Asked by (says it is)", "Decision", "Used")

    def __init__(self, core: Core) -> None:
        super().__init__()
        self.core = core
        self.setWindowTitle(title(core.demo, "Activity"))
        self.resize(820, 320)
        layout = QVBoxLayout(self)
        if core.demo:
            layout.addWidget(demo_banner())
        layout.addWidget(
            plain_label("Questions asked since SearchDesk started. No tokens or answers are kept.", selectable=False)
        )
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels(list(self.COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        layout.addWidget(self.table)
        core.changed.connect(self.refresh)

    def rows(self) -> list[list[str]]:
        out = []
        for a in reversed(self.core.book.activity):
            asked = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(a.asked_at))
            out.append([asked, a.tool, a.what, a.client, a.decision, "yes" if a.used else "no"])
        return out

    def refresh(self) -> None:
        rows = self.rows()
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))  # items are always plain text


def versions(core: Core) -> list[tuple[str, str]]:
    import PySide6
    from PySide6 import QtCore

    import searchdesk_server

    from .logs import log_dir

    try:
        store = core.keystore.backend_name
    except Exception as exc:
        store = f"none usable ({type(exc).__name__})"
    return [
        ("SearchDesk app", __version__ + (" (demo)" if core.demo else "")),
        ("SearchDesk server", searchdesk_server.__version__),
        ("Qt / PySide6", f"{QtCore.qVersion()} / {PySide6.__version__}"),
        ("Python", f"{platform.python_version()} on {sys.platform}"),
        ("Sign-in kept in", store),
        ("Log files", str(log_dir())),
    ]


class AboutDialog(QDialog):
    def __init__(self, core: Core) -> None:
        super().__init__()
        self.setWindowTitle(title(core.demo, "About"))
        layout = QVBoxLayout(self)
        heading = plain_label(app_name(core.demo), selectable=False)
        font = QFont(heading.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.4)
        heading.setFont(font)
        layout.addWidget(heading)
        self.rows = versions(core)
        for name, value in self.rows:
            layout.addWidget(plain_label(f"{name}: {value}"))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)
