"""Render the first-run window and the approval dialog to PNG files (offscreen), for the docs.

    python -m searchdesk_desktop.screenshots docs/images

Uses a throw-away settings folder, a made-up packaged OAuth client and an empty keyring stand-in,
so it shows exactly what a new user of a release build sees, and touches nothing on this machine.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any


class _EmptyKeyring:
    """Stands in for the OS keyring in screenshots only: nobody is signed in yet."""

    backend_name = "your system keyring"

    def load(self) -> None:
        return None

    def save(self, record: Any) -> None:
        raise RuntimeError("screenshots never store anything")

    def delete(self) -> None:
        return None


def render(out: Path) -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from searchdesk_server.agent.protocol import ApprovalRequest, ClientInfo, Value
    from searchdesk_server.approval import question as server_question

    from . import claude_config as cc
    from .approval_dialog import ApprovalDialog
    from .approvals import ApprovalBook
    from .core import Core
    from .icons import app_icon
    from .windows import MainWindow

    qapp = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(qapp, QApplication)
    qapp.setWindowIcon(app_icon())
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="sdshot-") as scratch:
        root = Path(scratch)
        client = root / "oauth_client.json"
        client.write_text(
            json.dumps({"installed": {"client_id": "release.apps.googleusercontent.com", "client_secret": "x"}})
        )
        os.environ["SEARCHDESK_OAUTH_CLIENT_FILE"] = str(client)
        exe = root / "searchdesk-server"
        exe.write_text("")
        (root / "Claude").mkdir()  # Claude Desktop is installed, SearchDesk not added yet
        core = Core(
            settings_path=root / "settings.json",
            claude_path=root / "Claude" / cc.CONFIG_NAME,
            keystore=_EmptyKeyring(),  # type: ignore[arg-type]
            socket_path=str(root / "agent.sock"),
            server=cc.ServerCommand(str(exe)),
        )
        core.start()
        window = MainWindow(core, has_tray=True)
        window.resize(660, window.sizeHint().height())
        window.show()
        qapp.processEvents()
        path = out / "first-run.png"
        window.grab().save(str(path))
        written.append(path)
        window.close()

        q = server_question.delete_sitemap("sc-domain:example.com", "https://www.example.com/old/sitemap.xml")
        request = ApprovalRequest(
            request_id="screenshot",
            tool=q.tool,
            what=q.what,
            consequence=q.consequence,
            values=tuple(Value(label, value) for label, value in q.values),
            fingerprint=q.fingerprint,
            client=ClientInfo("claude-ai", "0.1.0"),
            wait_s=40,
        )
        dialog = ApprovalDialog(ApprovalBook().ask(request), arm_delay_ms=0, waiting_after=1)
        dialog.show()
        qapp.processEvents()
        dialog.adjustSize()
        qapp.processEvents()
        path = out / "approval-dialog.png"
        dialog.grab().save(str(path))
        written.append(path)
        dialog.close_silently()
        core.stop()
        from PySide6.QtCore import QCoreApplication, QEvent

        for obj in (dialog, window, core.listener, core):
            obj.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "docs/images")
    for path in render(out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
