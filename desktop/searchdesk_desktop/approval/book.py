"""The book of questions waiting for a person, and what became of them. No Qt here.

Rules it keeps (docs/asking-a-person.md, issue 6): every answer is bound to a fingerprint and to
who asked (the requester: one server process and its Google account), so a yes given to one server
is never collected by another; the first answer wins; an approve is spent by exactly one action
(handed to one waiting request, or returned once by ``approval/status``); nothing is approved by
default, by timeout, by cancellation or by a crash (the book lives in memory only). A question stays
open for 5 minutes; an answer is kept 5 minutes.

A deny keeps refusing the same call for those 5 minutes, but not silently: when a server finds the
deny and refuses again, the entry notes that Claude asked again, and the person may reconsider. That
reopens the question (a new open entry, answered in the dialog like any other); nothing here approves.

A yes is bound to the words too (issue 23): an entry's key is the fingerprint, who asked and the
digest of the words it received (``protocol.words_digest``). The book holds one question per
fingerprint and requester: a request with the same two but other words (Google's side changed between
two builds of the same call) never joins the open one; it replaces it. The replaced entry ends as
``REPLACED`` (its waiting calls are told "pending", never given the yes; an unspent yes to it is
dropped), and the new one opens in its place, ``replaced`` set so that the dialog shows the new words
where the old ones were. ``approval/status`` with a digest is answered only by the question with those
words; without one (an older server) by the one question of that fingerprint and requester, as before.

A late yes and a new server (issue 36): a yes is collected only by the server process that asked (a parent
process is no safe identity). When Claude Desktop restarts its server before Claude asks again, the new
process asks a question of its own; when its words are exactly those of an approved question nobody
collected (the same fingerprint, digest, account and demo flag, another server), the new question opens as
any question does (it needs a new yes: nothing here approves it) with ``approved_before`` set to when the
person gave that yes, so the dialog can say so; the old yes is withdrawn then (``SUPERSEDED``: nothing of
it is used), so one person's yes never lies ready for two processes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Literal

from searchdesk_server.agent.protocol import (
    QUESTION_OPEN_S,
    ApprovalRequest,
    ErrorCode,
    StatusDecision,
    answer_key,
    question_of,
)
from searchdesk_server.mcp_client import describe_client

from ..refusals import Refusal

KEEP_SECONDS = QUESTION_OPEN_S
MAX_OPEN = 32
MAX_ACTIVITY = 200


class State(Enum):
    PENDING = "pending"
    APPROVED = "approve"  # answered yes, not yet spent
    DENIED = "deny"
    USED = "used"  # the yes was handed to the server, which acts on it once
    CANCELLED = "cancelled"
    EXPIRED = "expired"  # nobody answered in time: nothing happens
    REPLACED = "replaced"  # asked again with other words, which took its place: nothing of it is used
    #: An unspent yes whose words a new server process asked again (its own request had ended): withdrawn
    #: when the new question is shown; nothing of it is used.
    SUPERSEDED = "superseded"


Source = Literal["dialog", "notification"]


class Origin(Enum):
    """Where a question comes from, as the dialog labels it."""

    REAL = "real"  # a real server, in the real app
    DEMO = "demo"  # a demo server: nothing it does touches a Google account
    REAL_IN_DEMO_APP = "real_in_demo_app"  # an older server (no requester) asking the demo app


def origin(request: ApprovalRequest, *, demo_app: bool) -> Origin:
    if request.requester is not None:
        return Origin.DEMO if request.requester.demo else Origin.REAL
    return Origin.REAL_IN_DEMO_APP if demo_app else Origin.REAL


class RequestIdReused(Refusal):
    code = ErrorCode.INVALID_PARAMS

    def __init__(self) -> None:
        super().__init__("This request_id was already used for another question.")


class QueueFull(Refusal):
    code = ErrorCode.QUEUE_FULL

    def __init__(self, waiting: int = MAX_OPEN) -> None:
        super().__init__(f"{waiting} questions are already waiting in SearchDesk; answer some of them first.")
        self.waiting = waiting
        self.data = {"waiting": waiting}


@dataclass
class Activity:
    """What became of one question while the app runs: what was asked (the question's own values, as
    shown to the person), who asked (as it says), the answer and how it was given. Kept in memory only,
    for the dialog and the main window's late answers; no tokens. (Activity reads the record the server
    keeps on disk, `history`, not this.)"""

    asked_at: float  # wall clock
    tool: str
    what: str
    client: str  # as the client says it is
    account: str = ""  # the Google account the asking server acts as, as it says
    decision: str = "waiting"
    answered_by: str = ""
    #: The question's values (label, value), exactly as the dialog showed them.
    values: tuple[tuple[str, str], ...] = ()
    answered_at: float | None = None  # wall clock
    #: Answered after every call asking it had stopped waiting: Claude must ask again to use it.
    late: bool = False


@dataclass
class Entry:
    request: ApprovalRequest
    opened: float  # monotonic
    activity: Activity
    state: State = State.PENDING
    answered: float | None = None
    request_ids: set[str] = field(default_factory=set)
    asked_again: int = 0  # times a server found this deny and was refused again
    #: A call is waiting for the answer now; False once the last one stopped (see ``stopped_waiting``).
    waited_on: bool = True
    #: Opened in place of a question with the same fingerprint and requester but other words.
    replaced: bool = False
    #: When (wall clock) the person approved exactly these words for a server whose request had ended
    #: before it collected the yes; None for any other question. It approves nothing: a new yes is needed.
    approved_before: float | None = None

    @property
    def fingerprint(self) -> str:
        return self.request.fingerprint

    @cached_property
    def digest(self) -> str:
        """The digest of the words this entry received (``protocol.words_digest``)."""
        return self.request.digest

    @cached_property
    def key(self) -> str:
        """What an answer to this entry is addressed to: the fingerprint, who asked and the words."""
        return answer_key(self.request.fingerprint, self.request.requester, self.digest)

    @property
    def slot(self) -> str:
        """The fingerprint and who asked: the book holds one question under it at a time."""
        return answer_key(self.request.fingerprint, self.request.requester)

    @property
    def is_open(self) -> bool:
        return self.state is State.PENDING


class ApprovalBook:
    """Entries by fingerprint and requester (`protocol.answer_key`), each bound to its words. A key
    with a digest (``Entry.key``) names that question only while it reads so; one without names the
    question of that fingerprint and requester. ``on_change(entry)`` fires after every state change.

    ``on_change`` is a plain list of callables, not a Qt signal: the book is Qt-free by design (its
    own tests and the server's contract tests use it without a Qt application); the parts that watch
    it (the listener, the queue, the notifications, the core) each add one callable and take it back."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        keep: float = KEEP_SECONDS,
        max_open: int = MAX_OPEN,
    ) -> None:
        self._clock = clock
        self._wall = wall
        self.keep = keep
        self.max_open = max_open
        self._entries: dict[str, Entry] = {}
        self.activity: list[Activity] = []
        self.on_change: list[Callable[[Entry], None]] = []

    # --- queries ---
    def get(self, key: str) -> Entry | None:
        self.expire()
        return self._find(key)

    def _find(self, key: str) -> Entry | None:
        """The entry `key` names: with a digest, only while its words have that digest."""
        slot, digest = question_of(key)
        entry = self._entries.get(slot)
        if entry is None or (digest is not None and entry.digest != digest):
            return None
        return entry

    def open_entries(self) -> list[Entry]:
        self.expire()
        return sorted((e for e in self._entries.values() if e.is_open), key=lambda e: e.opened)

    def asked_again_entries(self) -> list[Entry]:
        """Denied questions that Claude asked again, the latest answer first."""
        self.expire()
        found = [e for e in self._entries.values() if e.state is State.DENIED and e.asked_again]
        return sorted(found, key=lambda e: e.answered or 0.0, reverse=True)

    def by_request_id(self, request_id: str) -> Entry | None:
        self.expire()
        for entry in self._entries.values():
            if request_id in entry.request_ids:
                return entry
        return None

    # --- changes ---
    def ask(self, request: ApprovalRequest) -> Entry:
        """The entry for this question: the open (or approved, unspent) one for the same fingerprint,
        requester and words, or a new open one. After a deny, asking again opens a new question. Other
        words for the same fingerprint and requester replace the open (or approved, unspent) question:
        it ends as REPLACED, and the new one opens in its place."""
        self.expire()
        key = answer_key(request.fingerprint, request.requester, request.digest)
        other = self.by_request_id(request.request_id)
        if other is not None and other.key != key:
            raise RequestIdReused()
        entry = self._entries.get(answer_key(request.fingerprint, request.requester))
        live = entry is not None and entry.state in (State.PENDING, State.APPROVED)
        if entry is not None and live and entry.key == key:
            entry.request_ids.add(request.request_id)
            if not entry.waited_on:
                entry.waited_on = True
                self._changed(entry)
            return entry
        replacing = entry if live else None
        waiting = len(self.open_entries())
        if (replacing is None or not replacing.is_open) and waiting >= self.max_open:
            raise QueueFull(waiting)  # replacing an open question leaves as many open as before
        fresh = self._open(request)
        if replacing is None:
            self._supersede(fresh)
        if replacing is not None:
            fresh.replaced = True
            was_open = replacing.is_open
            replacing.state = State.REPLACED
            replacing.activity.decision = (
                "asked again with other words (Google's side changed); replaced by the newer question"
                if was_open
                else "approved, then asked again with other words (not used)"
            )
            self._changed(replacing)
        self._changed(fresh)
        return fresh

    def _supersede(self, fresh: Entry) -> None:
        """`fresh` reads exactly as a yes nobody collected, given to another server of the same account and
        kind (Claude Desktop restarted its server): note when that yes was given, and withdraw it."""
        asker = fresh.request.requester
        if asker is None:
            return
        for old in list(self._entries.values()):
            was = old.request.requester
            if (
                old is fresh
                or old.state is not State.APPROVED
                or was is None
                or was.server == asker.server
                or (was.account, was.demo) != (asker.account, asker.demo)
                or old.fingerprint != fresh.fingerprint
                or old.digest != fresh.digest
            ):
                continue
            fresh.approved_before = old.activity.answered_at
            old.state = State.SUPERSEDED
            old.activity.decision = "approved, but the request that asked had ended; asked again (not used)"
            self._changed(old)

    def _open(self, request: ApprovalRequest, request_ids: set[str] | None = None) -> Entry:
        client = describe_client(request.client.name, request.client.version)
        account = request.requester.account or "" if request.requester is not None else ""
        values = request.pairs
        activity = Activity(self._wall(), request.tool, request.what, client, account, values=values)
        entry = Entry(request, self._clock(), activity, request_ids=request_ids or {request.request_id})
        self._entries[entry.slot] = entry
        self.activity.append(activity)
        del self.activity[:-MAX_ACTIVITY]
        return entry

    def answer(self, key: str, approve: bool, source: Source) -> bool:
        """Record a person's answer; False if the question is no longer open (the first answer won)."""
        entry = self.get(key)
        if entry is None or not entry.is_open:
            return False
        entry.state = State.APPROVED if approve else State.DENIED
        entry.answered = self._clock()
        entry.activity.decision = "approved" if approve else "denied"
        entry.activity.answered_by = source
        entry.activity.answered_at = self._wall()
        entry.activity.late = not entry.waited_on
        self._changed(entry)
        return True

    def stopped_waiting(self, key: str) -> None:
        """No call waits for this question any more (each got "pending" or went away): the person
        must be told to answer, then ask Claude again. A later identical call waits again."""
        entry = self._find(key)
        if entry is not None and entry.is_open and entry.waited_on:
            entry.waited_on = False
            self._changed(entry)

    def late_answers(self) -> list[Entry]:
        """Answers given after Claude stopped waiting that Claude has not collected yet (kept 5 minutes)."""
        self.expire()
        return [e for e in self._entries.values() if e.state in (State.APPROVED, State.DENIED) and e.activity.late]

    def take(self, key: str, *, served: str | None = None, reopen: bool = False) -> StatusDecision:
        """The answer for the server that asked (``key`` names both); an approve is spent here.

        ``served`` is the request_id of the waiting call the approve goes to; with ``reopen`` other
        identical calls still wait, and each needs a yes of its own: the question opens again.
        """
        entry = self.get(key)
        if entry is None:
            return "none"
        if entry.state is State.PENDING:
            return "pending"
        if entry.state is State.DENIED:
            return "deny"
        if entry.state is State.APPROVED:
            entry.state = State.USED
            if served is not None:
                entry.request_ids.discard(served)
            self._changed(entry)
            if reopen and entry.request_ids:
                del self._entries[entry.slot]
                self._changed(self._open(entry.request, set(entry.request_ids)))
            return "approve"
        return "none"

    def note_asked_again(self, key: str) -> bool:
        """A server asked again about a question the person denied, and was refused again: record it
        so the app can say so. The deny stands. False when this is not a standing deny."""
        entry = self.get(key)
        if entry is None or entry.state is not State.DENIED:
            return False
        entry.asked_again += 1
        times = "once" if entry.asked_again == 1 else f"{entry.asked_again} times"
        entry.activity.decision = f"denied; Claude asked again {times}"
        self._changed(entry)
        return True

    def reconsider(self, key: str) -> Entry | None:
        """The person changed their mind about a deny: the question opens again, as a new open entry
        (a fresh 5 minutes), to be answered in the dialog. Never an approve. None when no deny stands.

        Allowed past ``max_open``: only a person's click reopens a question, one at a time."""
        entry = self.get(key)
        if entry is None or entry.state is not State.DENIED:
            return None
        entry.activity.decision += ", then reopened"
        del self._entries[entry.slot]
        reopened = self._open(entry.request, set(entry.request_ids))
        self._changed(reopened)
        return reopened

    def cancel(self, request_id: str) -> bool:
        """Withdraw the question asked under ``request_id`` (open or answered): its dialog closes and
        nothing is approved. False when no such question is known."""
        entry = self.by_request_id(request_id)
        if entry is None or entry.state not in (State.PENDING, State.APPROVED, State.DENIED):
            return False
        if entry.state is State.PENDING:
            entry.activity.decision = "withdrawn by the caller"
        elif entry.state is State.APPROVED:
            entry.activity.decision = "approved, then withdrawn by the caller (not used)"
        entry.state = State.CANCELLED
        self._changed(entry)
        return True

    def expire(self) -> None:
        now = self._clock()
        for key, entry in list(self._entries.items()):
            if entry.state is State.PENDING and now - entry.opened >= self.keep:
                entry.state = State.EXPIRED
                entry.activity.decision = "no answer (expired)"
                self._changed(entry)
            if entry.state in (State.USED, State.CANCELLED, State.EXPIRED, State.REPLACED, State.SUPERSEDED) or (
                entry.answered is not None and now - entry.answered >= self.keep
            ):
                del self._entries[key]

    def _changed(self, entry: Entry) -> None:
        for callback in list(self.on_change):
            callback(entry)
