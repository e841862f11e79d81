"""Asking a person before the four irreversible tools act.

The chain stops at the first step that reaches a person:
1. the client's own dialog (MCP elicitation), when this request declared the form capability,
   ELICITATION is true and the question fits its 4 KiB — `elicitation/create` on 2025-11-25,
   `input_required` on 2026-07-28;
2. the SearchDesk app's native dialog over the agent socket, waiting a bounded time;
3. the two-call token, only for a server given its credentials directly (variables or key files: a
   scheduled job) when nobody can be reached — no socket, nothing listening there, or the connection
   lost before the question was sent — and the server has not reached the app at any time in this
   process. With the app's keys, or SEARCHDESK_ASK_IN_APP (every entry the app writes, the demo's
   included), there is no token: nobody reached is a refusal that says to open SearchDesk, or, when
   this process reached it before, to ask again in a few seconds (a socket file a cleaner removed,
   an app restarting). While the app is reachable every failure (busy, a full queue, a timeout, an
   error, a question it could not take) is a refusal without a token: a way around the person must
   never be cheaper to reach than the person.

A yes counts for the question as the person read it: its fingerprint (tool and targets) and its
digest (its words). Google's side is read again just before acting; if the question would now read
differently, the person is asked again. The handler acts on the approved question's targets only.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..agent import protocol
from ..agent.protocol import QUESTION_OPEN_S, TOKEN_LIFETIME_S, minutes
from ..catalogue import resolve
from ..confirm_tokens import Redeemed
from ..google.errors import GoogleError
from ..handlers import run_tool
from ..journal import record
from ..journal.store import Approval
from ..mcp_client import client_info, declared_form
from ..result import ToolFailure, error_result
from ..runtime import Call
from . import question as q
from .question import Question

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from ..agent.client import AgentClient
    from ..agent.protocol import ApprovalRequest, Requester

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
PROGRESS_EVERY = 5.0
MAX_TOKEN_TEXT_BYTES = q.MAX_ELICIT_BYTES
NOBODY_ASKED = (
    "Nobody was asked to approve this: it was done with a confirm_token, which proves only that the same "
    "call was made twice."
)
#: Nobody could be asked and the token is not this server's to give (`Runtime.token_possible`): the app was
#: never reached in this process, or it was and is not now.
APP_CLOSED = "Open SearchDesk to approve this; nothing was done."
APP_GONE_FOR_NOW = (
    "SearchDesk could not be reached just now; nothing was done. If it is open, wait a few seconds and ask again."
)
_warned: set[tuple[str, str]] = set()


class How(Enum):
    """Who said yes."""

    CLIENT = "the client's dialog"
    APP = "the SearchDesk app"
    TOKEN = "a confirm_token"  # noqa: S105 (nobody: the call was made twice)


#: How each kind of yes is recorded in the journal; the app's (None) says itself where it was given (`_where`).
_HOW: dict[How, Approval | None] = {How.CLIENT: Approval.CLIENT, How.APP: None, How.TOKEN: Approval.TOKEN}


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
    question: Question
    by: How


#: What a guarded call sends back when it does not act: a refusal or a question still open.
Reply = types.CallToolResult | types.InputRequiredResult


# --- building the question ---------------------------------------------------------------------


async def build_question(call: Call) -> Question:
    """The question for this call, from its arguments and Google's current state: the builder its
    catalogue entry names (builders.py). Raises ToolFailure (a refusal to explain) or GoogleError
    (Google could not be read)."""
    if call.spec.question is None:
        raise AssertionError(f"{call.spec.name} is not a guarded tool")
    question: Question = await resolve(call.spec.question)(call)
    return question


# --- the whole guarded call ---------------------------------------------------------------------


async def run_guarded(call: Call, ctx: Context, params: types.CallToolRequestParams) -> Reply:
    """Ask, read Google again, act once on exactly what was approved (or say why not). A call that
    sends nothing leaves one row in the journal saying why; one that acts leaves its change's rows."""
    reply = await _run_guarded(call, ctx, params)
    if isinstance(reply, types.CallToolResult) and call.approved is None:
        await record.answer(call, *_journal_answer(reply))
    return reply


