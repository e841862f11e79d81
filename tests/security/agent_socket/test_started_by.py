"""Who started this server, told to the app (the additive `client` of `hello`): the app's "Claude Desktop
started SearchDesk and it answered" is true only from this. Real stdio servers and the app's real listener
(`DesktopListener`) or the reference agent; both MCP revisions. Sent in the background after the client
said who it is, so `tools/list` never waits for the app; a server the app did not configure says nothing."""

from __future__ import annotations

import time
from pathlib import Path

import mcp_types as types
import pytest

from tests.agentref import AgentThread, Script
from tests.desktop.agent_harness import DesktopListener
from tests.fakegoogle import FakeGoogle
from tests.security.conftest import Witness, serve

pytestmark = pytest.mark.anyio

CLAUDE = types.Implementation(name="claude-ai", version="0.14.10")


def hellos_with_client(agent: AgentThread | DesktopListener, timeout: float = 10.0) -> list[dict[str, str]]:
    deadline = time.monotonic() + timeout
    while True:
        found = [r.params["client"] for r in agent.requests() if r.method == "hello" and "client" in r.params]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize("kind", ["desktop", "reference"])
async def test_a_server_the_app_configured_says_who_started_it(
    fake: FakeGoogle, witness: Witness, folder: Path, mode: str, kind: str
) -> None:
    agent: AgentThread | DesktopListener = DesktopListener() if kind == "desktop" else AgentThread()
    agent.start(str(folder / "agent.sock"), Script())
    try:
        env = {"SEARCHDESK_ASK_IN_APP": "true"}
        async with serve(
            fake, witness, folder / "home", env, socket=str(folder / "agent.sock"), mode=mode, client_info=CLAUDE
        ) as served:
            listed = await served.client.list_tools()
            assert listed.tools  # answered whether or not the app is there
            said = hellos_with_client(agent)
    finally:
        agent.stop()
    assert said and said[0] == {"name": "claude-ai", "version": "0.14.10"}, said


async def test_tools_list_does_not_wait_for_an_app_that_never_answers(
    fake: FakeGoogle, witness: Witness, folder: Path
) -> None:
    import socket

    # Something listens at the socket and never answers: the announcement waits there, tools/list does not.
    mute = socket.socket(socket.AF_UNIX)
    mute.bind(str(folder / "agent.sock"))
    mute.listen(8)
    try:
        async with serve(
            fake,
            witness,
            folder / "home",
            {"SEARCHDESK_ASK_IN_APP": "true"},
            socket=str(folder / "agent.sock"),
            client_info=CLAUDE,
        ) as served:
            started = time.monotonic()
            first = await served.client.list_tools()
            second = await served.client.list_tools()
            took = time.monotonic() - started
    finally:
        mute.close()
    assert first.tools and second.tools
    assert took < 3, took  # the app's own time-outs are longer: it was not waited for


async def test_a_server_given_its_own_credentials_says_nothing(
    fake: FakeGoogle, witness: Witness, folder: Path
) -> None:
    agent = DesktopListener()
    agent.start(str(folder / "agent.sock"), Script())
    try:
        # A key file, no SEARCHDESK_ASK_IN_APP: a scheduled job's server, not an entry the app wrote.
        env = {"GSC_SERVICE_ACCOUNT_KEY_FILE": str(fake.service_account_file(folder / "key.json"))}
        async with serve(
            fake, witness, folder / "home", env, socket=str(folder / "agent.sock"), client_info=CLAUDE
        ) as served:
            await served.client.list_tools()
            await served.client.call_tool("list_sites", {})
            said = hellos_with_client(agent, timeout=1.0)
    finally:
        agent.stop()
    assert said == []
