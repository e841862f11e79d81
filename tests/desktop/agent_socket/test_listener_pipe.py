"""The listener's Windows branch, run on Linux: PipeAcceptor -> queued signal -> QLocalSocket -> answers.

The Win32 pipe calls are faked (they are not run on this CI): each "pipe instance" is one end of a
socketpair, which QLocalSocket.setSocketDescriptor takes on Linux as it takes a pipe handle on
Windows. Everything after the hand-off - the signal across threads, Qt's socket, the listener's
protocol handling - is the real code.
"""

from __future__ import annotations

import os
import queue
import socket
import threading
import types
from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop.accounts.tokens import DemoTokens
from searchdesk_desktop.agent_socket import listener as listener_module
from searchdesk_desktop.agent_socket.listener import AgentListener
from searchdesk_desktop.approval.book import ApprovalBook
from searchdesk_server.agent import paths, winpipe
from tests.desktop.agent_socket.test_listener import closed_by_listener, raw_lines

NAME = r"\\.\pipe\searchdesk-agent-test"
HELLO = b'{"jsonrpc":"2.0","id":1,"method":"hello","params":{"protocol":1}}\n'
TOKEN = b'{"jsonrpc":"2.0","id":2,"method":"credentials/token","params":{"scopes":["https://www.googleapis.com/auth/webmasters.readonly"]}}\n'


class SocketPipes:
    """winpipe.PipeCalls over socketpairs: an instance's handle is the listener's end, a descriptor."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.client_ends: dict[int, socket.socket] = {}
        self.waiting: dict[int, queue.Queue[str]] = {}
        self.created: list[int] = []
        self.closed: list[int] = []
        self.used: set[int] = set()
        self.events = 0

    def create_instance(self, name: str, *, first: bool) -> int:
        assert name == NAME
        if first and self.created:
            raise winpipe.NameTaken(0, "The pipe name is in use.")
        ours, theirs = socket.socketpair()
        handle = ours.detach()
        with self.lock:
            self.client_ends[handle] = theirs
            self.waiting[handle] = queue.Queue()
            self.created.append(handle)
        return handle

    def wait_for_client(self, pipe: int, stop_event: int) -> bool:
        return self.waiting[pipe].get(timeout=30) == "connect"

    def new_event(self) -> int:
        self.events += 1
        return -self.events

    def set_event(self, event: int) -> None:
        for q in list(self.waiting.values()):
            q.put("stop")

    def close(self, handle: int) -> None:
        self.closed.append(handle)
        if handle >= 0:
            os.close(handle)

    def connect(self, qtbot: QtBot) -> socket.socket:
        """A client reaching the instance that listens now."""
        qtbot.waitUntil(lambda: bool(self.created) and self.created[-1] not in self.used)
        pipe = self.created[-1]
        self.used.add(pipe)
        client = self.client_ends[pipe]
        client.setblocking(False)  # raw_lines reads without blocking the Qt loop
        self.waiting[pipe].put("connect")
        return client


@pytest.fixture
def pipes(monkeypatch: pytest.MonkeyPatch) -> Iterator[SocketPipes]:
    fake = SocketPipes()
    monkeypatch.setattr(listener_module, "sys", types.SimpleNamespace(platform="win32"))
    monkeypatch.setattr(winpipe, "system_calls", lambda: fake)
    yield fake
    for end in fake.client_ends.values():
        end.close()


def test_clients_of_the_pipe_are_served_by_the_real_listener(pipes: SocketPipes, qtbot: QtBot) -> None:
    listener = AgentListener(ApprovalBook(), DemoTokens, path=NAME)
    assert listener.start() == NAME
    try:
        assert listener.listening
        first, second = pipes.connect(qtbot), pipes.connect(qtbot)
        for client in (first, second):
            client.sendall(HELLO + TOKEN)
        for client in (first, second):
            hello, token = raw_lines(qtbot, client, 2)
            assert hello["result"]["app"] == "SearchDesk"
            assert token["result"]["access_token"].startswith("demo-")
        qtbot.waitUntil(lambda: listener.connection_count == 2)
        with pytest.raises(paths.AlreadyListening):  # a second app finds the name taken
            AgentListener(ApprovalBook(), DemoTokens, path=NAME).start()
    finally:
        listener.close()
    assert not listener.listening
    assert closed_by_listener(qtbot, first) and closed_by_listener(qtbot, second)
    assert pipes.created[-1] in pipes.closed  # the instance still listening was closed too


def test_a_handle_arriving_after_close_is_closed_not_served(pipes: SocketPipes, qtbot: QtBot) -> None:
    listener = AgentListener(ApprovalBook(), DemoTokens, path=NAME)
    listener.start()
    listener.close()
    late = pipes.create_instance(NAME, first=False)
    listener._adopt_pipe(late)
    assert late in pipes.closed and listener.connection_count == 0