#: A guarded call's `decision` (in its result) as the journal records it.
_DECISIONS = {
    "declined": Approval.DECLINED,
    "pending": Approval.WAITING,
    "unanswered": Approval.UNANSWERED,
    "token": Approval.WAITING,
}
#: The journal's words for a token offered (the token itself is never recorded).
TOKEN_OFFERED = "Nobody could be asked; the program that asked was given a one-time code to call again with."  # noqa: S105


def _journal_answer(reply: types.CallToolResult) -> tuple[Approval, str]:
    data = reply.structured_content or {}
    decision = str(data.get("decision", "refused"))
    if decision == "token":
        return Approval.WAITING, TOKEN_OFFERED
    if data.get("source") == "google":  # the refusal quotes Google: the record keeps only that it did
        return Approval.REFUSED, "Google could not be read to prepare the question."
    text = str(data.get("error", ""))
    return _DECISIONS.get(decision, Approval.REFUSED), text


async def _run_guarded(call: Call, ctx: Context, params: types.CallToolRequestParams) -> Reply:
    tool = call.spec.name
    try:
        await call.route()  # the account is fixed here: the question names it, the answer is bound to it
        question = await build_question(call)
        call.asked = question
    except ToolFailure as exc:
        return error_result(str(exc), decision="refused")
    except GoogleError as exc:
        return _preparing_failed(tool, exc)
    for _ in range(2):
        outcome = await guard(call, ctx, params, question)
        if not isinstance(outcome, Approved):
            return outcome
        try:
            moved = await _routed_elsewhere(call)
            if moved is not None:
                return moved
            now = await build_question(call)  # just before acting: has Google's side changed?
        except (ToolFailure, GoogleError) as exc:
            return _preparing_failed(tool, exc)
        if now.digest == outcome.question.digest:
            call.approved = outcome.question
            call.approved_by = _HOW[outcome.by] or call.approved_by or Approval.APP
            return await run_tool(call, note=NOBODY_ASKED if outcome.by is How.TOKEN else "")
        log.info("the question changed at Google between the yes and the action: asking again")
        if outcome.by is How.TOKEN:
            return _changed_since_token(tool)
        question = now
        call.asked = now
    return error_result(
        f"{tool} did nothing: what it would change kept changing at Google while a person was being asked. "
        "Try again in a few minutes.",
        decision="refused",
    )


async def _routed_elsewhere(call: Call) -> types.CallToolResult | None:
    """A refusal when this call would now go to another Google account than the one its question named
    (an account was removed or added in the app since): that yes is not for this account. Raises
    ToolFailure or GoogleError when nobody could act now."""
    if call.account is None:
        return None
    directory = call.runtime.directory
    now = await directory.route(call, await directory.accounts())
    if now is not None and now.key == call.account.key:
        return None
    tool = call.spec.name
    instead = f", but {now.label} would make it now" if now is not None else ""
    return error_result(
        f"{tool} did nothing: the question named the Google account {call.account.label}{instead} (the accounts "
        f"in SearchDesk changed in the meantime). Call {tool} again to be asked about the account it would use.",
        decision="refused",
    )


def _preparing_failed(tool: str, exc: ToolFailure | GoogleError) -> types.CallToolResult:
    if isinstance(exc, ToolFailure):
        return error_result(str(exc), decision="refused")
    return error_result(
        f"{tool} did nothing: preparing the question failed. {exc}", from_google=exc.upstream is not None
    )


def _changed_since_token(tool: str) -> types.CallToolResult:
    return error_result(
        f"{tool} did nothing: what the confirm_token was issued for reads differently now (it changed at "
        f"Google). Call {tool} again without confirm_token to see the new question.",
        decision="refused",
    )


