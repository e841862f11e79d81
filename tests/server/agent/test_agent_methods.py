"""The method table (`protocol.METHODS`) is what every part keys on: this suite, the server's client,
the desktop app's listener (tests/desktop/agent_socket/test_listener_methods.py) and every listener it runs against.

A method added to the table and not to one of them fails here: the suite below has no call for it,
the client none to make, or a listener does not serve it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from searchdesk_server.agent import protocol
from searchdesk_server.agent.client import AgentClient
from tests.agentref import ListenerHarness
from tests.agentref.testing import run
from tests.agentref.wire import Raw

WM = "https://www.googleapis.com/auth/webmasters"
SITE = "https://example.com/"
FP = protocol.fingerprint("delete_site", [SITE])


def _question() -> protocol.ApprovalRequest:
    return protocol.ApprovalRequest(
        request_id="req-methods",
        tool="delete_site",
        what="This will remove the property from your Search Console.",
        consequence="About 16 months of performance data go with it; re-adding starts empty.",
        values=(protocol.Value(label="Property", value=SITE),),
        fingerprint=FP,
        client=protocol.ClientInfo(name="Claude Desktop", version="1.0"),
        wait_s=0,
    )


#: One call of each method through the server's client, as the server makes it.
CALLS: dict[str, Callable[[AgentClient], Awaitable[object]]] = {
    protocol.HELLO: lambda client: client.hello(),
    protocol.TOKEN: lambda client: client.token([WM]),
    protocol.APPROVAL_REQUEST: lambda client: client.answer(_question()),
    protocol.APPROVAL_STATUS: lambda client: client.status(FP),
    protocol.APPROVAL_CANCEL: lambda client: client.approval_cancel("req-methods"),
    protocol.ACCOUNTS_LIST: lambda client: client.accounts(),
}


def test_the_table_names_a_message_for_every_params_and_result() -> None:
    for name, spec in protocol.METHODS.items():
        assert spec.name == name
        assert issubclass(spec.params_type, protocol.Message) and spec.params_type.WHERE == "params"
        assert issubclass(spec.result_type, protocol.Message) and spec.result_type.WHERE == "result"
        assert spec.feature is None or spec.feature in protocol.FEATURES
        assert not set(spec.errors) & set(protocol.ANY_METHOD_ERRORS)  # each code said once


def test_the_suite_has_a_call_for_every_method() -> None:
    assert set(CALLS) == set(protocol.METHODS)


@pytest.mark.parametrize("method", sorted(protocol.METHODS))
def test_every_method_is_served_through_the_client(listener: ListenerHarness, agent_socket: str, method: str) -> None:
    """The client sends the method's params message and accepts the listener's answer as its result
    message; the same params sent raw are answered with exactly that message's fields."""
    spec = protocol.METHODS[method]

    async def go() -> dict[str, Any]:
        async with AgentClient() as client:
            assert (await client.app_hello()).offers(method)
            await CALLS[method](client)
        sent = listener.wait_for_requests(method, 1)[-1].params
        assert spec.params_type.from_json(sent).to_json() == sent  # what the client sent is the params message
        async with await Raw.open(agent_socket) as raw:
            return await raw.call(method, sent)

    answer = run(go())
    assert "result" in answer, answer
    result = spec.result_type.from_json(answer["result"])
    assert result.to_json() == answer["result"]
