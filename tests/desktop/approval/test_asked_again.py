"""Claude asked again after the person said no: the app says so, and "Change my mind" reopens the question.

The whole app (offscreen) with its real listener on the agent socket; the server's side is the real
agent client, asking exactly as the server does: `approval/request`, and before asking again,
`approval/status`. A deny keeps refusing the same call for 5 minutes; what changes is that the person
sees it happen, and can reopen the question, which must then be answered in an armed dialog.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from searchdesk_desktop.app import DesktopApp
from searchdesk_desktop.approval.book import State
from searchdesk_desktop.approval.dialog import ApprovalDialog
from searchdesk_desktop.core import Core
from searchdesk_desktop.tray import Tray
from searchdesk_server.agent import client as agent_client
from searchdesk_server.agent.protocol import answer_key
from tests.desktop.agent_helpers import Background, in_background
from tests.desktop.helpers import arm, core_args, question

QUESTION = question("https://example.com/", wait_s=10)
KEY = answer_key(QUESTION.fingerprint, None, QUESTION.digest)  # the book's key: fingerprint and words
SAID = "Claude asked again after you said no"


@pytest.fixture
def app(qtbot: QtBot, qapp: QApplication, place: dict, monkeypatch: pytest.MonkeyPatch) -> Iterator[DesktopApp]:
    core = Core(**core_args(place), demo=True)  # type: ignore[arg-type]
    desktop = DesktopApp(qapp, core, arm_delay_ms=50, autostart=place["autostart"], tray=False)
    desktop.start()
    yield desktop
    desktop.quit()
    desktop.dispose()


def ask(path: str) -> Background[str]:
    async def go() -> str:
        async with agent_client.AgentClient(path) as c:
            q = QUESTION
            return await c.ask(q)

    return Background(go)


def status(qtbot: QtBot, path: str) -> str:
    async def go() -> str:
        async with agent_client.AgentClient(path) as c:
            return await c.approval_status(QUESTION.fingerprint)

    return str(in_background(qtbot, go))


def deny_then_ask_again(qtbot: QtBot, app: DesktopApp, path: str) -> None:
    call = ask(path)
    qtbot.waitUntil(lambda: app.queue.dialog is not None)
    qtbot.keyClick(arm(qtbot, app.queue.dialog), Qt.Key.Key_Escape)
    assert call.wait(qtbot) == "deny"
    assert app.window.asked_again_rows == []  # a deny alone is not news
    # Claude calls again: the server asks approval/status first and is refused again, without a dialog.
    assert status(qtbot, path) == "deny"
    assert app.queue.dialog is None


def tray_for(app: DesktopApp) -> Tray:
    return Tray(
        app.core,
        open_window=lambda: None,
        review=app.queue.bring_forward,
        change_my_mind=app.queue.reconsider,
        show_activity=lambda: None,
        show_about=lambda: None,
        quit_app=lambda: None,
        autostart=app.autostart,
    )


def reopened_dialog_must_arm(qtbot: QtBot, app: DesktopApp, path: str) -> ApprovalDialog:
    """Right after "Change my mind": the question is open again, and nothing answers it yet."""
    dialog = app.queue.dialog
    assert dialog is not None and dialog.isVisible() and dialog.key == KEY
    assert not dialog.armed
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)  # too early
    assert status(qtbot, path) == "pending"
    return dialog


def test_asked_again_is_shown_and_change_my_mind_reopens_the_armed_dialog(qtbot: QtBot, app: DesktopApp) -> None:
    path = app.core.listener.path
    assert path is not None
    deny_then_ask_again(qtbot, app, path)
    # The main window says so, in a line of its own with the question's first sentence and target.
    qtbot.waitUntil(lambda: len(app.window.asked_again_rows) == 1)
    key, label, button = app.window.asked_again_rows[0]
    assert key == KEY
    assert label.text() == f"{SAID}: {QUESTION.what}\nProperty: https://example.com/"
    assert label.textFormat() == Qt.TextFormat.PlainText and button.text() == "Change my mind"
    # So does the tray menu.
    tray = tray_for(app)
    tray.rebuild()
    short = QUESTION.what if len(QUESTION.what) <= 70 else QUESTION.what[:69] + "…"  # the menu cuts long ones
    assert [t for t in tray.texts() if t.startswith(SAID)] == [f"{SAID}: {short} Change my mind…"]
    tray.deleteLater()
    # "Change my mind" reopens the question; it never approves. The dialog must arm before any answer.
    app.queue.arm_delay_ms = 1000  # long enough that the click right after it is surely too early
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    dialog = reopened_dialog_must_arm(qtbot, app, path)
    qtbot.waitUntil(lambda: app.window.asked_again_rows == [])
    assert [a.decision for a in app.core.book.activity] == ["denied; Claude asked again once, then reopened", "waiting"]
    # The person reads it and approves; Claude's next call picks the yes up, once.
    arm(qtbot, dialog)
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    assert status(qtbot, path) == "approve"
    assert status(qtbot, path) == "none"


def test_the_tray_entry_reopens_the_question_too(qtbot: QtBot, app: DesktopApp) -> None:
    path = app.core.listener.path
    assert path is not None
    deny_then_ask_again(qtbot, app, path)
    tray = tray_for(app)
    tray.rebuild()
    (entry,) = [a for a in tray.menu.actions() if a.text().startswith(SAID)]
    app.queue.arm_delay_ms = 60_000  # never armed in this test: nothing can answer
    entry.trigger()
    reopened_dialog_must_arm(qtbot, app, path)
    assert app.core.book.get(QUESTION.fingerprint).state is State.PENDING  # type: ignore[union-attr]
    tray.deleteLater()