async def guard(call: Call, ctx: Context, params: types.CallToolRequestParams, question: Question) -> Approved | Reply:
    """Approved only when a person said yes to exactly this question (or a valid token proves the
    call was made twice while nobody could be asked); anything else is the result to send back."""
    tool = call.spec.name
    rt = call.runtime
    requester = await call.requester()

    token = call.args.get("confirm_token")
    if token is not None and rt.token_possible:  # else it is no token of this server's: ask as always
        redeemed = rt.tokens.redeem(question.fingerprint, question.digest, token)
        if redeemed is Redeemed.CHANGED:
            return _changed_since_token(tool)
        if redeemed is not Redeemed.OK:
            return error_result(
                f"That confirm_token is invalid, expired, or issued for different arguments; {tool} did nothing. "
                f"A token works once, for {minutes(TOKEN_LIFETIME_S)}, with exactly the arguments it was issued for.",
                decision="refused",
            )
        # The token stands in for the person only while nobody can be reached: ask the app if it is there now.
        answer = await _ask_desktop(call, ctx, question, requester)
        if isinstance(answer, NotAsked):
            return Approved(question, How.TOKEN) if rt.token_possible else _nobody_to_ask(call)
        return _app_answer(tool, question, answer)

    not_asked: list[NotAsked] = []
    client = client_info(ctx)[0]
    # 1. The client's own dialog.
    if not call.config.elicitation:
        not_asked.append(NotAsked(Why.ELICITATION_OFF))
    elif not question.fits_elicitation:
        not_asked.append(NotAsked(Why.TOO_LONG_FOR_CLIENT))
    elif not declared_form(ctx):
        not_asked.append(NotAsked(Why.NO_CLIENT_DIALOG))
        _once(client, "no elicitation capability")
    else:
        outcome = await _elicit(call, ctx, params, question)
        if isinstance(outcome, types.InputRequiredResult):
            return outcome
        if outcome is Answer.APPROVE:
            return Approved(question, How.CLIENT)
        if outcome is Answer.DECLINE:
            return declined(tool)
        if outcome is Answer.UNCLEAR:
            return not_a_clear_yes(tool)
        not_asked.append(outcome)
        _once(client, "elicitation cancelled or failed")

    # 2. The desktop app's dialog.
    answer = await _ask_desktop(call, ctx, question, requester)
    if not isinstance(answer, NotAsked):
        return _app_answer(tool, question, answer)
    not_asked.append(answer)

    # 3. The two-call token: nobody can be reached, and the token is this server's to give.
    if not rt.token_possible:
        return _nobody_to_ask(call)
    return _token(call, question, not_asked)


def _nobody_to_ask(call: Call) -> types.CallToolResult:
    """The refusal when nobody could be asked and there is no token: open SearchDesk, or (reached
    earlier in this process) try again shortly — the app may be restarting, or listening again."""
    return error_result(APP_GONE_FOR_NOW if call.runtime.app_reached else APP_CLOSED, decision="refused")


def _app_answer(
    tool: str, question: Question, answer: Answer | types.CallToolResult
) -> Approved | types.CallToolResult:
    if answer is Answer.APPROVE:
        return Approved(question, How.APP)
    if isinstance(answer, Answer):
        return declined(tool)
    return answer


def _token_text(tool: str, question: Question, not_asked: list[NotAsked], token: str) -> str:
    reasons = "; and ".join(n.because.value for n in not_asked)
    return (
        f"{tool} did nothing yet. Nobody could be asked to approve it: {reasons}.\n\n"
        f"{question.text}\n\n"
        f"To go ahead, call {tool} again within {minutes(TOKEN_LIFETIME_S)} with exactly the same arguments plus "
        f'confirm_token "{token}". The token proves only that the call was made twice with the same '
        "arguments; it does not mean any person approved it. Ask the user before using it."
    )


