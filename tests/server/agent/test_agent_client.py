"""The server's AgentClient: absence, reconnects, timeouts, concurrency, typed errors, trust checks."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.agent import paths, protocol
from searchdesk_server.agent.client import (
    AgentClient,
    AgentConnectionLost,
    AgentProtocolError,
    AgentRemoteError,
    AgentTimeout,
    AgentUnavailable,
    AppKeyringLocked,
    AppProtocolMismatch,
    AppRefreshFailed,
    AppScopeNotGranted,
    AppSignedOut,
)
from searchdesk_server.agent.protocol import AgentError, ErrorCode
from tests.agentref import AgentThread, ApprovalScript, Script, TokenScript
from tests.agentref.testing import NOBODY, needs_root, request_approval, run

WM = "https://www.googleapis.com/auth/webmasters"
SITE = "https://example.com/"
FP = protocol.fingerprint("delete_site", [SITE])
NOT_RUNNING = "The SearchDesk app is not running"


def ask(client: AgentClient, *, request_id: str = "r1", fingerprint: str = FP, wait_s: float = 0) -> Awaitable[str]:
    return request_approval(
        client,
        request_id=request_id,
        tool="delete_site",
        what="This will remove the property from your Search Console.",
        consequence="Its performance history goes with it.",
        values=[protocol.Value("Property", SITE)],
        fingerprint=fingerprint,
        client=protocol.ClientInfo("Claude Desktop", "1.0"),
        wait_s=wait_s,
    )


# --------------------------------------------------------------------------------------------------
# Absence


def test_no_folder_means_the_app_is_not_running(tmp_path: Path) -> None:
    async def go() -> None:
        async with AgentClient(str(tmp_path / "missing" / "agent.sock")) as client:
            await client.token([WM])

    with pytest.raises(AgentUnavailable) as caught:
        run(go())
    assert str(caught.value).startswith(NOT_RUNNING)
    assert "Start SearchDesk" in str(caught.value)


def test_no_socket_means_the_app_is_not_running(agent_socket: str) -> None:
    with pytest.raises(AgentUnavailable, match=f"^{NOT_RUNNING}"):
        run(AgentClient().hello())


def test_a_stale_socket_file_means_the_app_is_not_running(agent_socket: str) -> None:
    import socket

    stale = socket.socket(socket.AF_UNIX)
    stale.bind(agent_socket)  # bound, never listening: what a crashed app leaves behind
    try:
        with pytest.raises(AgentUnavailable, match=f"^{NOT_RUNNING}"):
            run(AgentClient().hello())
    finally:
        stale.close()


def test_the_default_path_is_in_the_runtime_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = tmp_path / "xdg"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("SEARCHDESK_AGENT_SOCKET", raising=False)
    client = AgentClient()
    assert client.path == str(runtime / "searchdesk" / "agent.sock")
    with pytest.raises(AgentUnavailable, match=f"^{NOT_RUNNING}"):
        run(client.hello())


# --------------------------------------------------------------------------------------------------
# Reconnects: once, and never for a question that left


def test_reconnects_after_the_app_restarted(agent_socket: str) -> None:
    first = AgentThread()
    first.start(agent_socket)

    async def go() -> AgentClient:
        client = AgentClient()
        assert (await client.token([WM])).access_token
        await asyncio.to_thread(first.stop)
        second = AgentThread()
        await asyncio.to_thread(second.start, agent_socket)
        try:
            assert (await client.token([WM])).access_token
        finally:
            await client.aclose()
            await asyncio.to_thread(second.stop)
        return client

    assert run(go()).connections_opened == 2


def test_a_connection_dropped_mid_call_is_reopened_once_and_the_call_sent_again(
    reference_agent: AgentThread,
) -> None:
    reference_agent.set_script(Script(drop={"credentials/token": 1}))

    async def go() -> AgentClient:
        async with AgentClient() as client:
            assert (await client.token([WM])).access_token
        return client

    assert run(go()).connections_opened == 2
    assert len(reference_agent.requests_of("credentials/token")) == 2


def test_only_one_reconnect(reference_agent: AgentThread) -> None:
    reference_agent.set_script(Script(drop={"credentials/token": 5}))

    async def go() -> None:
        async with AgentClient() as client:
            await client.token([WM])

    with pytest.raises(AgentConnectionLost):
        run(go())
    assert len(reference_agent.requests_of("credentials/token")) == 2


def test_a_question_that_left_is_never_sent_twice(reference_agent: AgentThread) -> None:
    reference_agent.set_script(Script(drop={"approval/request": 1}, approval=ApprovalScript("approve")))

    async def go() -> None:
        async with AgentClient() as client:
            await ask(client, wait_s=5)

    with pytest.raises(AgentConnectionLost) as caught:
        run(go())
    assert caught.value.sent is True
    assert len(reference_agent.requests_of("approval/request")) == 1


# --------------------------------------------------------------------------------------------------
# A listener of our own making, for timeouts and malformed answers

Handler = Callable[[dict[str, Any]], Any]


def hello_ok(request: dict[str, Any]) -> Any:
    return {"app": "fake", "version": "0", "protocol": 1}


async def with_fake_listener(path: str, handler: Handler, body: Callable[[], Awaitable[Any]]) -> Any:
    """Answers each request with handler(request): a dict (result), bytes (sent as is) or None (silence)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            request = json.loads(line)
            answer = hello_ok(request) if request["method"] == "hello" else handler(request)
            if isinstance(answer, bytes):
                writer.write(answer)
            elif answer is not None:
                writer.write(protocol.encode({"jsonrpc": "2.0", "id": request["id"], "result": answer}))
            await writer.drain()
        writer.close()

    server = await asyncio.start_unix_server(serve, path=path)
    try:
        return await body()
    finally:
        server.close()


