"""Activity reads the record the server keeps on this computer (issue 25).

Real parts: the journal is a real SQLite file written with the server's own `Journal.append` (or by a real
server subprocess with key-file credentials against the fake Google), and Activity is the app's real
window, offscreen. Each test's data folder is its own (XDG_DATA_HOME), so `journal_path()` is the test's.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from searchdesk_desktop import history
from searchdesk_desktop.windows.activity import ActivityWindow
from searchdesk_server.catalogue import TOOLS
from searchdesk_server.journal.check import Seen
from searchdesk_server.journal.paths import journal_path, seen_path
from searchdesk_server.journal.store import Approval, Entry, Journal, Kind, Result, Row, Target
from searchdesk_server.journal.undo import NAMES, UNDO, change_name, how_to_undo
from tests import REPO
from tests.desktop.helpers import finish, make_core
from tests.fakegoogle import FakeGoogle
from tests.security.approval.test_person_approves import TARGET, WWW
from tests.security.conftest import (  # noqa: F401  (the security suite's fixtures, here too)
    Planted,
    Witness,
    _no_leak_in_this_test,
    fake,
    planted,
    serve,
    witness,
)
from tests.server.stdio import text_of

SITE = "sc-domain:example.com"
OTHER_SITE = "https://shop.example.net/"
ACCOUNT = "you@example.com"
AGENCY = "reports@client-shop.iam.gserviceaccount.com"
CLAUDE = "a program that says it is Claude Desktop (version 0.14.10)"
MORNING = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own data folder: the journal the app reads is `journal_path()` under it."""
    folder = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(folder))
    return folder


def change(
    journal: Journal,
    tool: str,
    minute: int,
    *,
    site: str = SITE,
    targets: tuple[tuple[str, str], ...] = (),
    approval: Approval = Approval.NOT_ASKED,
    result: Result | None = Result.DONE,
    words: str = "",
    account: str = ACCOUNT,
    asked_by: str = CLAUDE,
    since: datetime = MORNING,
) -> Row:
    """A change as the server records it: its row before the request, its outcome after (None: no outcome)."""
    at = since + timedelta(minutes=minute)
    values = tuple(Target(label, value) for label, value in (targets or (("Property", site),)))
    row = journal.append(Entry(Kind.CHANGE, tool, account, site, values, asked_by, approval), at=at)
    if result is not None:
        outcome = Entry(Kind.OUTCOME, tool, account, site, (), asked_by, Approval.NONE, result, words, about=row.seq)
        journal.append(outcome, at=at + timedelta(seconds=1))
    return row


def answer(journal: Journal, tool: str, minute: int, approval: Approval, words: str, *, site: str = SITE) -> Row:
    """A guarded call that sent nothing, as the server records it."""
    values = (Target("Property", site),)
    entry = Entry(Kind.ANSWER, tool, ACCOUNT, site, values, CLAUDE, approval, words=words)
    return journal.append(entry, at=MORNING + timedelta(minutes=minute))


def a_morning(journal: Journal) -> None:
    change(journal, "submit_sitemap", 1, targets=(("Property", SITE), ("Sitemap", "https://example.com/s.xml")))
    change(journal, "delete_sitemap", 2, approval=Approval.NOTIFICATION)
    answer(journal, "delete_site", 3, Approval.DECLINED, "The user declined; delete_site did nothing.")
    change(
        journal,
        "update_site_owners",
        4,
        approval=Approval.DIALOG,
        result=Result.REFUSED,
        words="That address has no Google account.",
    )
    change(
        journal, "request_indexing", 5, site=OTHER_SITE, account=AGENCY, asked_by="a program that did not give its name"
    )


def window_for(qtbot: QtBot, core: object, journals: list[Path] | None = None) -> ActivityWindow:
    window = ActivityWindow(core) if journals is None else ActivityWindow(core, journals)  # type: ignore[arg-type]
    qtbot.addWidget(window)
    window.refresh()
    return window


def column(window: ActivityWindow, name: str) -> list[str]:
    c = list(ActivityWindow.COLUMNS).index(name)
    return [row[c] for row in window.rows(all_values=True)]


