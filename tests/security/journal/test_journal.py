"""The change journal, end to end (issue 25): real servers over stdio, the fake Google over real HTTPS
(its request log is the judge of what was sent), the app's real listener approving, and the journal
file on disk in each test's own data folder (XDG_DATA_HOME), read back as bytes and rows.

- A journal that cannot be written (a file where its folder should be; the disk full, by RLIMIT_FSIZE in
  the server) refuses an approved guarded call and an ordinary submit_sitemap with a sentence that says
  nothing was changed and what to do, and nothing reaches Google; reading still works.
- A change made with key-file credentials, no app, is recorded with its account, tool, targets and what
  Google did; a refusal by Google is recorded in our words only; a declined call leaves one answer and
  no change; the app's dialog and its notification are told apart; a confirm_token is never recorded.
- No search query, and no row at all, comes from a read.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import anyio
import pytest

from searchdesk_desktop.approval.book import Source
from searchdesk_server.journal.check import check
from searchdesk_server.journal.paths import APP_NAME, FILE
from searchdesk_server.journal.store import Journal, Row
from tests.agentref import ApprovalScript, Script
from tests.fakegoogle import SERVICE_ACCOUNT_EMAIL, FakeGoogle
from tests.security.approval.test_no_token_with_app_keys import key_file_env
from tests.security.approval.test_person_approves import TARGET, WWW, app_listener, asked, in_thread, sa_env
from tests.security.conftest import Planted, Served, Witness, base_env, new_fake, sent_nowhere_else, serve, server_pid
from tests.server.stdio import REPO, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.xdist_group("journal_servers")]

#: What every refusal for an unwritable journal says (record.NOT_RECORDED), in the words a person reads.
NOTHING_SENT = "Nothing was changed"
WHAT_TO_DO = "Free some disk space or fix that folder, then ask again"
NEW_SITEMAP = f"{WWW}journal/sitemap.xml"


# --------------------------------------------------------------------------------------------------
# Set-up: one fake Google for the module (each test judges only the requests made since it began)


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory, planted: Planted, witness: Witness) -> Iterator[FakeGoogle]:
    shared = new_fake(tmp_path_factory.mktemp("journal-fake"), planted, witness)
    try:
        yield shared
    finally:
        shared.close()
    sent_nowhere_else(shared, planted)


class Since:
    """The fake's requests from this point on."""

    def __init__(self, fake: FakeGoogle) -> None:
        self.fake, self.start = fake, len(fake.log)

    def api(self) -> list[Any]:
        return [r for r in self.fake.log[self.start :] if r.host != "oauth2.googleapis.com"]

    def changes(self) -> list[Any]:
        """Every request that changed something at Google (the judge)."""
        return [r for r in self.api() if r.method in ("PUT", "DELETE", "POST") and "query" not in r.path]


@pytest.fixture
def since(fake: FakeGoogle) -> Iterator[Since]:
    fake.clear_faults()
    yield Since(fake)
    fake.clear_faults()


def journal_of(home: Path) -> Journal:
    """The journal a server started with `base_env(…, home)` writes (XDG_DATA_HOME is home/data)."""
    return Journal(home / "data" / APP_NAME / FILE)


def file_bytes(journal: Journal) -> bytes:
    """Everything the journal keeps on disk: the file, its WAL and its shared memory, as bytes."""
    parts = [journal.path, *(journal.path.with_name(journal.path.name + s) for s in ("-wal", "-shm"))]
    return b"".join(p.read_bytes() for p in parts if p.is_file())


def structured(result: Any) -> dict[str, Any]:
    return result.structured_content or {}


def only(rows: list[Row], kind: str) -> list[Row]:
    return [r for r in rows if r.kind == kind]


def assert_refused_unrecorded(result: Any) -> None:
    text = text_of(result)
    assert result.is_error and structured(result).get("decision") == "refused", text
    assert NOTHING_SENT in text and WHAT_TO_DO in text and "sends Google no change it cannot record" in text, text


# --------------------------------------------------------------------------------------------------
# 1. A journal that cannot be written: nothing is sent


