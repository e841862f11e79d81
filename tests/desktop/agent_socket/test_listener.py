"""The listener: token hand-off, the approval round trip clicked by qtbot, trust and robustness."""

from __future__ import annotations

import json
import os
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from searchdesk_desktop.accounts.tokens import DemoTokens, TokenProvider
from searchdesk_desktop.agent_socket.listener import AgentListener
from searchdesk_desktop.approval.book import ApprovalBook, State
from searchdesk_desktop.approval.layout import ValueText
from searchdesk_desktop.approval.queue import ApprovalQueue
from searchdesk_desktop.refusals import SignedOut
from searchdesk_server.agent import client as agent_client
from searchdesk_server.agent import paths
from searchdesk_server.agent.protocol import ClientInfo, Value
from tests.agentref.testing import request_approval
from tests.desktop.agent_helpers import Background, in_background
from tests.desktop.helpers import arm, question

WM_RO = "https://www.googleapis.com/auth/webmasters.readonly"


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="sd-"))  # short: Unix socket paths are limited to ~100 bytes
    try:
        yield folder
    finally:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


class Setup:
    def __init__(self, qtbot: QtBot, folder: Path, provider: TokenProvider | None) -> None:
        self.book = ApprovalBook()
        self.queue = ApprovalQueue(self.book, arm_delay_ms=50)

        def get() -> TokenProvider:
            if provider is None:
                raise SignedOut()
            return provider

        self.listener = AgentListener(self.book, get, path=str(folder / "agent.sock"))
        self.path = self.listener.start()
        self.qtbot = qtbot

    def close(self) -> None:
        self.listener.close()
        self.queue.close()
        self.listener.deleteLater()
        self.queue.deleteLater()

    def client(self) -> agent_client.AgentClient:
        return agent_client.AgentClient(self.path)

    def raw(self) -> socket.socket:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(self.path)
        s.setblocking(False)  # the Qt loop must keep running while the test waits for answers
        return s


@pytest.fixture
def setup(qtbot: QtBot, sock_dir: Path) -> Iterator[Setup]:
    s = Setup(qtbot, sock_dir, DemoTokens())
    yield s
    s.close()


async def ask(path: str, site: str = "https://example.com/", wait_s: float = 10, request_id: str = "req-1") -> str:
    q = question(site, wait_s=wait_s, request_id=request_id)
    async with agent_client.AgentClient(path) as c:
        return await c.ask(q)


def test_socket_is_private(setup: Setup) -> None:
    info = os.stat(setup.path)
    assert stat.S_ISSOCK(info.st_mode)
    assert stat.S_IMODE(os.stat(os.path.dirname(setup.path)).st_mode) == 0o700


def test_hello_and_token(setup: Setup, qtbot: QtBot) -> None:
    async def go() -> tuple[object, object, object]:
        async with setup.client() as c:
            hello = await c.hello()
            first = await c.token([WM_RO])
            second = await c.token([WM_RO], force_refresh=True)
            return hello, first, second

    hello, first, second = in_background(qtbot, go)
    assert hello.app == "SearchDesk" and hello.protocol == 1  # type: ignore[attr-defined]
    assert first.access_token.startswith("demo-") and first.kind == "oauth"  # type: ignore[attr-defined]
    assert second.access_token != first.access_token  # type: ignore[attr-defined]
    assert setup.listener.tokens_handed_out == 2


def test_a_token_asked_while_signed_out_is_refused_with_sign_in(qtbot: QtBot, sock_dir: Path) -> None:
    s = Setup(qtbot, sock_dir, None)
    try:
        with pytest.raises(agent_client.AppSignedOut, match="sign in"):
            in_background(qtbot, lambda: _token(s.path))
    finally:
        s.close()


async def _token(path: str) -> object:
    async with agent_client.AgentClient(path) as c:
        return await c.token([WM_RO])