# --------------------------------------------------------------------------------------------------
# What Activity shows


def test_after_an_app_restart_activity_shows_the_earlier_rows(qtbot: QtBot, place: dict, data: Path) -> None:
    core = make_core(place)
    first = window_for(qtbot, core)
    assert first.empty.isVisibleTo(first) and first.table.rowCount() == 0
    a_morning(Journal(journal_path()))
    first.refresh()
    before = first.rows(all_values=True)
    assert len(before) == 5
    first.close()
    finish(core)

    again = make_core(place)  # the app started again: nothing of the last run is in memory
    window = window_for(qtbot, again)
    assert window.rows(all_values=True) == before
    assert window.table.rowCount() == 5 and not window.empty.isVisibleTo(window)
    assert column(window, "What") == [
        "Ask Google to recrawl or drop a page",
        "Replace verified owners",
        "Remove a property",
        "Remove a sitemap",
        "Submit a sitemap",
    ]  # newest first
    assert column(window, "Approval") == [
        "Not asked: SearchDesk does not ask before this change",
        "You approved in SearchDesk's window",
        "You declined",
        "You approved in a notification",
        "Not asked: SearchDesk does not ask before this change",
    ]
    assert column(window, "What Google did") == [
        "Done",
        "Google refused: That address has no Google account.",
        "Nothing was sent to Google",
        "Done",
        "Done",
    ]
    assert column(window, "How to undo this") == [
        how_to_undo("request_indexing"),
        "",  # Google refused: nothing to undo
        "",  # nothing was sent
        how_to_undo("delete_sitemap"),
        how_to_undo("submit_sitemap"),
    ]
    assert column(window, "Google account")[0] == AGENCY
    assert column(window, "Asked by (as it says)")[:2] == ["a program that did not give its name", CLAUDE]
    assert "Used" not in ActivityWindow.COLUMNS
    # Whole headers; every cell plain text and selectable.
    header = window.table.horizontalHeader()
    assert all(header.sectionSize(i) >= header.sectionSizeHint(i) for i in range(header.count()))
    assert window.table.selectionMode() is not window.table.SelectionMode.NoSelection
    finish(again)


def test_the_intro_says_where_the_record_is_kept_and_that_settings_says_how_long(
    qtbot: QtBot, place: dict, data: Path
) -> None:
    from PySide6.QtWidgets import QLabel

    from searchdesk_desktop.claude import config_file as cc

    core = make_core(place)
    window = window_for(qtbot, core)
    words = " ".join(label.text() for label in window.findChildren(QLabel))
    assert f"keeps this record on this computer, in {cc.display_path(journal_path().parent)}" in words
    assert "how long it is kept is set in Settings" in words
    assert "memory" not in words
    finish(core)


def test_no_outcome_no_answer_from_google_and_a_one_time_code_read_in_words(
    qtbot: QtBot, place: dict, data: Path
) -> None:
    journal = Journal(journal_path())
    change(journal, "delete_sitemap", 1, approval=Approval.TOKEN, result=Result.UNKNOWN, words="No answer came back.")
    change(journal, "add_site", 2, result=None)  # SearchDesk stopped before Google answered
    change(journal, "unverify_site", 3, approval=Approval.CLIENT)
    core = make_core(place)
    window = window_for(qtbot, core)
    rows = window.rows(all_values=True)
    assert [r[5:] for r in rows] == [
        ["You approved in Claude's own dialog", "Done", how_to_undo("unverify_site")],
        ["Not asked: SearchDesk does not ask before this change", "No outcome recorded", how_to_undo("add_site")],
        [
            "Nobody was asked: done with a one-time code (the request was made twice)",
            "No answer from Google: it may or may not have been done",
            how_to_undo("delete_sitemap"),
        ],
    ]
    finish(core)


