"""Notifications over a real (private) D-Bus with a fake notification server."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop.approvals import ApprovalBook, State
from searchdesk_desktop.notify import ApprovalNotifications, Backend, DBusBackend, compose
from searchdesk_server.agent.protocol import Value
from tests.desktop.conftest import PrivateBus
from tests.desktop.helpers import DEMO_SERVER, question


class FakeServer:
    def __init__(self, bus: PrivateBus) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.desktop.fake_notifications"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**bus.env, "PYTHONPATH": ":".join(sys.path)},
        )
        self.lines: queue.Queue[dict] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        assert self.next(5) == {"ready": True}

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def next(self, timeout: float = 5) -> dict:
        return self.lines.get(timeout=timeout)

    def wait_for(self, qtbot: QtBot, key: str) -> dict:
        found: list[dict] = []

        def check() -> bool:
            try:
                item = self.lines.get_nowait()
            except queue.Empty:
                return False
            if key in item:
                found.append(item[key])
                return True
            return False

        qtbot.waitUntil(check, timeout=5000)
        return found[0]

    def click(self, nid: int, action: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"do": "invoke", "id": nid, "action": action}) + "\n")
        self.proc.stdin.flush()

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def server(private_bus: PrivateBus) -> Iterator[FakeServer]:
    s = FakeServer(private_bus)
    yield s
    s.stop()


@pytest.fixture
def wired(qtbot: QtBot, server: FakeServer) -> Iterator[tuple[ApprovalBook, ApprovalNotifications, list[int]]]:
    book = ApprovalBook()
    reviews: list[int] = []
    notes = ApprovalNotifications(book, DBusBackend(), review=lambda: reviews.append(1))
    yield book, notes, reviews
    notes.close()
    notes.deleteLater()


def test_short_question_offers_approve(qtbot: QtBot, server: FakeServer, wired: tuple) -> None:
    book, _notes, _ = wired
    entry = book.ask(question(values=(Value("Property", "<b>x</b>"),)))
    note = server.wait_for(qtbot, "notify")
    assert note["actions"] == ["approve", "Approve", "deny", "Deny"]
    assert entry.request.what in note["body"]
    assert "&lt;b&gt;x&lt;/b&gt;" in note["body"]  # the server does markup: values are escaped
    assert "says it is Claude Desktop" in note["body"]
    server.click(note["id"], "approve")
    qtbot.waitUntil(lambda: entry.state is State.APPROVED)
    assert entry.activity.answered_by == "notification"
    assert server.wait_for(qtbot, "close") == note["id"]


def test_long_question_offers_review_and_deny(qtbot: QtBot, server: FakeServer, wired: tuple) -> None:
    book, _notes, reviews = wired
    many = tuple(Value(f"Owner {i}", f"person{i}@example.com") for i in range(12))
    entry = book.ask(question(values=many))
    note = server.wait_for(qtbot, "notify")
    assert note["actions"] == ["review", "Review", "deny", "Deny"]
    server.click(note["id"], "approve")  # not offered: a forged click does nothing
    server.click(note["id"], "review")
    qtbot.waitUntil(lambda: reviews == [1])
    assert entry.state is State.PENDING
    server.click(note["id"], "deny")
    qtbot.waitUntil(lambda: entry.state is State.DENIED)


def test_answer_in_dialog_withdraws_notification(qtbot: QtBot, server: FakeServer, wired: tuple) -> None:
    book, _notes, _ = wired
    entry = book.ask(question())
    note = server.wait_for(qtbot, "notify")
    assert book.answer(entry.fingerprint, False, "dialog")
    assert server.wait_for(qtbot, "close") == note["id"]
    server.click(note["id"], "approve")  # too late: the first answer won
    qtbot.wait(100)
    assert entry.state is State.DENIED


def test_no_notification_server_is_not_an_error(qtbot: QtBot, private_bus: PrivateBus) -> None:
    book = ApprovalBook()
    backend = DBusBackend()
    notes = ApprovalNotifications(book, backend, review=lambda: None)
    entry = book.ask(question())
    qtbot.waitUntil(lambda: not backend.available, timeout=8000)
    assert entry.state is State.PENDING
    notes.close()
    notes.deleteLater()


def test_compose_fits() -> None:
    book = ApprovalBook()
    short = compose(book.ask(question(requester=DEMO_SERVER)), demo=True)
    assert short.summary.startswith("SearchDesk (Demo)")
    older = compose(book.ask(question("https://other.example/")), demo=True)  # an older server: real
    assert "for a real Google account (not the demo)" in older.summary
    assert [k for k, _ in short.actions] == ["approve", "deny"]


class HeldReplies(Backend):
    """A backend whose replies to Notify the test releases by hand, after the click if it likes."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[str] = []

    def send(self, token: str, note: object) -> None:
        self.pending.append(token)

    def withdraw(self, notification_id: int) -> None:
        pass


def test_a_click_that_overtakes_the_notify_reply_still_counts(qtbot: QtBot) -> None:
    """The reply to Notify and the ActionInvoked signal arrive on two threads: either may come first."""
    book = ApprovalBook()
    backend = HeldReplies()
    notes = ApprovalNotifications(book, backend, review=lambda: None)
    entry = book.ask(question())
    assert backend.pending == [entry.request.fingerprint]
    backend.invoked.emit(4242, "approve")  # the click first…
    assert entry.state is not State.APPROVED
    backend.sent.emit(backend.pending[0], 4242)  # …then the id it belongs to
    assert entry.state is State.APPROVED
    assert entry.activity.answered_by == "notification"
    notes.close()
