"""Step 2 of asking a person: the SearchDesk app's native dialog over the agent socket, waiting a bounded
time. Every failure while the app is reachable is a refusal in words to act on; only nobody there
(no socket, nothing listening, the connection lost before the question was sent) is `NotAsked`.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types

from ..agent import protocol
from ..agent.protocol import QUESTION_OPEN_S, minutes
from ..journal.store import Approval
from ..mcp_client import client_info
from ..result import error_result
from ..runtime import Call
from .outcomes import Answer, Approved, How, NotAsked, Why, refused
from .owner_steps import most_changes, owner_steps
from .question import Question

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from ..agent.client import AgentClient
    from ..agent.protocol import ApprovalRequest, Requester

    Context = ServerRequestContext[Any]

log = logging.getLogger("searchdesk_server.approval")

PROGRESS_EVERY = 5.0


async def ask_app(
    call: Call, ctx: Context, question: Question, requester: Requester
) -> Approved | Answer | types.CallToolResult | NotAsked:
    """The person's yes in the app (saying where it was given), their no (`Answer.DECLINE`), a result to
    return, or NotAsked (only when nobody is there)."""
    from ..agent.client import (
        AgentConnectionLost,
        AgentNotAnswering,
        AgentTimeout,
        AgentUnavailable,
        AppBusy,
        AppQueueFull,
        AppRunsDemo,
    )
    from ..agent.protocol import AgentError

    tool = call.spec.name
    rt = call.runtime
    try:
        agent = rt.approval_agent()
        hello = await agent.app_hello()
        if not hello.binds_requester:
            return refused(
                tool,
                "the SearchDesk app is too old to tie an answer to the program that asked. Update the SearchDesk "
                "app, then ask again.",
            )
        # With the words' digest the app answers only from a question that reads as this one; the
        # shown check below is for an app that ignores it (a server never requires the app to echo it).
        status = await agent.status(question.fingerprint, requester, question.digest)
        if status.decision == "deny":
            return Answer.DECLINE
        if status.decision == "pending":
            return waiting_in_app(tool)
        if status.decision == "approve" and rt.shown.matches(_shown_key(question, requester), question.digest):
            return Approved(question, How.APP, _where(status.answered_in))
        # No answer yet, or a yes to words that read differently now (it is spent): ask.
        request = _approval_request(call, ctx, question, requester)
        if isinstance(request, types.CallToolResult):
            return request
        rt.shown.remember(_shown_key(question, requester), question.digest)
        return await _wait_for_answer(call, agent, request, question)
    except AgentConnectionLost as exc:
        if exc.sent:
            return error_result(
                f"The SearchDesk app closed before anyone answered; {tool} did nothing. Open SearchDesk and "
                "call again with the same arguments.",
                decision="unanswered",
            )
        return NotAsked(Why.APP_CLOSED_EARLY)
    except AgentUnavailable:
        return NotAsked(Why.APP_NOT_RUNNING)
    except AppRunsDemo:
        return refused(
            tool,
            "the SearchDesk app is running the demo; start SearchDesk normally to approve changes to your "
            "Google account.",
        )
    except AppQueueFull as exc:
        waiting = exc.data.get("waiting") if isinstance(exc.data, dict) else None
        many = f"{waiting}" if isinstance(waiting, int) and not isinstance(waiting, bool) else "many"
        return refused(tool, f"SearchDesk already has {many} questions waiting; answer them there, then ask again.")
    except (AppBusy, AgentNotAnswering):
        return refused(tool, "SearchDesk is busy with other requests; try again in a moment.")
    except AgentTimeout:
        return refused(tool, "SearchDesk did not answer in time; nothing was done. Try again in a moment.")
    except AgentError as exc:
        log.warning("the SearchDesk app could not be asked: %s", type(exc).__name__)
        return refused(tool, "SearchDesk could not show the question; nothing was done.")


def _approval_request(
    call: Call, ctx: Context, question: Question, requester: Requester
) -> ApprovalRequest | types.CallToolResult:
    """The approval/request to send, or the refusal when the question cannot be shown whole."""
    name, version = client_info(ctx)
    wait = float(call.config.approval_wait)

    def make(part: Question) -> protocol.ApprovalRequest:
        client = protocol.ClientInfo(name=name, version=version)
        return part.to_request(uuid.uuid4().hex, client=client, requester=requester, wait_s=wait)

    def fits(part: Question) -> bool:
        try:
            protocol.encode_request(0, protocol.APPROVAL_REQUEST, make(part).to_json())
        except protocol.ProtocolError:
            return False
        return True

    if fits(question):
        return make(question)
    if question.counted_lines:
        return refused(
            call.spec.name,
            "too many owners change at once to show them in one question, so "
            + owner_steps(call, question, most_changes(question, fits)),
        )
    log.warning("a question could not be put on the agent socket")
    return refused(call.spec.name, "SearchDesk could not show the question; nothing was done.")


async def _wait_for_answer(
    call: Call, agent: AgentClient, request: ApprovalRequest, question: Question
) -> Approved | Answer | types.CallToolResult:
    tool = call.spec.name
    decision, answered_in = "pending", None
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_progress, call, request.wait_s)
            answer = await agent.answer(request)
            decision, answered_in = answer.decision, answer.answered_in
            tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # anyio's task group wraps what ask raised; the caller's handlers want it bare.
        if len(group.exceptions) == 1 and isinstance(group.exceptions[0], Exception):
            raise group.exceptions[0] from None
        raise
    except anyio.get_cancelled_exc_class():
        # The caller gave up: close the dialog; nothing is acted on in this call.
        with anyio.CancelScope(shield=True), anyio.move_on_after(3):
            await agent.approval_cancel(request.request_id)
        raise
    if decision == "approve":
        return Approved(question, How.APP, _where(answered_in))
    if decision == "deny":
        return Answer.DECLINE
    if not call.runtime.shown.matches(protocol.answer_key(request.fingerprint, request.requester), request.digest):
        # Another call of this server asked the same question with other words while this one waited:
        # the app shows only the newer words, and answered this call "pending" (never the yes).
        return asked_again(tool)
    return waiting_in_app(tool)


def _where(answered_in: str | None) -> Approval:
    """How the app's yes was given, as it says (an older app does not: then only "in the app")."""
    return {"dialog": Approval.DIALOG, "notification": Approval.NOTIFICATION}.get(answered_in or "", Approval.APP)


def _shown_key(question: Question, requester: Requester) -> str:
    """What the server's ShownBook files a question under: its fingerprint and who asks."""
    return protocol.answer_key(question.fingerprint, requester)


def asked_again(tool: str) -> types.CallToolResult:
    return error_result(
        f"{tool} did nothing: while this call waited, the same {tool} was asked again in SearchDesk with other "
        f"words (what it would change had changed at Google in between), and that question replaced this one. "
        f"Answer it in SearchDesk, then call {tool} again with the same arguments (the question stays open for "
        f"{minutes(QUESTION_OPEN_S)}). Nothing has been done.",
        decision="pending",
    )


def waiting_in_app(tool: str) -> types.CallToolResult:
    return error_result(
        f"{tool} is waiting for you in SearchDesk: approve or deny it there, then call {tool} again with the "
        f"same arguments (the question stays open for {minutes(QUESTION_OPEN_S)}). Nothing has been done.",
        decision="pending",
    )


async def _progress(call: Call, wait: float) -> None:
    waited = 0.0
    while waited < wait:
        await call.progress(waited, wait, "Waiting for you to answer in the SearchDesk app")
        await anyio.sleep(PROGRESS_EVERY)
        waited += PROGRESS_EVERY