def test_a_silent_app_times_out(agent_socket: str) -> None:
    async def go() -> None:
        async with AgentClient(token_timeout=0.2) as client:
            await client.token([WM])

    with pytest.raises(AgentTimeout):
        run(with_fake_listener(agent_socket, lambda r: None, go))


def test_an_approval_waits_wait_s_plus_a_margin_then_times_out(agent_socket: str) -> None:
    async def go() -> None:
        async with AgentClient(approval_margin=0.1) as client:
            await ask(client, wait_s=0.1)

    with pytest.raises(AgentTimeout):
        run(with_fake_listener(agent_socket, lambda r: None, go))


@pytest.mark.parametrize(
    "answer",
    [
        {"access_token": "t", "expires_in": 10, "kind": "password", "account": ""},
        {"access_token": "has space", "expires_in": 10, "kind": "oauth", "account": ""},
        {"access_token": "t", "expires_in": -1, "kind": "oauth", "account": ""},
        {"access_token": "t", "kind": "oauth", "account": ""},
        ["not", "an", "object"],
        b"this is not json\n",
        b'{"jsonrpc":"2.0","id":2}\n',
    ],
    ids=["kind", "token-chars", "expires", "missing", "list", "garbage", "neither-result-nor-error"],
)
def test_an_invalid_answer_is_a_protocol_error(agent_socket: str, answer: Any) -> None:
    async def go() -> None:
        async with AgentClient() as client:
            await client.token([WM])

    with pytest.raises(AgentProtocolError):
        run(with_fake_listener(agent_socket, lambda r: answer, go))


def test_an_answer_to_another_question_is_not_used(agent_socket: str) -> None:
    other = protocol.fingerprint("delete_site", ["https://other.example/"])

    async def go() -> None:
        async with AgentClient() as client:
            await ask(client)

    with pytest.raises(AgentProtocolError, match="another question"):
        run(with_fake_listener(agent_socket, lambda r: {"decision": "approve", "fingerprint": other}, go))


def test_an_app_of_another_protocol_is_refused(reference_agent: AgentThread) -> None:
    reference_agent.set_script(Script(hello_protocol=2))

    async def go() -> None:
        async with AgentClient() as client:
            await client.token([WM])

    with pytest.raises(AppProtocolMismatch) as caught:
        run(go())
    assert caught.value.code == ErrorCode.PROTOCOL_MISMATCH
    assert reference_agent.requests_of("credentials/token") == []


# --------------------------------------------------------------------------------------------------
# Concurrency and typed errors


