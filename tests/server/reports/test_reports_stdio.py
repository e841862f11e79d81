"""The reports and all_rows through a real stdio subprocess of the server, as Claude Desktop runs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.result import UNTRUSTED_LINE
from tests.server.stdio import MODES, connect, text_of

pytestmark = pytest.mark.anyio

BIG = "sc-domain:example.com"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("compare_periods", {"site": BIG, "by": "query", "vs": "year"}),
    ("report_traffic_drops", {"site": BIG}),
    ("report_quick_wins", {"site": BIG, "by": "page"}),
    ("report_cannibalisation", {"site": BIG, "start_date": "2026-10-01", "end_date": "2026-10-31"}),
]


@pytest.mark.parametrize("mode", MODES)
async def test_reports_answer_over_stdio_with_progress(mode: str, tmp_path: Path) -> None:
    async with connect(mode, env={"XDG_DATA_HOME": str(tmp_path)}) as client:
        for name, args in CALLS:
            progress: list[tuple[float, str | None]] = []

            async def on_progress(
                done: float, total: float | None, message: str | None, seen: list[Any] = progress
            ) -> None:
                seen.append((done, message))

            result = await client.call_tool(name, args, progress_callback=on_progress)
            text = text_of(result)
            assert not result.is_error, (name, text)
            assert text.startswith(UNTRUSTED_LINE)
            data = result.structured_content
            assert data["data_state"] == "final" and data["first_incomplete_date"] == "2026-11-18"
            assert data["requests"] >= 3 and sum(data["rows_read"].values()) > 0
            assert "first incomplete date is 2026-11-18" in text and "Read " in text
            assert progress and progress[-1][0] == sum(data["rows_read"].values()), name
            assert all(m and m.startswith("Read ") for _, m in progress)


async def test_all_rows_over_stdio_writes_the_file_the_link_names(tmp_path: Path) -> None:
    args = {"site": BIG, "dimensions": ["query", "page"], "all_rows": True}
    async with connect("legacy", env={"XDG_DATA_HOME": str(tmp_path)}) as client:
        result = await client.call_tool("query_search_analytics", args)
    assert not result.is_error, text_of(result)
    path = Path(result.structured_content["file"])
    assert path.parent == tmp_path / "searchdesk" / "exports"
    assert path.exists() and path.stat().st_size == result.structured_content["bytes"]
    (link,) = [c for c in result.content if c.type == "resource_link"]
    assert link.uri == path.as_uri()
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    assert lines[0] == "query,page,clicks,impressions,ctr,position"
    assert len(lines) - 1 == result.structured_content["rows"] > 0
