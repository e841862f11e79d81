"""Small builders shared by the desktop tests."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from pytestqt.qtbot import QtBot

from searchdesk_desktop.account_store import AccountStore
from searchdesk_desktop.approval_dialog import ApprovalDialog
from searchdesk_desktop.core import Core
from searchdesk_desktop.keystore import KeyStore, SignInRecord
from searchdesk_desktop.settings import AppSettings
from searchdesk_desktop.windows import MainWindow
from searchdesk_server.agent.protocol import ApprovalRequest, ClientInfo, Requester, Value, fingerprint

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
) -> ApprovalRequest:
    """A question as a server sends it; without `requester`, as an older server (before binding) does."""
    return ApprovalRequest(
        request_id=request_id or f"r-{next(_ids)}",
        tool=tool,
        what=what or "This will remove the property below from the Search Console list of the Google account a@b.",
        consequence="This account is the property's last verified owner: everyone who uses it loses access.",
        values=values if values is not None else (Value("Property", site),),
        fingerprint=fingerprint(tool, [site]),
        client=ClientInfo(client, "0.9.1"),
        wait_s=wait_s,
        requester=requester,
    )


DEMO_SERVER = Requester(server="demo-server-1", account="demo.owner@example.com", demo=True)
REAL_SERVER = Requester(server="real-server-1", account="owner@example.com", demo=False)


def arm(qtbot: QtBot, dialog: ApprovalDialog | None) -> ApprovalDialog:
    """What a person does before answering: bring the dialog to the front, and let it arm."""
    assert dialog is not None
    dialog.activateWindow()
    qtbot.waitUntil(lambda: dialog.armed, timeout=5000)
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


def make_core(place: dict[str, object], **kw: object) -> Core:
    args = {k: v for k, v in place.items() if k != "autostart"}
    core = Core(**args, **kw)  # type: ignore[arg-type]
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
