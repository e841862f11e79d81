"""Asking a person before the four irreversible tools act.

The chain stops at the first step that reaches a person:
1. the client's own dialog (MCP elicitation), when this request declared the form capability
   and ELICITATION is true — `elicitation/create` on 2025-11-25, `input_required` on 2026-07-28;
2. the SearchDesk app's native dialog over the agent socket, waiting a bounded time;
3. the two-call token, when nobody can be asked.
`guard` returns None only when a person said yes to exactly this call (or the token proves it
was made twice); every other outcome is the result to send back, and nothing happens.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

import anyio
import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..google.errors import GoogleError
from ..result import ToolFailure, error_result
from ..runtime import Call
from . import question as q
from .question import Question

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
PROGRESS_EVERY = 5.0
_warned: set[tuple[str, str]] = set()


async def build_question(call: Call) -> Question:
    name = call.spec.name
    site = call.site()
    if name == "delete_site":
        return q.delete_site(site)
    if name == "delete_sitemap":
        return q.delete_sitemap(site, call.url(call.args["feedpath"], "feedpath"))
    if name == "unverify_site":
        return q.unverify_site(site)
    if name == "update_site_owners":
        from ..tools.verification import fetch_owners, owner_list

        owners = owner_list(call.args["owners"])
        current = await fetch_owners(call, site)
        return q.update_site_owners(site, current, owners, await call.runtime.account())
    raise AssertionError(f"{name} is not a guarded tool")


def declared_form(ctx: Any) -> bool:
    """Did this request's client declare form elicitation? (A bare `elicitation: {}` means form.)"""
    caps = ctx.session.client_capabilities
    el = getattr(caps, "elicitation", None) if caps is not None else None
    if el is None:
        return False
    return el.form is not None or el.url is None


def client_name(ctx: Any) -> tuple[str, str]:
    params = ctx.session.client_params
    info = getattr(params, "client_info", None)
    if info is None:
        return "an unnamed client", ""
    return str(info.name)[:100] or "an unnamed client", str(info.version)[:100]


def _once(client: str, reason: str) -> None:
    if (client, reason) not in _warned:
        _warned.add((client, reason))
        log.warning("the approval question did not go through %s: %s", client, reason)


def declined(tool: str) -> types.CallToolResult:
    return error_result(f"The user declined; {tool} did nothing.", decision="declined")


async def guard(
    call: Call, ctx: Any, params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult | None:
    tool = call.spec.name
    try:
        question = await build_question(call)
    except ToolFailure as exc:
        return error_result(str(exc))
    except GoogleError as exc:
        return error_result(
            f"{tool} did nothing: preparing the question failed. {exc}", from_google=exc.upstream is not None
        )
    fp = question.fingerprint
    rt = call.runtime

    token = call.args.get("confirm_token")
    if token is not None:
        if rt.tokens.redeem(fp, token):
            return None
        return error_result(
            f"That confirm_token is invalid, expired, or issued for different arguments; {tool} did nothing. "
            "A token works once, for 5 minutes, with exactly the arguments it was issued for.",
            decision="refused",
        )

    client, _version = client_name(ctx)
    reasons: list[str] = []
    # 1. The client's own dialog.
    if not call.config.elicitation:
        reasons.append("this server was started with ELICITATION=false")
    elif not declared_form(ctx):
        reasons.append("this client cannot show a confirmation dialog (it did not declare MCP elicitation)")
        _once(client, "no elicitation capability")
    else:
        outcome = await _elicit(call, ctx, params, question)
        if isinstance(outcome, types.InputRequiredResult):
            return outcome
        if outcome == "approve":
            return None
        if outcome == "decline":
            return declined(tool)
        reasons.append("the client did not show its dialog (it answered cancel or failed)")
        _once(client, "elicitation cancelled or failed")

    # 2. The desktop app's dialog.
    answer = await _ask_desktop(call, ctx, question)
    if answer == "approve":
        return None
    if answer == "deny":
        return declined(tool)
    if isinstance(answer, types.CallToolResult):
        return answer
    reasons.append(answer)

    # 3. The two-call token.
    issued = rt.tokens.issue(fp)
    text = (
        f"{tool} did nothing yet. Nobody could be asked to approve it: {'; and '.join(reasons)}.\n\n"
        f"{question.text}\n\n"
        f"To go ahead, call {tool} again within 5 minutes with exactly the same arguments plus "
        f'confirm_token "{issued}". The token proves only that the call was made twice with the same '
        "arguments; it does not mean any person approved it. Ask the user before using it."
    )
    return error_result(text, decision="token", confirm_token=issued, fingerprint=fp)


async def _elicit(call: Call, ctx: Any, params: types.CallToolRequestParams, question: Question) -> Any:
    """'approve' | 'decline' | 'unshown', or an InputRequiredResult to send (2026-07-28)."""
    if ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        states = call.runtime.states
        response = (params.input_responses or {}).get(INPUT_KEY)
        if response is None or not states.open(params.request_state, call.spec.name, question.fingerprint):
            # No answer yet, or a state that does not open (expired, forged, from before a
            # restart, minted for another target): ask again, never act.
            request = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=question.text, requested_schema=CONFIRM_SCHEMA)
            )
            return types.InputRequiredResult(
                input_requests={INPUT_KEY: request},
                request_state=states.seal(call.spec.name, question.fingerprint),
            )
        return _interpret(response)
    try:
        result = await ctx.session.elicit_form(question.text, CONFIRM_SCHEMA, related_request_id=ctx.request_id)
    except anyio.get_cancelled_exc_class():
        raise
    except Exception as exc:
        log.info("elicitation failed: %s", type(exc).__name__)
        return "unshown"
    return _interpret(result)


