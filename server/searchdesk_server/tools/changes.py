"""`list_changes`: SearchDesk's record of changes on this computer (journal/), read for Claude.

Claude may see only what it could do now: a row is shown when its Google account is one Claude may use
(the app's accounts, which leave out any the person withheld in Settings, or the one account of the
environment's credentials) and its property is allowed by GSC_ALLOWED_SITES. Everything else is left
out and only counted, so a withheld account's properties, values and times never reach the model.

A row that names no account was written by a server that could not tell its account's address (an
OAuth refresh token from the environment, an app from before accounts). Such a row is shown only by a
server in that same position — one whose only account has no known address — since it may be that
account's own record; a server whose accounts all have addresses cannot tell whose it was, so it leaves
it out. The property rule still applies to it.

Every value came from Claude's requests or from Google's answers: the result is marked untrusted (with
its own opening line, `result.UNTRUSTED_LINES["journal"]`), each string is cleaned, and nothing is said
that is not in the journal. Times are the journal's (UTC); dates filter on UTC days.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from ..google import shapes as sh
from ..journal.store import Approval, JournalError, Kind, Result, Row
from ..properties import PropertyError, check_allowed, check_allowed_url, covers, covers_url, normalise_property
from ..result import Output, ToolFailure
from ..runtime import Call, plural
from ..text.cleaning import clean
from ._listing import listing
from .analytics.dates import START_AFTER_END, parse_day

if TYPE_CHECKING:
    from ..account_routing import Account

#: What an absent journal means.
NOTHING_YET = "SearchDesk has not changed anything on this computer yet."
#: What a journal that cannot be read means, after the journal's own sentence.
UNREADABLE = (
    "Nothing else is affected. To see what is wrong with it, run searchdesk-server --check-journal in a "
    "terminal, or use Check the record in the SearchDesk app's Activity."
)
#: The label under which a request's page is recorded (journal/record.py, `request_targets`).
PAGE = "Page"
#: How a checkpoint row (older rows removed: the time they are kept, or Clear the record) reads.
CHECKPOINT = "Earlier entries were removed from the record here"

#: How a change was approved, or why a guarded call did not act (every `Approval`; a test checks).
APPROVAL_WORDS: Mapping[str, str] = {
    Approval.NOT_ASKED: "not asked (this kind of change needs no approval)",
    Approval.CLIENT: "approved in the MCP client's dialog",
    Approval.DIALOG: "approved in SearchDesk's dialog",
    Approval.NOTIFICATION: "approved from SearchDesk's notification",
    Approval.APP: "approved in the SearchDesk app",
    Approval.TOKEN: "made with a one-time code on a second call; nobody was asked",
    Approval.DECLINED: "declined",
    Approval.REFUSED: "refused",
    Approval.WAITING: "not approved yet",
    Approval.UNANSWERED: "not answered in time",
    Approval.NONE: "",
}
#: What Google did with a change (every `Result` an outcome row holds), before Google's words.
RESULT_WORDS: Mapping[str, str] = {
    Result.DONE: "done",
    Result.REFUSED: "refused by Google",
    Result.UNKNOWN: "unknown",
}
NO_OUTCOME = "not recorded (SearchDesk stopped before Google answered, or the change is still under way)"
NOTHING_SENT = "nothing was sent"

#: The note under a list with entries Claude may not see; their number is of the whole record, so it
#: says nothing about the site or dates asked for (`select`).
LEFT_OUT = (
    "{entries} left out: the record holds them for Google accounts or properties Claude may not use now "
    "(counted over the whole record, whatever site or dates were asked for)."
)

HEADERS = ["When (UTC)", "Change", "Property", "Values", "Account", "Asked by", "Approval", "What Google did"]


@dataclass(frozen=True)
class Visibility:
    """What Claude may see now: the accounts it may use and the properties GSC_ALLOWED_SITES allows."""

    accounts: frozenset[str]  # casefolded addresses
    unnamed: bool  # the only account has no known address
    allowed_sites: tuple[str, ...]

    @classmethod
    def of(cls, accounts: Sequence[Account], allowed_sites: tuple[str, ...]) -> Visibility:
        return cls(
            frozenset(a.key for a in accounts if a.name),
            len(accounts) == 1 and accounts[0].name is None,
            allowed_sites,
        )

    def account_ok(self, account: str) -> bool:
        if not account:
            return self.unnamed
        return account.casefold() in self.accounts

    def place_ok(self, prop: str | None, page: str | None) -> bool:
        """The row's property (or, with none, its page) is allowed; a row naming neither only when all are."""
        if not self.allowed_sites:
            return True
        try:
            if prop is not None:
                check_allowed(self.allowed_sites, prop)
            elif page is not None:
                check_allowed_url(self.allowed_sites, page)
            else:
                return False
        except PropertyError:
            return False
        return True


def _property(row: Row) -> str | None:
    """The row's property in its one written form (None: it names none, or names it unreadably)."""
    if not row.site:
        return None
    try:
        return normalise_property(row.site)
    except PropertyError:
        return None


def _page(row: Row) -> str | None:
    return next((t.value for t in row.values if t.label == PAGE), None)


def _dates(args: Mapping[str, Any]) -> tuple[dt.date | None, dt.date | None]:
    """Both ends inclusive, in UTC days; either may be left out."""
    start = parse_day("start_date", args["start_date"]) if "start_date" in args else None
    end = parse_day("end_date", args["end_date"]) if "end_date" in args else None
    if start is not None and end is not None and start > end:
        raise ToolFailure(START_AFTER_END)
    return start, end


def _in_dates(row: Row, start: dt.date | None, end: dt.date | None) -> bool:
    day = row.when.astimezone(dt.UTC).date()
    return (start is None or day >= start) and (end is None or day <= end)