def test_filters_by_property_and_by_account_keep_the_gaps(qtbot: QtBot, place: dict, data: Path) -> None:
    journal = Journal(journal_path())
    change(journal, "submit_sitemap", 1)
    journal.remove_before(MORNING + timedelta(minutes=1, seconds=30), "kept for a year")  # a gap after it
    later = datetime.now(UTC)  # the checkpoint is written now: the changes after it are later still
    change(journal, "delete_sitemap", 2, approval=Approval.DIALOG, since=later)
    change(journal, "request_indexing", 3, site=OTHER_SITE, account=AGENCY, since=later)
    change(journal, "add_site", 4, site=OTHER_SITE, since=later)
    core = make_core(place)
    window = window_for(qtbot, core)
    whats = column(window, "What")
    assert whats[:3] == ["Add a property", "Ask Google to recrawl or drop a page", "Remove a sitemap"]
    assert whats[3] == "Changes removed from the record"  # the gap shows, in the words it was left with
    assert column(window, "Property and details")[3] == "kept for a year"
    sites = [window.site_filter.itemData(i) for i in range(window.site_filter.count())]
    assert sites == ["", OTHER_SITE, SITE]
    window.site_filter.setCurrentIndex(sites.index(OTHER_SITE))
    assert column(window, "What")[:2] == ["Add a property", "Ask Google to recrawl or drop a page"]
    assert window.table.rowCount() == 3  # and the gap
    accounts = [window.account_filter.itemData(i) for i in range(window.account_filter.count())]
    window.account_filter.setCurrentIndex(accounts.index(AGENCY))
    assert column(window, "What")[0] == "Ask Google to recrawl or drop a page" and window.table.rowCount() == 2
    assert window.account_filter.itemText(accounts.index(AGENCY)) == AGENCY
    window.refresh()  # a new read keeps the choice
    assert window.site_filter.currentData() == OTHER_SITE and window.account_filter.currentData() == AGENCY
    csv_rows = list(csv.reader(io.StringIO(window.csv_text())))
    assert len(csv_rows) == 3 and csv_rows[1][1] == "Ask Google to recrawl or drop a page"  # the CSV as filtered
    finish(core)


def test_a_cleared_record_shows_the_clear(qtbot: QtBot, place: dict, data: Path) -> None:
    journal = Journal(journal_path())
    a_morning(journal)
    journal.clear("Cleared by you on 27 November 2026 at 09:30.")
    core = make_core(place)
    window = window_for(qtbot, core)
    (only,) = window.rows(all_values=True)
    assert only[1:3] == ["Changes removed from the record", "Cleared by you on 27 November 2026 at 09:30."]
    journal.clear("")  # a checkpoint without words still says what it is
    window.refresh()
    (only,) = window.rows(all_values=True)
    assert only[1] == "Changes removed from the record" and only[2].startswith("Changes before 20")
    assert only[2].endswith(" were removed from this record.")
    finish(core)


#: Every sentence the server writes into an answer row, with the tool's name in it (chain.py's forms).
SERVER_SENTENCES = [
    "The user declined; {tool} did nothing.",
    "{tool} did nothing: what it would change kept changing at Google while a person was being asked. Ask again.",
    "That confirm_token is invalid, expired, or issued for different arguments; {tool} did nothing. Call again.",
    "{tool} did nothing yet. Nobody could be asked to approve it: the app is not running.\n\nCall {tool} again.",
    "{tool} did nothing: while this call waited, the same {tool} was asked again in SearchDesk with other words.",
]


def test_no_tool_name_appears_in_any_cell_or_the_csv(qtbot: QtBot, place: dict, data: Path) -> None:
    journal = Journal(journal_path())
    minute = 0
    for spec in TOOLS:
        if not spec.write:
            continue
        minute += 1
        change(journal, spec.name, minute, approval=Approval.DIALOG if spec.guarded else Approval.NOT_ASKED)
        if spec.guarded:
            for n, sentence in enumerate(SERVER_SENTENCES):
                approval = (Approval.DECLINED, Approval.REFUSED, Approval.REFUSED, Approval.WAITING, Approval.REFUSED)[
                    n
                ]
                answer(journal, spec.name, minute, approval, sentence.format(tool=spec.name))
            change(journal, spec.name, minute, result=Result.REFUSED, words=f"Google refused {spec.name}.")
    core = make_core(place)
    window = window_for(qtbot, core)
    names = re.compile(r"\b(" + "|".join(t.name for t in TOOLS) + r"|confirm_token)\b")
    on_screen = [window.table.item(r, c).text() for r in range(window.table.rowCount()) for c in range(8)]
    tips = [window.table.item(r, c).toolTip() for r in range(window.table.rowCount()) for c in range(8)]
    for text in [*on_screen, *tips, window.csv_text()]:
        assert not names.search(text), text
    approvals = column(window, "Approval")
    # A refusal's first sentence is the line on screen; the rest waits in the line's details (and the CSV).
    assert (
        "Not done: What it would change kept changing at Google while a person was being asked.\n\nAsk again."
        in approvals
    )
    assert any(a.startswith("Not done: That one-time code is invalid") for a in approvals)
    assert "Google refused: Google refused “Remove a property”." in column(window, "What Google did")
    finish(core)


