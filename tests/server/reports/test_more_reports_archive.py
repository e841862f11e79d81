"""The new reports reaching back 24 months: answered from SearchDesk's copy by a real stdio server
against the fake Google over real HTTPS (the copy written with the store's own API from the rows the
fake serves), checked against sums of those rows made here; and the brand split's terms escaped,
evaluated through the same archive path every filter takes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.tools.reports.calendar import full_months
from tests.fakegoogle import SERVICE_ACCOUNT_EMAIL, FakeGoogle
from tests.fakegoogle.history import HistoryGoogle, rows_for
from tests.server.archive.test_archive_read import (
    FIRST,
    GAP,
    SITE,
    START,
    TODAY,
    archive_file,
    env_for,
    fill,
    old_days,
    serve,
)
from tests.server.archive.test_archive_read import history as history
from tests.server.stdio import text_of

pytestmark = pytest.mark.anyio
LAST_FINAL = TODAY - dt.timedelta(days=3)


async def report(client: Any, tool: str, **args: Any) -> tuple[str, dict[str, Any]]:
    result = await client.call_tool(tool, {"site": SITE, **args})
    text = text_of(result)
    assert not result.is_error, text
    data = dict(result.structured_content or {})
    assert data["untrusted"] is True and data["source"] == "google" and len(text.encode()) <= 100_000
    return text, data


def served_clicks(first: dt.date, last: dt.date, dims: list[str], keep: Any = None) -> int:
    """What the fake served (and the copy holds) over the days, minus the days the copy never got."""
    total, day = 0, first
    while day <= last:
        if day not in GAP and (day >= START):
            total += sum(r["clicks"] for r in rows_for(SITE, day, dims) if keep is None or keep(r))
        day += dt.timedelta(days=1)
    return total


async def test_content_decay_reads_24_months_from_the_copy_and_says_so(
    history: tuple[FakeGoogle, HistoryGoogle],
    tmp_path: Path,
) -> None:
    fake, _ = history
    fill(archive_file(tmp_path, SERVICE_ACCOUNT_EMAIL), old_days())
    async with serve(env_for(fake, tmp_path)) as client:
        text, data = await report(client, "report_content_decay", months=24)
    months = full_months(START, LAST_FINAL, 24)
    assert data["months"] == [m.start.strftime("%Y-%m") for m in months]
    assert months[0].start < FIRST  # reaches past Google's 16 months
    assert data["sources"]["searchdesk_copy"] and "came from SearchDesk's copy on this computer" in text
    assert f"has a gap — no data for {min(GAP).isoformat()} to {max(GAP).isoformat()}" in text
    assert data["clicks_by_month"] == [served_clicks(m.start, m.end, ["page"]) for m in months]
    # The property's own totals of the months the copy alone answers (HistoryGoogle serves a request
    # without dimensions a row a day, unsummed, so its months are not compared).
    old = [i for i, m in enumerate(months) if m.end < FIRST]
    assert len(old) >= 7
    assert [data["property_clicks_by_month"][i] for i in old] == [
        served_clicks(months[i].start, months[i].end, []) for i in old
    ]


@pytest.mark.parametrize(
    ("terms", "branded"),
    [
        # Each term is literal: unescaped, "query [2]" would match query 2, "y 3|query 4" query 4, and
        # "query 5+" "query 55…"; escaped, none of them matches anything here.
        (["query 1", "query [2]", "y 3|query 4", "query 5+", "(query 6)"], {"query 1"}),
        (["QUERY 7", "query 0"], {"query 7", "query 0"}),  # any letter case
    ],
)
async def test_brand_split_from_the_copy_with_terms_a_pattern_treats_specially(
    history: tuple[FakeGoogle, HistoryGoogle],
    tmp_path: Path,
    terms: list[str],
    branded: set[str],
) -> None:
    fake, _ = history
    days = old_days()[:60]
    fill(archive_file(tmp_path, SERVICE_ACCOUNT_EMAIL), days)
    first, last = days[0], days[-1]
    async with serve(env_for(fake, tmp_path)) as client:
        text, data = await report(
            client, "report_brand_split", start_date=first.isoformat(), end_date=last.isoformat(), terms=terms
        )
    assert data["terms"] == [t.lower() for t in terms] and data["terms_from"] == "argument"
    assert all(f'"{t.lower()}"' in text for t in terms)
    assert data["sources"]["searchdesk_copy"]
    totals = data["totals"]
    assert totals["branded_clicks"] == served_clicks(first, last, ["query"], lambda r: r["keys"][0] in branded)
    assert totals["non_branded_clicks"] == served_clicks(first, last, ["query"], lambda r: r["keys"][0] not in branded)
    assert totals["property_clicks"] == served_clicks(first, last, [])
    for part in ("branded_clicks", "non_branded_clicks", "private_clicks", "property_clicks"):
        assert totals[part] == sum(r[part] for r in data["rows"]), part  # every total is the sum of its rows
