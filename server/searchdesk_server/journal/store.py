"""The journal file: one SQLite table of hash-chained rows, appended by many processes, read by the app.

Why SQLite (the standard library's): several server processes append at once while the app reads, and a
process killed mid-write must leave a file that opens. Each append is one `BEGIN IMMEDIATE` transaction
(the newest row's hash is read and the new row written under one lock), in WAL mode where the file system
allows it (else SQLite's default journal), `synchronous=FULL` so a committed row survives a power cut.
A writer waits at most `BUSY_S` for the lock, then the append fails and nothing is sent to Google.

Rows are never updated. Each holds `hash`: SHA-256 over one canonical encoding of every other field of
the row, the previous row's hash among them (`encode`), so an edit to any field of any row — the newest
included — no longer matches. The file holds nothing but this table and its indexes. Removing old rows
(the time they are kept, or Clear the record) appends a checkpoint row naming what was removed and the
hash the next row points back to, so the check still passes and the gap shows.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

#: How long an append waits for another process's lock before it fails (and nothing is sent).
BUSY_S = 5.0
#: The `prev` of the very first row.
GENESIS = "0" * 64
SCHEMA_VERSION = 1

_COLUMNS = (
    "seq",
    "at",
    "kind",
    "about",
    "tool",
    "account",
    "site",
    "targets",
    "asked_by",
    "approval",
    "result",
    "words",
    "anchor",
    "prev",
)
_NAMES = (*_COLUMNS, "hash")
#: The statements are built once from the constant column names above (no value is ever formatted in).
_INSERT = f"INSERT INTO journal ({', '.join(_NAMES)}) VALUES ({', '.join('?' * len(_NAMES))})"  # noqa: S608
_SELECT = f"SELECT {', '.join(_NAMES)} FROM journal"  # noqa: S608
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS journal ("
    " seq INTEGER PRIMARY KEY, at TEXT NOT NULL, kind TEXT NOT NULL, about INTEGER,"
    " tool TEXT NOT NULL, account TEXT NOT NULL, site TEXT NOT NULL, targets TEXT NOT NULL,"
    " asked_by TEXT NOT NULL, approval TEXT NOT NULL, result TEXT NOT NULL, words TEXT NOT NULL,"
    " anchor TEXT NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS journal_at ON journal (at)",
    "CREATE INDEX IF NOT EXISTS journal_site ON journal (site)",
    "CREATE INDEX IF NOT EXISTS journal_about ON journal (about)",
)


class Kind(StrEnum):
    """What a row is."""

    CHANGE = "change"  # a request about to be sent to Google (committed before it is sent)
    OUTCOME = "outcome"  # what Google did with the change named in `about`
    ANSWER = "answer"  # a guarded call that sent nothing: declined, refused, still waiting
    CHECKPOINT = "checkpoint"  # rows up to `about` were removed (kept for, or cleared); `anchor` their hash


class Approval(StrEnum):
    """How a change was approved, or why a guarded call did not act."""

    NOT_ASKED = "not_asked"  # a change no person is asked about (submitting a sitemap, adding a property)
    CLIENT = "client_dialog"  # the MCP client's own dialog
    DIALOG = "app_dialog"  # SearchDesk's dialog
    NOTIFICATION = "notification"  # SearchDesk's notification
    APP = "app"  # SearchDesk said yes without saying where (an older app)
    TOKEN = "token"  # noqa: S105 (a confirm_token: the call was made twice, nobody was asked)
    DECLINED = "declined"
    REFUSED = "refused"
    WAITING = "waiting"
    UNANSWERED = "unanswered"
    NONE = ""  # outcome and checkpoint rows


class Result(StrEnum):
    """What Google did with a change."""

    NONE = ""  # not an outcome row
    DONE = "done"
    REFUSED = "refused"  # Google answered with an error; `words` says why
    UNKNOWN = "unknown"  # no answer (the network failed after the request left): it may or may not be done


class JournalError(Exception):
    """The journal could not be opened, read or appended to; the message is for a person."""


class JournalUnavailable(JournalError):
    """Nothing can be written: every change is refused before anything is sent."""


@dataclass(frozen=True)
class Target:
    """One value as the person was shown it (label and value), never a token or a search query."""

    label: str
    value: str


@dataclass(frozen=True)
class Entry:
    """A row before it is appended: the journal adds its number, time and hashes."""

    kind: Kind
    tool: str
    account: str = ""
    site: str = ""
    targets: tuple[Target, ...] = ()
    asked_by: str = ""
    approval: Approval = Approval.NONE
    result: Result = Result.NONE
    words: str = ""
    about: int | None = None
    anchor: str = ""


@dataclass(frozen=True)
class Row:
    """A row as stored: every field the hash covers, and the hash."""

    seq: int
    at: str  # ISO 8601, UTC, milliseconds: 2026-12-01T12:00:00.123Z
    kind: str
    about: int | None
    tool: str
    account: str
    site: str
    targets: str  # JSON: [[label, value], …]
    asked_by: str
    approval: str
    result: str
    words: str
    anchor: str
    prev: str
    hash: str = field(default="")

    @property
    def values(self) -> tuple[Target, ...]:
        """The targets, or none when the stored text is not a list of pairs (a damaged row: the check says so)."""
        try:
            raw = json.loads(self.targets)
            return tuple(Target(str(label), str(value)) for label, value in raw)
        except (ValueError, TypeError):
            return ()

    @property
    def when(self) -> datetime:
        """`at` as an aware datetime (the epoch when it does not parse: a damaged row)."""
        try:
            return datetime.fromisoformat(self.at.replace("Z", "+00:00"))
        except (ValueError, TypeError, AttributeError):  # not text: a blob put in by hand
            return datetime.fromtimestamp(0, UTC)

    def expected_hash(self) -> str:
        return digest(self)


def encode(row: Row) -> bytes:
    """The one canonical encoding the hash covers: every field but the hash, in column order, as JSON."""
    fields = [getattr(row, name) for name in _COLUMNS]
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":"), default=_stray).encode("utf-8")


def _stray(value: object) -> object:
    """A value no append writes (a blob put in by hand): encoded apart from any text, so the row's hash
    no longer matches and the check names the row instead of failing to encode it."""
    if isinstance(value, bytes):
        return {"blob": value.hex()}
    raise TypeError(f"a journal field cannot be {type(value).__name__}")


def digest(row: Row) -> str:
    return hashlib.sha256(encode(row)).hexdigest()


def now_text(moment: datetime | None = None) -> str:
    moment = (moment or datetime.now(UTC)).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _make(seq: int, prev: str, entry: Entry, at: datetime | None) -> Row:
    """The row `entry` becomes as number `seq` after the row whose hash is `prev`."""
    row = Row(
        seq=seq,
        at=now_text(at),
        kind=entry.kind.value,
        about=entry.about,
        tool=entry.tool,
        account=entry.account,
        site=entry.site,
        targets=_targets_text(entry.targets),
        asked_by=entry.asked_by,
        approval=entry.approval.value,
        result=entry.result.value,
        words=entry.words,
        anchor=entry.anchor,
        prev=prev,
    )
    return dataclasses.replace(row, hash=digest(row))


def _targets_text(targets: Sequence[Target]) -> str:
    return json.dumps([[t.label, t.value] for t in targets], ensure_ascii=False, separators=(",", ":"))


def _why(exc: BaseException) -> str:
    """The reason a person can act on, from what SQLite or the file system said."""
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        if "locked" in text or "busy" in text:
            return f"another program kept it busy for more than {BUSY_S:.0f} seconds"
        if "readonly" in text or "read-only" in text:
            return "it is read-only"
        if "disk" in text and ("full" in text or "i/o" in text):
            return "the disk is full or failing"
        if "unable to open" in text:
            return "it could not be opened there (is a file in the way of its folder?)"
    if isinstance(exc, sqlite3.DatabaseError) and "not a database" in str(exc).lower():
        return "the file is damaged (it is not a SearchDesk record)"
    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            return "the disk is full"
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return "its folder is read-only"
        if exc.errno in (errno.ENOTDIR, errno.EEXIST):
            return "a file is in the way of its folder"
    if isinstance(exc, sqlite3.Error):
        text = str(exc).lower()
        if "full" in text:
            return "the disk is full"
    return "it could not be written"


def _use_wal(db: sqlite3.Connection) -> None:
    """WAL where the file system allows it (else SQLite's default journal stays). Switching a new file to
    WAL takes its exclusive lock, and SQLite answers "locked" at once, without waiting for the busy
    timeout, while another process opens or switches the same new file: so it is tried again for up
    to BUSY_S, like any other lock (two servers writing their first rows at once)."""
    deadline = time.monotonic() + BUSY_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


class Journal:
    """One journal file. Every method opens its own short connection: nothing is held between calls, so
    any number of processes can append while another reads."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def _connect(self, *, create: bool) -> Iterator[sqlite3.Connection]:
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.exists():
            raise FileNotFoundError(self.path)
        uri = f"{self.path.as_uri()}?mode={'rwc' if create else 'rw'}"
        db = sqlite3.connect(uri, uri=True, timeout=BUSY_S, isolation_level=None)
        try:
            if create:  # a writer; reading (the check, Activity) changes nothing, not even the journal mode
                _use_wal(db)
                db.execute("PRAGMA synchronous=FULL")
            yield db
        finally:
            db.close()

    def _fail(self, exc: BaseException) -> JournalUnavailable:
        return JournalUnavailable(f"SearchDesk could not write its record of changes at {self.path}: {_why(exc)}.")

    def _ensure(self, db: sqlite3.Connection) -> None:
        if db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA:
                db.execute(statement)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def ready(self) -> None:
        """Raise JournalUnavailable unless a row could be appended now: the folder and file can be made
        and opened for writing, and the write lock taken within BUSY_S. Checked before a change is
        asked about or sent; the append before each request checks again (a full disk shows only there)."""
        try:
            with self._connect(create=True) as db:
                self._ensure(db)
                db.execute("BEGIN IMMEDIATE")
                db.execute("ROLLBACK")
        except (OSError, sqlite3.Error) as exc:
            raise self._fail(exc) from exc

    def append(self, entry: Entry, *, at: datetime | None = None) -> Row:
        """Write one row and commit it before returning (raises JournalUnavailable: nothing was written)."""
        try:
            with self._connect(create=True) as db:
                self._ensure(db)
                db.execute("BEGIN IMMEDIATE")
                try:
                    row = self._next(db, entry, at)
                    self._insert(db, row)
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        except (OSError, sqlite3.Error) as exc:
            raise self._fail(exc) from exc
        return row

    @staticmethod
    def _last(db: sqlite3.Connection) -> tuple[int, str]:
        last = db.execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
        return (0, GENESIS) if last is None else (int(last[0]), str(last[1]))

    def _next(self, db: sqlite3.Connection, entry: Entry, at: datetime | None) -> Row:
        seq, prev = self._last(db)
        return _make(seq + 1, prev, entry, at)

    @staticmethod
    def _insert(db: sqlite3.Connection, row: Row) -> None:
        db.execute(_INSERT, [getattr(row, n) for n in _NAMES])

    def exists(self) -> bool:
        return self.path.is_file()

    def rows(self, *, since: str | None = None) -> list[Row]:
        """Every row, oldest first (`since`: only rows at or after that `at` text). Raises JournalError
        when the file cannot be read; an absent file has no rows."""
        if not self.exists():
            return []
        try:
            with self._connect(create=False) as db:
                if db.execute("SELECT name FROM sqlite_master WHERE name='journal'").fetchone() is None:
                    return []
                query = _SELECT
                args: list[Any] = []
                if since is not None:
                    query += " WHERE at >= ?"
                    args.append(since)
                return [Row(*values) for values in db.execute(query + " ORDER BY seq", args)]
        except (OSError, sqlite3.Error) as exc:
            raise JournalError(f"SearchDesk could not read its record of changes at {self.path}: {_why(exc)}.") from exc

    def remove_before(self, cutoff: datetime, words: str) -> Row | None:
        """Remove the rows older than `cutoff` (kept for …), leaving a checkpoint; None when none were."""
        return self._remove(now_text(cutoff), words)

    def clear(self, words: str) -> Row:
        """Remove every row, leaving one checkpoint row (the check passes; the gap shows)."""
        row = self._remove("9999", words)  # every `at` sorts before it
        if row is None:  # an empty journal: the checkpoint still says it was cleared
            row = self.append(Entry(Kind.CHECKPOINT, tool="", words=words, about=0, anchor=GENESIS))
        return row

    def _remove(self, before: str, words: str) -> Row | None:
        try:
            with self._connect(create=True) as db:
                self._ensure(db)
                db.execute("BEGIN IMMEDIATE")
                try:
                    doomed = db.execute(
                        "SELECT seq, hash FROM journal WHERE at < ? ORDER BY seq DESC LIMIT 1", [before]
                    )
                    last_removed = doomed.fetchone()
                    if last_removed is None:
                        db.execute("ROLLBACK")
                        return None
                    # Only a run of the oldest rows: the rows after the last one removed stay contiguous.
                    upto, anchor = int(last_removed[0]), str(last_removed[1])
                    kept_tail = db.execute("SELECT seq, hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
                    db.execute("DELETE FROM journal WHERE seq <= ?", [upto])
                    entry = Entry(Kind.CHECKPOINT, tool="", words=words, about=upto, anchor=anchor)
                    row = _make(int(kept_tail[0]) + 1, str(kept_tail[1]), entry, None)
                    self._insert(db, row)
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
        except (OSError, sqlite3.Error) as exc:
            raise self._fail(exc) from exc
        return row