def _token(call: Call, question: Question, not_asked: list[NotAsked]) -> types.CallToolResult:
    tool = call.spec.name
    sample = "sdk_" + "x" * 32  # a token's length, to size the text before issuing one
    if len(_token_text(tool, question, not_asked, sample).encode("utf-8")) > MAX_TOKEN_TEXT_BYTES:
        most = _most_changes(
            question, lambda part: len(_token_text(tool, part, not_asked, sample).encode()) <= MAX_TOKEN_TEXT_BYTES
        )
        reasons = "; and ".join(n.because.value for n in not_asked)
        return error_result(
            f"{tool} did nothing: the change is too long to show here, and nobody could be asked in the "
            f"SearchDesk app ({reasons}). Open the SearchDesk app and call again"
            + (f". Without it: {_owner_steps(call, question, most)}" if question.counted_lines else "."),
            decision="refused",
        )
    issued = call.runtime.tokens.issue(question.fingerprint, question.digest)
    return error_result(
        _token_text(tool, question, not_asked, issued),
        decision="token",
        confirm_token=issued,
        fingerprint=question.fingerprint,
    )


def _most_changes(question: Question, fits: Callable[[Question], bool]) -> int:
    """The largest number of change lines (from the start) with which the question still fits."""
    low, high = 0, question.counted_lines
    while low < high:
        mid = (low + high + 1) // 2
        if fits(question.first_changes(mid)):
            low = mid
        else:
            high = mid - 1
    return low


def _owner_step(question: Question, most: int, ceiling: int) -> tuple[int, int] | None:
    """The largest change one call can make toward an owner change too large for one question, as
    (owners removed, owners added): at most `most` change lines (the most that fit), removals first
    (they shorten the list), and leaving a list the owners argument takes (1 to `ceiling` addresses).
    None when there is no such list: Google lists more owners than one list can hold even after every
    removal that fits, or not one change fits."""
    now, removed, added = _owner_counts(question)
    take_out = min(most, removed)
    if now - take_out > ceiling:
        return None
    put_in = min(most - take_out, added, ceiling - (now - take_out))
    if now - take_out + put_in == 0:  # a list is never empty: one removal fewer, one addition instead
        take_out, put_in = take_out - 1, 1
    return (take_out, put_in) if take_out + put_in else None


def _owner_counts(question: Question) -> tuple[int, int, int]:
    """How many owners Google lists now, and how many the question removes and adds (its change lines)."""
    removed = sum(1 for label, _ in question.values if label.startswith("Removed"))
    added = sum(1 for label, _ in question.values if label.startswith("Added"))
    return len(question.owners) - added + removed, removed, added


def _owner_steps(call: Call, question: Question, most: int) -> str:
    """What to do about an owner change too large for one question, for the program that asked: the
    largest change one call can make and the list that makes it, or, when no list the argument takes
    can, Search Console's own page (support.google.com/webmasters/answer/7687615: "Settings > Users and
    permissions") — never a number nobody can follow."""
    tool = call.spec.name
    ceiling = int(call.spec.params["owners"]["maxItems"])
    step = _owner_step(question, most, ceiling)
    if step is None:
        why = (
            "not even one owner's change fits in one question"
            if most == 0
            else "Google lists more owners here than one owners list can hold, even after the largest change one "
            "question can show"
        )
        return (
            f"no list the owners argument takes can make this change in smaller steps: {why}. Change the owners in "
            "Search Console instead: Settings › Users and permissions."
        )
    take_out, put_in = step
    now, removed, added = _owner_counts(question)
    how = []
    if take_out:
        part = f"all {removed:,}" if take_out == removed else f"the first {take_out:,} of the {removed:,}"
        how.append(f"without {part} owners you are removing")
    if put_in:
        part = f"all {added:,}" if put_in == added else f"the first {put_in:,} of the {added:,}"
        how.append(f"with {part} owners you are adding")
    return (
        f"the largest change one call can make here is {take_out + put_in:,} owners. Call {tool} with owners set "
        f"to the {now:,} owners Google lists now (get_verified_site shows them) {' and '.join(how)}, in "
        f"alphabetical order: a list of {now - take_out + put_in:,} (owners takes at most {ceiling:,}). Then call "
        f"{tool} again with the whole new list, as many times as it takes."
    )


# --- step 1: the client's dialog ------------------------------------------------------------------


def _once(client: str, reason: str) -> None:
    if (client, reason) not in _warned:
        _warned.add((client, reason))
        log.warning("the approval question did not go through %s: %s", client or "an unnamed client", reason)