def test_every_write_tool_has_a_name_and_how_to_undo_it_and_the_guarded_ones_keep_the_questions_names() -> None:
    from searchdesk_server.approval.question import ACTIONS

    writes = {t.name for t in TOOLS if t.write}
    assert set(NAMES) == writes == set(UNDO)
    for tool, name in ACTIONS.items():
        assert change_name(tool) == name
    assert len(set(NAMES.values())) == len(NAMES)  # two changes never read the same


# --------------------------------------------------------------------------------------------------
# Copy as CSV, Copy


def test_copy_as_csv_has_every_value_whole_and_escaped(
    qtbot: QtBot, place: dict, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from searchdesk_server.tools.analytics import export

    journal = Journal(journal_path())
    owners = tuple(("Added", f"owner{n}@example.com") for n in range(9))
    formula = ("Added", '=HYPERLINK("https://evil.example","x")')
    change(journal, "update_site_owners", 1, approval=Approval.DIALOG, targets=(("Property", SITE), *owners, formula))
    core = make_core(place)
    window = window_for(qtbot, core)
    shown = window.table.item(0, 2).text()
    assert "… and 5 more" in shown and "owner8@example.com" not in shown
    assert window.table.item(0, 2).toolTip().endswith(formula[1])
    window.copy_csv()
    parsed = list(csv.reader(io.StringIO(QGuiApplication.clipboard().text())))
    assert parsed[0] == list(ActivityWindow.COLUMNS) and len(parsed) == 2
    details = parsed[1][2]
    assert "owner8@example.com" in details and details.endswith(f"Added: {formula[1]}")
    assert parsed[1][3] == ACCOUNT  # whole (no zero-width spaces)
    monkeypatch.setattr(export, "safe_cell", lambda value: "<escaped>")  # the very function, not a copy of it
    assert set(next(csv.reader(io.StringIO(window.csv_text().splitlines()[1])))) == {"<escaped>"}
    window.table.item(0, 3).setSelected(True)
    window.copy_selection()
    assert QGuiApplication.clipboard().text() == ACCOUNT
    finish(core)


def test_a_name_that_starts_a_formula_never_starts_a_cell(qtbot: QtBot, place: dict, data: Path) -> None:
    journal = Journal(journal_path())
    change(journal, "add_site", 1, asked_by="=cmd|' /C calc'!A0", site="=1+1")
    core = make_core(place)
    window = window_for(qtbot, core)
    parsed = list(csv.reader(io.StringIO(window.csv_text())))
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in parsed[1]), parsed[1]
    finish(core)


# --------------------------------------------------------------------------------------------------
# Check the record, and the note of the newest row seen


def test_check_the_record_on_an_intact_and_a_tampered_journal(qtbot: QtBot, place: dict, data: Path) -> None:
    path = journal_path()
    a_morning(Journal(path))
    core = make_core(place)
    window = window_for(qtbot, core)
    assert not window.problem.isVisibleTo(window)
    window.check_record()
    dialog = window.check_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.verdict.text().startswith("The record checks")
    assert f"The record at {path} is intact: 9 rows" in dialog.report.text()

    with sqlite3.connect(path) as db:  # someone edits a row by hand
        db.execute("UPDATE journal SET site = 'https://elsewhere.example/' WHERE seq = 3")
    window.check_record()
    assert dialog.verdict.text().startswith("The record does not check")
    assert "row 3 (" in dialog.report.text() and "was changed after it was written" in dialog.report.text()
    window.refresh()
    assert window.problem.isVisibleTo(window) and "does not check: row 3" in window.problem.text()
    finish(core)


