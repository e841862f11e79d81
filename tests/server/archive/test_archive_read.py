"""Days Google no longer keeps, answered from SearchDesk's copy (issue 28), by a real stdio server
against the fake Google over real HTTPS (tests/fakegoogle/history.py "deletes" days older than 16
months). The archive is written with the store's own API from the rows the fake serves."""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from searchdesk_server.archive.store import ROW_LIMIT, TABLES, Archive, account_file, recover
from searchdesk_server.demo.facts import first_data_day
from searchdesk_server.tools.analytics.dates import months_back
from tests.fakegoogle import SERVICE_ACCOUNT_EMAIL, FakeGoogle
from tests.fakegoogle.history import HistoryGoogle, rows_for
from tests.server.stdio import DEMO_TODAY, REPO, text_of

pytestmark = pytest.mark.anyio
SITE = "https://archive.example/"
TODAY = dt.date.fromisoformat(DEMO_TODAY)
FIRST = first_data_day(TODAY)  # Google's oldest day
START = months_back(TODAY, 24)
GAP = [FIRST - dt.timedelta(days=40 + i) for i in range(3)]  # three days the copy never got
COPIED = dt.datetime(2025, 6, 1, 4, 30, tzinfo=dt.UTC)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def history(tmp_path: Path) -> Iterator[tuple[FakeGoogle, HistoryGoogle]]:
    api = HistoryGoogle(TODAY, sites={SITE: "siteOwner"})
    fake = FakeGoogle(tmp_path / "fake-google", api=api, today=TODAY)
    try:
        yield fake, api
    finally:
        fake.close()


def archive_file(tmp_path: Path, account: str) -> Path:
    return tmp_path / "data" / "searchdesk" / "archive" / account_file(account)


def fill(path: Path, days: list[dt.date]) -> None:
    """The copy as the app would have written it: each table the rows the fake serves for the day."""
    with Archive.open(path) as archive:
        for day in days:
            tables = {name: rows_for(SITE, day, list(dims)) for name, dims in TABLES.items()}
            archive.write_day(SITE, day, "web", tables, copied_at=COPIED)


def old_days() -> list[dt.date]:
    days, day = [], START
    while day < FIRST:
        if day not in GAP:
            days.append(day)
        day += dt.timedelta(days=1)
    return days