def declined(tool: str) -> types.CallToolResult:
    return error_result(f"The user declined; {tool} did nothing.", decision="declined")


def not_a_clear_yes(tool: str) -> types.CallToolResult:
    return error_result(f"The answer was not a clear yes; {tool} did nothing.", decision="declined")


async def _elicit(
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


# --- step 2: the app's dialog ---------------------------------------------------------------------


def _refused(tool: str, why: str) -> types.CallToolResult:
    return error_result(f"{tool} did nothing: {why}", decision="refused")


async def _ask_desktop(
    call: Call, ctx: Context, question: Question, requester: Requester
) -> Answer | types.CallToolResult | NotAsked:
    """The person's answer in the app, a result to return, or NotAsked (only when nobody is there)."""
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
            return _refused(
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
            return _waiting(tool)
        if status.decision == "approve" and rt.shown.matches(_shown_key(question, requester), question.digest):
            call.approved_by = _where(status.answered_in)
            return Answer.APPROVE
        # No answer yet, or a yes to words that read differently now (it is spent): ask.
        request = _approval_request(call, ctx, question, requester)
        if isinstance(request, types.CallToolResult):
            return request
        rt.shown.remember(_shown_key(question, requester), question.digest)
        return await _wait_for_answer(call, agent, request)
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
        return _refused(
            tool,
            "the SearchDesk app is running the demo; start SearchDesk normally to approve changes to your "
            "Google account.",
        )
    except AppQueueFull as exc:
        waiting = exc.data.get("waiting") if isinstance(exc.data, dict) else None
        many = f"{waiting}" if isinstance(waiting, int) and not isinstance(waiting, bool) else "many"
        return _refused(tool, f"SearchDesk already has {many} questions waiting; answer them there, then ask again.")
    except (AppBusy, AgentNotAnswering):
        return _refused(tool, "SearchDesk is busy with other requests; try again in a moment.")
    except AgentTimeout:
        return _refused(tool, "SearchDesk did not answer in time; nothing was done. Try again in a moment.")
    except AgentError as exc:
        log.warning("the SearchDesk app could not be asked: %s", type(exc).__name__)
        return _refused(tool, "SearchDesk could not show the question; nothing was done.")


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
        return _refused(
            call.spec.name,
            "too many owners change at once to show them in one question, so "
            + _owner_steps(call, question, _most_changes(question, fits)),
        )
    log.warning("a question could not be put on the agent socket")
    return _refused(call.spec.name, "SearchDesk could not show the question; nothing was done.")


async def _wait_for_answer(call: Call, agent: AgentClient, request: ApprovalRequest) -> Answer | types.CallToolResult:
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
        call.approved_by = _where(answered_in)
        return Answer.APPROVE
    if decision == "deny":
        return Answer.DECLINE
    if not call.runtime.shown.matches(protocol.answer_key(request.fingerprint, request.requester), request.digest):
        # Another call of this server asked the same question with other words while this one waited:
        # the app shows only the newer words, and answered this call "pending" (never the yes).
        return _asked_again(tool)
    return _waiting(tool)


def _where(answered_in: str | None) -> Approval:
    """How the app's yes was given, as it says (an older app does not: then only "in the app")."""
    return {"dialog": Approval.DIALOG, "notification": Approval.NOTIFICATION}.get(answered_in or "", Approval.APP)


def _shown_key(question: Question, requester: Requester) -> str:
    """What the server's ShownBook files a question under: its fingerprint and who asks."""
    return protocol.answer_key(question.fingerprint, requester)


def _asked_again(tool: str) -> types.CallToolResult:
    return error_result(
        f"{tool} did nothing: while this call waited, the same {tool} was asked again in SearchDesk with other "
        f"words (what it would change had changed at Google in between), and that question replaced this one. "
        f"Answer it in SearchDesk, then call {tool} again with the same arguments (the question stays open for "
        f"{minutes(QUESTION_OPEN_S)}). Nothing has been done.",
        decision="pending",
    )


def _waiting(tool: str) -> types.CallToolResult:
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
