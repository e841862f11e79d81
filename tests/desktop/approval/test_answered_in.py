"""`answered_in`: the app says where the person answered (its dialog or its notification), on the answer
to `approval/request` and to `approval/status`, so the server's record of changes can say how a change was
approved. Additive: the answers keep their shape `{decision, fingerprint}` besides it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from searchdesk_server.agent import client as agent_client
from searchdesk_server.agent import protocol
from searchdesk_server.agent.protocol import ApprovalResult, StatusResult
from tests.desktop.agent_helpers import Background, in_background
from tests.desktop.agent_socket import test_listener
from tests.desktop.agent_socket.test_listener import Setup
from tests.desktop.helpers import arm, question

setup = test_listener.setup  # the listener tests' fixtures: a real listener, book and dialog queue
sock_dir = test_listener.sock_dir


async def _answer(path: str, wait_s: float = 10) -> ApprovalResult:
    async with agent_client.AgentClient(path) as c:
        return await c.answer(question(wait_s=wait_s))


async def _status(path: str) -> StatusResult:
    async with agent_client.AgentClient(path) as c:
        return await c.status(question().fingerprint)


def test_a_yes_in_the_dialog_says_dialog(setup: Setup, qtbot: QtBot) -> None:
    call = Background(lambda: _answer(setup.path))
    qtbot.waitUntil(lambda: setup.queue.dialog is not None and setup.queue.dialog.isVisible())
    dialog = arm(qtbot, setup.queue.dialog)
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    answer = call.wait(qtbot)
    assert (answer.decision, answer.answered_in) == ("approve", "dialog")
    assert set(answer.to_json()) == {"decision", "fingerprint", "answered_in"}


def test_a_no_in_the_dialog_says_dialog(setup: Setup, qtbot: QtBot) -> None:
    call = Background(lambda: _answer(setup.path))
    qtbot.waitUntil(lambda: setup.queue.dialog is not None)
    qtbot.keyClick(arm(qtbot, setup.queue.dialog), Qt.Key.Key_Escape)
    answer = call.wait(qtbot)
    assert (answer.decision, answer.answered_in) == ("deny", "dialog")


def test_a_yes_from_the_notification_collected_later_says_notification(setup: Setup, qtbot: QtBot) -> None:
    assert in_background(qtbot, lambda: _answer(setup.path, wait_s=0.2)).decision == "pending"
    status = in_background(qtbot, lambda: _status(setup.path))
    assert (status.decision, status.answered_in) == ("pending", None)  # nothing answered yet: nothing said
    [entry] = setup.book.open_entries()
    assert setup.book.answer(entry.key, True, "notification")
    status = in_background(qtbot, lambda: _status(setup.path))
    assert (status.decision, status.answered_in) == ("approve", "notification")
    spent = in_background(qtbot, lambda: _status(setup.path))
    assert (spent.decision, spent.answered_in) == ("none", None)


def test_an_older_peer_reads_the_answers_as_before() -> None:
    fp = question().fingerprint
    wire = ApprovalResult("approve", fp, answered_in="notification").to_json()
    assert ApprovalResult.from_json({"decision": "approve", "fingerprint": fp}).answered_in is None
    assert ApprovalResult.from_json(wire).answered_in == "notification"
    with pytest.raises(protocol.ProtocolError):
        ApprovalResult.from_json({**wire, "answered_in": None})  # there means a value; leave it out instead
    with pytest.raises(protocol.ProtocolError):
        StatusResult.from_json({"decision": "approve", "answered_in": "email"})
