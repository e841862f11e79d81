"""The reference agent's own limits and its two ways of running (thread and subprocess)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from searchdesk_server.agent import protocol
from searchdesk_server.agent.client import AgentClient, AppQueueFull
from searchdesk_server.agent.protocol import ErrorCode
from tests.agentref import AgentProcess, AgentThread, ApprovalScript, Script
from tests.agentref.harness import REPO_ROOT
from tests.agentref.testing import request_approval, run
from tests.agentref.wire import Raw, error_code

SITE = "https://example.com/"


def question(request_id: str, site: str = SITE, wait_s: float = 0) -> dict[str, object]:
    return {
        "request_id": request_id,
        "tool": "delete_site",
        "what": "This will remove the property.",
        "consequence": "Its history goes with it.",
        "values": [{"label": "Property", "value": site}],
        "fingerprint": protocol.fingerprint("delete_site", [site]),
        "client": {"name": "test"},
        "wait_s": wait_s,
    }


def test_connections_beyond_the_limit_are_told_busy(agent_socket: str) -> None:
    with AgentThread(max_connections=3) as agent:
        agent.start(agent_socket)

        async def go() -> None:
            held = [await Raw.open(agent_socket) for _ in range(3)]
            for raw in held:
                assert "result" in await raw.call("hello", {"protocol": 1})
            extra = await Raw.open(agent_socket)
            messages = await extra.read_until_eof()
            assert [error_code(m) for m in messages] == [ErrorCode.BUSY]
            await held[0].close()
            await asyncio.sleep(0.05)  # let the listener notice the close
            async with await Raw.open(agent_socket) as again:
                assert "result" in await again.call("hello", {"protocol": 1})
            for raw in held[1:]:
                await raw.close()

        run(go())


def test_pending_questions_are_bounded(agent_socket: str) -> None:
    with AgentThread(max_pending=2) as agent:
        agent.start(agent_socket)

        async def go() -> None:
            async with await Raw.open(agent_socket) as raw:
                for i in range(2):
                    assert (await raw.call("approval/request", question(f"r{i}", f"https://{i}.example/")))["result"][
                        "decision"
                    ] == "pending"
                third = await raw.call("approval/request", question("r3", "https://3.example/"))
                assert error_code(third) == ErrorCode.QUEUE_FULL
                # the same question again joins its open dialog instead of taking a new place
                again = await raw.call("approval/request", question("r0b", "https://0.example/"))
                assert again["result"]["decision"] == "pending"
            async with AgentClient() as client:
                with pytest.raises(AppQueueFull):
                    await request_approval(
                        client,
                        request_id="r4",
                        tool="delete_site",
                        what="x",
                        consequence="y",
                        values=[],
                        fingerprint=protocol.fingerprint("delete_site", ["https://4.example/"]),
                        client=protocol.ClientInfo("t"),
                        wait_s=0,
                    )

        run(go())


def test_requests_in_flight_on_one_connection_are_bounded(agent_socket: str) -> None:
    with AgentThread(max_in_flight=2) as agent:
        agent.start(agent_socket)

        async def go() -> None:
            async with await Raw.open(agent_socket) as raw:
                for i in range(3):
                    params = question(f"r{i}", f"https://{i}.example/", wait_s=30)
                    await raw.send_obj({"jsonrpc": "2.0", "id": i, "method": "approval/request", "params": params})
                answer = await raw.read()
                assert answer is not None and answer["id"] == 2 and error_code(answer) == ErrorCode.BUSY

        run(go())


def test_an_unfinished_line_times_out(agent_socket: str) -> None:
    with AgentThread(line_timeout=0.2) as agent:
        agent.start(agent_socket)

        async def go() -> None:
            async with await Raw.open(agent_socket) as raw:
                await raw.send(b'{"jsonrpc": "2.0", "id": 1, "meth')
                messages = await raw.read_until_eof()
                assert [error_code(m) for m in messages] == [ErrorCode.INVALID_REQUEST]

        run(go())


def test_answers_are_kept_only_keep_s(agent_socket: str) -> None:
    with AgentThread() as agent:
        agent.start(agent_socket, Script(keep_s=0.1))

        async def go() -> None:
            async with AgentClient() as client:
                fp = protocol.fingerprint("delete_site", [SITE])
                await request_approval(
                    client,
                    request_id="r",
                    tool="delete_site",
                    what="x",
                    consequence="y",
                    values=[],
                    fingerprint=fp,
                    client=protocol.ClientInfo("t"),
                    wait_s=0,
                )
                assert await client.approval_status(fp) == "pending"
                await asyncio.sleep(0.2)
                assert await client.approval_status(fp) == "none"  # the dialog closed unanswered

        run(go())


def test_after_a_deny_a_new_request_asks_again(agent_socket: str) -> None:
    with AgentThread() as agent:
        agent.start(agent_socket, Script(approval=ApprovalScript("deny")))

        async def go() -> None:
            async with await Raw.open(agent_socket) as raw:
                params = question("r1", wait_s=5)
                assert (await raw.call("approval/request", params))["result"]["decision"] == "deny"
                assert (await raw.call("approval/status", {"fingerprint": params["fingerprint"]}))["result"] == {
                    "decision": "deny"
                }
                agent.set_script(Script(approval=ApprovalScript("approve")))
                params = question("r2", wait_s=5)
                assert (await raw.call("approval/request", params))["result"]["decision"] == "approve"

        run(go())


def test_an_unspent_approve_is_handed_to_the_next_identical_request(agent_socket: str) -> None:
    with AgentThread() as agent:
        agent.start(agent_socket)

        async def go() -> None:
            async with await Raw.open(agent_socket) as raw:
                params = question("r1")
                assert (await raw.call("approval/request", params))["result"]["decision"] == "pending"
                assert await asyncio.to_thread(agent.answer, params["fingerprint"], "approve")
                assert (await raw.call("approval/request", question("r2")))["result"]["decision"] == "approve"
                assert (await raw.call("approval/status", {"fingerprint": params["fingerprint"]}))["result"] == {
                    "decision": "none"
                }

        run(go())


def test_a_request_id_cannot_be_reused_for_another_question(agent_socket: str) -> None:
    with AgentThread() as agent:
        agent.start(agent_socket)

        async def go() -> None:
            async with await Raw.open(agent_socket) as raw:
                assert "result" in await raw.call("approval/request", question("same"))
                other = await raw.call("approval/request", question("same", "https://other.example/"))
                assert error_code(other) == ErrorCode.INVALID_PARAMS

        run(go())


# --------------------------------------------------------------------------------------------------
# As a subprocess


def test_the_subprocess_reports_requests_and_takes_answers(agent_socket: str) -> None:
    with AgentProcess() as agent:
        agent.start(agent_socket, Script(approval=ApprovalScript("pending")))

        async def go() -> str:
            async with AgentClient() as client:
                fp = protocol.fingerprint("delete_site", [SITE])
                waiting = asyncio.create_task(
                    request_approval(
                        client,
                        request_id="r",
                        tool="delete_site",
                        what="x",
                        consequence="y",
                        values=[],
                        fingerprint=fp,
                        client=protocol.ClientInfo("t"),
                        wait_s=30,
                    )
                )
                await asyncio.to_thread(agent.wait_for_requests, "approval/request")
                assert await asyncio.to_thread(agent.answer, fp, "approve")
                return await waiting

        assert run(go()) == "approve"
        kinds = [e["event"] for e in agent.events()]
        assert kinds[0] == "ready" and "dialog" in kinds and "answer" in kinds


def test_the_subprocess_refuses_an_untrusted_folder_with_exit_2(agent_folder: Path) -> None:
    os.chmod(agent_folder, 0o755)
    proc = subprocess.run(
        [sys.executable, "-m", "tests.agentref", "--socket", str(agent_folder / "agent.sock")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=20,
    )
    assert proc.returncode == 2
    event = json.loads(proc.stdout.splitlines()[0])
    assert event["event"] == "failed" and event["kind"] == "UntrustedFolder"


def test_the_subprocess_stops_on_sigterm_and_removes_its_socket(agent_socket: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.agentref", "--socket", agent_socket, "--script", '{"keep_s": 60}'],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )
    try:
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["event"] == "ready"
        assert os.path.exists(agent_socket)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        proc.kill()
        proc.wait()
    assert not os.path.exists(agent_socket)


def test_the_fixture_agent_serves_the_client(reference_agent: AgentThread) -> None:
    async def go() -> str:
        async with AgentClient() as client:
            return (await client.token(["https://www.googleapis.com/auth/indexing"])).access_token

    assert run(go()) == "ya29.reference-token"
    assert reference_agent.wait_for_requests("credentials/token")[0].params["force_refresh"] is False
