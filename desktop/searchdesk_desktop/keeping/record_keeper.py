"""How long the record of changes is kept, and Clear the record: the app's half of the journal.

The server writes the journal (`searchdesk_server.journal`); the app removes from it, and only in two
ways, both through `Journal`'s own removals so a checkpoint row says what went and the chain still
checks: rows older than the person's choice (Settings, Kept for; a year unless they choose otherwise),
and everything (Clear the record). After each removal the app's note of the newest row it saw
(`check.Seen`) moves to the checkpoint row, so its own removal never reads as rows taken away.

No Qt here: the app calls these on a worker thread (`RecordKeeper`) (an SQLite lock held by a server can make a removal
wait up to five seconds, and the Settings window and the approval dialog's timers must not wait with
it), and the tests call them directly.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from searchdesk_server.journal.check import Seen, check
from searchdesk_server.journal.paths import all_journals
from searchdesk_server.journal.store import Journal, JournalError, Row

log = logging.getLogger(__name__)

#: How often a running app looks whether a new day began (then it removes what is older than Settings'
#: Kept for). Hourly, not daily: a computer asleep overnight stops a day-long timer's clock with it.
KEEPING_CHECK_MS = 3_600_000
#: Kept for ever: nothing is removed because of its age.
FOREVER = 0
#: What a person has until they choose otherwise.
DEFAULT_DAYS = 365
#: The choices Settings offers, in the order shown: days (FOREVER for no limit) and their words.
CHOICES: tuple[tuple[int, str], ...] = (
    (30, "30 days"),
    (90, "90 days"),
    (365, "A year"),
    (FOREVER, "Forever"),
)
#: English month names, not the system's: every other word the app says is English (and Qt sets the
#: process's locale, which would turn strftime's %B into another language).
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def kept_for(days: int) -> int:
    """The setting as it is used: one of CHOICES, else the default (a hand-edited settings file)."""
    return days if any(days == d for d, _ in CHOICES) else DEFAULT_DAYS


def kept_for_words(days: int) -> str:
    """How long, after "SearchDesk keeps it": "for a year", "for 30 days", "until you clear it"."""
    days = kept_for(days)
    if days == FOREVER:
        return "until you clear it"
    label = next(words for d, words in CHOICES if d == days)
    return "for " + label[:1].lower() + label[1:]


def day_words(day: date) -> str:
    """1 December 2026."""
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def cutoff(days: int, now: datetime | None = None) -> datetime | None:
    """The start of the day, in this computer's time zone, `days` days before today; None for ever.

    Whole days: rows are removed at most once a day however often the app starts (a second pruning on
    the same day finds nothing older, so it adds no checkpoint row), and the checkpoint's words can
    name a date."""
    days = kept_for(days)
    if days == FOREVER:
        return None
    today = (now or datetime.now().astimezone()).astimezone().date()
    day = today - timedelta(days=days)
    return datetime(day.year, day.month, day.day).astimezone()  # local midnight, with its own offset


def pruned_words(days: int, before: datetime) -> str:
    """The checkpoint row's words for a site owner: what went, and why."""
    return (
        f"Changes before {day_words(before.astimezone().date())} removed: SearchDesk keeps them "
        f"{kept_for_words(days)} (Settings)."
    )


def cleared_words(now: datetime | None = None) -> str:
    """The checkpoint row's words after Clear the record, in this computer's time."""
    moment = (now or datetime.now().astimezone()).astimezone()
    return f"Cleared by you on {day_words(moment.date())} at {moment:%H:%M}."


@dataclass(frozen=True)
class Removal:
    """What happened to one journal: its checkpoint row, or why nothing was removed."""

    path: Path
    checkpoint: Row | None = None  # None: nothing was removed
    #: Nothing was removed because the record does not check (its problem stays for Check the record).
    not_checked: str = ""
    error: str = ""  # the journal could not be read or written (JournalError's words)


def prune(paths: Iterable[Path], days: int, now: datetime | None = None) -> list[Removal]:
    """Remove, from each journal, the rows older than the setting allows.

    A journal that does not check (against the app's note of what it saw) is left as it is: removing
    rows from it could remove the very rows that show the problem, and moving the note to a new
    checkpoint would hide rows taken from its end. The person sees the problem in Check the record, and
    Clear the record still removes everything. A journal that does not exist is not created."""
    before = cutoff(days, now)
    out: list[Removal] = []
    for path in paths:
        journal = Journal(path)
        if before is None or not journal.exists():
            out.append(Removal(path))
            continue
        report = check(journal)
        if not report.ok:
            out.append(Removal(path, not_checked=report.render()))
            continue
        try:
            row = journal.remove_before(before, pruned_words(days, before))
        except JournalError as exc:
            out.append(Removal(path, error=str(exc)))
            continue
        out.append(Removal(path, checkpoint=row))
    return out


