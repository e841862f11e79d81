"""Small builders shared by the desktop tests."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from searchdesk_desktop.accounts.keystore import KeyStore, SignInRecord
from searchdesk_desktop.accounts.store import AccountStore
from searchdesk_desktop.approval.dialog import ApprovalDialog
from searchdesk_desktop.core import Core
from searchdesk_desktop.settings import AppSettings
from searchdesk_desktop.tray import Tray
from searchdesk_desktop.windows.main import MainWindow
from searchdesk_desktop.windows.settings import SettingsWindow
from searchdesk_server.agent.protocol import (
    ApprovalRequest,
    ClientInfo,
    NotificationForm,
    Requester,
    Value,
    fingerprint,
)

_ids = itertools.count(1)


def question(
    site: str = "https://example.com/",
    *,
    tool: str = "delete_site",
    what: str | None = None,
    values: tuple[Value, ...] | None = None,
    wait_s: float = 5,
    request_id: str | None = None,
    client: str = "Claude Desktop",
    requester: Requester | None = None,
    notification: NotificationForm | str | None = "short",
) -> ApprovalRequest:
    """A question as a server sends it; without `requester`, as an older server (before binding) does.
    Its notification form: by default a short one (the first value whole and a consequence: Approve is
    offered from the notification); None, as a server before issue 24 sends it (none)."""
    vals = values if values is not None else (Value("Property", site),)
    if notification == "short":
        body = f"{vals[0].value if vals else site}\nYou are its last verified owner: everyone loses access."
        notification = NotificationForm(title="Remove a property", subtitle="as a@b", body=body)
    assert notification is None or isinstance(notification, NotificationForm)
    return ApprovalRequest(
        request_id=request_id or f"r-{next(_ids)}",
        tool=tool,
        what=what or "This will remove the property below from the Search Console list of the Google account a@b.",
        consequence="This account is the property's last verified owner: everyone who uses it loses access.",
        values=vals,
        fingerprint=fingerprint(tool, [site]),
        client=ClientInfo(client, "0.9.1"),
        wait_s=wait_s,
        requester=requester,
        notification=notification,
    )


DEMO_SERVER = Requester(server="demo-server-1", account="demo.owner@example.com", demo=True)
REAL_SERVER = Requester(server="real-server-1", account="owner@example.com", demo=False)


def arm(qtbot: QtBot, dialog: ApprovalDialog | None) -> ApprovalDialog:
    """What a person does before answering: bring the dialog to the front, let it arm, and move the pointer
    onto its buttons and let it rest there (a click counts only then: approval.arming.REST_MS)."""
    assert dialog is not None
    dialog.activateWindow()
    qtbot.waitUntil(lambda: dialog.armed, timeout=5000)
    # Offscreen, a move is sent to each button as the window system would deliver it (QTest's moves can
    # be dropped between windows); on a real display test_dialog_focus.py moves the real pointer.
    for button in (dialog.deny_button, dialog.approve_button):
        centre = QPointF(button.rect().center())
        move = QMouseEvent(
            QEvent.Type.MouseMove,
            centre,
            QPointF(button.mapToGlobal(button.rect().center())),
            Qt.MouseButton.NoButton,
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(button, move)
    qtbot.waitUntil(lambda: dialog.pointer_ready(dialog.approve_button), timeout=5000)
    qtbot.waitUntil(dialog.keys_ready, timeout=5000)
    return dialog


# --- the app's core and main window, in a place of their own ------------------------------------


def app_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment for running the real app as a process in a throwaway home (logs under state/)."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "XDG_RUNTIME_DIR": str(run),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        **extra,
    }


def plant_sign_in(place: dict[str, object], record: SignInRecord) -> None:
    """A sign-in the app holds before it starts: its keyring record, and its line in the settings file."""
    path = Path(place["settings_path"])  # type: ignore[arg-type]
    store = AccountStore(KeyStore(), AppSettings.load(path), path)
    store.add_sign_in(store.save_sign_in(record))


#: What the `place` fixture holds for a test rather than for the Core.
NOT_FOR_CORE = ("autostart", "claude_entry")


def core_args(place: dict[str, object], *leave_out: str) -> dict[str, object]:
    """The `place` fixture's entries a Core takes (`leave_out`: more to leave out)."""
    return {k: v for k, v in place.items() if k not in (*NOT_FOR_CORE, *leave_out)}


def make_core(place: dict[str, object], **kw: object) -> Core:
    core = Core(**core_args(place), **kw)  # type: ignore[arg-type]
    core.start()
    return core


def make_window(qtbot: QtBot, core: Core, place: dict[str, object]) -> MainWindow:
    window = MainWindow(core, autostart=place["autostart"], has_tray=True)  # type: ignore[arg-type]
    qtbot.addWidget(window)
    window.show()
    return window


def finish(core: Core) -> None:
    core.stop()
    core.listener.deleteLater()
    core.deleteLater()


def discard(box: QMessageBox) -> QMessageBox.StandardButton:
    """Settings' "save your changes?" answered as a person who throws the edits away."""
    box.deleteLater()
    return QMessageBox.StandardButton.Discard


def open_settings(qtbot: QtBot, core: Core) -> SettingsWindow:
    """The Settings window, shown; closed with edits at the test's end, its question is answered Discard."""
    window = SettingsWindow(core)
    window.choose = discard
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def make_tray(core: Core, place: dict[str, object]) -> Tray:
    """The tray icon with its menu, every window it opens stood in for by nothing."""
    return Tray(
        core,
        open_window=lambda: None,
        review=lambda: None,
        show_activity=lambda: None,
        show_about=lambda: None,
        quit_app=lambda: None,
        autostart=place["autostart"],  # type: ignore[arg-type]
    )
