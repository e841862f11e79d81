"""Windows: the listener on a real named pipe, and the owner check on a real pipe handle.

test_listener_pipe.py runs the same listener on Linux with the Win32 calls faked; here nothing is faked:
winpipe's own ctypes calls create the pipe (user-only DACL), accept the client, and owner_trusted asks
Windows who owns the pipe and who serves it. ci.yml's Windows job runs it.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import uuid

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop.accounts.tokens import DemoTokens
from searchdesk_desktop.agent_socket.listener import AgentListener
from searchdesk_desktop.approval.book import ApprovalBook
from tests.desktop.agent_socket.test_listener_pipe import HELLO, TOKEN

pytestmark = pytest.mark.skipif(
    sys.platform != "win32", reason="named pipes are Windows's; Linux runs the same listener with the calls faked"
)


def client(name: str, out: queue.Queue[object]) -> None:
    """A client as the server's would be: open the pipe, check its owner, say hello, ask for a token."""
    import msvcrt

    from searchdesk_server.agent import winpipe

    try:
        with open(name, "r+b", buffering=0) as pipe:
            out.put(("trusted", winpipe.owner_trusted(msvcrt.get_osfhandle(pipe.fileno()))))
            pipe.write(HELLO + TOKEN)
            data = b""
            while data.count(b"\n") < 2:
                chunk = pipe.read(4096)
                if not chunk:
                    break
                data += chunk
            out.put(("lines", [json.loads(line) for line in data.splitlines() if line.strip()]))
    except Exception as exc:  # reported to the test, which fails with it
        out.put(("error", repr(exc)))


def test_a_real_pipe_is_served_and_its_owner_is_this_user(qtbot: QtBot) -> None:
    name = rf"\\.\pipe\searchdesk-agent-test-{uuid.uuid4().hex[:8]}"
    listener = AgentListener(ApprovalBook(), DemoTokens, path=name)
    assert listener.start() == name
    results: queue.Queue[object] = queue.Queue()
    try:
        thread = threading.Thread(target=client, args=(name, results), daemon=True)
        thread.start()
        got: dict[str, object] = {}

        def both() -> bool:
            while not results.empty():
                key, value = results.get()  # type: ignore[misc]
                got[key] = value
            return "lines" in got or "error" in got

        qtbot.waitUntil(both, timeout=15_000)
        assert "error" not in got, got["error"]
        assert got["trusted"] is True
        hello, token = got["lines"]  # type: ignore[misc]
        assert hello["result"]["app"] == "SearchDesk"
        assert token["result"]["access_token"].startswith("demo-")
    finally:
        listener.close()
    assert not listener.listening
