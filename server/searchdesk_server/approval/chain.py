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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import mcp_types as types

from ..agent.protocol import TOKEN_LIFETIME_S, minutes
from ..catalogue import resolve
from ..confirm_tokens import Redeemed
from ..google.errors import GoogleError
from ..handlers import run_tool
from ..journal.record import shown
from ..journal.store import Approval
from ..mcp_client import client_info, declared_form
from ..result import ToolFailure, error_result
from ..runtime import Call, Consent
from . import question as q
from .ask_app import ask_app
from .ask_client import elicit, once
from .outcomes import RECORDED, Answer, Approved, How, NotAsked, Reply, Why, declined, not_a_clear_yes
from .owner_steps import most_changes, owner_steps
from .question import Question

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    Context = ServerRequestContext[Any]

log = logging.getLogger("searchdesk_server.approval")

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


@dataclass(frozen=True)
class Ended:
    """How a guarded call ended: what it sends back, the question it asked last (None: none could be
    made), and whether it acted (its handler ran on what was approved)."""

    reply: Reply
    asked: Question | None = None
    acted: bool = False


async def run_guarded(call: Call, ctx: Context, params: types.CallToolRequestParams) -> Reply:
    """Ask, read Google again, act once on exactly what was approved (or say why not). A call that
    sends nothing leaves one row in the journal saying why; one that acts leaves its change's rows."""
    ended = await _run_guarded(call, ctx, params)
    if isinstance(ended.reply, types.CallToolResult) and not ended.acted:
        approval, words = _journal_answer(ended.reply)
        await call.record.answer(approval, words, () if ended.asked is None else shown(ended.asked.values))
    return ended.reply


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


async def _run_guarded(call: Call, ctx: Context, params: types.CallToolRequestParams) -> Ended:
    tool = call.spec.name
    try:
        await call.route()  # the account is fixed here: the question names it, the answer is bound to it
        question = await build_question(call)
    except ToolFailure as exc:
        return Ended(error_result(str(exc), decision="refused"))
    except GoogleError as exc:
        return Ended(_preparing_failed(tool, exc))
    for _ in range(2):
        outcome = await guard(call, ctx, params, question)
        if not isinstance(outcome, Approved):
            return Ended(outcome, question)
        try:
            moved = await _routed_elsewhere(call)
            if moved is not None:
                return Ended(moved, question)
            now = await build_question(call)  # just before acting: has Google's side changed?
        except (ToolFailure, GoogleError) as exc:
            return Ended(_preparing_failed(tool, exc), question)
        if now.digest == outcome.question.digest:
            return Ended(await _act(call, outcome), question, acted=True)
        log.info("the question changed at Google between the yes and the action: asking again")
        if outcome.by is How.TOKEN:
            return Ended(_changed_since_token(tool), question)
        question = now
    failed = error_result(
        f"{tool} did nothing: what it would change kept changing at Google while a person was being asked. "
        "Try again in a few minutes.",
        decision="refused",
    )
    return Ended(failed, question)


async def _act(call: Call, approved: Approved) -> types.CallToolResult:
    """Run the tool on exactly what was approved: a call made with that consent (`dataclasses.replace`),
    so the handler and the journal's rows read it from the call that acts, written onto nothing."""
    question = approved.question
    consent = Consent(
        targets=question.targets,
        site=question.site,
        values=question.values,
        by=approved.recorded,
        feedpath=question.feedpath,
        owners=question.owners,
    )
    return await run_tool(replace(call, consent=consent), note=NOBODY_ASKED if approved.by is How.TOKEN else "")


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
        answer = await ask_app(call, ctx, question, requester)
        if isinstance(answer, NotAsked):
            return Approved(question, How.TOKEN, RECORDED[How.TOKEN]) if rt.token_possible else _nobody_to_ask(call)
        return _app_answer(tool, answer)

    not_asked: list[NotAsked] = []
    client = client_info(ctx)[0]
    # 1. The client's own dialog.
    if not call.config.elicitation:
        not_asked.append(NotAsked(Why.ELICITATION_OFF))
    elif not question.fits_elicitation:
        not_asked.append(NotAsked(Why.TOO_LONG_FOR_CLIENT))
    elif not declared_form(ctx):
        not_asked.append(NotAsked(Why.NO_CLIENT_DIALOG))
        once(client, "no elicitation capability")
    else:
        outcome = await elicit(call, ctx, params, question)
        if isinstance(outcome, types.InputRequiredResult):
            return outcome
        if outcome is Answer.APPROVE:
            return Approved(question, How.CLIENT, RECORDED[How.CLIENT])
        if outcome is Answer.DECLINE:
            return declined(tool)
        if outcome is Answer.UNCLEAR:
            return not_a_clear_yes(tool)
        not_asked.append(outcome)
        once(client, "elicitation cancelled or failed")

    # 2. The desktop app's dialog.
    answer = await ask_app(call, ctx, question, requester)
    if not isinstance(answer, NotAsked):
        return _app_answer(tool, answer)
    not_asked.append(answer)

    # 3. The two-call token: nobody can be reached, and the token is this server's to give.
    if not rt.token_possible:
        return _nobody_to_ask(call)
    return _token(call, question, not_asked)


def _nobody_to_ask(call: Call) -> types.CallToolResult:
    """The refusal when nobody could be asked and there is no token: open SearchDesk, or (reached
    earlier in this process) try again shortly — the app may be restarting, or listening again."""
    return error_result(APP_GONE_FOR_NOW if call.runtime.app_reached else APP_CLOSED, decision="refused")


def _app_answer(tool: str, answer: Approved | Answer | types.CallToolResult) -> Approved | types.CallToolResult:
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
        most = most_changes(
            question, lambda part: len(_token_text(tool, part, not_asked, sample).encode()) <= MAX_TOKEN_TEXT_BYTES
        )
        reasons = "; and ".join(n.because.value for n in not_asked)
        return error_result(
            f"{tool} did nothing: the change is too long to show here, and nobody could be asked in the "
            f"SearchDesk app ({reasons}). Open the SearchDesk app and call again"
            + (f". Without it: {owner_steps(call, question, most)}" if question.counted_lines else "."),
            decision="refused",
        )
    issued = call.runtime.tokens.issue(question.fingerprint, question.digest)
    return error_result(
        _token_text(tool, question, not_asked, issued),
        decision="token",
        confirm_token=issued,
        fingerprint=question.fingerprint,
    )