def _interpret(result: object) -> str:
    if not isinstance(result, types.ElicitResult):
        return "unshown"
    if result.action == "accept":
        return "approve" if (result.content or {}).get("confirm") is True else "decline"
    if result.action == "decline":
        return "decline"
    return "unshown"


async def _ask_desktop(call: Call, ctx: Any, question: Question) -> Any:
    """'approve' | 'deny' | a result to return (pending, app died) | a reason nobody was asked."""
    from ..agent.client import AgentConnectionLost, AgentUnavailable
    from ..agent.protocol import AgentError, ClientInfo, Value

    tool = call.spec.name
    try:
        agent = call.runtime.agent()
        status = await agent.approval_status(question.fingerprint)
        if status in ("approve", "deny"):
            return status
        if status == "pending":
            return _waiting(tool)
        name, version = client_name(ctx)
        request_id = uuid.uuid4().hex
        values = [Value(label=label, value=value) for label, value in question.values]
        wait = float(call.config.approval_wait)
        decision = "pending"
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_progress, call, wait)
                decision = await agent.request_approval(
                    request_id=request_id,
                    tool=tool,
                    what=question.what,
                    consequence=question.consequence,
                    values=values,
                    fingerprint=question.fingerprint,
                    client=ClientInfo(name=name, version=version),
                    wait_s=wait,
                )
                tg.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # anyio's task group wraps what request_approval raised; the handlers below want it bare.
            if len(group.exceptions) == 1 and isinstance(group.exceptions[0], Exception):
                raise group.exceptions[0] from None
            raise
        except anyio.get_cancelled_exc_class():
            # The caller gave up: close the dialog; nothing is acted on in this call.
            with anyio.CancelScope(shield=True), anyio.move_on_after(3):
                await agent.approval_cancel(request_id)
            raise
        if decision in ("approve", "deny"):
            return decision
        return _waiting(tool)
    except AgentConnectionLost as exc:
        if exc.sent:
            return error_result(
                f"The SearchDesk app closed before anyone answered; {tool} did nothing. Open SearchDesk and "
                "call again with the same arguments.",
                decision="unanswered",
            )
        return "the SearchDesk app is not running"
    except AgentUnavailable:
        return "the SearchDesk app is not running"
    except AgentError as exc:
        log.warning("the SearchDesk app could not be asked: %s", type(exc).__name__)
        return "the SearchDesk app could not be asked safely"


def _waiting(tool: str) -> types.CallToolResult:
    return error_result(
        f"{tool} is waiting for you in SearchDesk: approve or deny it there, then call {tool} again with the "
        "same arguments (the question stays open for 5 minutes). Nothing has been done.",
        decision="pending",
    )


async def _progress(call: Call, wait: float) -> None:
    waited = 0.0
    while waited < wait:
        await call.progress(waited, wait, "Waiting for you to answer in the SearchDesk app")
        await anyio.sleep(PROGRESS_EVERY)
        waited += PROGRESS_EVERY
