"""Adding an agent method touches the table and the listeners' handlers, and nothing else by hand.

A method made up for these tests (`test/echo`, its two messages declared here) is put in
`protocol.METHODS`. The server's client calls it with no code of its own (`AgentClient.request` is
typed by the method's entry, and mypy holds callers to it); a listener that has no handler for it does
not load (the reference agent here; the app's listener in
tests/desktop/agent_socket/test_listener_methods.py); one that handles it serves it over a real socket.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import pytest

from searchdesk_server.agent import protocol
from searchdesk_server.agent.client import AgentClient
from searchdesk_server.agent.wire import Message, message
from tests.agentref import ReferenceAgent
from tests.agentref.harness import REPO_ROOT
from tests.agentref.testing import run, without_a_handler


@message
class EchoParams(Message):
    """The made-up method's params."""

    said: protocol.Name


@message
class Echo(Message):
    """The made-up method's result."""

    WHERE = "result"

    said: protocol.Name


ECHO_METHOD = protocol.MethodSpec(name="test/echo", params=EchoParams, result=Echo)


class EchoAgent(ReferenceAgent):
    """The reference agent with a handler for the made-up method: the only code a listener adds."""

    HANDLERS: ClassVar = MappingProxyType({**ReferenceAgent.HANDLERS, ECHO_METHOD.name: "_echo"})

    def _echo(self, params: EchoParams) -> dict[str, Any]:
        return Echo(said=params.said).to_json()


@pytest.fixture
def table_with_echo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protocol, "METHODS", MappingProxyType({**protocol.METHODS, ECHO_METHOD.name: ECHO_METHOD}))


def test_the_client_calls_a_new_method_with_no_code_of_its_own(table_with_echo: None, agent_socket: str) -> None:
    async def go() -> Echo:
        agent = EchoAgent(agent_socket)
        await agent.start()
        try:
            async with AgentClient() as client:
                return await client.request(ECHO_METHOD, EchoParams(said="hello"))
        finally:
            await agent.stop()

    answer = run(go())
    assert isinstance(answer, Echo) and answer.said == "hello"


def test_a_method_not_in_the_table_is_not_served(agent_socket: str) -> None:
    """The same handler, the method left out of the table: the listener answers METHOD_NOT_FOUND."""

    async def go() -> None:
        agent = EchoAgent(agent_socket)
        await agent.start()
        try:
            async with AgentClient() as client:
                await client.request(ECHO_METHOD, EchoParams(said="hello"))
        finally:
            await agent.stop()

    with pytest.raises(protocol.AgentError) as refused:
        run(go())
    assert refused.value.code == protocol.ErrorCode.METHOD_NOT_FOUND


def test_the_reference_agent_does_not_load_without_a_handler_for_every_method() -> None:
    loaded = without_a_handler("tests.agentref.agent")
    assert loaded.returncode != 0
    assert "LookupError: The reference agent has no handler for ['test/echo']" in loaded.stderr


def test_the_clients_call_is_typed_by_the_methods_entry(tmp_path: Path, pytestconfig: pytest.Config) -> None:
    """mypy --strict (the project's settings) names the result class of the method called, and refuses
    params of another method: a caller writes no annotation of its own, and cannot send the wrong message."""
    caller = tmp_path / "caller.py"
    caller.write_text(
        textwrap.dedent("""
            from searchdesk_server.agent import protocol
            from searchdesk_server.agent.client import AgentClient


            async def caller(client: AgentClient) -> None:
                reveal_type(await client.request(protocol.TOKEN_METHOD, protocol.TokenParams(scopes=("x",))))
                reveal_type(await client.request(protocol.ACCOUNTS_LIST_METHOD, protocol.AccountsParams()))
                await client.request(protocol.TOKEN_METHOD, protocol.HelloParams())
        """)
    )
    cached = getattr(pytestconfig, "cache", None)  # absent under -p no:cacheprovider
    cache = cached.mkdir("agent-method-types") if cached else tmp_path / "cache"
    # Its own interpreter: mypy raises the recursion limit of the process it runs in, for every later test.
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "--cache-dir", str(cache), str(caller)],
        cwd=REPO_ROOT,
        env={**os.environ, "MYPYPATH": str(REPO_ROOT / "server")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    out, status = checked.stdout, checked.returncode
    lines = out.splitlines()
    assert status == 1, out
    assert 'Revealed type is "searchdesk_server.agent.messages.Token"' in lines[0], out
    assert 'Revealed type is "searchdesk_server.agent.messages.AccountList"' in lines[1], out
    assert "caller.py:9: error" in lines[2], out  # HelloParams is not credentials/token's params
    assert "Found 1 error" in out
