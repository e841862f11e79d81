"""winpipe's decisions, with fake Win32 calls: the real calls are Windows' and are not run on this CI.

`owner_trusted` must say yes only when the pipe's owner and the process serving it both run as us,
and no on every other answer or failure. `PipeAcceptor` must take the name first or not at all,
never let it lapse, serve every instance, and release everything it made. The client's Windows
branch is driven against the reference agent, with only the pipe handle and the calls faked.
"""

from __future__ import annotations

import asyncio
import queue
import threading
import time
import types
from collections.abc import Callable
from typing import Any

import pytest

from searchdesk_server.agent import client as client_module
from searchdesk_server.agent import paths, winpipe
from searchdesk_server.agent.client import AgentClient
from tests.agentref import AgentThread
from tests.agentref.testing import run

ME, OTHER = b"\x01\x05sid-of-me", b"\x01\x05sid-of-someone-else"
PIPE, SERVER_PID = 7, 4242
WM = "https://www.googleapis.com/auth/webmasters"


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition did not hold in time")
        time.sleep(0.005)


# --------------------------------------------------------------------------------------------------
# Whom the server trusts


class OwnerCalls:
    """Answers the four trust questions; None makes a question fail as Windows would (OSError)."""

    def __init__(
        self,
        me: bytes | None = ME,
        owner: bytes | None = ME,
        pid: int | None = SERVER_PID,
        user: bytes | None = ME,
        failure: type[BaseException] = OSError,
    ) -> None:
        self.me, self.owner, self.pid, self.user, self.failure = me, owner, pid, user, failure
        self.asked: list[tuple[str, int | None]] = []

    def _answer(self, what: str, arg: int | None, value: Any) -> Any:
        self.asked.append((what, arg))
        if value is None:
            raise self.failure(5, "Access is denied.")
        return value

    def current_user_sid(self) -> bytes:
        return self._answer("me", None, self.me)

    def pipe_owner_sid(self, pipe: int) -> bytes:
        return self._answer("owner", pipe, self.owner)

    def server_process_id(self, pipe: int) -> int:
        return self._answer("pid", pipe, self.pid)

    def process_user_sid(self, pid: int) -> bytes:
        return self._answer("user", pid, self.user)


def test_our_own_pipe_served_by_our_own_process_is_trusted() -> None:
    calls = OwnerCalls()
    assert winpipe.owner_trusted(PIPE, calls) is True
    assert calls.asked == [("me", None), ("owner", PIPE), ("pid", PIPE), ("user", SERVER_PID)]


@pytest.mark.parametrize(
    "calls",
    [
        pytest.param(OwnerCalls(user=OTHER), id="served-by-another-user"),
        pytest.param(OwnerCalls(owner=OTHER), id="owned-by-another-user"),
        pytest.param(OwnerCalls(owner=OTHER, user=OTHER), id="another-users-pipe"),
        pytest.param(OwnerCalls(user=None), id="serving-process-gone-or-closed-to-us"),
        pytest.param(OwnerCalls(pid=None), id="server-pid-unknown"),
        pytest.param(OwnerCalls(pid=0), id="server-pid-zero"),
        pytest.param(OwnerCalls(owner=None), id="owner-unreadable"),
        pytest.param(OwnerCalls(me=None), id="own-sid-unknown"),
        pytest.param(OwnerCalls(me=b"", owner=b"", user=b""), id="empty-sids-are-not-equal-enough"),
        pytest.param(OwnerCalls(user=None, failure=ValueError), id="an-unexpected-error"),
    ],
)
def test_anything_else_is_refused(calls: OwnerCalls) -> None:
    assert winpipe.owner_trusted(PIPE, calls) is False


def test_without_windows_calls_nothing_is_trusted() -> None:
    # On this Linux CI the real calls cannot be bound: that, too, is a no, never a fallback.
    with pytest.raises(OSError, match="only on Windows"):
        winpipe.system_calls()
    assert winpipe.owner_trusted(PIPE) is False


class _PipeHandle:
    def __init__(self, handle: int) -> None:
        self.handle = handle


