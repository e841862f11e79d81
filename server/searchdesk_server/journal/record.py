"""What a tool call writes to the journal, and when.

A request that changes something at Google is a `change` row committed before the request leaves (after
its access token is in hand, so a sign-in failure sends nothing and records nothing), then an `outcome`
row once Google answered. Which requests change something is decided here, from the request itself,
failing closed: every method but GET is a change except the three reads Google's APIs make by POST. A
guarded call that sends nothing (declined, refused, still waiting) is one `answer` row. A call's rows are
its `CallRecord`, the hook set on the Google client made for the call (`google.http.RequestHook`); the
call tells it what the rows say (`Caller`), so the journal imports neither the call nor the approval
chain above it. Appends run in a worker thread: a journal another process holds for up to five seconds
must not stall this server's other calls.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import anyio.to_thread

from .. import labels
from ..result import ToolFailure
from .store import Approval, Entry, Journal, JournalUnavailable, Kind, Result, Row, Target

if TYPE_CHECKING:
    from ..google.errors import GoogleError
    from ..google.http import Outgoing

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


def shown(values: Sequence[tuple[str, str]]) -> tuple[Target, ...]:
    """A question's values as the person was shown them: what its rows record."""
    return tuple(Target(label, value) for label, value in values)


def asked_by(ctx: Any) -> str:
    """The program that asked, as a row names it ("" when the request context has no session)."""
    from ..mcp_client import client_info, describe_client

    if ctx is None:
        return ""
    try:
        return describe_client(*client_info(ctx))
    except AttributeError:  # a request context without a session (in-process use)
        return ""


@dataclass(frozen=True)
class Caller:
    """What the rows say of the tool call that wrote them, told by the call (`runtime.Call.record`): the
    journal never reads the call itself, so it sits below everything that makes one."""

    tool: str
    args: Mapping[str, Any]
    #: The Google account it acts as, once asked (a row names it; failing to name it never stops the call).
    account: Callable[[], Awaitable[str | None]]
    #: The program that asked (`asked_by`).
    asked_by: str = ""
    #: A guarded call that acts: the values its question showed, its property, and how the yes was given.
    shown: tuple[Target, ...] | None = None
    site: str = ""
    approval: Approval = Approval.NOT_ASKED


#: The outcome of a change whose answer never came (the network, or the call was cancelled after it left).
NO_ANSWER = "No answer came back from Google, so it may or may not have been done."


class CallRecord:
    """One tool call's rows in the journal. The hook its Google client runs around every request
    (`google.http.RequestHook`): a change's `change` row before it leaves, its `outcome` row after; and the
    `answer` row of a guarded call that sent nothing. `incomplete` says whether an outcome could not be
    written after its change was sent: the call's result then says its record is incomplete."""

    def __init__(self, journal: Journal, caller: Caller) -> None:
        self._journal = journal
        self._caller = caller
        self._incomplete = False

    @property
    def incomplete(self) -> bool:
        return self._incomplete

    async def before_send(self, request: Outgoing) -> Row | None:
        """The `change` row, committed, for a request that changes something (None for a read); raises
        ToolFailure (nothing may be sent) when it cannot be written."""
        if not changes(request.api.value, request.method, request.path):
            return None
        caller = self._caller
        targets = (
            caller.shown
            if caller.shown is not None
            else request_targets(request.path_params, request.query, request.body)
        )
        entry = await self._entry(Kind.CHANGE, targets, caller.approval)
        try:
            return await _append(self._journal, entry)
        except JournalUnavailable as exc:
            raise refusal(exc) from exc

    async def after_answer(
        self, request: Outgoing, note: Row | None, failure: GoogleError | None, *, lost: bool
    ) -> None:
        """The `outcome` row for the change `note` (`lost`: the call ended before Google answered)."""
        if note is None:
            return
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
            tool=note.tool,
            account=note.account,
            site=note.site,
            asked_by=note.asked_by,
            approval=Approval.NONE,
            result=result,
            words=words,
            about=note.seq,
        )
        try:
            await _append(self._journal, entry)
        except JournalUnavailable:
            log.warning("the outcome of row %d could not be recorded", note.seq)
            self._incomplete = True

    async def answer(self, approval: Approval, words: str, shown: tuple[Target, ...] = ()) -> None:
        """A guarded call's outcome when it sent nothing (declined, refused, waiting): one `answer` row, with
        the values of the question it asked (`shown`). A journal that cannot be written loses only this note;
        the call changed nothing."""
        entry = await self._entry(Kind.ANSWER, shown, approval, words)
        try:
            await _append(self._journal, entry)
        except JournalUnavailable:
            log.warning("a guarded call's answer could not be recorded")

    async def _entry(self, kind: Kind, targets: tuple[Target, ...], approval: Approval, words: str = "") -> Entry:
        """A row that speaks of this call (a change before it is sent, an answer when nothing was): its tool,
        account, property, targets and who asked, said one way for both."""
        caller = self._caller
        return Entry(
            kind,
            tool=caller.tool,
            account=await self._account(),
            site=self._site(targets),
            targets=targets,
            asked_by=caller.asked_by,
            approval=approval,
            words=words,
        )

    def _site(self, targets: tuple[Target, ...]) -> str:
        if self._caller.site:
            return self._caller.site
        for key in ("site", "site_url"):
            value = self._caller.args.get(key)
            if isinstance(value, str):
                return value
        return next((t.value for t in targets if t.label in (labels.PROPERTY, labels.SITE)), "")

    async def _account(self) -> str:
        try:
            return await self._caller.account() or ""
        except Exception:  # the account is only named for the record; failing to name it must not stop the call
            return ""


async def _append(journal: Journal, entry: Entry) -> Row:
    return await anyio.to_thread.run_sync(journal.append, entry)


async def ready(journal: Journal) -> None:
    """Raise ToolFailure unless a change could be recorded now: checked before a write tool does anything
    (before a person is asked, before anything is sent). Read tools never call it."""
    try:
        await anyio.to_thread.run_sync(journal.ready)
    except JournalUnavailable as exc:
        raise refusal(exc) from exc
