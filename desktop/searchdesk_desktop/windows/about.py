"""The About dialog: this version and who is signed in first; the technical versions under "Details
for support", and the log folder."""

from __future__ import annotations

import platform
import sys

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QDialog, QPushButton, QVBoxLayout

from .. import __version__
from ..claude import config_file as cc
from ..core import Core
from ..help import HelpButton, open_address
from ..titles import app_name, title
from ..updates.checker import status_text
from ..widgets import FlowLayout, SupportDetails, bold, fit_to_screen, plain_label
from .parts import WHAT_IT_DOES


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
    """What About says first, for the person: this version, the accounts, where the sign-in is kept, and
    whether this copy checks for updates and when it last heard (not in the demo, which never checks)."""
    try:
        store = core.keystore.place
    except Exception:
        store = "no keyring SearchDesk can use"
    return [
        ("Version", __version__ + (" (demo)" if core.demo else "")),
        ("Google accounts" if len(core.accounts.rows) > 1 else "Google account", accounts_text(core)),
        *([] if core.demo else [("Sign-in kept in", store)]),
        *([] if core.demo else [("Updates", status_text(core.settings, offered=core.updates_offered))]),
    ]


def support_versions(core: Core) -> list[tuple[str, str]]:
    """What About keeps under "Details for support": the parts' versions and the log folder."""
    import PySide6
    from PySide6 import QtCore

    import searchdesk_server

    from ..logs import log_dir

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


def open_log_folder() -> bool:
    """Show the log folder in the system's file manager (made first: before the first log line it may not
    exist). A path in text would not do: on a Mac and on Windows the folder is hidden (Library, AppData);
    only when no file manager opens it is its place shown, to copy (`open_address`)."""
    from ..logs import log_dir

    folder = log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return open_address(QUrl.fromLocalFile(str(folder)))


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
        fit_to_screen(self, 620, 380)  # room for the update line (a screen smaller than this caps it)
