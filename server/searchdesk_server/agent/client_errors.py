"""What the server's side of the agent socket raises: nobody there, no answer in time, an answer outside
the protocol, or the app's own refusal, each a type of its own.

The app's refusals are named from this side of the socket (App...): the desktop app's own exceptions
are named for what happened inside it, and both map to the same ErrorCode. `client` re-exports every
name here, so a caller imports the client alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from . import protocol
from .framing import AgentError, ErrorCode, RpcError

_MAX_REMOTE_MESSAGE: Final = 300


class AgentUnavailable(AgentError):
    """Nobody is there: no socket (or folder) at the path, or nothing listening on it."""


class AgentNotAnswering(AgentError):
    """Something listens at the path but would not talk: it did not accept in time, closed the
    connection before answering hello, or failed in another way. The app may be running."""


class AgentConnectionLost(AgentUnavailable):
    """The connection dropped during a call. `sent`: the request may have reached the app."""

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent


class AgentTimeout(AgentError):
    """The app did not answer in time."""


class AgentProtocolError(AgentError):
    """The listener said something outside the agent protocol; nothing it said is used."""


# What the app answered.


class AgentRemoteError(AgentError):
    """The app answered with a JSON-RPC error; `code` is an ErrorCode (or another listener's code)."""

    code: int

    def __init__(self, message: str, *, code: int, data: object = None) -> None:
        super().__init__(message, code=code)
        self.data = data


class AppSignedOut(AgentRemoteError):
    """No Google account is signed in to the app."""


class AppScopeNotGranted(AgentRemoteError):
    """The sign-in lacks a scope the call needs."""


class AppRefreshFailed(AgentRemoteError):
    """Google refused to refresh the app's sign-in (revoked or expired)."""


class AppKeyringLocked(AgentRemoteError):
    """The OS keyring is locked or unusable."""


class AppUnknownAccount(AgentRemoteError):
    """The named account is not one Claude may use in the app (removed, or withheld in Settings)."""


class AppProtocolMismatch(AgentRemoteError):
    """The app speaks another major version of the agent protocol."""


class AppBusy(AgentRemoteError):
    """The app has too many connections or requests in flight."""


class AppQueueFull(AgentRemoteError):
    """Too many approvals are already waiting for the person."""


class ApprovalCancelled(AgentRemoteError):
    """The question was closed by approval/cancel before anybody answered."""


class AppRunsDemo(AgentRemoteError):
    """The app runs the demo and refuses a real server's questions and token requests."""


_REMOTE_ERRORS: Final[Mapping[int, type[AgentRemoteError]]] = {
    ErrorCode.SIGNED_OUT: AppSignedOut,
    ErrorCode.SCOPE_NOT_GRANTED: AppScopeNotGranted,
    ErrorCode.REFRESH_FAILED: AppRefreshFailed,
    ErrorCode.KEYRING_LOCKED: AppKeyringLocked,
    ErrorCode.UNKNOWN_ACCOUNT: AppUnknownAccount,
    ErrorCode.PROTOCOL_MISMATCH: AppProtocolMismatch,
    ErrorCode.BUSY: AppBusy,
    ErrorCode.QUEUE_FULL: AppQueueFull,
    ErrorCode.CANCELLED: ApprovalCancelled,
    ErrorCode.DEMO_APP: AppRunsDemo,
}


def remote_error(error: RpcError) -> AgentRemoteError:
    """The typed exception for a JSON-RPC error from the app, its message kept only if short and plain."""
    message = error.message
    if not message or len(message) > _MAX_REMOTE_MESSAGE or not protocol.is_plain_text(message):
        try:
            message = protocol.ERROR_MEANINGS[ErrorCode(error.code)]
        except ValueError:
            message = f"The SearchDesk app answered with error {error.code}."
    return _REMOTE_ERRORS.get(error.code, AgentRemoteError)(message, code=error.code, data=error.data)
