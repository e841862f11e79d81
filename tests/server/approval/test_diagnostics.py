"""MCP_DIAGNOSTICS=true registers describe_connection; it says which path a guarded call takes now."""

from __future__ import annotations

import pytest

from searchdesk_server import catalogue
from tests.agentref.harness import AgentThread
from tests.fakegoogle import FakeGoogle
from tests.server.stdio import MODES, text_of

from .conftest import Elicitor, serve

pytestmark = pytest.mark.anyio
DIAG = {"MCP_DIAGNOSTICS": "true"}


@pytest.mark.parametrize("mode", MODES)
async def test_paths_as_described(fake: FakeGoogle, agent_socket: str, mode: str) -> None:
    async with serve(fake, agent_socket, mode, Elicitor(), extra=DIAG) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names[-1] == "describe_connection" and len(names) == len(catalogue.TOOLS) + 1
        result = await client.call_tool("describe_connection", {})
        data = result.structured_content
        assert data["protocol_version"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        assert data["elicitation_declared"] is True
        assert data["guarded_path"].startswith("the client's own dialog")
        assert data["credential"] == "service_account"
        assert "PRIVATE KEY" not in text_of(result)
    async with serve(fake, agent_socket, mode, extra=DIAG) as client:
        data = (await client.call_tool("describe_connection", {})).structured_content
        assert data["elicitation_declared"] is False
        assert data["guarded_path"].startswith("the two-call token")


async def test_app_dialog_path_when_the_app_runs(
    fake: FakeGoogle, agent_socket: str, reference_agent: AgentThread
) -> None:
    async with serve(fake, agent_socket, "legacy", Elicitor(), extra={**DIAG, "ELICITATION": "false"}) as client:
        data = (await client.call_tool("describe_connection", {})).structured_content
    assert data["desktop_app"].startswith("running")
    assert data["guarded_path"] == "the SearchDesk app's dialog (ELICITATION=false)"


async def test_not_registered_without_the_switch(fake: FakeGoogle, agent_socket: str) -> None:
    async with serve(fake, agent_socket, "legacy") as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert "describe_connection" not in names
