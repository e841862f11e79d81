"""Activity's lines, read from the change journal the server writes. No Qt here.

The record outlives the app: the server writes every change it sends to Google and every guarded call's
outcome to the journal (`searchdesk_server.journal`), so Activity shows what happened before SearchDesk
last started, and changes made without the app at all (a program given its own Google credentials).
The app only reads it, and notes the newest row it saw (`Seen`, beside the journal) so that deleting
the newest rows is found later.

One line per change (its `change` row joined with the `outcome` row that points at it), one per guarded
call that sent nothing (`answer`), and one per checkpoint (rows removed: cleared by the person, or older
than the time they are kept), so a gap in the record is visible. Every word here is for a site owner:
no tool name, code or API name — the server's own sentences to Claude (an answer row's `words`) are
reworded (`plain`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from pathlib import Path

from searchdesk_server.approval.chain import TOKEN_OFFERED
from searchdesk_server.approval.question import ACTIONS, action_name, value_line
from searchdesk_server.journal.check import Report, Seen, check
from searchdesk_server.journal.store import Approval, Journal, JournalError, Kind, Result, Row
from searchdesk_server.journal.undo import change_name, how_to_undo

log = logging.getLogger("searchdesk_desktop.history")

#: The columns of Activity and of its CSV, in order.
COLUMNS = (
    "When",
    "What",
    "Property and details",
    "Google account",
    "Asked by (as it says)",
    "Approval",
    "What Google did",
    "How to undo this",
)
#: Values shown in a row on screen; all of them are in its tooltip and in Copy as CSV.
SHOWN_VALUES = 6
ALL = ""  # a filter that lets every line through

#: How each approval reads (a change row, or an answer row's reason a change was not made).
APPROVED = {
    Approval.DIALOG.value: "You approved in SearchDesk's window",
    Approval.NOTIFICATION.value: "You approved in a notification",
    Approval.CLIENT.value: "You approved in Claude's own dialog",
    Approval.APP.value: "You approved in SearchDesk",
    Approval.TOKEN.value: "Nobody was asked: done with a one-time code (the request was made twice)",
    Approval.NOT_ASKED.value: "Not asked: SearchDesk does not ask before this change",
}
NOT_RECORDED = "How it was approved was not recorded"
#: A guarded call that sent nothing, in one line: what happened and what the person can do. The table
#: shows this line; the words SearchDesk gave the program that asked follow it in the line's details
#: (a sentence written for Claude, "…then call it again with the same arguments", is not the person's).
DECLINED = "You declined"
NOT_DONE = "Not done: "
UNANSWERED = "Not done: nobody answered in time. Ask Claude again, and answer in SearchDesk."
WAITING = "Not done: it waited for your answer in SearchDesk. Answer there, then ask Claude again."
CODE_OFFERED = (
    "Not done: nobody could be asked, so the program that asked got a one-time code instead. Keep SearchDesk "
    "open to be asked."
)
REFUSED = "SearchDesk stopped it before asking you"
TOLD = "What SearchDesk told the program that asked: "
#: What Google did.
DONE = "Done"
GOOGLE_REFUSED = "Google refused: "
NO_ANSWER = "No answer from Google: it may or may not have been done"
NO_OUTCOME = "No outcome recorded"
NOTHING_SENT = "Nothing was sent to Google"
NOTHING_TO_UNDO = ""
#: A checkpoint's line: rows removed, by Clear the record or because they were older than Settings keeps
#: them. Its details are the words the app wrote into the checkpoint ("Cleared by you on …"), else these.
GAP = "Changes removed from the record"
GAP_WORDS = "Changes before {when} were removed from this record."


class LineKind(Enum):
    CHANGE = "change"
    ANSWER = "answer"
    GAP = "gap"


@dataclass(frozen=True)
class Line:
    """One line of Activity, every value whole (the window shortens what it shows)."""

    at: str  # the row's time, ISO UTC (the order lines are merged in)
    kind: LineKind
    when: str
    what: str
    values: tuple[tuple[str, str], ...]
    site: str
    account: str
    asked_by: str
    approval: str
    google: str
    undo: str
    journal: int = 0  # which journal it came from (`History.journals`)
    seq: int = 0
    note: str = ""  # a gap's details, in the place of values

    def cells(self, *, whole: bool = True) -> list[str]:
        """The line in COLUMNS' order; `whole=False`: as the table shows it (the first values, the first
        paragraph of a reason), the rest in its tooltip."""
        details = self.note or values_text(self.values, 0 if whole else SHOWN_VALUES)
        approval = self.approval if whole else first_paragraph(self.approval)
        google = self.google if whole else first_paragraph(self.google)
        return [self.when, self.what, details, account_name(self.account), self.asked_by, approval, google, self.undo]


@dataclass
class History:
    """What one read of every journal found."""

    journals: list[Path]
    lines: list[Line] = field(default_factory=list)  # newest first
    #: Per journal read: its check (rows intact, newest rows against the app's note).
    reports: list[Report] = field(default_factory=list)

    @property
    def problems(self) -> list[Report]:
        """The journals that do not check or could not be read."""
        return [r for r in self.reports if not r.ok]

    def sites(self) -> list[str]:
        return sorted({line.site for line in self.lines if line.site}, key=str.casefold)

    def accounts(self) -> list[str]:
        return sorted({line.account for line in self.lines if line.account}, key=str.casefold)

    def filtered(self, site: str = ALL, account: str = ALL) -> list[Line]:
        """The lines for one property and one account (ALL: any); a gap concerns every property and
        account, so it is always kept."""
        return [
            line
            for line in self.lines
            if line.kind is LineKind.GAP
            or ((site == ALL or line.site == site) and (account == ALL or line.account == account))
        ]


def values_text(values: Sequence[tuple[str, str]], limit: int = 0) -> str:
    """The values, one "Label: value" a line (the first ``limit`` of them, when set)."""
    lines = [value_line(label, value) for label, value in values]
    if limit and len(lines) > limit:
        lines = [*lines[:limit], f"… and {len(lines) - limit} more"]
    return "\n".join(lines)


def account_name(account: str) -> str:
    """The Google account, as Activity names it (the demo's made-up one said as such)."""
    return "the demo (no Google account)" if account == "demo" else account


def first_paragraph(text: str) -> str:
    return text.split("\n\n", 1)[0]


def local_time(row: Row) -> str:
    """A row's time in this computer's time zone, to the second."""
    return row.when.astimezone().strftime("%Y-%m-%d %H:%M:%S")


@cache
def _tool_names() -> str:
    """Every tool name of the catalogue, longest first, as one alternation."""
    from searchdesk_server.catalogue import TOOLS

    return "|".join(re.escape(name) for name in sorted((t.name for t in TOOLS), key=len, reverse=True))


@cache
def _named() -> re.Pattern[str]:
    """A tool's name, or the token's argument name, as a whole word."""
    return re.compile(rf"\b({_tool_names()}|confirm_token)\b")


@cache
def _did_nothing() -> re.Pattern[str]:
    """The server's sentences name the tool first ("delete_site did nothing: …", "…; delete_site did nothing.")."""
    return re.compile(rf"(?:;\s*)?\b(?:{_tool_names()}) did nothing(?: yet)?(?:[:.;]\s*|$)")


def plain(words: str) -> str:
    """The server's sentence to Claude, for a person: the "<tool> did nothing" opening dropped (the line
    says not done), every remaining tool name said as the change it makes, the token as a one-time code."""

    def drop(match: re.Match[str]) -> str:  # "A; x did nothing. B" reads "A. B"; an opening "x did nothing:" goes
        if not match.group(0).startswith(";"):
            return ""
        return ". " if match.end() < len(words) else "."

    text = _did_nothing().sub(drop, words).strip()

    def name(match: re.Match[str]) -> str:
        word = match.group(1)
        return "one-time code" if word == "confirm_token" else f"“{change_name(word)}”"

    text = _named().sub(name, text)
    return text[:1].upper() + text[1:] if text else text


def first_sentence(text: str) -> tuple[str, str]:
    """`text` as its first sentence and the rest ("" when it is one sentence)."""
    parts = re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def _answered(row: Row) -> str:
    """An answer row's Approval cell: its first paragraph says in a line what happened and what the person
    can do (derived from the row's approval, and for a one-time code from its words); the paragraphs
    after it, shown in the line's details and in Copy as CSV, keep the server's own reason, reworded."""
    said = plain(row.words)
    if row.approval == Approval.DECLINED.value:
        return DECLINED
    if row.approval == Approval.WAITING.value and row.words == TOKEN_OFFERED:
        return CODE_OFFERED
    if row.approval in (Approval.UNANSWERED.value, Approval.WAITING.value):
        line = UNANSWERED if row.approval == Approval.UNANSWERED.value else WAITING
        return f"{line}\n\n{TOLD}{said}" if said else line
    if not said:
        return f"{NOT_DONE}{REFUSED}."
    # A refusal's reason is SearchDesk's own (the demo is running, the account cannot see the property, the
    # code was wrong…): its first sentence is the line, what follows it (often what to do) the details.
    first, rest = first_sentence(said)
    return f"{NOT_DONE}{first}\n\n{rest}" if rest else f"{NOT_DONE}{first}"


def _google(outcome: Row | None) -> str:
    if outcome is None:
        return NO_OUTCOME
    if outcome.result == Result.DONE.value:
        return DONE
    if outcome.result == Result.UNKNOWN.value:
        return NO_ANSWER
    return GOOGLE_REFUSED + (plain(outcome.words) or "no reason given")


def _line(row: Row, journal: int, kind: LineKind, **words: str) -> Line:
    return Line(
        at=row.at,
        kind=kind,
        when=local_time(row),
        what=words.pop("what", change_name(row.tool)),
        values=() if kind is LineKind.GAP else tuple((t.label, t.value) for t in row.values),
        site=row.site,
        account=row.account,
        asked_by=row.asked_by,
        journal=journal,
        seq=row.seq,
        **{"approval": "", "google": "", "undo": NOTHING_TO_UNDO, "note": "", **words},
    )


def lines_of(rows: Sequence[Row], journal: int = 0) -> list[Line]:
    """Activity's lines for one journal's rows (oldest first, as stored), oldest first."""
    outcomes = {r.about: r for r in rows if r.kind == Kind.OUTCOME.value}
    lines: list[Line] = []
    for row in rows:
        if row.kind == Kind.CHANGE.value:
            outcome = outcomes.get(row.seq)
            refused = outcome is not None and outcome.result == Result.REFUSED.value
            approval = APPROVED.get(row.approval, NOT_RECORDED)
            undo = NOTHING_TO_UNDO if refused else how_to_undo(row.tool)  # done, or it may have been
            lines.append(_line(row, journal, LineKind.CHANGE, approval=approval, google=_google(outcome), undo=undo))
        elif row.kind == Kind.ANSWER.value:
            lines.append(_line(row, journal, LineKind.ANSWER, approval=_answered(row), google=NOTHING_SENT))
        elif row.kind == Kind.CHECKPOINT.value:  # the app's own words: "Cleared by you on …" (keeping/record_keeper.py)
            note = row.words or GAP_WORDS.format(when=local_time(row))
            lines.append(_line(row, journal, LineKind.GAP, what=GAP, note=note))
    return lines


def read(journals: Iterable[Path], *, note: bool = True) -> History:
    """Every journal's lines, merged newest first, each journal checked as it is read (`check`, the
    server's own check).

    After a read that checks, the app's note of the newest row (`Seen`) moves to the newest row checked,
    so that removing rows from the end is found later. A journal that does not check never moves the
    note: it keeps pointing at what was there, so the check keeps failing until the person looks (a note
    overwritten from a damaged record would hide the removal from then on). `note=False`: read only."""
    history = History(list(journals))
    for index, path in enumerate(history.journals):
        journal = Journal(path)
        seen = Seen.load(path)
        report = check(journal, seen, use_seen=True)
        history.reports.append(report)
        if report.missing or report.unreadable:
            continue
        try:
            rows = journal.rows()
        except JournalError as exc:  # it could be read a moment ago
            report.unreadable = str(exc)
            continue
        history.lines += lines_of(rows, index)
        last = report.last
        if note and report.ok and last is not None and seen != Seen(last.seq, last.hash):
            try:
                Seen(last.seq, last.hash).save(path)
            except OSError:
                log.warning("the note of the newest row seen could not be saved beside %s", path)
    history.lines.sort(key=lambda line: (line.at, line.journal, line.seq), reverse=True)
    return history


def check_all(journals: Iterable[Path]) -> list[Report]:
    """Check the record: the server's own check (`searchdesk-server --check-journal`) on every journal."""
    return [check(Journal(path)) for path in journals]


def check_text(reports: Sequence[Report]) -> str:
    """The check's reports as one text for a person (one paragraph a journal)."""
    return "\n\n".join(r.render() for r in reports)


@cache
def tool_title(tool: str) -> str:
    """A tool as a site owner reads it: a guarded action as the question names it ("Remove a sitemap",
    `question.ACTIONS`, the dialog's and notification's word), any other from the one table of tools."""
    from searchdesk_server.catalogue import TOOLS

    if tool in ACTIONS:
        return action_name(tool)
    return next((t.title for t in TOOLS if t.name == tool), "A change")