def base_env(tmp_path: Path) -> dict[str, str]:
    """A fresh home; PYTHONPATH passed on so a run against an older checkout starts that server."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "SEARCHDESK_DEMO_TODAY": DEMO_TODAY,
        "SEARCHDESK_AGENT_SOCKET": str(tmp_path / "none" / "agent.sock"),
    }
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def env_for(fake: FakeGoogle, tmp_path: Path, today: dt.date = TODAY) -> dict[str, str]:
    return {
        **base_env(tmp_path),
        "SEARCHDESK_DEMO_TODAY": today.isoformat(),
        "GSC_SERVICE_ACCOUNT_KEY_FILE": str(fake.service_account_file()),
        **fake.env,
    }


@asynccontextmanager
async def serve(env: dict[str, str], args: tuple[str, ...] = ()) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "searchdesk_server", *args], env=env, cwd=REPO)
    async with Client(params, mode="legacy", read_timeout_seconds=90) as client:
        yield client


async def ask(client: Client, **args: Any) -> tuple[str, dict[str, Any], bool]:
    result = await client.call_tool("query_search_analytics", {"site": SITE, **args})
    return text_of(result), dict(result.structured_content or {}), bool(result.is_error)


async def test_a_range_back_24_months_reads_the_old_part_from_the_copy_and_says_so(
    history: tuple[FakeGoogle, HistoryGoogle], tmp_path: Path
) -> None:
    fake, _ = history
    fill(archive_file(tmp_path, SERVICE_ACCOUNT_EMAIL), old_days())
    end = TODAY - dt.timedelta(days=5)
    async with serve(env_for(fake, tmp_path)) as client:
        text, data, error = await ask(
            client, start_date=START.isoformat(), end_date=end.isoformat(), dimensions=["date"], row_limit=1000
        )
    assert not error, text
    assert data["untrusted"] is True and data["source"] == "google"
    sources = data["sources"]
    assert sources["searchdesk_copy"][0]["start"] == START.isoformat()
    assert sources["searchdesk_copy"][-1]["end"] == (FIRST - dt.timedelta(days=1)).isoformat()
    assert sources["copied_at"][START.isoformat()] == COPIED.isoformat(timespec="seconds")
    assert sources["google"] == [{"start": FIRST.isoformat(), "end": end.isoformat()}]
    assert sources["gaps"] == [{"start": min(GAP).isoformat(), "end": max(GAP).isoformat()}]
    assert "came from SearchDesk's copy on this computer" in text
    assert f"has a gap — no data for {min(GAP).isoformat()} to {max(GAP).isoformat()}" in text
    expected = sum(rows_for(SITE, d, [])[0]["clicks"] for d in old_days())
    expected += sum(
        rows_for(SITE, FIRST + dt.timedelta(days=i), [])[0]["clicks"] for i in range((end - FIRST).days + 1)
    )
    assert data["totals"]["clicks"] == expected


async def test_totals_from_the_copy_equal_googles_for_the_same_days(
    history: tuple[FakeGoogle, HistoryGoogle], tmp_path: Path
) -> None:
    fake, api = history
    days = old_days()[:60]
    fill(archive_file(tmp_path, SERVICE_ACCOUNT_EMAIL), days)
    span = {"start_date": days[0].isoformat(), "end_date": days[-1].isoformat()}
    async with serve(env_for(fake, tmp_path)) as client:
        now_text, now, error = await ask(client, dimensions=["date"], row_limit=1000, **span)
        assert not error, now_text
        _, by_page, _ = await ask(client, dimensions=["page"], **span)
    then_today = TODAY - dt.timedelta(days=400)  # a year ago Google still had these days
    api.today = then_today
    async with serve(env_for(fake, tmp_path / "then", then_today)) as client:
        _, then, _ = await ask(client, dimensions=["date"], row_limit=1000, **span)
    assert "sources" not in then or not then["sources"].get("searchdesk_copy")
    assert now["sources"]["searchdesk_copy"]
    assert now["totals"]["clicks"] == then["totals"]["clicks"]
    assert now["totals"]["impressions"] == then["totals"]["impressions"]
    pick = ("date", "clicks", "impressions")
    assert sorted(tuple(r[k] for k in pick) for r in now["rows"]) == sorted(
        tuple(r[k] for k in pick) for r in then["rows"]
    )
    served: dict[str, int] = {}  # what Google served by page on those days, summed
    for day in days:
        for row in rows_for(SITE, day, ["page"]):
            served[row["keys"][0]] = served.get(row["keys"][0], 0) + row["clicks"]
    assert {r["page"]: r["clicks"] for r in by_page["rows"]} == served


async def test_a_withheld_accounts_copy_is_never_read(
    history: tuple[FakeGoogle, HistoryGoogle], tmp_path: Path
) -> None:
    fake, _ = history
    fill(archive_file(tmp_path, "someone-else@example.com"), old_days()[:10])
    span = {"start_date": old_days()[0].isoformat(), "end_date": old_days()[9].isoformat()}
    async with serve(env_for(fake, tmp_path)) as client:
        text, data, error = await ask(client, **span)
        assert error, text
        assert "SearchDesk has no copy of" in text
        fill(archive_file(tmp_path, SERVICE_ACCOUNT_EMAIL), old_days()[:10])  # the account it acts as
        text, data, error = await ask(client, **span)
    assert not error, text
    assert len(data["sources"]["copied_at"]) == 10


async def test_a_day_google_cut_at_its_row_limit_is_named_in_the_field_and_the_sentence(
    history: tuple[FakeGoogle, HistoryGoogle], tmp_path: Path
) -> None:
    """A day whose page table holds exactly Google's row limit is one Google cut (the store marks it as
    it writes the day); a day under the limit is not."""
    fake, _ = history
    cut_day, whole_day = old_days()[:2]
    path = archive_file(tmp_path, SERVICE_ACCOUNT_EMAIL)
    fill(path, [whole_day])
    tables = {name: rows_for(SITE, cut_day, list(dims)) for name, dims in TABLES.items()}
    tables["page"] = [
        {"keys": [f"{SITE}p/{i}"], "clicks": 1, "impressions": 2, "position": 3.0} for i in range(ROW_LIMIT)
    ]
    with Archive.open(path) as archive:
        archive.write_day(SITE, cut_day, "web", tables, copied_at=COPIED)
    async with serve(env_for(fake, tmp_path)) as client:
        both, both_data, error = await ask(
            client, start_date=cut_day.isoformat(), end_date=whole_day.isoformat(), dimensions=["page"], row_limit=5
        )
        assert not error, both
        whole, whole_data, error = await ask(
            client, start_date=whole_day.isoformat(), end_date=whole_day.isoformat(), dimensions=["page"]
        )
    assert not error, whole
    assert both_data["sources"]["cut_at_row_limit"] == [cut_day.isoformat()]
    assert f"Google had cut {cut_day.isoformat()} at its row limit (50,000 rows a day)" in both
    assert whole_data["sources"]["cut_at_row_limit"] == []
    assert "row limit" not in whole


WRITER = textwrap.dedent(
    """
    import datetime as dt, json, sys, time
    from pathlib import Path
    from searchdesk_server.archive.store import Archive
    path, stop = Path(sys.argv[1]), time.monotonic() + float(sys.argv[2])
    days = [dt.date.fromisoformat(d) for d in json.loads(sys.argv[3])]
    tables = json.loads(Path(sys.argv[4]).read_text())
    n = 0
    with Archive.open(path) as archive:
        while time.monotonic() < stop:
            for day in days:
                archive.write_day(sys.argv[5], day, "web", tables[day.isoformat()])
                n += 1
    print(n)
    """
)


async def test_two_servers_read_while_the_app_writes(history: tuple[FakeGoogle, HistoryGoogle], tmp_path: Path) -> None:
    import anyio

    fake, _ = history
    days = old_days()[:20]
    path = archive_file(tmp_path, SERVICE_ACCOUNT_EMAIL)
    fill(path, days)
    tables = {d.isoformat(): {n: rows_for(SITE, d, list(dims)) for n, dims in TABLES.items()} for d in days}
    (tmp_path / "tables.json").write_text(json.dumps(tables))
    span = {"start_date": days[0].isoformat(), "end_date": days[-1].isoformat(), "dimensions": ["query", "page"]}
    answers: list[tuple[int, float]] = []
    async with serve(env_for(fake, tmp_path)) as one, serve(env_for(fake, tmp_path)) as two:
        _, first, _ = await ask(one, **span)
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), "6", json.dumps([d.isoformat() for d in days]),
             str(tmp_path / "tables.json"), SITE],
            cwd=REPO, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            while writer.poll() is None:
                async with anyio.create_task_group() as tg:
                    for client in (one, two):

                        async def read(client: Client = client) -> None:
                            started = anyio.current_time()
                            text, data, error = await ask(client, **span)
                            assert not error, text
                            assert len(data["sources"]["copied_at"]) == len(days)
                            answers.append((data["totals"]["clicks"], anyio.current_time() - started))

                        tg.start_soon(read)
            written = int((writer.communicate(timeout=30)[0] or "0").strip())
        finally:
            writer.kill()
    assert written > len(days), "the writer kept writing during the reads"
    assert len(answers) >= 4
    assert {clicks for clicks, _ in answers} == {first["totals"]["clicks"]}  # whole days only, never doubled
    assert max(seconds for _, seconds in answers) < 10


def test_a_damaged_copy_is_set_aside_and_the_readable_days_recovered(tmp_path: Path) -> None:
    path = tmp_path / "archive" / "a.sqlite3"
    days = old_days()[:12]
    with Archive.open(path) as archive:  # 400 pages a day: one page of the file holds part of one day
        for day in days:
            tables = {name: rows_for(SITE, day, list(dims)) for name, dims in TABLES.items()}
            tables["page"] = [
                {"keys": [f"{SITE}p/{i}"], "clicks": i % 7, "impressions": 10 + i, "position": 3.5} for i in range(400)
            ]
            archive.write_day(SITE, day, "web", tables, copied_at=COPIED)
    with Archive.open(path) as archive:
        archive._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with sqlite3.connect(path) as db:  # one page of rows in the middle of the table, as a bad sector would
        leaves = [n for (n,) in db.execute("SELECT pageno FROM dbstat WHERE name = 'rows' AND pagetype = 'leaf'")]
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.seek((leaves[len(leaves) // 2] - 1) * page_size)
        f.write(b"\xde\xad" * (page_size // 2))
    with pytest.raises(Exception, match="damaged"), Archive.open(path, check=True) as archive:
        pass
    done = recover(path)
    assert done.set_aside.exists() and done.set_aside != path
    assert done.set_aside.read_bytes()[: size // 2] != b""  # kept, never deleted
    with Archive.open(path, check=True) as fresh:
        kept = fresh.days(SITE)
        lost = {loss.day for loss in fresh.losses()}
    assert kept and lost and kept | lost == set(days) and kept.isdisjoint(lost)
    assert sorted(lost) == sorted(day for _, _, day in done.lost)
    assert done.recovered == len(kept)


async def test_the_demo_server_alone_answers_from_its_own_copy(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    start = months_back(TODAY, 35)
    async with serve(env, ("--demo",)) as client:
        result = await client.call_tool(
            "query_search_analytics",
            {"site": "sc-domain:example.com", "start_date": start.isoformat(), "end_date": FIRST.isoformat()},
        )
        # A report: this spring against the spring two years ago, which Google no longer has.
        spring = dt.date(TODAY.year, 4, 1)
        report = await client.call_tool(
            "compare_periods",
            {
                "site": "sc-domain:example.com",
                "start_date": spring.isoformat(),
                "end_date": (spring + dt.timedelta(days=27)).isoformat(),
                "vs": months_back(spring, 24).isoformat(),
            },
        )
    report_text, report_data = text_of(report), dict(report.structured_content or {})
    assert not report.is_error, report_text
    assert report_data["sources"]["searchdesk_copy"][0]["start"] == months_back(spring, 24).isoformat()
    assert report_data["sources"]["google"]
    assert "came from SearchDesk's copy on this computer" in report_text
    text, data = text_of(result), dict(result.structured_content or {})
    assert not result.is_error, text
    assert data["sources"]["searchdesk_copy"][0]["start"] == start.isoformat()
    assert "came from SearchDesk's copy on this computer" in text
    assert data["totals"]["clicks"] > 0
    assert not (tmp_path / "data" / "searchdesk" / "archive").exists()  # nothing written by the demo
