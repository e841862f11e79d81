"""The journal file itself, under the things that happen to files: several processes appending at once, a
process killed mid-write, a hand with sqlite3 editing or deleting rows, and the rows SearchDesk removes on
purpose (kept for…, Clear the record). The writers are real processes (`writer`); the check is the one
`searchdesk-server --check-journal` runs, run here both in-process and as that command, with no
credentials in its environment.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from searchdesk_server.journal.check import Seen, check
from searchdesk_server.journal.paths import APP_NAME, FILE, seen_path
from searchdesk_server.journal.store import _COLUMNS, _NAMES, GENESIS, Entry, Journal, Kind, Result, Row, Target
from tests.server.stdio import REPO

#: The subprocesses here start often: one worker runs the module (`make test` uses --dist loadgroup).
pytestmark = pytest.mark.xdist_group("journal_file")

T0 = datetime(2026, 11, 1, 9, 30, tzinfo=UTC)


def process_env(data: Path) -> dict[str, str]:
    """What a writer or the check command gets: a data folder of the test's own, no credentials at all."""
    path = [REPO, *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(data.parent),
        "XDG_DATA_HOME": str(data),
        "PYTHONPATH": os.pathsep.join(path),
        "TZ": "UTC",
    }


def journal_in(data: Path) -> Journal:
    """The journal a process started with `process_env(data)` writes (paths.journal_path there)."""
    return Journal(data / APP_NAME / FILE)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def writer(data: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.server.journal.writer", *args],
        env=process_env(data),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def check_command(data: Path) -> subprocess.CompletedProcess[str]:
    """`searchdesk-server --check-journal` as a person runs it: no credentials, no network settings."""
    return subprocess.run(
        [sys.executable, "-m", "searchdesk_server", "--check-journal"],
        env=process_env(data),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def entry(n: int, kind: Kind = Kind.CHANGE, **kw: object) -> Entry:
    fields: dict[str, object] = {
        "tool": "submit_sitemap",
        "account": "owner@example.com",
        "site": "https://www.example.com/",
        "targets": (Target("Sitemap", f"https://www.example.com/{n}.xml"),),
        "asked_by": "Claude Desktop",
        **kw,
    }
    return Entry(kind, **fields)  # type: ignore[arg-type]


def filled(journal: Journal, n: int) -> list[Row]:
    """`n` rows an hour apart, changes and their outcomes in turn."""
    rows: list[Row] = []
    for i in range(n):
        if i % 2:
            e = entry(i, Kind.OUTCOME, result=Result.DONE, about=rows[-1].seq, targets=())
        else:
            e = entry(i, approval=_approval(i))
        rows.append(journal.append(e, at=T0 + timedelta(hours=i)))
    return rows


def _approval(i: int) -> object:
    from searchdesk_server.journal.store import Approval

    return Approval.DIALOG if i % 4 else Approval.NOT_ASKED


def execute(journal: Journal, sql: str, *args: object) -> None:
    """A hand with sqlite3 (not through the journal's code)."""
    db = sqlite3.connect(journal.path)
    try:
        db.execute(sql, args)
        db.commit()
    finally:
        db.close()


def assert_chain(journal: Journal) -> list[Row]:
    report = check(journal, use_seen=False)
    assert report.ok, report.render()
    return journal.rows()


# --------------------------------------------------------------------------------------------------
# 1. Two processes appending at once


def test_two_processes_appending_500_rows_each_at_once_leave_1000_rows_in_one_chain(data: Path) -> None:
    start = data.parent / "go"
    writers = [writer(data, "250", str(start)) for _ in range(2)]  # 250 changes + 250 outcomes each
    start.touch()
    outputs = [w.communicate(timeout=240) for w in writers]
    for w, (_, err) in zip(writers, outputs, strict=True):
        assert w.returncode == 0, err
    rows = assert_chain(journal_in(data))
    assert len(rows) == 1000
    assert [r.seq for r in rows] == list(range(1, 1001))
    # Both wrote, interleaved (each printed its own 500 numbers), and nothing of either was lost.
    printed = [{int(line.split()[1]) for line in out.splitlines()} for out, _ in outputs]
    assert all(len(p) == 500 for p in printed) and printed[0].isdisjoint(printed[1])
    assert printed[0] | printed[1] == set(range(1, 1001))
    by_writer = {r.targets.split("/")[3] for r in rows if r.kind == Kind.CHANGE.value}
    assert by_writer == {str(w.pid) for w in writers}
    assert not check(journal_in(data)).open_changes


def test_a_new_journal_another_program_is_writing_is_waited_for_not_refused(data: Path) -> None:
    """Two servers writing their first rows at once: one is still creating the file (in SQLite's default
    journal, its write lock held) when the other switches it to WAL. SQLite answers that switch "locked"
    at once, without the busy timeout; the append must wait for the lock like any other, not refuse."""
    journal = journal_in(data)
    journal.path.parent.mkdir(parents=True)
    other = sqlite3.connect(journal.path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # the other program's first transaction, on the new file
    release = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    release.start()
    started = time.monotonic()
    try:
        row = journal.append(entry(0))
    finally:
        release.join()
        other.close()
    assert row.seq == 1 and time.monotonic() - started >= 0.4  # it waited for the lock
    assert_chain(journal)


# --------------------------------------------------------------------------------------------------
# 2. A process killed mid-write


def killed_after(data: Path, lines: int, *args: str) -> list[str]:
    """Start a writer, read `lines` lines of its output, SIGKILL it (it is writing as fast as it can)."""
    w = writer(data, *args)
    assert w.stdout is not None
    seen = []
    try:
        for _ in range(lines):
            seen.append(w.stdout.readline().strip())
    finally:
        w.send_signal(signal.SIGKILL)
        w.wait(30)
    assert w.returncode == -signal.SIGKILL
    return seen


@pytest.mark.parametrize("kill_at", [1, 37, 200])
def test_a_process_killed_while_appending_leaves_a_journal_that_opens_and_checks(data: Path, kill_at: int) -> None:
    printed = killed_after(data, kill_at, "100000")
    journal = journal_in(data)
    rows = assert_chain(journal)
    assert len(rows) >= kill_at  # every row it said was committed is there
    assert rows[kill_at - 1].seq == int(printed[-1].split()[1])
    # The journal still takes rows after the kill, in the same chain.
    journal.append(entry(0))
    assert_chain(journal)


def test_a_change_whose_outcome_was_never_written_is_listed_by_the_check(data: Path) -> None:
    printed = killed_after(data, 7, "3", "hang")  # three changes with outcomes, a fourth without
    assert printed[-1] == "hung 7"
    report = check(journal_in(data))
    assert report.ok, report.render()
    assert [r.seq for r in report.open_changes] == [7]
    result = check_command(data)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 change has no outcome recorded" in result.stdout
    assert "row 7 (" in result.stdout and "Submit a sitemap https://www.example.com/" in result.stdout


# --------------------------------------------------------------------------------------------------
# 3. Any field of any row edited by hand


def edited(value: object, column: str) -> object:
    """A different value for `column`, as a hand would type it in."""
    if column == "about":
        return 7 if value is None else int(str(value)) + 5
    if column in ("hash", "prev"):
        text = str(value)
        return ("1" if text[0] != "1" else "2") + text[1:]
    return f"{value}x"


#: seq: which row the check names once that row's number was changed (`to`): the row itself where its
#: hash or its place shows it, else the row after it (which now follows a gap).
SEQ_EDITS = {"newest": (9, 9), "middle": (10, 3), "only": (5, 5)}


def tampered_journal(folder: Path, where: str, column: str) -> tuple[Journal, int]:
    """A journal of three rows (one for `only`) with `column` of one row edited; the row the check must name."""
    journal = journal_in(folder)
    rows = filled(journal, 1 if where == "only" else 3)
    target = rows[{"newest": -1, "middle": 1, "only": 0}[where]]
    if column == "seq":
        to, named = SEQ_EDITS[where]
        execute(journal, "UPDATE journal SET seq = ? WHERE seq = ?", to, target.seq)
        return journal, named
    old = getattr(target, column)
    execute(journal, f"UPDATE journal SET {column} = ? WHERE seq = ?", edited(old, column), target.seq)
    return journal, target.seq


@pytest.mark.parametrize("column", _NAMES)
@pytest.mark.parametrize("where", ["newest", "middle", "only"])
def test_any_field_of_any_row_edited_by_hand_is_named_by_the_check(data: Path, where: str, column: str) -> None:
    journal, named = tampered_journal(data, where, column)
    report = check(journal, use_seen=False)
    assert not report.ok
    assert report.problem is not None and report.problem.seq == named, report.render()
    assert f"row {named} (" in report.render()


def test_every_field_is_one_the_hash_covers() -> None:
    """The parametrization above is over every column the file has; the hash covers all but itself."""
    assert set(_NAMES) == {*_COLUMNS, "hash"}


@pytest.mark.parametrize("kind", ["blob", "number"])
def test_a_field_given_another_type_by_hand_is_named_too(data: Path, kind: str) -> None:
    journal = journal_in(data)
    rows = filled(journal, 3)
    sql = "UPDATE journal SET words = CAST(words AS BLOB), at = CAST(at AS BLOB) WHERE seq = 2"
    if kind == "number":
        sql = "UPDATE journal SET about = 1.5 WHERE seq = 2"
    execute(journal, sql)
    report = check(journal, use_seen=False)
    assert report.problem is not None and report.problem.seq == rows[1].seq, report.render()


@pytest.mark.parametrize("where", ["newest", "middle", "only"])
def test_the_check_command_exits_1_naming_the_edited_rows_number_and_time(data: Path, where: str) -> None:
    journal, named = tampered_journal(data, where, "words")
    at = next(r.at for r in journal.rows() if r.seq == named)
    result = check_command(data)
    assert result.returncode == 1, result.stdout + result.stderr
    shown = f"{at[:10]} {at[11:19]}"  # TZ=UTC: the time as this computer shows it
    assert f"row {named} ({shown})" in result.stdout, result.stdout
    assert "does not check" in result.stdout and not result.stderr


def test_the_check_command_exits_0_on_an_intact_journal(data: Path) -> None:
    filled(journal_in(data), 4)
    result = check_command(data)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is intact: 4 rows, rows 1 to 4, from 2026-11-01 09:30:00 to 2026-11-01 12:30:00" in result.stdout


def test_the_check_command_exits_0_with_no_journal_saying_so(data: Path) -> None:
    result = check_command(data)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "There is no record yet" in result.stdout and str(data / APP_NAME / FILE) in result.stdout
    assert not (data / APP_NAME).exists()  # checking creates nothing


def test_the_check_command_exits_1_on_a_file_that_is_no_journal(data: Path) -> None:
    (data / APP_NAME).mkdir(parents=True)
    (data / APP_NAME / FILE).write_bytes(b"this is not a database, whatever its name " * 200)
    result = check_command(data)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "could not be checked" in result.stdout and "Traceback" not in result.stderr


# --------------------------------------------------------------------------------------------------
# 4. Rows removed: by a hand (found) and by SearchDesk (a checkpoint: passes)


@pytest.fixture
def ten(data: Path) -> Iterator[tuple[Journal, list[Row]]]:
    journal = journal_in(data)
    yield journal, filled(journal, 10)


def seen_by_app(journal: Journal) -> Seen:
    """What the app notes once it has shown the journal: its newest row."""
    last = journal.rows()[-1]
    seen = Seen(last.seq, last.hash)
    seen.save(journal.path)
    return seen


@pytest.mark.parametrize("removed", [1, 3])
def test_the_newest_rows_deleted_are_found_against_the_apps_last_hash(
    ten: tuple[Journal, list[Row]], removed: int
) -> None:
    journal, _ = ten
    seen_by_app(journal)
    assert seen_path(journal.path).is_file() and check(journal).ok
    execute(journal, "DELETE FROM journal WHERE seq > ?", 10 - removed)
    assert check(journal, use_seen=False).ok  # the chain alone cannot tell: the app's note can
    report = check(journal)
    assert report.problem is not None and report.problem.seq == 10 - removed, report.render()
    assert "SearchDesk had seen row 10" in report.render()


def test_the_newest_rows_replaced_by_others_are_found_against_the_apps_last_hash(
    ten: tuple[Journal, list[Row]],
) -> None:
    journal, _ = ten
    seen_by_app(journal)
    execute(journal, "DELETE FROM journal WHERE seq > 8")
    for i in range(2):  # a server appends again: rows 9 and 10 exist, but not the ones the app saw
        journal.append(entry(i))
    report = check(journal)
    assert report.problem is not None and report.problem.seq == 10, report.render()


def test_every_row_deleted_is_found_against_the_apps_last_hash(ten: tuple[Journal, list[Row]]) -> None:
    journal, _ = ten
    seen_by_app(journal)
    execute(journal, "DELETE FROM journal")
    assert not check(journal).ok


@pytest.mark.parametrize(("sql", "named"), [("seq = 5", 6), ("seq BETWEEN 4 AND 7", 8), ("seq <= 3", 4)])
def test_rows_deleted_from_the_middle_or_the_start_without_a_checkpoint_are_found(
    ten: tuple[Journal, list[Row]], sql: str, named: int
) -> None:
    journal, _ = ten
    execute(journal, f"DELETE FROM journal WHERE {sql}")
    report = check(journal, use_seen=False)
    assert report.problem is not None and report.problem.seq == named, report.render()


def test_removing_old_rows_leaves_a_checkpoint_and_a_chain_that_checks(ten: tuple[Journal, list[Row]]) -> None:
    journal, rows = ten
    seen = seen_by_app(journal)
    checkpoint = journal.remove_before(T0 + timedelta(hours=4), "kept for a year")
    assert checkpoint is not None and (checkpoint.about, checkpoint.anchor) == (4, rows[3].hash)
    assert [r.seq for r in journal.rows()] == [5, 6, 7, 8, 9, 10, 11]
    assert check(journal, seen).ok  # against what the app saw before the removal
    seen_by_app(journal)
    assert check(journal).ok, check(journal).render()  # and after the remover noted the checkpoint
    assert journal.remove_before(T0 - timedelta(days=1), "kept for a year") is None
    # Twice more, the second time everything but the checkpoint: it still checks.
    assert journal.remove_before(T0 + timedelta(hours=7), "kept for a year") is not None
    assert journal.remove_before(datetime.now(UTC) + timedelta(days=1), "kept for a year") is not None
    assert check(journal).ok and check(journal, seen).ok
    # Deleting the oldest rows left after a checkpoint, by hand, is found all the same.
    journal.append(entry(0))
    journal.append(entry(1))
    execute(journal, "DELETE FROM journal WHERE seq = (SELECT MIN(seq) FROM journal)")
    assert not check(journal, use_seen=False).ok


@pytest.mark.parametrize("rows_before", [0, 10])
def test_clear_leaves_one_checkpoint_and_a_chain_that_checks(data: Path, rows_before: int) -> None:
    journal = journal_in(data)
    filled(journal, rows_before)
    seen = seen_by_app(journal) if rows_before else None
    row = journal.clear("cleared by the person on 1 December 2026")
    assert [r.seq for r in journal.rows()] == [row.seq] == [rows_before + 1]
    assert row.kind == Kind.CHECKPOINT.value and row.about == rows_before
    assert row.anchor == (GENESIS if not rows_before else journal_rows_hash(seen))
    assert check(journal, seen).ok
    seen_by_app(journal)
    assert check(journal).ok
    journal.append(entry(0))
    assert check(journal).ok
    execute(journal, "DELETE FROM journal WHERE kind = 'checkpoint'")  # the note of the clearing, removed
    assert not check(journal, use_seen=False).ok


def journal_rows_hash(seen: Seen | None) -> str:
    assert seen is not None
    return seen.hash