def test_deleting_the_newest_rows_is_found_and_a_failing_read_never_moves_the_note(
    qtbot: QtBot, place: dict, data: Path
) -> None:
    path = journal_path()
    a_morning(Journal(path))
    core = make_core(place)
    window = window_for(qtbot, core)  # reads, checks, and notes the newest row
    newest = Journal(path).rows()[-1]
    assert Seen.load(path) == Seen(newest.seq, newest.hash)
    with sqlite3.connect(path) as db:  # the newest rows removed, the chain left intact
        db.execute("DELETE FROM journal WHERE seq >= 8")
    window.refresh()
    assert "SearchDesk had seen row 9" in window.problem.text()
    assert Seen.load(path) == Seen(newest.seq, newest.hash)  # the note stays on what was there
    change(Journal(path), "add_site", 30)  # a new change later does not hide the removal either
    window.refresh()
    assert window.problem.isVisibleTo(window)
    assert Seen.load(path) == Seen(newest.seq, newest.hash)
    window.check_record()
    assert window.check_dialog is not None and window.check_dialog.verdict.text().startswith("The record does not")
    finish(core)


def test_a_record_that_cannot_be_read_is_said_and_activity_still_opens(qtbot: QtBot, place: dict, data: Path) -> None:
    path = journal_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all" * 100)
    core = make_core(place)
    window = window_for(qtbot, core)
    assert window.problem.isVisibleTo(window) and "could not be checked" in window.problem.text()
    assert not seen_path(path).exists()
    window.check_record()
    assert window.check_dialog is not None and window.check_dialog.verdict.text() == "The record could not be checked."
    finish(core)


# --------------------------------------------------------------------------------------------------
# The demo, and reading again when the record changes


def test_the_demo_app_reads_only_the_demo_journal_labelled_demo(qtbot: QtBot, place: dict, data: Path) -> None:
    change(Journal(journal_path()), "delete_site", 1, approval=Approval.DIALOG)  # the person's real record
    change(Journal(journal_path(demo=True)), "submit_sitemap", 2, account="demo")
    core = make_core(place, demo=True)
    window = window_for(qtbot, core)
    assert window.journals == [journal_path(demo=True)]
    assert column(window, "What") == ["Submit a sitemap"]
    assert column(window, "Google account") == ["the demo (no Google account)"]
    assert window.findChild(object, "demoBanner") is not None  # type: ignore[call-overload]
    assert window.windowTitle().startswith("SearchDesk (Demo)") or "Demo" in window.windowTitle()
    finish(core)
    real = make_core(place)
    window = window_for(qtbot, real)
    assert column(window, "What") == ["Remove a property"]
    finish(real)


def test_activity_reads_again_when_a_server_writes_while_it_is_open(
    qtbot: QtBot, place: dict, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ActivityWindow, "POLL_MS", 50)
    journal = Journal(journal_path())
    change(journal, "submit_sitemap", 1)
    core = make_core(place)
    window = window_for(qtbot, core)
    window.show()
    assert window.table.rowCount() == 1
    change(journal, "delete_sitemap", 2, approval=Approval.DIALOG)
    qtbot.waitUntil(lambda: window.table.rowCount() == 2, timeout=3000)
    window.hide()  # hidden: no reading
    change(journal, "add_site", 3)
    qtbot.wait(300)
    assert window.table.rowCount() == 2
    finish(core)


# --------------------------------------------------------------------------------------------------
# How to undo this: one place, the page says the same


def test_activity_undo_words_are_the_pages(qtbot: QtBot, place: dict, data: Path) -> None:
    """What Activity says for each approved change is, word for word, a line of the page."""
    journal = Journal(journal_path())
    for minute, tool in enumerate(("delete_sitemap", "delete_site", "unverify_site", "update_site_owners")):
        change(journal, tool, minute, approval=Approval.DIALOG)
    core = make_core(place)
    window = window_for(qtbot, core)
    page = (REPO / "docs" / "asking-a-person.md").read_text(encoding="utf-8")
    for what, undo in zip(column(window, "What"), column(window, "How to undo this"), strict=True):
        assert f"- **{what}:** {undo}" in page
    finish(core)


