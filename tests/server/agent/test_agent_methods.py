"""The method table (`protocol.METHODS`) is what every part keys on: this suite, the server's client,
the desktop app's listener (tests/desktop/agent_socket/test_listener_methods.py) and every listener it runs against.

Every method is called through the client's one typed call (`AgentClient.request`), which needs no code
of its own per method. A method added to the table and not to one of them fails here: the suite has no
params to send for it, or a listener does not serve it (test_agent_method_added.py shows both).
"""

from __future__ import annotations

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


#: The params of one call of each method, as the server sends them.
PARAMS: dict[str, protocol.Message] = {
    protocol.HELLO: protocol.HelloParams(app="searchdesk-server", version="1.0"),
    protocol.TOKEN: protocol.TokenParams(scopes=(WM,)),
    protocol.APPROVAL_REQUEST: _question(),
    protocol.APPROVAL_STATUS: protocol.StatusParams(fingerprint=FP),
    protocol.APPROVAL_CANCEL: protocol.CancelParams(request_id="req-methods"),
    protocol.ACCOUNTS_LIST: protocol.AccountsParams(),
}


def test_the_table_names_a_message_for_every_params_and_result() -> None:
    for name, spec in protocol.METHODS.items():
        assert spec.name == name
        assert issubclass(spec.params, protocol.Message) and spec.params.WHERE == "params"
        assert issubclass(spec.result, protocol.Message) and spec.result.WHERE == "result"
        assert spec.feature is None or spec.feature in protocol.FEATURES
        assert not set(spec.errors) & set(protocol.ANY_METHOD_ERRORS)  # each code said once


def test_the_suite_has_params_for_every_method() -> None:
    assert set(PARAMS) == set(protocol.METHODS)
    assert all(isinstance(PARAMS[name], spec.params) for name, spec in protocol.METHODS.items())


@pytest.mark.parametrize("method", sorted(protocol.METHODS))
def test_every_method_is_served_through_the_client(listener: ListenerHarness, agent_socket: str, method: str) -> None:
    """The client sends the method's params message and returns the listener's answer as its result
    message; the same params sent raw are answered with exactly that message's fields."""
    spec = protocol.METHODS[method]

    async def go() -> dict[str, Any]:
        async with AgentClient() as client:
            assert spec.offered_by(await client.app_hello())
            assert isinstance(await client.request(spec, PARAMS[method]), spec.result)
        sent = listener.wait_for_requests(method, 1)[-1].params
        assert sent == PARAMS[method].to_json()  # what the client sent is the params message
        async with await Raw.open(agent_socket) as raw:
            return await raw.call(method, sent)

    answer = run(go())
    assert "result" in answer, answer
    result = spec.result.from_json(answer["result"])
    assert result.to_json() == answer["result"]