@pytest.fixture
def as_windows(monkeypatch: pytest.MonkeyPatch) -> Callable[[OwnerCalls], None]:
    """The client's Windows branch over a real Unix socket to the reference agent.

    Only what Windows alone has is faked: `sys.platform` as the client module sees it, the pipe
    handle asyncio would report, and the Win32 calls.
    """
    monkeypatch.setattr(client_module, "sys", types.SimpleNamespace(platform="win32"))

    async def open_pipe(path: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.open_unix_connection(path)
        real = writer.get_extra_info

        def extra(name: str, default: Any = None) -> Any:
            return _PipeHandle(PIPE) if name == "pipe" else real(name, default)

        writer.get_extra_info = extra
        return reader, writer

    monkeypatch.setattr(client_module, "open_stream", open_pipe)
    return lambda calls: monkeypatch.setattr(winpipe, "system_calls", lambda: calls)


def test_the_client_sends_nothing_to_a_pipe_of_another_user(
    as_windows: Callable[[OwnerCalls], None], reference_agent: AgentThread
) -> None:
    calls = OwnerCalls(user=OTHER)
    as_windows(calls)
    with pytest.raises(paths.UntrustedPeer, match="another user") as caught:
        run(AgentClient().token([WM]))
    assert "SearchDesk sent it nothing" in str(caught.value)
    assert ("pid", PIPE) in calls.asked  # the handle asyncio reported is the one checked
    agent = reference_agent.agent
    assert agent is not None
    # Once the agent has seen the connection end, anything sent on it would have been recorded.
    wait_until(lambda: agent.connections_accepted == 1 and not agent._conns)
    assert agent.requests == []


def test_the_client_talks_to_its_own_users_pipe(
    as_windows: Callable[[OwnerCalls], None], reference_agent: AgentThread
) -> None:
    as_windows(OwnerCalls())
    token = run(AgentClient().token([WM]))
    assert token.access_token
    assert reference_agent.agent is not None
    assert [r.method for r in reference_agent.agent.requests] == ["hello", "credentials/token"]


# --------------------------------------------------------------------------------------------------
# The app's pipe


class Pipes:
    """Fake Win32 pipes. Each `wait_for_client` blocks until the test connects, breaks or stops it.

    It records what a squatter could exploit: a moment with none of our instances open (the name
    lapsed), a second "first" instance, a handle closed twice or never.
    """

    def __init__(self, taken: bool = False) -> None:
        self.taken = taken
        self.lock = threading.Lock()
        self.next_handle = 100
        self.created: list[tuple[int, bool]] = []
        self.instances: set[int] = set()  # ours and open (listening, or connected and not yet closed)
        self.events: set[int] = set()
        self.closed: list[int] = []
        self.lapses = 0
        self.waiting: dict[int, queue.Queue[str]] = {}
        self.fail_next_create = False
        self.stopped = False
        self.used: set[int] = set()

    def _handle(self) -> int:
        with self.lock:
            self.next_handle += 1
            return self.next_handle

    def create_instance(self, name: str, *, first: bool) -> int:
        assert name == r"\\.\pipe\searchdesk-agent-test"
        if first and (self.taken or self.created):
            raise winpipe.NameTaken(0, "The pipe name is in use.")
        if not first and not self.instances:
            raise AssertionError("a later instance was created with no instance of ours open")
        if self.fail_next_create:
            raise OSError(0, "Windows error 1450")
        handle = self._handle()
        with self.lock:
            self.created.append((handle, first))
            self.instances.add(handle)
            self.waiting[handle] = queue.Queue()
        return handle

    def wait_for_client(self, pipe: int, stop_event: int) -> bool:
        assert pipe in self.instances and stop_event in self.events
        what = self.waiting[pipe].get(timeout=10)
        if what == "break":
            raise OSError(0, "Windows error 232")
        return what == "connect"

    def new_event(self) -> int:
        event = self._handle()
        self.events.add(event)
        return event

    def set_event(self, event: int) -> None:
        assert event in self.events
        self.stopped = True
        for q in list(self.waiting.values()):
            q.put("stop")

    def close(self, handle: int) -> None:
        with self.lock:
            assert handle not in self.closed, f"handle {handle} closed twice"
            self.closed.append(handle)
            self.events.discard(handle)
            if handle in self.instances:
                self.instances.discard(handle)
                if not self.instances and not self.stopped:
                    self.lapses += 1

    # the test's side

    def listening(self) -> int:
        """The instance the next client reaches: the newest, once made (each is reached only once)."""
        wait_until(lambda: bool(self.created) and self.created[-1][0] not in self.used)
        pipe = self.created[-1][0]
        self.used.add(pipe)
        return pipe

    def connect(self) -> int:
        pipe = self.listening()
        self.waiting[pipe].put("connect")
        return pipe

    def break_listening(self) -> int:
        pipe = self.listening()
        self.waiting[pipe].put("break")
        return pipe


NAME = r"\\.\pipe\searchdesk-agent-test"


class Handed:
    """The listener's side of the hand-off: records each handle, then closes it like a finished client."""

    def __init__(self, pipes: Pipes, refuse: bool = False) -> None:
        self.pipes, self.refuse = pipes, refuse
        self.handles: list[int] = []
        self.followers_open: list[bool] = []

    def __call__(self, handle: int) -> None:
        # The next instance must exist before this one is handed on (the name never lapses).
        self.followers_open.append(
            self.pipes.created[-1][0] != handle and self.pipes.created[-1][0] in self.pipes.instances
        )
        self.handles.append(handle)
        if self.refuse:
            raise RuntimeError("the listener is closing")
        self.pipes.close(handle)


def test_the_name_is_taken_first_and_never_lapses_while_clients_come_and_go() -> None:
    pipes = Pipes()
    handed = Handed(pipes)
    acceptor = winpipe.PipeAcceptor(NAME, handed, pipes)
    acceptor.start()
    try:
        connected = [pipes.connect() for _ in range(5)]
        wait_until(lambda: len(handed.handles) == 5)
        assert handed.handles == connected  # each client gets the very instance it connected to
        assert all(handed.followers_open)
        assert [first for _, first in pipes.created] == [True] + [False] * 5
        assert acceptor.running
    finally:
        acceptor.stop()
    assert pipes.lapses == 0
    assert not acceptor.running
    assert pipes.instances == set() and pipes.events == set()  # everything it made is closed, once


def test_a_taken_name_is_refused_and_nothing_is_left_open() -> None:
    pipes = Pipes(taken=True)
    acceptor = winpipe.PipeAcceptor(NAME, Handed(pipes), pipes)
    with pytest.raises(paths.AlreadyListening, match="Another program already holds"):
        acceptor.start()
    assert pipes.created == [] and pipes.events == set()
    assert not acceptor.running
    acceptor.stop()  # harmless


def test_a_broken_instance_is_replaced_and_the_next_client_served() -> None:
    pipes = Pipes()
    handed = Handed(pipes)
    acceptor = winpipe.PipeAcceptor(NAME, handed, pipes)
    acceptor.start()
    try:
        broken = pipes.break_listening()
        wait_until(lambda: broken in pipes.closed)
        served = pipes.connect()
        wait_until(lambda: handed.handles == [served])
        assert broken not in handed.handles and acceptor.running
    finally:
        acceptor.stop()
    assert pipes.lapses == 0 and pipes.instances == set()


def test_instances_that_keep_breaking_stop_the_acceptor_instead_of_spinning() -> None:
    pipes = Pipes()
    acceptor = winpipe.PipeAcceptor(NAME, Handed(pipes), pipes)
    acceptor.start()
    for _ in range(winpipe.MAX_FAILED_WAITS):
        pipes.break_listening()
    wait_until(lambda: not acceptor.running)
    assert len(pipes.created) == winpipe.MAX_FAILED_WAITS
    assert pipes.instances == set()
    acceptor.stop()
    assert pipes.events == set()


def test_when_no_next_instance_can_be_made_the_client_is_still_served_then_accepting_stops() -> None:
    pipes = Pipes()
    handed = Handed(pipes)
    acceptor = winpipe.PipeAcceptor(NAME, handed, pipes)
    acceptor.start()
    pipes.fail_next_create = True
    served = pipes.connect()
    wait_until(lambda: not acceptor.running)
    assert handed.handles == [served]
    acceptor.stop()
    assert pipes.instances == set() and pipes.events == set()


def test_a_handle_the_listener_cannot_take_is_closed_here() -> None:
    pipes = Pipes()
    handed = Handed(pipes, refuse=True)
    acceptor = winpipe.PipeAcceptor(NAME, handed, pipes)
    acceptor.start()
    try:
        refused = pipes.connect()
        wait_until(lambda: refused in pipes.closed)
        assert acceptor.running
    finally:
        acceptor.stop()
    assert pipes.closed.count(refused) == 1 and pipes.instances == set()
