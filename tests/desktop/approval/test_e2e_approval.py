"""The whole path on the demo: a real server subprocess, a client without elicitation, the app's
native dialog clicked by qtbot. The guarded tool acts only after Approve, and once per yes."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from searchdesk_desktop.accounts.tokens import DemoTokens
from searchdesk_desktop.agent_socket.listener import AgentListener
from searchdesk_desktop.approval.book import ApprovalBook
from searchdesk_desktop.approval.queue import ApprovalQueue
from tests.desktop.agent_helpers import Background
from tests.desktop.helpers import arm
from tests.server.stdio import connect, text_of

SITE = "sc-domain:example.com"
FEED = "https://www.example.com/old/sitemap.xml"


@pytest.fixture
def app(qtbot: QtBot) -> Iterator[tuple[ApprovalQueue, str]]:
    folder = Path(tempfile.mkdtemp(prefix="sde-"))
    book = ApprovalBook()
    queue = ApprovalQueue(book, demo=True, arm_delay_ms=50)
    tokens = DemoTokens()
    listener = AgentListener(book, lambda: tokens, path=str(folder / "agent.sock"))
    path = listener.start()
    yield queue, path
    listener.close()
    queue.close()
    listener.deleteLater()
    queue.deleteLater()
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()


async def delete_twice_then_list(path: str) -> list[str]:
    env = {"SEARCHDESK_AGENT_SOCKET": path, "SEARCHDESK_APPROVAL_WAIT": "30"}
    async with connect(env=env) as client:  # no elicitation callback: the client cannot show a dialog
        first = await client.call_tool("delete_sitemap", {"site": SITE, "feedpath": FEED})
        second = await client.call_tool("delete_sitemap", {"site": SITE, "feedpath": FEED})
        listing = await client.call_tool("list_sitemaps", {"site": SITE})
        return [text_of(first), str(first.is_error), text_of(second), str(second.is_error), text_of(listing)]


def test_guarded_tool_acts_only_after_approve_in_the_dialog(qtbot: QtBot, app: tuple[ApprovalQueue, str]) -> None:
    queue, path = app
    call = Background(lambda: delete_twice_then_list(path))
    # First question: the person reads it and approves.
    qtbot.waitUntil(lambda: queue.dialog is not None and queue.dialog.isVisible(), timeout=30_000)
    dialog = queue.dialog
    assert dialog is not None
    assert "DEMO" in dialog.windowTitle() or dialog.findChild(type(dialog.what_label), "demoBanner")
    shown = [v.text() for _, v in dialog.value_labels]
    assert FEED in shown
    assert dialog.client_label.text() == "Asked by a program that did not give its name."  # the SDK's "mcp"
    arm(qtbot, dialog)  # the person brings it to the front and reads it
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    # The same call again is a new question (one yes, one action): this time the person denies.
    qtbot.waitUntil(lambda: queue.dialog is not None and queue.dialog is not dialog, timeout=30_000)
    second = arm(qtbot, queue.dialog)
    qtbot.keyClick(second, Qt.Key.Key_Escape)
    first_text, first_error, second_text, second_error, listing = call.wait(qtbot, timeout=60_000)
    assert first_error == "False", first_text
    assert second_error == "True" and "declined" in second_text.lower(), second_text
    assert FEED not in listing  # deleted once, by the approved call
