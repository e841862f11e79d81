"""query_search_analytics all_rows: every row into a CSV file, linked from a short result; unique
names, retention, spreadsheet-safe cells, and no partial file after a cancel or a failure."""

from __future__ import annotations

import csv
import os
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from searchdesk_server import catalogue
from searchdesk_server.config import load
from searchdesk_server.handlers import run_tool
from searchdesk_server.runtime import Call, Runtime
from searchdesk_server.tools.analytics import export
from searchdesk_server.validate import check_arguments
from tests.server.reports.conftest import BIG, ScriptedGoogle, Table, demo, raw_rows, row, served, text_of

pytestmark = pytest.mark.anyio

DIMS = ["date", "query", "page", "country", "device"]
SMALL = {"site": BIG, "start_date": "2026-11-01", "end_date": "2026-11-10", "dimensions": ["query"], "all_rows": True}
NAME = re.compile(r"searchdesk-example\.com-\d{4}-\d\d-\d\d-to-\d{4}-\d\d-\d\d-\d{8}T\d{6}Z-[0-9a-f]{6}\.csv")


def read_csv(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return list(csv.reader(fh))


async def test_every_row_goes_to_a_linked_csv_file(exports: Path) -> None:
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    args = {"site": BIG, "period": "last16months", "dimensions": DIMS, "all_rows": True}
    async with served(demo()) as client:
        result = await client.call_tool("query_search_analytics", args, progress_callback=on_progress)
    text = text_of(result)
    assert not result.is_error, text
    data = result.structured_content
    path = Path(data["file"])
    assert path.parent == exports and NAME.fullmatch(path.name)
    assert sorted(os.listdir(exports)) == [path.name]  # nothing else: no partial file left over
    (link,) = [c for c in result.content if c.type == "resource_link"]
    assert link.uri == path.as_uri() == data["uri"] and link.mime_type == "text/csv"
    assert link.size == path.stat().st_size == data["bytes"]
    assert str(path) in text and len(text) < 2_000  # a short summary, not the rows

    expected = raw_rows(BIG, data["start_date"], data["end_date"], DIMS, "final")
    assert len(expected) > 25_000  # more than one of Google's pages (about 68,000 with today's clock)
    lines = read_csv(path)
    assert lines[0] == [*DIMS, "clicks", "impressions", "ctr", "position"]
    body = lines[1:]
    assert len(body) == data["rows"] == len(expected)
    wanted = Counter(tuple(r["keys"]) for r in expected if plain(r["keys"]))
    assert Counter(t for r in body if (t := tuple(r[:5])) in wanted) == wanted
    assert sum(int(r[5]) for r in body) == sum(r["clicks"] for r in expected) == data["totals"]["clicks"]
    assert sum(int(r[6]) for r in body) == sum(r["impressions"] for r in expected) == data["totals"]["impressions"]
    for line in body[:100]:
        assert float(line[7]) == pytest.approx(int(line[5]) / int(line[6]))
    assert progress == sorted(set(progress)) and progress[-1] == len(expected) and len(progress) >= 2
    assert data["data_state"] == "final" and data["kept_days"] == 14 and data["more_rows_at_google"] is False


def plain(keys: list[str]) -> bool:
    """Rows whose text needs no cleaning or spreadsheet escaping (the demo has a few hostile ones)."""
    return all(k.isprintable() and not k.startswith(("=", "+", "-", "@")) for k in keys)


async def test_names_never_collide_and_old_exports_are_cleaned_up(exports: Path) -> None:
    exports.mkdir(parents=True)
    day = 86_400
    old = exports / "searchdesk-example.com-2025-01-01-to-2025-01-28-20250130T000000Z-aaaaaa.csv"
    recent = exports / "searchdesk-example.com-2026-01-01-to-2026-01-28-20260130T000000Z-bbbbbb.csv"
    crashed = exports / ".searchdesk-example.com-x.csv.partial"
    mine = exports / "my-notes.csv"  # a person's own file: never touched
    for path, age in ((old, 15 * day), (recent, 13 * day), (crashed, 2 * day), (mine, 400 * day)):
        path.write_text("x")
        os.utime(path, (time.time() - age, time.time() - age))
    google = ScriptedGoogle()
    google.tables[("2026-11-01", ("query",))] = Table.of([row("a", 1, 2, 3.0)])
    args = SMALL
    async with served(google.transport()) as client:
        first = await client.call_tool("query_search_analytics", args)
        second = await client.call_tool("query_search_analytics", args)
    a, b = Path(first.structured_content["file"]), Path(second.structured_content["file"])
    assert a != b and a.exists() and b.exists()
    assert (
        read_csv(a)
        == read_csv(b)
        == [["query", "clicks", "impressions", "ctr", "position"], ["a", "1", "2", "0.5", "3.0"]]
    )
    assert not old.exists() and not crashed.exists()
    assert recent.exists() and mine.exists()


async def test_cells_a_spreadsheet_would_run_are_kept_as_text(exports: Path) -> None:
    google = ScriptedGoogle()
    words = ['=HYPERLINK("http://evil")', "+1", "-x", "@SUM(A1)", "plain", "a=b"]
    google.tables[("2026-11-01", ("query",))] = Table.of([row(w, 1, 2, 3.0) for w in words])
    args = SMALL
    async with served(google.transport()) as client:
        result = await client.call_tool("query_search_analytics", args)
    cells = [r[0] for r in read_csv(Path(result.structured_content["file"]))[1:]]
    assert cells == ['\'=HYPERLINK("http://evil")', "'+1", "'-x", "'@SUM(A1)", "plain", "a=b"]


async def test_all_rows_does_not_mix_with_paging_arguments(exports: Path) -> None:
    async with served(demo()) as client:
        result = await client.call_tool(
            "query_search_analytics", {"site": BIG, "all_rows": True, "row_limit": 10, "dimensions": ["query"]}
        )
    assert result.is_error and "leave out row_limit and start_row" in text_of(result)
    assert not exports.exists() or os.listdir(exports) == []


def export_call(google: ScriptedGoogle) -> Call:
    config = load({}, demo_flag=True)
    spec = catalogue.BY_NAME["query_search_analytics"]
    args = check_arguments(spec, SMALL)
    return Call(spec, args, Runtime(config, transport=google.transport()))


def big_table(google: ScriptedGoogle) -> None:
    google.tables[("2026-11-01", ("query",))] = Table(100_000, lambda i: row(f"q{i}", 1, 2, 3.0))


async def test_cancelling_mid_way_leaves_no_partial_file(exports: Path) -> None:
    google = ScriptedGoogle(hold_at=50_000)
    big_table(google)
    call = export_call(google)
    outcome: list[Any] = []

    async def run() -> None:
        outcome.append(await run_tool(call))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await google.held.wait()
        # Mid-way: two pages are written to the hidden partial file, the third is at Google.
        (partial,) = os.listdir(exports)
        assert partial.startswith(".searchdesk-") and partial.endswith(".partial")
        assert (exports / partial).stat().st_size > 0
        tg.cancel_scope.cancel()
    assert outcome == []  # cancelled: no result at all
    assert os.listdir(exports) == []
    await call.runtime.aclose()


async def test_a_client_cancel_reaches_the_export(exports: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over MCP: the client gives up, the server's handler is cancelled, the partial file goes."""
    google = ScriptedGoogle(hold_at=50_000)
    big_table(google)
    discarded = anyio.Event()
    original = export.CsvFile.discard

    def discard(self: export.CsvFile) -> None:
        original(self)
        discarded.set()

    monkeypatch.setattr(export.CsvFile, "discard", discard)
    args = SMALL
    async with served(google.transport()) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "query_search_analytics", args)
            await google.held.wait()
            tg.cancel_scope.cancel()
        with anyio.fail_after(60):  # a guard against hanging, not a measurement
            await discarded.wait()
        assert os.listdir(exports) == []
        # The connection stays usable after the cancel.
        again = {k: v for k, v in args.items() if k != "all_rows"}
        assert len((await client.call_tool("query_search_analytics", again)).structured_content["rows"]) == 100


async def test_a_failure_mid_way_leaves_no_partial_file(exports: Path) -> None:
    google = ScriptedGoogle(fail_at=50_000)
    big_table(google)
    call = export_call(google)
    result = await run_tool(call)
    await call.runtime.aclose()
    assert result.is_error
    assert os.listdir(exports) == []