def test_approval_round_trip_clicked(setup: Setup, qtbot: QtBot) -> None:
    call = Background(lambda: ask(setup.path))
    qtbot.waitUntil(lambda: setup.queue.dialog is not None and setup.queue.dialog.isVisible())
    dialog = arm(qtbot, setup.queue.dialog)
    assert dialog.value_labels[0][1].text() == "https://example.com/"
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    assert call.wait(qtbot) == "approve"
    entry = setup.book.activity[-1]
    assert entry.decision == "approved"
    # Spent: a status call finds nothing.
    fp = question().fingerprint

    async def status() -> str:
        async with setup.client() as c:
            return await c.approval_status(fp)

    assert in_background(qtbot, status) == "none"


def test_deny_round_trip(setup: Setup, qtbot: QtBot) -> None:
    call = Background(lambda: ask(setup.path))
    qtbot.waitUntil(lambda: setup.queue.dialog is not None)
    qtbot.keyClick(arm(qtbot, setup.queue.dialog), Qt.Key.Key_Escape)
    assert call.wait(qtbot) == "deny"


def test_pending_then_picked_up_once(setup: Setup, qtbot: QtBot) -> None:
    assert in_background(qtbot, lambda: ask(setup.path, wait_s=0.2)) == "pending"
    dialog = setup.queue.dialog
    assert dialog is not None and dialog.isVisible()  # still open for the person
    fp = question().fingerprint

    async def status() -> str:
        async with setup.client() as c:
            return await c.approval_status(fp)

    assert in_background(qtbot, status) == "pending"
    arm(qtbot, dialog)
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    assert in_background(qtbot, status) == "approve"
    assert in_background(qtbot, status) == "none"  # an approve is spent once


def test_cancel_closes_dialog(setup: Setup, qtbot: QtBot) -> None:
    call = Background(lambda: ask(setup.path, request_id="to-cancel"))
    qtbot.waitUntil(lambda: setup.queue.dialog is not None)

    async def cancel() -> bool:
        async with setup.client() as c:
            return await c.approval_cancel("to-cancel")

    assert in_background(qtbot, cancel) is True
    with pytest.raises(agent_client.ApprovalCancelled):
        call.wait(qtbot)
    qtbot.waitUntil(lambda: setup.queue.dialog is None)
    assert setup.book.activity[-1].decision == "withdrawn by the caller"
    assert in_background(qtbot, cancel) is False


def test_nothing_approved_after_client_disconnects(setup: Setup, qtbot: QtBot) -> None:
    """A client that gives up does not approve anything; the question stays for a later call."""
    assert in_background(qtbot, lambda: ask(setup.path, wait_s=0.1)) == "pending"
    entry = setup.book.get(question().fingerprint)
    assert entry is not None and entry.state is State.PENDING