def test_concurrent_calls_share_one_connection(reference_agent: AgentThread) -> None:
    async def go() -> AgentClient:
        async with AgentClient() as client:
            waiting = asyncio.create_task(ask(client, wait_s=30))
            tokens = await asyncio.gather(*(client.token([WM]) for _ in range(20)))
            statuses = await asyncio.gather(*(client.approval_status(FP) for _ in range(5)))
            assert all(t.access_token for t in tokens)
            await asyncio.to_thread(reference_agent.wait_for_requests, "approval/request")
            assert set(statuses) <= {"pending", "none"}
            assert await asyncio.to_thread(reference_agent.answer, FP, "deny")
            assert await waiting == "deny"
        return client

    assert run(go()).connections_opened == 1


@pytest.mark.parametrize(
    ("token", "error"),
    [
        (TokenScript(error="signed_out"), AppSignedOut),
        (TokenScript(error="refresh_failed"), AppRefreshFailed),
        (TokenScript(error="keyring_locked"), AppKeyringLocked),
        (TokenScript(granted_scopes=[]), AppScopeNotGranted),
        (TokenScript(error="internal"), AgentRemoteError),
    ],
)
def test_remote_errors_are_typed(reference_agent: AgentThread, token: TokenScript, error: type[AgentError]) -> None:
    reference_agent.set_script(Script(token=token))

    async def go() -> None:
        async with AgentClient() as client:
            await client.token([WM])

    with pytest.raises(error) as caught:
        run(go())
    assert isinstance(caught.value, AgentError)
    assert caught.value.code is not None and -32700 <= caught.value.code <= -32000


def test_a_bad_question_is_refused_before_anything_is_sent(reference_agent: AgentThread) -> None:
    async def go() -> None:
        async with AgentClient() as client:
            await ask(client, fingerprint=FP.upper())

    with pytest.raises(protocol.InvalidParams):
        run(go())
    assert reference_agent.requests_of("approval/request") == []


# --------------------------------------------------------------------------------------------------
# Trust: the client checks before it sends anything


_OTHER_USER_LISTENER = textwrap.dedent(
    """
    import json, os, socket, sys
    s = socket.socket(socket.AF_UNIX)
    s.bind(sys.argv[1])                          # root may create it in our 0700 folder ...
    os.setgroups([]); os.setgid({uid}); os.setuid({uid})
    s.listen()                                   # ... but the kernel reports the listener's uid from here
    print("ready", flush=True)
    conn, _ = s.accept()
    conn.settimeout(5)
    received = b""
    try:
        while chunk := conn.recv(65536):
            received += chunk
    except OSError:
        pass
    print(json.dumps({{"received": len(received)}}), flush=True)
    """
).format(uid=NOBODY)


@needs_root
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the probe relies on Linux SO_PEERCRED")
def test_a_listener_of_another_user_is_told_nothing(agent_socket: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _OTHER_USER_LISTENER, agent_socket], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        with pytest.raises(paths.UntrustedPeer, match="another user"):
            run(AgentClient().token([WM]))
        out = json.loads(proc.stdout.readline())
    finally:
        proc.kill()
        proc.wait()
    assert out == {"received": 0}


def _make_untrusted(folder: Path, case: str) -> None:
    if case == "other-owner":
        os.chown(folder, NOBODY, NOBODY)
    elif case == "mode-0755":
        os.chmod(folder, 0o755)


@pytest.mark.parametrize("case", [pytest.param("other-owner", marks=needs_root), "mode-0755", "symlink"])
def test_the_client_refuses_an_untrusted_folder(
    reference_agent: AgentThread, agent_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    if case == "symlink":
        link = tmp_path / "link"
        link.symlink_to(agent_folder)
        monkeypatch.setenv("SEARCHDESK_AGENT_SOCKET", str(link / "agent.sock"))
    else:
        _make_untrusted(agent_folder, case)
    try:
        with pytest.raises(paths.UntrustedFolder) as caught:
            run(AgentClient().hello())
    finally:
        os.chown(agent_folder, os.geteuid(), os.getegid())
        os.chmod(agent_folder, 0o700)
    assert "SearchDesk will not use it" in str(caught.value)
    assert reference_agent.agent is not None and reference_agent.agent.connections_accepted == 0
