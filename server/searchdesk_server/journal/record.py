"""What a tool call writes to the journal, and when.

A request that changes something at Google is a `change` row committed before the request leaves (after
its access token is in hand, so a sign-in failure sends nothing and records nothing), then an `outcome`
row once Google answered. Which requests change something is decided here, from the request itself,
failing closed: every method but GET is a change except the three reads Google's APIs make by POST. A
guarded call that sends nothing (declined, refused, still waiting) is one `answer` row. Appends run in a
worker thread: a journal another process holds for up to five seconds must not stall this server's other
calls.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import anyio.to_thread

from .. import labels
from ..result import ToolFailure
from .store import Approval, Entry, Journal, JournalUnavailable, Kind, Result, Row, Target

if TYPE_CHECKING:
    from ..approval.question import Question
    from ..google.errors import GoogleError
    from ..runtime import Call

log = logging.getLogger("searchdesk_server.journal")

#: Requests Google's APIs make by POST that change nothing (api root, path): Search Analytics queries,
#: URL Inspection and Site Verification's getToken. Every other request but GET is recorded.
READS_BY_POST: frozenset[tuple[str, str]] = frozenset(
    {
        ("https://searchconsole.googleapis.com/", "webmasters/v3/sites/{siteUrl}/searchAnalytics/query"),
        ("https://searchconsole.googleapis.com/", "v1/urlInspection/index:inspect"),
        ("https://www.googleapis.com/siteVerification/v1/", "token"),
    }
)

#: What a refused change says instead of acting (the journal's own reason follows).
NOT_RECORDED = (
    "Nothing was changed: {why} SearchDesk sends Google no change it cannot record on this computer. Free "
    "some disk space or fix that folder, then ask again. Reading your Search Console data still works."
)
#: Added to a result whose outcome could not be recorded after the request was sent.
INCOMPLETE = (
    "SearchDesk could not add what Google did to its record of changes on this computer, so the record is "
    "incomplete for this change."
)
#: How an Indexing API notice reads in the record.
NOTICE = {"URL_UPDATED": "updated", "URL_DELETED": "removed"}


def changes(api_root: str, method: str, path: str) -> bool:
    """Whether this request changes something at Google (and so is recorded before it is sent)."""
    return method.upper() != "GET" and (api_root, path) not in READS_BY_POST


class NotRecorded(ToolFailure):
    """A change refused because it could not be recorded: nothing was sent (the result says `refused`)."""


def refusal(exc: JournalUnavailable) -> NotRecorded:
    return NotRecorded(NOT_RECORDED.format(why=exc))


def request_targets(
    path_params: Mapping[str, str] | None, query: Mapping[str, Any] | None, body: object | None
) -> tuple[Target, ...]:
    """A request's targets in the question's labels, from what it sends (never a token: none is in these)."""
    found: list[Target] = []
    params = dict(path_params or {})
    if "siteUrl" in params:
        found.append(Target(labels.PROPERTY, params["siteUrl"]))
    if "feedpath" in params:
        found.append(Target(labels.SITEMAP, params["feedpath"]))
    if "id" in params:
        found.append(Target(labels.SITE, unquote(params["id"])))
    if isinstance(body, dict):
        site = body.get("site")
        if isinstance(site, dict) and isinstance(site.get("identifier"), str) and "id" not in params:
            found.append(Target(labels.SITE, site["identifier"]))
        if isinstance(body.get("url"), str):
            found.append(Target(labels.PAGE, body["url"]))
        kind = body.get("type")
        if isinstance(kind, str):
            found.append(Target(labels.NOTICE, NOTICE.get(kind, kind)))
    method: object = (query or {}).get("verificationMethod")
    if isinstance(method, str):
        found.append(Target(labels.METHOD, method))
    return tuple(found)


def _shown(question: Question) -> tuple[Target, ...]:
    """A question's values as the person was shown them: what its rows record."""
    return tuple(Target(label, value) for label, value in question.values)


