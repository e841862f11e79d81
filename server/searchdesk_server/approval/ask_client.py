"""Step 1 of asking a person: the client's own dialog (MCP elicitation), when this request declared the
form capability — `elicitation/create` on 2025-11-25, `input_required` with a sealed `requestState` on
2026-07-28 (request_state.py).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..runtime import Call
from .outcomes import Answer, NotAsked, Why
from .question import Question

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    Context = ServerRequestContext[Any]

log = logging.getLogger("searchdesk_server.approval")

INPUT_KEY = "searchdesk_confirm"
CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "confirm": {
            "type": "boolean",
            "title": "Approve",
            "description": "Tick to approve; leave unticked to refuse.",
            "default": False,
        }
    },
    "required": ["confirm"],
}
_warned: set[tuple[str, str]] = set()


def once(client: str, reason: str) -> None:
    if (client, reason) not in _warned:
        _warned.add((client, reason))
        log.warning("the approval question did not go through %s: %s", client or "an unnamed client", reason)


async def elicit(
    call: Call, ctx: Context, params: types.CallToolRequestParams, question: Question
) -> Answer | NotAsked | types.InputRequiredResult:
    """The person's answer in the client's dialog, NotAsked when it was not shown, or an
    InputRequiredResult to send (2026-07-28)."""
    if ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        states = call.runtime.states
        response = (params.input_responses or {}).get(INPUT_KEY)
        if response is None or not states.open(
            params.request_state, call.spec.name, question.fingerprint, question.digest
        ):
            # No answer yet, or a state that does not open (expired, forged, from before a restart,
            # minted for another target or for a question that read differently): ask, never act.
            request = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=question.text, requested_schema=CONFIRM_SCHEMA)
            )
            return types.InputRequiredResult(
                input_requests={INPUT_KEY: request},
                request_state=states.seal(call.spec.name, question.fingerprint, question.digest),
            )
        return _interpret(response)
    try:
        result = await ctx.session.elicit_form(question.text, CONFIRM_SCHEMA, related_request_id=ctx.request_id)
    except anyio.get_cancelled_exc_class():
        raise
    except Exception as exc:
        log.info("elicitation failed: %s", type(exc).__name__)
        return NotAsked(Why.CLIENT_DID_NOT_SHOW)
    return _interpret(result)


def _interpret(result: object) -> Answer | NotAsked:
    if not isinstance(result, types.ElicitResult):
        return NotAsked(Why.CLIENT_DID_NOT_SHOW)
    if result.action == "accept":
        return Answer.APPROVE if (result.content or {}).get("confirm") is True else Answer.UNCLEAR
    if result.action == "decline":
        return Answer.DECLINE
    return NotAsked(Why.CLIENT_DID_NOT_SHOW)