def raw_lines(qtbot: QtBot, s: socket.socket, n: int) -> list[dict]:
    """Read n answer lines while the Qt loop (the listener) keeps running."""
    buf = bytearray()
    eof = []

    def enough() -> bool:
        try:
            chunk = s.recv(65536, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        if not chunk:
            eof.append(True)
            return True
        buf.extend(chunk)
        return buf.count(b"\n") >= n

    qtbot.waitUntil(enough, timeout=5000)
    return [json.loads(line) for line in bytes(buf).splitlines()]


def closed_by_listener(qtbot: QtBot, s: socket.socket) -> bool:
    def check() -> bool:
        try:
            return s.recv(10, socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except ConnectionResetError:  # closed with our unread bytes in its queue (after our answer)
            return True

    qtbot.waitUntil(check, timeout=5000)
    return True


def test_garbage_gets_errors_and_connection_survives(setup: Setup, qtbot: QtBot) -> None:
    s = setup.raw()
    s.sendall(b'not json\n[1]\n{"jsonrpc":"2.0","id":7,"method":"nope"}\n')
    s.sendall(b'{"jsonrpc":"2.0","id":8,"method":"approval/status","params":{"fingerprint":"xyz"}}\n')
    s.sendall(b'{"jsonrpc":"2.0","id":9,"method":"hello","params":{"protocol":1}}\n')
    answers = raw_lines(qtbot, s, 5)
    assert [a.get("error", {}).get("code") for a in answers] == [-32700, -32600, -32601, -32602, None]
    assert answers[4]["result"]["app"] == "SearchDesk"
    s.close()


def test_half_closed_connection_is_answered(setup: Setup, qtbot: QtBot) -> None:
    s = setup.raw()
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocol":1}}\n')
    s.sendall(
        b'{"jsonrpc":"2.0","id":2,"method":"credentials/token","params":{"scopes":["' + WM_RO.encode() + b'"]}}\n'
    )
    s.shutdown(socket.SHUT_WR)
    answers = raw_lines(qtbot, s, 2)
    assert {a["id"] for a in answers} == {1, 2}
    assert closed_by_listener(qtbot, s)  # then closed
    s.close()


def test_oversized_line_is_refused(setup: Setup, qtbot: QtBot) -> None:
    s = setup.raw()
    s.sendall(b"{" + b" " * (70 * 1024))
    answers = raw_lines(qtbot, s, 1)
    assert answers[0]["error"]["code"] == -32020
    assert closed_by_listener(qtbot, s)
    s.close()
    # Another client is unaffected.
    t = setup.raw()
    t.sendall(b'{"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocol":1}}\n')
    assert raw_lines(qtbot, t, 1)[0]["result"]["protocol"] == 1
    t.close()


def test_hello_of_another_protocol(setup: Setup, qtbot: QtBot) -> None:
    s = setup.raw()
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocol":2}}\n')
    err = raw_lines(qtbot, s, 1)[0]["error"]
    assert err["code"] == -32010 and err["data"] == {"supported": [1]}
    s.close()


def test_stale_socket_from_a_crash_is_recovered(qtbot: QtBot, sock_dir: Path) -> None:
    stale = sock_dir / "agent.sock"
    leftover = socket.socket(socket.AF_UNIX)
    leftover.bind(str(stale))
    leftover.close()  # bound, never listening: what a crash leaves behind
    s = Setup(qtbot, sock_dir, DemoTokens())
    try:
        assert s.listener.listening
        assert in_background(qtbot, lambda: _token(s.path)) is not None
    finally:
        s.close()


def test_second_listener_refused(setup: Setup, qtbot: QtBot, sock_dir: Path) -> None:
    with pytest.raises(paths.AlreadyListening):
        AgentListener(ApprovalBook(), DemoTokens, path=setup.path).start()


def test_untrusted_folder_refused(qtbot: QtBot, sock_dir: Path) -> None:
    sock_dir.chmod(0o755)
    with pytest.raises(paths.UntrustedFolder, match="0700"):
        AgentListener(ApprovalBook(), DemoTokens, path=str(sock_dir / "agent.sock")).start()
    assert not (sock_dir / "agent.sock").exists()


def test_many_clients_at_once(setup: Setup, qtbot: QtBot) -> None:
    import asyncio

    async def many() -> list[object]:
        clients = [setup.client() for _ in range(40)]
        try:
            return await asyncio.gather(*(c.token([WM_RO]) for c in clients))
        finally:
            await asyncio.gather(*(c.aclose() for c in clients))

    tokens = in_background(qtbot, many, timeout=20_000)
    assert len({t.access_token for t in tokens}) == 40


def test_values_reach_dialog_as_sent(setup: Setup, qtbot: QtBot) -> None:
    async def go() -> str:
        async with setup.client() as c:
            q = question("https://x.example/")
            return await request_approval(
                c,
                request_id="v1",
                tool=q.tool,
                what=q.what,
                consequence=q.consequence,
                values=(Value("Property", "<b>https://x.example/</b>"),),
                fingerprint=q.fingerprint,
                client=ClientInfo("<i>Claude</i>", "1"),
                wait_s=10,
            )

    call = Background(go)
    qtbot.waitUntil(lambda: setup.queue.dialog is not None)
    dialog = arm(qtbot, setup.queue.dialog)
    assert dialog.value_labels[0][1].text() == "<b>https://x.example/</b>"
    assert isinstance(dialog.value_labels[0][1], ValueText)  # a plain-text view: it never reads markup
    assert "says it is <i>Claude</i> (version 1)" in dialog.client_label.text()
    dialog.close()
    assert call.wait(qtbot) == "deny"
