"""What each step of asking a person comes to, as types: who said yes, what a person said in a dialog
that was shown, why a step reached nobody; and the results every step gives when nobody said yes.

Below the steps (`ask_client`, `ask_app`) and the chain that runs them, so each step returns these
and none imports another.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import mcp_types as types

from ..journal.store import Approval
from ..result import error_result
from .question import Question


class How(Enum):
    """Who said yes."""

    CLIENT = "the client's dialog"
    APP = "the SearchDesk app"
    TOKEN = "a confirm_token"  # noqa: S105 (nobody: the call was made twice)


class Answer(Enum):
    """What a person said in a dialog that was shown."""

    APPROVE = "approve"
    DECLINE = "decline"
    UNCLEAR = "unclear"  # the client's dialog was accepted without a ticked box: not a yes


class Why(Enum):
    """Why a step reached nobody; the token text gives these words."""

    ELICITATION_OFF = "this server was started with ELICITATION=false"
    TOO_LONG_FOR_CLIENT = "the question is too long for this client's own dialog"
    NO_CLIENT_DIALOG = "this client cannot show a confirmation dialog (it did not declare MCP elicitation)"
    CLIENT_DID_NOT_SHOW = "the client did not show its dialog (it answered cancel or failed)"
    APP_NOT_RUNNING = "the SearchDesk app is not running"
    APP_CLOSED_EARLY = "the SearchDesk app closed the connection before the question was sent"


@dataclass(frozen=True)
class NotAsked:
    """Nobody was asked at this step, because …"""

    because: Why


@dataclass(frozen=True)
class Approved:
    """A person's yes to exactly this question (or a valid token standing in for nobody), and how the
    journal records it: the app says itself where its yes was given (its dialog or its notification)."""

    question: Question
    by: How
    recorded: Approval


#: How a yes in the client's dialog and a confirm_token are recorded; the app's yes says where it was given
#: (`ask_app`), and an older app that does not is "in the app".
RECORDED: dict[How, Approval] = {How.CLIENT: Approval.CLIENT, How.TOKEN: Approval.TOKEN, How.APP: Approval.APP}

#: What a guarded call sends back when it does not act: a refusal or a question still open.
Reply = types.CallToolResult | types.InputRequiredResult


def declined(tool: str) -> types.CallToolResult:
    return error_result(f"The user declined; {tool} did nothing.", decision="declined")


def not_a_clear_yes(tool: str) -> types.CallToolResult:
    return error_result(f"The answer was not a clear yes; {tool} did nothing.", decision="declined")


def refused(tool: str, why: str) -> types.CallToolResult:
    return error_result(f"{tool} did nothing: {why}", decision="refused")