@asynccontextmanager
async def serve_with_file_limit(
    fake: FakeGoogle, witness: Witness, home: Path, env: dict[str, str], limit: int, socket: str
) -> AsyncIterator[Served]:
    """`serve`, with the server's files limited to `limit` bytes (RLIMIT_FSIZE, as a full disk): SIGXFSZ
    ignored, so a write past it fails with EFBIG instead of killing the server. Both survive the exec."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    tag = secrets.token_hex(6)
    launcher = (
        "import os, resource, signal, sys;"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN);"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}));"
        "os.execv(sys.executable, [sys.executable, '-m', 'searchdesk_server'])"
    )
    full_env = {**base_env(fake, home, socket), **env, "SD_SECURITY_TAG": tag}
    params = StdioServerParameters(command=sys.executable, args=["-c", launcher], env=full_env, cwd=REPO)
    errlog_path = home / f"stderr-{tag}.txt"
    with open(errlog_path, "w+", encoding="utf-8") as errlog:
        try:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=90) as client:
                pid = await server_pid(tag)
                limits = Path(f"/proc/{pid}/limits").read_text()
                assert re.search(rf"Max file size\s+{limit}\s+{limit}\s", limits), limits
                yield Served(client, pid, errlog_path)
        finally:
            witness.saw("stderr", errlog_path.read_bytes(), "server")


async def first_change(fake: FakeGoogle, witness: Witness, planted: Planted, home: Path, socket: str) -> None:
    """A first server writes the journal's first rows (the file then exists at its size)."""
    async with serve(fake, witness, home, sa_env(planted, fake), socket=socket) as served:
        result = await served.client.call_tool("submit_sitemap", {"site": WWW, "feedpath": f"{WWW}first.xml"})
        assert not result.is_error, text_of(result)


@pytest.mark.parametrize("how", ["a file in the folder's place", "the disk full"])
async def test_a_journal_that_cannot_be_written_refuses_every_change_and_sends_nothing(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, since: Since, how: str
) -> None:
    home, socket = folder / "home", str(folder / "agent.sock")
    home.mkdir(parents=True)
    if how == "the disk full":
        await first_change(fake, witness, planted, home, socket)
        journal = journal_of(home)
        before = journal.rows()
        limit = journal.path.stat().st_size  # the file as the first server left it: nothing more fits
        since = Since(fake)
        server = serve_with_file_limit(fake, witness, home, sa_env(planted, fake), limit, socket)
    else:
        (home / "data").mkdir()
        (home / "data" / APP_NAME).write_text("not a folder")  # where the journal's folder should be
        server = serve(fake, witness, home, sa_env(planted, fake), socket=socket)
    with app_listener(folder, Script(approval=ApprovalScript(decision="approve"))) as app:
        async with server as served:
            listed = await served.client.call_tool("list_sites", {})  # the server started, and reads work
            submitted = await served.client.call_tool("submit_sitemap", {"site": WWW, "feedpath": NEW_SITEMAP})
            deleted = await served.client.call_tool("delete_sitemap", TARGET)  # the app would say yes
            read = await served.client.call_tool("list_sitemaps", {"site": WWW})
    assert not listed.is_error and WWW in text_of(listed), text_of(listed)
    assert not read.is_error, text_of(read)
    for result in (submitted, deleted):
        witness.saw_result(result)
        assert_refused_unrecorded(result)
        assert "confirm_token" not in structured(result)
    assert since.changes() == [], [f"{r.method} {r.path}" for r in since.changes()]
    if how == "the disk full":
        assert journal.rows() == before and check(journal, use_seen=False).ok  # nothing half-written
        assert "the disk is full" in text_of(submitted), text_of(submitted)
    else:
        assert asked(app) == []  # refused before anybody was asked
        assert "a file is in the way of its folder" in text_of(submitted), text_of(submitted)


# --------------------------------------------------------------------------------------------------
# 2. What is recorded, and what never is


