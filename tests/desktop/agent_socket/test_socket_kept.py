"""The app keeps its socket (issue 23): a cleaner or a logout script that removes the socket file or
its folder while SearchDesk runs costs the person nothing. Within 5 s the app listens again at the
same path, through the same checks (the folder 0700, never chmod-ed into use), and says so in its
log; connections already open go on; the next guarded call of a server on the app's keys reaches the
app's dialog. What somebody else put at the path is never deleted or taken: a file stays until it is
removed, and another live listener keeps the path, even when SearchDesk quits.

Against the app's real listener (`DesktopListener`: the real `AgentListener` and `ApprovalBook` on
their own Qt thread, offscreen) and, end to end, the real stdio server with the fake Google, whose
request log is the judge. The keeping rule itself is `paths.Keeper`, tested without Qt in
tests/server/agent/test_agent_paths.py.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.agent import paths, protocol
from tests.agentref import ApprovalScript, Script, TokenScript
from tests.fakegoogle import FakeGoogle
from tests.security.approval.test_person_approves import (
    TARGET,
    app_listener,
    asked,
    assert_no_token,
    destructive,
    in_thread,
)
from tests.security.conftest import (  # noqa: F401  (the security suite's fixtures, here too)
    Witness,
    _no_leak_in_this_test,
    fake,
    planted,
    serve,
    witness,
)
from tests.server.stdio import text_of

BACK_WITHIN_S = 5.0  # the promise
LOGGER = "searchdesk_desktop.agent_socket.listener"


@pytest.fixture
def folder() -> Iterator[Path]:
    """A short private folder (socket paths are limited to ~100 bytes); the socket's folder is `sd` in
    it, so removing that folder removes nothing else."""
    path = Path(tempfile.mkdtemp(prefix="sd-kept-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def within(seconds: float, check: Callable[[], bool], since: float | None = None) -> bool:
    """Whether `check()` holds at some moment before `seconds` after `since` (default: now)."""
    deadline = (since if since is not None else time.monotonic()) + seconds
    while True:
        if check():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False


def answers_hello(path: Path) -> bool:
    """A new connection at `path` gets an answer to `hello` (the path is a listening socket again)."""
    if not is_socket(path):
        return False
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2)
            s.connect(str(path))
            return bool(hello(s).get("protocol") == protocol.PROTOCOL_VERSION)
    except OSError:
        return False


def hello(s: socket.socket) -> dict[str, Any]:
    request = {"jsonrpc": "2.0", "id": 1, "method": protocol.HELLO, "params": {"protocol": protocol.PROTOCOL_VERSION}}
    s.sendall(json.dumps(request).encode() + b"\n")
    line = b""
    while not line.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the answer")
        line += chunk
    answer: dict[str, Any] = json.loads(line)["result"]
    return answer


def connected(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(str(path))
    return s


def file_id(path: Path) -> tuple[int, int]:
    info = os.lstat(path)
    return (info.st_dev, info.st_ino)


def replace_with(path: Path, make: Callable[[Path], object]) -> None:
    """Put something else at `path` in one step (rename over it), as another program would."""
    temp = path.with_name(".other")
    make(temp)
    os.rename(temp, path)


# --------------------------------------------------------------------------------------------------
# (1), (2): removed → listening again within 5 s, connections already open go on


def test_the_socket_file_removed_while_the_app_runs_is_back_within_5_s(
    folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sock = folder / "sd" / "agent.sock"
    caplog.set_level(logging.INFO, logger=LOGGER)
    with app_listener(sock.parent):
        before = connected(sock)  # a server's connection, made before the cleaner ran
        try:
            assert hello(before)["protocol"] == protocol.PROTOCOL_VERSION
            first = file_id(sock)
            removed = time.monotonic()
            sock.unlink()
            assert within(BACK_WITHIN_S, lambda: answers_hello(sock), since=removed), "not listening again in 5 s"
            assert file_id(sock) != first  # a new socket file, bound by the app
            assert stat.S_IMODE(os.lstat(sock.parent).st_mode) == 0o700
            assert hello(before)["protocol"] == protocol.PROTOCOL_VERSION  # the old connection goes on
        finally:
            before.close()
    assert "listening again" in caplog.text


def test_the_socket_folder_removed_while_the_app_runs_is_made_again_0700_within_5_s(
    folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sock = folder / "sd" / "agent.sock"
    caplog.set_level(logging.INFO, logger=LOGGER)
    old = os.umask(0o022)  # what the app would otherwise make: 0755
    try:
        with app_listener(sock.parent):
            before = connected(sock)
            try:
                removed = time.monotonic()
                shutil.rmtree(sock.parent)
                assert within(BACK_WITHIN_S, lambda: answers_hello(sock), since=removed), "not listening again in 5 s"
                info = os.lstat(sock.parent)
                assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700
                assert info.st_uid == os.geteuid()
                paths.check_folder(sock.parent)  # what the server checks before it says anything
                assert hello(before)["protocol"] == protocol.PROTOCOL_VERSION
            finally:
                before.close()
    finally:
        os.umask(old)
    assert "listening again" in caplog.text


# --------------------------------------------------------------------------------------------------
# (3) end to end: a server on the app's keys, the socket removed between two calls


@pytest.mark.anyio
async def test_after_the_socket_is_removed_the_next_guarded_call_reaches_the_apps_dialog(
    fake: FakeGoogle,  # noqa: F811
    witness: Witness,  # noqa: F811
    folder: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    sock = folder / "sd" / "agent.sock"
    access_token = fake.mint_token()
    script = Script(
        token=TokenScript(access_token=access_token, account="owner@example.com"),
        approval=ApprovalScript(decision="deny", delay=0.3),  # the person reads the question and says no
    )
    env = {"SEARCHDESK_APPROVAL_WAIT": "10"}  # no credential in the entry: the app's keys
    with app_listener(sock.parent, script) as app:
        async with serve(fake, witness, folder / "home", env, socket=str(sock)) as served:
            listed = await served.client.call_tool("list_sites", {})
            assert not listed.is_error, text_of(listed)
            assert [r for r in app.requests() if r.method == protocol.TOKEN], "the token did not come from the app"
            removed = time.monotonic()
            sock.unlink()  # the cleaner, between two calls
            back = await in_thread(within, BACK_WITHIN_S, lambda: answers_hello(sock), removed)
            result = await served.client.call_tool("delete_sitemap", TARGET)
    questions = asked(app)
    assert questions, f"the guarded call never reached the app's dialog: {text_of(result)}"
    assert [v["value"] for v in questions[0]["values"] if TARGET["feedpath"] in v["value"]]
    assert_no_token(result)
    assert result.is_error and "declined" in text_of(result).lower(), text_of(result)
    assert destructive(fake) == []  # nothing reached Google without the yes
    assert back, "the app was not listening again within 5 s"
    assert "listening again" in caplog.text
    assert access_token not in caplog.text and TARGET["feedpath"] not in caplog.text  # no token, no question


# --------------------------------------------------------------------------------------------------
# (4) what somebody else put at the path is left alone


def test_a_file_put_in_the_sockets_place_is_never_deleted_and_the_app_comes_back_once_it_is_gone(
    folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sock = folder / "sd" / "agent.sock"
    caplog.set_level(logging.INFO, logger=LOGGER)
    with app_listener(sock.parent):
        replace_with(sock, lambda p: p.write_text("not SearchDesk's"))
        time.sleep(3 * paths.KEEP_EVERY_S + 0.5)  # three checks at least
        assert sock.read_text() == "not SearchDesk's", "the app deleted or replaced a file it did not make"
        assert "did not make" in caplog.text
        removed = time.monotonic()
        sock.unlink()  # its owner takes it away
        assert within(BACK_WITHIN_S, lambda: answers_hello(sock), since=removed), "not listening again in 5 s"


class OtherListener:
    """Another live listener of this user at the path (a second copy of some program)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX)
        replace_with(path, lambda p: self.sock.bind(str(p)))
        self.sock.listen(8)
        self.file = file_id(path)

    def takes_a_new_connection(self) -> bool:
        with socket.socket(socket.AF_UNIX) as client:
            client.settimeout(2)
            client.connect(str(self.path))
            self.sock.settimeout(2)
            accepted, _ = self.sock.accept()
            accepted.close()
            return True

    def leave(self) -> None:
        """A clean exit: its own file goes with it."""
        self.path.unlink()
        self.sock.close()


