"""A late yes and a new server process (issue 36, item 4), through the real parts: two demo servers started
as stdio subprocesses one after the other (as Claude Desktop restarts its server), the app's real listener
and book, and the real approval dialogs on the queue, clicked by qtbot.

The yes the person gives after the first server stopped waiting is kept for that server alone (a parent
process is no safe identity); the second server, asking exactly the same words, is shown a question that
says the person approved exactly this before and that the request which asked has ended, and it never acts
without a new yes given to it. On the code before issue 36 the second question read as a new one, and the
first yes stayed on, ready for a process that no longer exists.
"""

from __future__ import annotations

import re
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from searchdesk_desktop.accounts.tokens import DemoTokens
from searchdesk_desktop.agent_socket.listener import AgentListener
from searchdesk_desktop.approval.book import ApprovalBook, State
from searchdesk_desktop.approval.queue import ApprovalQueue
from tests.desktop.agent_helpers import Background
from tests.desktop.helpers import arm
from tests.server.stdio import connect, text_of

SITE = "sc-domain:example.com"
FEED = "https://www.example.com/old/sitemap.xml"
ARGS = {"site": SITE, "feedpath": FEED}


@pytest.fixture
def app(qtbot: QtBot) -> Iterator[tuple[ApprovalBook, ApprovalQueue, str]]:
    folder = Path(tempfile.mkdtemp(prefix="sdl-"))
    book = ApprovalBook()
    queue = ApprovalQueue(book, demo=True, arm_delay_ms=50)
    tokens = DemoTokens()
    listener = AgentListener(book, lambda: tokens, path=str(folder / "agent.sock"))
    path = listener.start()
    yield book, queue, path
    listener.close()
    queue.close()
    listener.deleteLater()
    queue.deleteLater()
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()


def env(path: str) -> dict[str, str]:
    return {"SEARCHDESK_AGENT_SOCKET": path, "SEARCHDESK_APPROVAL_WAIT": "2"}  # Claude stops waiting soon


async def ask_once(path: str) -> tuple[str, bool]:
    """One server process, one call: Claude stops waiting, and the process ends (Claude Desktop restarts it)."""
    async with connect(env=env(path)) as client:
        result = await client.call_tool("delete_sitemap", ARGS)
        return text_of(result), bool(result.is_error)


async def ask_then_again(path: str, approved: threading.Event) -> list[str]:
    """A new server process: a call Claude stops waiting for, the sitemaps as they are then; once the person
    approved its own question, the same call again and the sitemaps after it."""
    async with connect(env=env(path)) as client:
        first = await client.call_tool("delete_sitemap", ARGS)
        before = await client.call_tool("list_sitemaps", {"site": SITE})
        await anyio.to_thread.run_sync(lambda: approved.wait(60))
        again = await client.call_tool("delete_sitemap", ARGS)
        after = await client.call_tool("list_sitemaps", {"site": SITE})
        return [
            text_of(first),
            str(first.is_error),
            text_of(before),
            text_of(again),
            str(again.is_error),
            text_of(after),
        ]


def test_a_retry_from_a_new_server_is_shown_as_approved_before_and_needs_a_new_yes(
    qtbot: QtBot, app: tuple[ApprovalBook, ApprovalQueue, str]
) -> None:
    book, queue, path = app
    # 1. The first server asks; Claude stops waiting; its process ends.
    first_call = Background(lambda: ask_once(path))
    qtbot.waitUntil(lambda: queue.dialog is not None and queue.dialog.isVisible(), timeout=30_000)
    first_dialog = queue.dialog
    assert first_dialog is not None
    first_text, first_error = first_call.wait(qtbot, timeout=60_000)
    assert "waiting for you in SearchDesk" in first_text and first_error, first_text  # Claude stopped waiting
    qtbot.waitUntil(lambda: first_dialog.stopped_label.isVisibleTo(first_dialog), timeout=10_000)
    (old,) = book.open_entries()
    # 2. The person approves late: the dialog says what to tell Claude, and before what.
    arm(qtbot, first_dialog)
    qtbot.mouseClick(first_dialog.approve_button, Qt.MouseButton.LeftButton)
    assert old.state is State.APPROVED
    late = first_dialog.late_label.text()
    assert first_dialog.late_label.isVisibleTo(first_dialog)
    assert "before Claude Desktop is restarted" in late, late
    assert "closing" not in first_dialog.arm_hint.text().casefold() or "changes nothing" in first_dialog.arm_hint.text()

    # 3. Claude Desktop restarted the server: a new process asks exactly the same words.
    approved = threading.Event()
    second_call = Background(lambda: ask_then_again(path, approved))
    qtbot.waitUntil(lambda: queue.dialog is not None and queue.dialog is not first_dialog, timeout=30_000)
    second = queue.dialog
    assert second is not None
    (new,) = book.open_entries()
    assert new.request.requester is not None and old.request.requester is not None
    assert new.request.requester.server != old.request.requester.server  # another process
    assert new.digest == old.digest and new.fingerprint == old.fingerprint  # the same words
    # Shown as approved before, at its top, with the time of that yes; the old yes is withdrawn.
    top = second.approved_before_label
    assert top.isVisibleTo(second)
    assert re.match(r"You approved exactly this at \d\d:\d\d, but the request that asked has ended\.", top.text())
    assert old.state is State.SUPERSEDED and new.state is State.PENDING
    qtbot.waitUntil(lambda: first_dialog not in queue.lingering, timeout=5000)  # its "tell Claude" words are over
    # It never acts without a new yes: the call Claude stopped waiting for did nothing.
    qtbot.waitUntil(lambda: second.stopped_label.isVisibleTo(second), timeout=30_000)
    assert new.state is State.PENDING
    # 4. A new yes, given to this question, is what lets the same call act (once).
    arm(qtbot, second)
    qtbot.mouseClick(second.approve_button, Qt.MouseButton.LeftButton)
    assert new.state is State.APPROVED
    approved.set()
    first_text, first_error, before, again, again_error, after = second_call.wait(qtbot, timeout=60_000)
    assert "waiting for you in SearchDesk" in first_text and FEED in before, (first_text, before)  # nothing removed
    assert again_error == "False" and FEED not in after, (again, after)
    qtbot.waitUntil(lambda: second.late_label.text().startswith("Approved, and Claude has used"), timeout=5000)