def clear(paths: Iterable[Path], now: datetime | None = None) -> list[Removal]:
    """Remove every row of each journal that exists, leaving one checkpoint row that says so."""
    words = cleared_words(now)
    out: list[Removal] = []
    for path in paths:
        journal = Journal(path)
        if not journal.exists():
            out.append(Removal(path))
            continue
        try:
            out.append(Removal(path, checkpoint=journal.clear(words)))
        except JournalError as exc:
            out.append(Removal(path, error=str(exc)))
    return out


def note_seen(removals: Iterable[Removal]) -> None:
    """Move the app's note of the newest row it saw to each checkpoint row just written (the newest row
    at that moment: it was appended in the same transaction as the removal)."""
    for removal in removals:
        if removal.checkpoint is not None:
            # Unsaved, the note stays on an older row: the newest rows go unchecked (the check says
            # so), but the app's own removal never reads as tampering.
            with contextlib.suppress(OSError):
                Seen(removal.checkpoint.seq, removal.checkpoint.hash).save(removal.path)


def problems(removals: Iterable[Removal]) -> str:
    """What a person is told after pruning or clearing, when something did not work ('' when all did)."""
    lines: list[str] = []
    for removal in removals:
        if removal.error:
            lines.append(removal.error)
        elif removal.not_checked:
            lines.append(
                f"Old changes were not removed from the record at {removal.path}: it does not check "
                "(Activity, Check the record, says why)."
            )
    return "\n".join(lines)


def notice_text(folder: str, days: int) -> str:
    """The first start after the update: what is now kept, where (`folder`, as a person reads it), for
    how long, and how to clear it."""
    return (
        "SearchDesk now keeps a record of every change it makes to your Search Console: what it changed, "
        "for which Google account, who asked, how you approved it and what Google did. The record stays on "
        f"this computer only, in {folder}, {kept_for_words(days)} (Settings, Kept for). To remove it, use "
        "Settings, Clear the record. Activity shows it."
    )


class RecordKeeper:
    """The removals as the running app makes them: one at a time on the executor it is given (never on
    the Qt thread: a server holding the journal's lock can make one wait five seconds), each reported
    through ``later`` (which runs a callable on the Qt thread) and then ``changed``."""

    def __init__(
        self,
        pool: Executor,
        later: Callable[[Callable[[], None]], None],
        changed: Callable[[], None],
        *,
        demo: bool = False,
    ) -> None:
        self._pool = pool
        self._later = later
        self._changed = changed
        self.demo = demo
        self._kept_on: tuple[date, int] | None = None  # the day and setting of the last removal
        #: What went wrong the last time the record was shortened or cleared ('' when nothing did).
        self.problem = ""

    def paths(self) -> list[Path]:
        """The journals this app shows and looks after: the demo's alone in the demo."""
        return all_journals(demo=self.demo)

    def keep(self, setting: int) -> None:
        """Remove the rows older than ``setting`` (Kept for), at most once a day and setting (on the worker)."""
        days = kept_for(setting)
        key = (date.today(), days)
        if key == self._kept_on:
            return
        self._kept_on = key
        self._submit(lambda: prune(self.paths(), days), None)

    def clear(self, done: Callable[[str], None]) -> None:
        """Clear the record (the person confirmed); `done` gets '' or what went wrong, on the Qt thread."""
        self._submit(lambda: clear(self.paths()), done)

    def _submit(self, work: Callable[[], list[Removal]], done: Callable[[str], None] | None) -> None:
        def run() -> None:
            try:
                removals = work()
            except Exception:  # a bug, not a journal refusing: still answer, so Settings never waits
                log.exception("the record of changes could not be shortened or cleared")
                removals = [Removal(Path(), error="SearchDesk could not change its record of changes.")]
            self._later(lambda: self._done(removals, done))

        try:
            self._pool.submit(run)
        except RuntimeError:  # stopping: nothing more is removed
            pass

    def _done(self, removals: list[Removal], done: Callable[[str], None] | None) -> None:
        """On the Qt thread, after a removal: the app's note of the newest row moves to the checkpoint."""
        note_seen(removals)
        self.problem = problems(removals)
        if done is None and any(r.error for r in removals):
            self._kept_on = None  # a journal was busy or unwritable: the next hourly look tries again
        if done is not None:
            done(self.problem)
        self._changed()