def _matches(site: str | None, prop: str | None, page: str | None) -> bool:
    if site is None:
        return True
    if prop is not None:
        return covers(site, prop)
    return page is not None and covers_url(site, page)


def _approval(row: Row) -> str:
    words = APPROVAL_WORDS.get(row.approval, row.approval)
    return f"{words}. {row.words}" if row.words and row.kind == Kind.ANSWER else words


def _google(row: Row, outcome: Row | None) -> str:
    if row.kind == Kind.ANSWER:
        return NOTHING_SENT
    if outcome is None:
        return NO_OUTCOME
    words = RESULT_WORDS.get(outcome.result, outcome.result)
    return f"{words}: {outcome.words}" if outcome.words else words


def _entry(row: Row, outcome: Row | None) -> dict[str, Any]:
    """One change, answer or checkpoint as Claude reads it; every string cleaned."""
    from ..journal.undo import change_name

    if row.kind == Kind.CHECKPOINT:
        return {
            "seq": row.seq,
            "time": clean(row.at),
            "kind": "checkpoint",
            "action": CHECKPOINT,
            "note": clean(row.words),
        }
    entry: dict[str, Any] = {
        "seq": row.seq,
        "time": clean(row.at),
        "kind": clean(row.kind),
        "tool": clean(row.tool),
        "action": change_name(row.tool),
        "property": clean(row.site),
        "values": [{"label": clean(t.label), "value": clean(t.value)} for t in row.values],
        "account": clean(row.account),
        "asked_by": clean(row.asked_by),
        "approval": clean(_approval(row)),
        "google": clean(_google(row, outcome)),
    }
    if outcome is not None:
        entry["google_at"] = clean(outcome.at)
    return entry


def _row(e: Mapping[str, Any]) -> list[str]:
    if e["kind"] == "checkpoint":
        return [sh.cell(e["time"]), sh.cell(e["action"]), "", sh.cell(e["note"]), "", "", "", ""]
    values = "; ".join(f"{v['label']}: {v['value']}" for v in e["values"])
    return [
        sh.cell(e["time"]),
        sh.cell(e["action"]),
        sh.cell(e["property"]),
        sh.cell(values),
        sh.cell(e["account"]),
        sh.cell(e["asked_by"]),
        sh.cell(e["approval"]),
        sh.cell(e["google"]),
    ]


def select(
    rows: Iterable[Row],
    seen: Visibility,
    *,
    site: str | None = None,
    start: dt.date | None = None,
    end: dt.date | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The entries Claude may see that match the site and dates, newest first, and how many entries of
    the whole record it may not see (accounts or properties it may not use now). A change and its
    outcome are one entry; an outcome whose change was removed from the record stands alone. Checkpoints
    name no account or property and are always shown: where the record was shortened is part of every
    question.

    The count is taken by the visibility rule alone, before `site`, `start` and `end` apply: counted
    among the rows a question matched, it would answer whether a withheld account has a property Claude
    guessed, and on which days it changed (issue 36). Nothing Claude can choose changes it."""
    rows = list(rows)
    outcomes = {r.about: r for r in rows if r.kind == Kind.OUTCOME and r.about is not None}
    changes = {r.seq for r in rows if r.kind == Kind.CHANGE}
    entries: list[dict[str, Any]] = []
    hidden = 0
    for row in sorted(rows, key=lambda r: r.seq, reverse=True):
        if row.kind == Kind.OUTCOME and row.about in changes:
            continue  # shown with its change
        if row.kind == Kind.CHECKPOINT:
            if _in_dates(row, start, end):
                entries.append(_entry(row, None))
            continue
        prop, page = _property(row), _page(row)
        if not (seen.account_ok(row.account) and seen.place_ok(prop, page)):
            hidden += 1  # whatever the site and dates: see the docstring
            continue
        if not (_in_dates(row, start, end) and _matches(site, prop, page)):
            continue
        if row.kind == Kind.OUTCOME:  # its change is no longer in the record
            entries.append(_entry(row, row) | {"kind": Kind.CHANGE.value})
        else:
            entries.append(_entry(row, outcomes.get(row.seq) if row.kind == Kind.CHANGE else None))
    return entries, hidden


async def list_changes(call: Call) -> Output:
    """The record of changes Claude may see now (the module's docstring says which rows and why)."""
    site = call.site() if "site" in call.args else None
    start, end = _dates(call.args)
    journal = call.runtime.journal
    if not journal.exists():
        return Output(NOTHING_YET, {"changes": [], "count": 0, "left_out": 0}, from_google=False)
    try:
        rows = await anyio.to_thread.run_sync(journal.rows)
    except JournalError as exc:
        raise ToolFailure(f"{exc} {UNREADABLE}") from None
    seen = Visibility.of(await call.runtime.directory.accounts(), call.config.allowed_sites)
    entries, hidden = select(rows, seen, site=site, start=start, end=end)
    scope = f" for {site}" if site is not None else ""
    if start is not None or end is not None:
        scope += f" from {start.isoformat() if start else 'the start'} to {end.isoformat() if end else 'now'}"
    footer = LEFT_OUT.format(entries=plural(hidden, "entry", "entries")) if hidden else ""
    out = listing(
        entries=entries,
        headers=HEADERS,
        row=_row,
        intro=f"{plural(len(entries), 'entry', 'entries')} in SearchDesk's record of changes on this computer"
        f"{scope}, newest first:",
        key="changes",
        narrow="Give site, or start_date and end_date, to see older entries.",
        noun="entries",
        extra={"left_out": hidden},
        footer=footer,
    )
    out.source = "journal"
    return out