async def test_a_change_made_with_key_file_credentials_is_recorded_with_what_google_did(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, since: Since
) -> None:
    home = folder / "home"
    google_words = f"GOOGLE-OWN-WORDS-{secrets.token_hex(4)}"
    refused_sitemap = f"{WWW}journal/refused.xml"
    fake.fail(
        r"/sitemaps/.*refused\.xml",
        method="PUT",
        status=403,
        times=5,
        body={"error": {"code": 403, "message": google_words, "status": "PERMISSION_DENIED"}},
    )
    async with serve(fake, witness, home, key_file_env(planted, fake)) as served:
        done = await served.client.call_tool("submit_sitemap", {"site": WWW, "feedpath": NEW_SITEMAP})
        refused = await served.client.call_tool("submit_sitemap", {"site": WWW, "feedpath": refused_sitemap})
    assert not done.is_error, text_of(done)
    assert refused.is_error, text_of(refused)
    assert len(since.changes()) == 2
    journal = journal_of(home)
    rows = journal.rows()
    assert check(journal, use_seen=False).ok
    assert [(r.kind, r.about) for r in rows] == [("change", None), ("outcome", 1), ("change", None), ("outcome", 3)]
    first, first_outcome, second, second_outcome = rows
    for change in (first, second):
        assert change.tool == "submit_sitemap" and change.site == WWW
        assert change.account == SERVICE_ACCOUNT_EMAIL and change.approval == "not_asked"
    assert ["Sitemap", NEW_SITEMAP] in json.loads(first.targets)
    assert ["Sitemap", refused_sitemap] in json.loads(second.targets)
    assert (first_outcome.result, first_outcome.words) == ("done", "")
    assert second_outcome.result == "refused" and second_outcome.words.strip(), second_outcome
    assert google_words not in file_bytes(journal).decode("utf-8", "replace")  # only our summary


async def test_a_declined_call_leaves_one_answer_and_no_change(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, since: Since
) -> None:
    home, socket = folder / "home", str(folder / "agent.sock")
    with app_listener(folder, Script(approval=ApprovalScript(decision="deny"))):
        async with serve(fake, witness, home, sa_env(planted, fake), socket=socket) as served:
            result = await served.client.call_tool("delete_sitemap", TARGET)
    assert structured(result).get("decision") == "declined", text_of(result)
    assert since.changes() == []
    rows = journal_of(home).rows()
    assert [(r.kind, r.approval, r.tool) for r in rows] == [("answer", "declined", "delete_sitemap")]
    assert rows[0].site == WWW and ["Sitemap", TARGET["feedpath"]] in json.loads(rows[0].targets)