def _site(call: Call, targets: tuple[Target, ...]) -> str:
    if call.approved is not None and call.approved.site:
        return call.approved.site
    for key in ("site", "site_url"):
        value = call.args.get(key)
        if isinstance(value, str):
            return value
    return next((t.value for t in targets if t.label in (labels.PROPERTY, labels.SITE)), "")


async def _account(call: Call) -> str:
    try:
        return await call.account_name() or ""
    except Exception:  # the account is only named for the record; failing to name it must not stop the call
        return ""


def _asked_by(call: Call) -> str:
    from ..mcp_client import client_info, describe_client

    if call.ctx is None:
        return ""
    try:
        return describe_client(*client_info(call.ctx))
    except AttributeError:  # a request context without a session (in-process use)
        return ""


def approval_of(call: Call) -> Approval:
    """How this call's change was approved (set by the approval chain); not asked for the other writes."""
    return call.approved_by or Approval.NOT_ASKED


async def _append(journal: Journal, entry: Entry) -> Row:
    return await anyio.to_thread.run_sync(journal.append, entry)


async def _call_entry(
    call: Call, kind: Kind, targets: tuple[Target, ...], approval: Approval, words: str = ""
) -> Entry:
    """A row that speaks of this call (a change before it is sent, an answer when nothing was): its tool,
    account, property, targets and who asked, said one way for both."""
    return Entry(
        kind,
        tool=call.spec.name,
        account=await _account(call),
        site=_site(call, targets),
        targets=targets,
        asked_by=_asked_by(call),
        approval=approval,
        words=words,
    )


async def before_change(
    call: Call,
    path_params: Mapping[str, str] | None,
    query: Mapping[str, Any] | None,
    body: object | None,
) -> Row:
    """The `change` row, committed; raises ToolFailure (nothing may be sent) when it cannot be written."""
    targets = _shown(call.approved) if call.approved is not None else request_targets(path_params, query, body)
    entry = await _call_entry(call, Kind.CHANGE, targets, approval_of(call))
    try:
        return await _append(call.runtime.journal, entry)
    except JournalUnavailable as exc:
        raise refusal(exc) from exc


#: The outcome of a change whose answer never came (the network, or the call was cancelled after it left).
NO_ANSWER = "No answer came back from Google, so it may or may not have been done."


async def after_change(call: Call, change: Row, failure: GoogleError | None, *, lost: bool = False) -> None:
    """The `outcome` row for `change` (`lost`: the call ended before Google answered); when it cannot be
    written the result says the record is incomplete."""
    if lost:
        result, words = Result.UNKNOWN, NO_ANSWER
    elif failure is None:
        result, words = Result.DONE, ""
    elif failure.status is None:
        result, words = Result.UNKNOWN, NO_ANSWER
    else:
        result, words = Result.REFUSED, failure.summary
    entry = Entry(
        Kind.OUTCOME,
        tool=change.tool,
        account=change.account,
        site=change.site,
        asked_by=change.asked_by,
        approval=Approval.NONE,
        result=result,
        words=words,
        about=change.seq,
    )
    try:
        await _append(call.runtime.journal, entry)
    except JournalUnavailable:
        log.warning("the outcome of row %d could not be recorded", change.seq)
        call.record_incomplete = True


async def answer(call: Call, approval: Approval, words: str) -> None:
    """A guarded call's outcome when it sent nothing (declined, refused, waiting): one `answer` row. A
    journal that cannot be written loses only this note; the call changed nothing."""
    question = call.approved or call.asked
    targets = _shown(question) if question is not None else ()
    entry = await _call_entry(call, Kind.ANSWER, targets, approval, words)
    try:
        await _append(call.runtime.journal, entry)
    except JournalUnavailable:
        log.warning("a guarded call's answer could not be recorded")


async def ready(call: Call) -> None:
    """Raise ToolFailure unless a change could be recorded now: checked before a write tool does anything
    (before a person is asked, before anything is sent). Read tools never call it."""
    try:
        await anyio.to_thread.run_sync(call.runtime.journal.ready)
    except JournalUnavailable as exc:
        raise refusal(exc) from exc