# --------------------------------------------------------------------------------------------------
# A change made with key-file credentials (no app): the real server writes it, Activity shows it


# --------------------------------------------------------------------------------------------------
# A change made with key-file credentials (no app running): the real server writes it, Activity shows it


@pytest.mark.anyio
async def test_changes_made_with_key_file_credentials_and_no_app_show_in_activity(
    qtbot: QtBot,
    place: dict,
    data: Path,
    tmp_path: Path,
    fake: FakeGoogle,  # noqa: F811
    witness: Witness,  # noqa: F811
    planted: Planted,  # noqa: F811
) -> None:
    key = tmp_path / "scheduled-job-key.json"
    key.write_text(json.dumps(planted.service_account_info(fake)), encoding="utf-8")
    env = {"GSC_SERVICE_ACCOUNT_KEY_FILE": str(key)}
    sitemap = {"site": WWW, "feedpath": f"{WWW}new/sitemap.xml"}
    async with serve(fake, witness, tmp_path, env) as served:  # XDG_DATA_HOME: tmp_path/"data", as the app's
        submitted = await served.client.call_tool("submit_sitemap", sitemap)
        first = await served.client.call_tool("delete_sitemap", TARGET)  # nobody can be asked: a code
        token = first.structured_content["confirm_token"]  # type: ignore[index]
        removed = await served.client.call_tool("delete_sitemap", {**TARGET, "confirm_token": token})
    assert not submitted.is_error and not removed.is_error, text_of(removed)
    assert [r.method for r in fake.api_requests() if r.method in ("PUT", "DELETE")] == ["PUT", "DELETE"]

    core = make_core(place)  # the app starts later, and reads what the server wrote
    window = window_for(qtbot, core)
    rows = window.rows(all_values=True)
    account = planted.service_account_info(fake)["client_email"]
    assert [(r[1], r[3], r[5], r[6]) for r in rows] == [
        (
            "Remove a sitemap",
            account,
            "Nobody was asked: done with a one-time code (the request was made twice)",
            "Done",
        ),
        (
            "Remove a sitemap",
            account,
            history.CODE_OFFERED,
            "Nothing was sent to Google",
        ),
        ("Submit a sitemap", account, "Not asked: SearchDesk does not ask before this change", "Done"),
    ]
    assert f"Sitemap: {TARGET['feedpath']}" in rows[0][2] and rows[0][7] == how_to_undo("delete_sitemap")
    assert f"{WWW}new/sitemap.xml" in rows[2][2]
    window.check_record()
    assert window.check_dialog is not None and window.check_dialog.verdict.text().startswith("The record checks")
    finish(core)


# --------------------------------------------------------------------------------------------------
# The picture `make screenshots` takes


def test_the_activity_picture_is_read_from_a_journal_and_the_same_every_run(qtbot: QtBot, tmp_path: Path) -> None:
    import os

    from PySide6.QtWidgets import QApplication

    from searchdesk_desktop import screenshots

    qapp = QApplication.instance()
    before = os.environ.get("XDG_DATA_HOME")
    pictures = []
    for run in range(2):
        with screenshots._scratch_home("sdact-") as (root, home):
            scene = screenshots.Scene(qapp, root, home, None, [])
            try:
                window = screenshots.activity(scene)
                assert window.journals == [home / ".local" / "share" / "searchdesk" / "journal.sqlite3"]
                assert window.table.rowCount() == 6 and not window.history.problems
                assert window.core.book.open_entries() == []  # nothing in memory: it is the record
                pictures.append(screenshots.grab(qapp, window, tmp_path / f"activity-{run}.png").read_bytes())
            finally:
                screenshots._dispose(scene)
    assert os.environ.get("XDG_DATA_HOME") == before  # put back
    assert pictures[0] == pictures[1]