@pytest.mark.parametrize("where", ["dialog", "notification"])
async def test_a_yes_in_the_apps_dialog_and_one_from_its_notification_are_recorded_apart(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, since: Since, where: Source
) -> None:
    """The person's press is the app's own (`ApprovalBook.answer` with where it came from, as the dialog
    and the notification call it); tests/security/approval/test_approve_from_notification.py drives the press."""
    home, socket = folder / "home", str(folder / "agent.sock")
    feedpath = f"{WWW}journal/{where}.xml"
    with app_listener(folder) as app:
        async with serve(
            fake, witness, home, sa_env(planted, fake, SEARCHDESK_APPROVAL_WAIT="30"), socket=socket
        ) as served:
            added = await served.client.call_tool("submit_sitemap", {"site": WWW, "feedpath": feedpath})
            assert not added.is_error, text_of(added)
            results: list[Any] = []

            async def delete() -> None:
                results.append(await served.client.call_tool("delete_sitemap", {"site": WWW, "feedpath": feedpath}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(delete)
                await in_thread(app.wait_for_requests, "approval/request", 1, 30.0)
                [(key, _)] = app.open_questions()
                book = app.book
                assert book is not None
                assert app._on_thread(lambda: book.answer(key, True, where))  # as the person pressed Approve
    assert not results[0].is_error, text_of(results[0])
    assert [r.method for r in since.changes()] == ["PUT", "DELETE"]
    rows = journal_of(home).rows()
    assert [(r.kind, r.tool, r.approval, r.result) for r in rows] == [
        ("change", "submit_sitemap", "not_asked", ""),
        ("outcome", "submit_sitemap", "", "done"),
        ("change", "delete_sitemap", {"dialog": "app_dialog", "notification": "notification"}[where], ""),
        ("outcome", "delete_sitemap", "", "done"),
    ]


async def test_a_confirm_token_is_never_recorded_and_its_change_is(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, since: Since
) -> None:
    home = folder / "home"
    feedpath = f"{WWW}journal/token.xml"
    async with serve(fake, witness, home, key_file_env(planted, fake, ELICITATION="false")) as served:
        await served.client.call_tool("submit_sitemap", {"site": WWW, "feedpath": feedpath})
        first = await served.client.call_tool("delete_sitemap", {"site": WWW, "feedpath": feedpath})
        token = structured(first)["confirm_token"]
        second = await served.client.call_tool(
            "delete_sitemap", {"site": WWW, "feedpath": feedpath, "confirm_token": token}
        )
    assert not second.is_error, text_of(second)
    assert [r.method for r in since.changes()] == ["PUT", "DELETE"]
    journal = journal_of(home)
    rows = journal.rows()
    assert [(r.kind, r.tool, r.approval, r.result) for r in rows][2:] == [
        ("answer", "delete_sitemap", "waiting", ""),  # the token offered: nobody asked, nothing sent
        ("change", "delete_sitemap", "token", ""),
        ("outcome", "delete_sitemap", "", "done"),
    ]
    assert token.encode() not in file_bytes(journal)
    assert token[4:20].encode() not in file_bytes(journal)  # not even a part of it


async def test_no_search_query_and_no_row_at_all_come_from_reading(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, since: Since
) -> None:
    home = folder / "home"
    query = f"distinctive private search {secrets.token_hex(5)}"
    async with serve(fake, witness, home, key_file_env(planted, fake)) as served:
        for tool, args in (
            ("list_sites", {}),
            ("list_sitemaps", {"site": WWW}),
            (
                "query_search_analytics",
                {
                    "site": WWW,
                    "dimensions": ["query", "page"],
                    "filters": [{"dimension": "query", "operator": "contains", "expression": query}],
                },
            ),
            ("inspect_url", {"site": WWW, "url": f"{WWW}search?q={quote_plus(query)}"}),
        ):
            result = await served.client.call_tool(tool, args)
            assert not result.is_error, f"{tool}: {text_of(result)}"
        assert any(query.encode() in r.body for r in since.api())  # it was sent to Google, as asked
        journal = journal_of(home)
        assert not journal.exists() or journal.rows() == []  # a read writes no row
        # A change after the reads: its row holds none of them.
        added = await served.client.call_tool("submit_sitemap", {"site": WWW, "feedpath": f"{WWW}journal/q.xml"})
        assert not added.is_error, text_of(added)
    assert [r.kind for r in journal.rows()] == ["change", "outcome"]
    assert query.encode() not in file_bytes(journal)
    assert quote_plus(query).encode() not in file_bytes(journal)


# --------------------------------------------------------------------------------------------------
# 3. A server killed while Google is asked: the change stays, without an outcome, and the check lists it


async def test_a_server_killed_while_google_is_asked_leaves_a_change_the_check_lists(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, since: Since
) -> None:
    home = folder / "home"
    # Announced (content_length), so the fake streams it a byte every 0.2 s instead of joining it into one write:
    # Google is still answering when the server is killed, however quickly the sockets carry it.
    fake.fail(
        r"/sitemaps/.*slow\.xml", method="PUT", status=200, body=" " * 50, content_length=50, chunk_size=1, delay=0.2
    )
    async with serve(fake, witness, home, key_file_env(planted, fake)) as served, anyio.create_task_group() as tg:

        async def submit() -> None:
            with pytest.raises(BaseException):  # noqa: B017 (the server is gone: whatever the client says)
                await served.client.call_tool("submit_sitemap", {"site": WWW, "feedpath": f"{WWW}slow.xml"})

        tg.start_soon(submit)
        with anyio.fail_after(30):
            while not since.changes():
                await anyio.sleep(0.02)
        os.kill(served.pid, signal.SIGKILL)
    report = check(journal_of(home))
    assert report.ok, report.render()
    assert [(r.tool, r.kind) for r in report.open_changes] == [("submit_sitemap", "change")]
    assert "1 change has no outcome recorded" in report.render()
