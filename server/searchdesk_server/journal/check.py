"""Checking the journal: `searchdesk-server --check-journal` and the app's Check the record.

What it finds: any field of any row changed after it was written (the row's hash no longer matches), a
row removed from the middle or the start (the next row points back to a hash that is not there, and no
checkpoint says why), and the newest rows removed — against the last row the app saw (`Seen`, kept by
the app beside the journal). What it cannot find: someone who rewrites the whole file, every hash
recomputed, with this computer's account — the hashes make changes evident, they are not a signature.
It needs no credentials and no network.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..text.phrases import plural
from .paths import seen_path
from .store import GENESIS, Journal, JournalError, Kind, Row
from .undo import change_name

#: How many changes without an outcome the report names one by one.
LISTED = 10


@dataclass(frozen=True)
class Seen:
    """The newest row the app has seen: its number and hash."""

    seq: int
    hash: str

    @classmethod
    def load(cls, journal: Path) -> Seen | None:
        """The app's note for `journal`; None when there is none or it cannot be read (then the newest
        rows cannot be checked, and the report says so)."""
        try:
            raw = json.loads(seen_path(journal).read_text(encoding="utf-8"))
            return cls(int(raw["seq"]), str(raw["hash"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save(self, journal: Path) -> None:
        """Kept beside the journal, replaced atomically (a half-written note would read as none)."""
        target = seen_path(journal)
        temporary = target.with_name(target.name + ".tmp")
        temporary.write_text(json.dumps({"seq": self.seq, "hash": self.hash}), encoding="utf-8")
        temporary.replace(target)


@dataclass(frozen=True)
class Problem:
    """The first row that does not check, in words (its number and time)."""

    seq: int
    at: str
    why: str


@dataclass
class Report:
    """The check's verdict on one journal."""

    path: Path
    rows: int = 0
    first: Row | None = None
    last: Row | None = None
    problem: Problem | None = None
    #: Changes sent (or about to be) with no outcome: SearchDesk stopped while Google was asked.
    open_changes: list[Row] = field(default_factory=list)
    missing: bool = False  # no journal yet
    unreadable: str = ""  # the file could not be read at all
    seen_checked: bool = False

    @property
    def ok(self) -> bool:
        return self.problem is None and not self.unreadable

    def render(self) -> str:
        """The report a person reads (the command prints it; Check the record shows it)."""
        if self.missing:
            return f"There is no record yet at {self.path}: SearchDesk has not changed anything on this computer."
        if self.unreadable:
            return f"The record at {self.path} could not be checked: {self.unreadable}"
        lines: list[str] = []
        if self.problem is not None:
            p = self.problem
            when = f" ({_local(p.at)})" if p.at else ""
            lines.append(f"The record at {self.path} does not check: row {p.seq}{when} {p.why}.")
            if self.last is not None and p.seq < self.last.seq:
                lines.append("Rows after it are shown as they are, but cannot be trusted either.")
        else:
            span = ""
            if self.first is not None and self.last is not None:
                first, last = self.first, self.last
                span = f", rows {first.seq} to {last.seq}, from {_local(first.at)} to {_local(last.at)}"
            count = plural(self.rows, "row")
            lines.append(f"The record at {self.path} is intact: {count}{span}.")
            if not self.seen_checked:
                lines.append(
                    "Whether its newest rows were removed could not be checked: the SearchDesk app has not read it yet."
                )
        if self.open_changes:
            n = len(self.open_changes)
            lines.append(
                f"{plural(n, 'change')} {'have' if n != 1 else 'has'} no outcome recorded (SearchDesk "
                "stopped, or is still waiting for Google); check them in Search Console:"
            )
            for row in self.open_changes[:LISTED]:
                lines.append(f"  row {row.seq} ({_local(row.at)}): {change_name(row.tool)} {row.site}".rstrip())
            if n > LISTED:
                lines.append(f"  and {n - LISTED} more")
        return "\n".join(lines)


def _local(at: str) -> str:
    """A row's time in this computer's time zone, to the second."""
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except (ValueError, TypeError, AttributeError):  # not a time, or not even text (edited by hand)
        return repr(at)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def verify(rows: list[Row], seen: Seen | None) -> Problem | None:
    """The first row that does not check, or None. `rows` oldest first, as stored."""
    if not rows:
        if seen is not None and seen.seq > 0:
            return Problem(seen.seq, "", f"is missing: the record is empty, but SearchDesk had seen {seen.seq} rows")
        return None
    checkpoints = {(r.about, r.anchor) for r in rows if r.kind == Kind.CHECKPOINT.value and r.hash == r.expected_hash()}
    first = rows[0]
    if first.seq == 1:
        if first.prev != GENESIS:
            return Problem(first.seq, first.at, "points back to a row before the first")
    elif (first.seq - 1, first.prev) not in checkpoints:
        return Problem(first.seq, first.at, f"points back to row {first.seq - 1}, which was removed without a note")
    before: Row | None = None
    for row in rows:
        if row.hash != row.expected_hash():
            return Problem(row.seq, row.at, "was changed after it was written (its hash does not match)")
        if before is not None:
            if row.seq != before.seq + 1:
                return Problem(row.seq, row.at, f"follows row {before.seq}: the rows between were removed")
            if row.prev != before.hash:
                return Problem(
                    row.seq, row.at, f"does not point back to row {before.seq}: a row was removed or replaced"
                )
        before = row
    last = rows[-1]
    if seen is not None and seen.seq >= first.seq:
        if seen.seq > last.seq:
            return Problem(
                last.seq,
                last.at,
                f"is the newest, but SearchDesk had seen row {seen.seq}: the rows after it were removed",
            )
        at_seen = rows[seen.seq - first.seq]
        if at_seen.hash != seen.hash:
            return Problem(at_seen.seq, at_seen.at, "is not the row SearchDesk saw under that number")
    return None


def open_changes(rows: list[Row]) -> list[Row]:
    """Changes with no outcome row pointing at them."""
    answered = {r.about for r in rows if r.kind == Kind.OUTCOME.value}
    return [r for r in rows if r.kind == Kind.CHANGE.value and r.seq not in answered]


def check(journal: Journal, seen: Seen | None = None, *, use_seen: bool = True) -> Report:
    """Check one journal (with the app's note of the newest row it saw, when there is one)."""
    report = Report(journal.path)
    if use_seen and seen is None:
        seen = Seen.load(journal.path)
    if not journal.exists():
        if seen is not None and seen.seq > 0:  # the app had read rows here: the whole file was removed
            report.problem = Problem(seen.seq, "", "is missing: the whole record was removed after SearchDesk saw it")
            report.seen_checked = True
            return report
        report.missing = True
        return report
    try:
        rows = journal.rows()
    except JournalError as exc:
        report.unreadable = str(exc)
        return report
    report.rows = len(rows)
    report.first = rows[0] if rows else None
    report.last = rows[-1] if rows else None
    report.seen_checked = seen is not None
    report.problem = verify(rows, seen)
    report.open_changes = open_changes(rows)
    return report
