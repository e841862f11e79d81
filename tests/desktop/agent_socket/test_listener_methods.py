"""The app's listener serves exactly the methods of `protocol.METHODS`: one handler each, and no other.

Its dispatch finds a handler by the method's name in `AgentListener.HANDLERS` (filled by `@_handles`);
a method added to the table without a handler, or a handler for a method the table does not name,
stops the listener from loading (`protocol.check_handlers`) and fails here before any socket is opened
(the conformance suite then serves each one over the socket).
"""

from __future__ import annotations

import inspect

from searchdesk_desktop.agent_socket.listener import AgentListener
from searchdesk_server.agent import protocol
from tests.agentref.testing import without_a_handler


def test_a_handler_for_every_method_and_no_other() -> None:
    assert set(AgentListener.HANDLERS) == set(protocol.METHODS)


def test_each_handler_takes_its_methods_params_message() -> None:
    for method, name in AgentListener.HANDLERS.items():
        handler = getattr(AgentListener, name)
        params = list(inspect.signature(handler).parameters.values())[-1]
        assert params.annotation == protocol.METHODS[method].params.__name__, (method, name)


def test_the_listener_does_not_load_without_a_handler_for_every_method() -> None:
    """A method added to `protocol.METHODS` and not handled here stops the app's listener on import."""
    loaded = without_a_handler("searchdesk_desktop.agent_socket.listener")
    assert loaded.returncode != 0
    assert "LookupError: The app's listener has no handler for ['test/echo']" in loaded.stderr
