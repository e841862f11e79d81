"""Render the app's windows to PNG files (offscreen), for the docs.

    python -m searchdesk_desktop.screenshots docs/images

Writes first-run.png, approval-dialog.png, notification-linux.png, settings.png and activity.png.
Everything happens in a throw-away home folder (so paths read as a person's would:
``~/.config/Claude/...``), with a made-up packaged OAuth client and an empty keyring stand-in: it shows
what a new user of a release build sees, and touches nothing on this machine. The environment is put back afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from searchdesk_server.config import Var

#: The Activity window's rows are asked at fixed times, so the image does not change run to run.
ACTIVITY_DAY = (2026, 11, 27)


class _EmptyKeyring:
    """Stands in for the OS keyring in screenshots only: nobody is signed in yet."""

    backend_name = "your system keyring"

    def load(self, account: str) -> None:
        return None

    def load_legacy(self) -> None:
        return None

    def save(self, record: Any) -> None:
        raise RuntimeError("screenshots never store anything")

    def delete(self, account: str) -> None:
        return None


@contextlib.contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def render(out: Path) -> list[Path]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from .icons import app_icon

    qapp = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(qapp, QApplication)
    qapp.setWindowIcon(app_icon())
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sdshot-") as scratch:
        root = Path(scratch)
        home = root / "home"
        home.mkdir()
        client = root / "oauth_client.json"
        client.write_text(
            json.dumps({"installed": {"client_id": "release.apps.googleusercontent.com", "client_secret": "x"}})
        )
        with _environment(HOME=str(home), **{Var.SEARCHDESK_OAUTH_CLIENT_FILE: str(client)}):
            return _render_all(qapp, out, root, home)


def _render_all(qapp: Any, out: Path, root: Path, home: Path) -> list[Path]:
    from PySide6.QtCore import QCoreApplication, QEvent

    from . import claude_config as cc
    from .core import Core
    from .settings import AppSettings
    from .windows import ActivityWindow, MainWindow

    claude = cc.locate(env={}, home=home)  # ~/.config/Claude/claude_desktop_config.json on Linux
    claude.parent.mkdir(parents=True)  # Claude Desktop is installed, SearchDesk not added yet
    exe = root / "app" / "searchdesk-server"
    exe.parent.mkdir()
    exe.write_text("")
    settings = root / "settings.json"
    AppSettings(site_url="sc-domain:example.com", allowed_sites=["sc-domain:example.com"]).save(settings)
    core = Core(
        settings_path=settings,
        claude_path=claude,
        keystore=_EmptyKeyring(),  # type: ignore[arg-type]
        socket_path=str(root / "agent.sock"),
        server=cc.ServerCommand(str(exe)),
    )
    core.start()
    written: list[Path] = []

    def grab(widget: Any, name: str) -> None:
        widget.show()
        qapp.processEvents()
        path = out / name
        widget.grab().save(str(path))
        written.append(path)

    window = MainWindow(core, has_tray=True)
    window.resize(660, window.sizeHint().height())
    grab(window, "first-run.png")
    window.close()

    dialog = _approval_dialog(qapp)
    grab(dialog, "approval-dialog.png")
    dialog.close_silently()

    note = _notification()
    grab(note, "notification-linux.png")
    note.close()

    window.show_settings()
    settings_window = window.settings_window
    assert settings_window is not None
    settings_window.adjustSize()
    grab(settings_window, "settings.png")
    settings_window.close()

    _activity(core)
    activity = ActivityWindow(core)
    activity.refresh()
    activity.resize(900, 180)
    activity.table.resizeColumnsToContents()
    activity.table.setCurrentCell(-1, -1)
    grab(activity, "activity.png")
    activity.close()

    core.stop()
    for obj in (dialog, note, activity, settings_window, window, core.listener, core):
        obj.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return written


ACCOUNT = "you@example.com"


def _request(q: Any, request_id: str, client: tuple[str, str] = ("claude-ai", "0.1.0")) -> Any:
    from searchdesk_server.agent.protocol import ApprovalRequest, ClientInfo, Requester, Value

    return ApprovalRequest(
        request_id=request_id,
        tool=q.tool,
        what=q.what,
        consequence=q.consequence,
        values=tuple(Value(label, value) for label, value in q.values),
        fingerprint=q.fingerprint,
        client=ClientInfo(*client),
        wait_s=40,
        requester=Requester(server="screenshots", account=ACCOUNT, demo=False),
    )


def _approval_dialog(qapp: Any) -> Any:
    from searchdesk_server.approval import question as server_question

    from .approval_dialog import ApprovalDialog, fit_height
    from .approvals import ApprovalBook

    q = server_question.delete_sitemap("sc-domain:example.com", "https://www.example.com/old/sitemap.xml", ACCOUNT)
    dialog = ApprovalDialog(ApprovalBook().ask(_request(q, "screenshot")), arm_delay_ms=0, waiting_after=1)
    dialog.show()
    qapp.processEvents()
    fit_height(dialog)
    return dialog


def _notification() -> Any:
    """The notification beside the dialog as a Linux notification server shows it: the summary, body and
    buttons SearchDesk sends (notify.compose with Linux's limit), in a plain bubble; each desktop draws
    its own frame around the same words."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

    from searchdesk_server.approval import question as server_question

    from .approval_dialog import plain_label
    from .approvals import ApprovalBook
    from .icons import app_icon
    from .notify import FITS, LABELS, compose

    q = server_question.delete_sitemap("sc-domain:example.com", "https://www.example.com/old/sitemap.xml", ACCOUNT)
    note = compose(ApprovalBook().ask(_request(q, "notification")), fit=FITS["linux"])
    bubble = QFrame()
    bubble.setObjectName("bubble")
    bubble.setStyleSheet(
        "#bubble{background:#2e2e32;border-radius:12px;} QLabel{color:#f2f2f2;}"
        " QPushButton{background:#45454b;color:#f2f2f2;border:none;border-radius:6px;padding:6px 18px;}"
    )
    bubble.setFixedWidth(460)
    layout = QVBoxLayout(bubble)
    layout.setContentsMargins(16, 12, 16, 14)
    head = QHBoxLayout()
    icon = QLabel()
    icon.setPixmap(app_icon().pixmap(18, 18))
    head.addWidget(icon)
    head.addWidget(plain_label("SearchDesk", selectable=False), 1)
    layout.addLayout(head)
    summary = plain_label(note.summary, selectable=False)
    summary.setStyleSheet("font-weight:bold;")
    layout.addWidget(summary)
    layout.addWidget(plain_label(note.body, selectable=False))
    buttons = QHBoxLayout()
    for action in note.actions:
        buttons.addWidget(QPushButton(LABELS[action]))
    layout.addLayout(buttons)
    bubble.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
    bubble.setFixedHeight(layout.totalHeightForWidth(bubble.width()))  # wrapped text at this width
    return bubble


def _activity(core: Any) -> None:
    """A morning's questions: a sitemap removal approved and used, a property removal denied, one open."""
    from searchdesk_server.approval import question as server_question

    book = core.book
    others = server_question.OwnerFacts(server_question.Ownership.OTHERS_REMAIN, 1)
    asked = [
        (
            server_question.delete_sitemap("sc-domain:example.com", "https://www.example.com/old/sitemap.xml", ACCOUNT),
            True,
        ),
        (server_question.delete_site("https://staging.example.com/", ACCOUNT, others), False),
        (server_question.unverify_site("https://shop.example.net/", ACCOUNT, others), None),
    ]
    for number, (q, approve) in enumerate(asked):
        entry = book.ask(_request(q, f"activity-{number}"))
        entry.activity.asked_at = time.mktime((*ACTIVITY_DAY, 9, 12 + 7 * number, 5, 0, 0, -1))
        if approve is not None:
            book.answer(entry.key, approve, "dialog")
            book.take(entry.key)


# --- the setup pages' pictures: one per step of the main window ----------------------------------

#: The demo's "today" for the check in step 3, so the picture does not change run to run.
STEPS_DAY = "2026-11-27"


class _SignedInKeyring(_EmptyKeyring):
    """Stands in for the OS keyring in the setup pictures: a made-up account has signed in."""

    def load(self) -> Any:
        from .keystore import SignInRecord

        return SignInRecord(
            refresh_token="made-up",  # noqa: S106 (never sent anywhere: the pictures ask Google nothing)
            account="you@example.com",
            client_kind="packaged",
            client_id="release.apps.googleusercontent.com",
            issued_at=int(time.time()),
        )


def render_steps(out: Path) -> list[Path]:
    """The main window's three steps, each pictured done, for the setup pages (one per system).

    Step 1 with a made-up account signed in; step 2 added to Claude Desktop's settings file; step 3
    after "Check it works" ran for real against the demo's server. Each picture is that step's row only,
    so what a page says about its step is what the picture shows. As ``render``: a throw-away home,
    nothing stored, the environment put back.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from .icons import app_icon

    qapp = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(qapp, QApplication)
    qapp.setWindowIcon(app_icon())
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sdsteps-") as scratch:
        root = Path(scratch)
        home = root / "home"
        home.mkdir()
        client = root / "oauth_client.json"
        client.write_text(
            json.dumps({"installed": {"client_id": "release.apps.googleusercontent.com", "client_secret": "x"}})
        )
        with _environment(HOME=str(home), **{Var.SEARCHDESK_OAUTH_CLIENT_FILE: str(client)}):
            return _render_steps(qapp, out, root, home)


def _render_steps(qapp: Any, out: Path, root: Path, home: Path) -> list[Path]:
    import asyncio

    from PySide6.QtCore import QCoreApplication, QEvent, QPoint, QRect

    from searchdesk_server.selfcheck import run_check

    from . import claude_config as cc
    from .core import Core
    from .windows import MainWindow

    claude = cc.locate(env={}, home=home)
    claude.parent.mkdir(parents=True)
    exe = root / "app" / "searchdesk-server"  # a runnable stand-in, so the entry reads as working
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\nexit 1\n")
    exe.chmod(0o700)
    core = Core(
        settings_path=root / "settings.json",
        claude_path=claude,
        keystore=_SignedInKeyring(),  # type: ignore[arg-type]
        socket_path=str(root / "agent.sock"),
        server=cc.ServerCommand(str(exe)),
    )
    core.start()
    window = MainWindow(core, has_tray=True)
    window.resize(660, window.sizeHint().height())
    window.show()
    written: list[Path] = []

    def grab(name: str, *rows: Any) -> None:
        window.refresh()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # the step's old buttons
        qapp.processEvents()
        window.resize(660, window.sizeHint().height())
        qapp.processEvents()
        area = QRect()
        for row in rows:
            area = area.united(QRect(row.mapTo(window, QPoint(0, 0)), row.size()))
        path = out / name
        window.grab(area.adjusted(-4, -4, 4, 4)).save(str(path))
        written.append(path)

    try:
        grab("setup-step-1.png", window.step1)
        core.add_to_claude()
        grab("setup-step-2.png", window.step2)
        env = {
            **os.environ,
            Var.SEARCHDESK_DEMO_TODAY: STEPS_DAY,
            **{var: str(root / var.lower()) for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")},
        }
        report = asyncio.run(run_check([sys.executable, "-m", "searchdesk_server", "--demo"], env))
        if not report.ok:  # the setup pages show a passing check: never publish a failing one
            raise RuntimeError(f"the demo's check failed, so step 3 cannot be pictured: {report.verdict}")
        core.last_check = report
        grab("setup-step-3.png", window.step3, window.check_output)
    finally:
        window.quitting = True
        window.close()
        core.stop()
        for obj in (window, core.listener, core):
            obj.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "docs/images")
    for path in [*render(out), *render_steps(out)]:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