def test_another_live_listener_in_the_sockets_place_is_not_displaced_not_even_when_the_app_quits(
    folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sock = folder / "sd" / "agent.sock"
    caplog.set_level(logging.INFO, logger=LOGGER)
    with app_listener(sock.parent):
        other = OtherListener(sock)
        try:
            time.sleep(3 * paths.KEEP_EVERY_S + 0.5)
            assert file_id(sock) == other.file, "the app took the path from a live listener"
            assert other.takes_a_new_connection()
        except BaseException:
            other.sock.close()
            raise
    try:  # the app has quit: what it removes is only its own
        assert is_socket(sock) and file_id(sock) == other.file, "quitting removed another program's socket"
        assert other.takes_a_new_connection()
    finally:
        other.sock.close()
    assert "another program listens" in caplog.text


def test_when_the_other_listener_leaves_the_app_listens_again_within_5_s(folder: Path) -> None:
    sock = folder / "sd" / "agent.sock"
    with app_listener(sock.parent):
        other = OtherListener(sock)
        time.sleep(2 * paths.KEEP_EVERY_S + 0.5)  # the app has found it and left it alone
        left = time.monotonic()
        other.leave()
        assert within(BACK_WITHIN_S, lambda: answers_hello(sock), since=left), "not listening again in 5 s"
