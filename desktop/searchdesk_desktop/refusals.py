"""The app's own errors, as a server on the agent socket is told them.

Each error class names its ErrorCode (`agent/protocol.py`), so the listener answers with the code the
class says, its text (written for a person) and its `data`, never by matching class names; and the
window learns what went wrong from the same code (`AgentListener.token_error`).
"""

from __future__ import annotations

from typing import ClassVar

from searchdesk_server.agent.protocol import ErrorCode


class Refusal(Exception):
    """Base of every app error that can answer a request on the agent socket."""

    code: ClassVar[ErrorCode] = ErrorCode.INTERNAL_ERROR
    #: Sent along with the error (JSON-RPC's `data`), when there is something a server can act on.
    data: object = None


class SignedOut(Refusal):
    code = ErrorCode.SIGNED_OUT

    def __init__(self) -> None:
        super().__init__(
            "The SearchDesk app has no Google account to use yet: ask the person at this computer to sign in "
            "with Google in SearchDesk's window (step 1), then try again."
        )
