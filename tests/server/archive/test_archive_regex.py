"""Filter patterns read and matched as Google does, by RE2, on days from Google and from SearchDesk's copy
alike (issue 36, 2).

A real stdio server against the fake Google over real HTTPS (the demo's Google, which models Google's
RE2) and a copy of the older days built with the store's own API, as the app writes it. Over a 24-month
range the older 8 months come from the copy and the rest from Google.

- `^(\\w+\\s?)*$` ("queries made only of words") is an ordinary-looking pattern that backtracks: Python's
  `re` takes about 25 minutes on the copy's 51-character query below, and the whole server waits with it.
  Google (RE2) answers at once. The call is bounded by a 10 s timeout it needs a fraction of.
- A lookahead is refused in the same words whether the days come from Google, from the copy or both,
  before anything is asked of Google.

On the code before issue 36 the first call is refused by the demo's Google (it refused nested repeats,
which Google accepts), and with that refusal taken away it runs past the timeout in the copy; the second
asks Google and answers with Google's words for live days only.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from searchdesk_server.archive.store import TABLES, Archive, account_file
from searchdesk_server.demo.facts import first_data_day
from searchdesk_server.tools.analytics.dates import months_back
from tests.fakegoogle import SERVICE_ACCOUNT_EMAIL, FakeGoogle
from tests.server.stdio import DEMO_TODAY, REPO, text_of

pytestmark = pytest.mark.anyio
SITE = "https://www.example.com/"  # a property of the demo's Google, which the fake serves
TODAY = dt.date.fromisoformat(DEMO_TODAY)
FIRST = first_data_day(TODAY)  # Google's oldest day
START = months_back(TODAY, 24)
END = TODAY - dt.timedelta(days=5)
COPIED = dt.datetime(2025, 6, 1, 4, 30, tzinfo=dt.UTC)

#: Matches a query made of words and single spaces; backtracks on one that is not, in Python's `re`.
WORDS_ONLY = r"^(\w+\s?)*$"
#: A query people type, with a question mark at its end: not words only, so no match.
SLOW_QUERY = "best running shoes for flat feet and heavy runners?"
WORDY_QUERY = "best running shoes for flat feet"
LOOKAHEAD = "shoes(?= for)"
#: The one sentence a lookahead is refused with, whichever days it would read (google/regex.py).
REFUSED = (
    "The pattern in filters[0] cannot be used. Google reads filter patterns as RE2 regular expressions, and "
    "RE2 cannot use this one: it looks ahead with (?=…). Match the text itself instead."
)
#: Far more than the calls below need (well under a second of matching), far less than the old code took.
BOUND_S = 10


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGoogle]:
    fake = FakeGoogle(tmp_path / "fake-google", today=TODAY)
    try:
        yield fake
    finally:
        fake.close()


def old_days() -> list[dt.date]:
    days, day = [], START
    while day < FIRST:
        days.append(day)
        day += dt.timedelta(days=1)
    return days


def fill(home: Path) -> None:
    """The copy of the 8 months Google no longer keeps, as the app would have written it: each table a
    few rows a day, the query tables among them holding the two queries above."""
    path = home / "data" / "searchdesk" / "archive" / account_file(SERVICE_ACCOUNT_EMAIL)
    page = f"{SITE}shoes/"
    with Archive.open(path) as archive:
        for day in old_days():
            tables: dict[str, list[dict[str, Any]]] = {}
            for name, dims in TABLES.items():
                rows = []
                for i, query in enumerate((WORDY_QUERY, SLOW_QUERY)):
                    words = {"query": query, "page": page, "country": "usa", "device": "MOBILE"}
                    keys = [words[d] for d in dims]
                    rows.append({"keys": keys, "clicks": 2 - i, "impressions": 20, "position": 3.0})
                tables[name] = rows[:1] if not dims or "query" not in dims else rows
            archive.write_day(SITE, day, "web", tables, copied_at=COPIED)


@asynccontextmanager
async def serve(fake: FakeGoogle, home: Path) -> AsyncIterator[Client]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "SEARCHDESK_DEMO_TODAY": DEMO_TODAY,
        "SEARCHDESK_AGENT_SOCKET": str(home / "none" / "agent.sock"),
        "GSC_SERVICE_ACCOUNT_KEY_FILE": str(fake.service_account_file()),
        **fake.env,
    }
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    params = StdioServerParameters(command=sys.executable, args=["-m", "searchdesk_server"], env=env, cwd=REPO)
    async with Client(params, mode="legacy", read_timeout_seconds=90) as client:
        yield client


async def ask(client: Client, start: dt.date, end: dt.date, expression: str) -> tuple[str, dict[str, Any], bool]:
    args = {
        "site": SITE,
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
        "dimensions": ["query"],
        "filters": [{"dimension": "query", "operator": "includingRegex", "expression": expression}],
        "row_limit": 1000,
    }
    with anyio.fail_after(BOUND_S):
        result = await client.call_tool("query_search_analytics", args)
    return text_of(result), dict(result.structured_content or {}), bool(result.is_error)


def analytics_requests(fake: FakeGoogle) -> list[Any]:
    return [r for r in fake.api_requests() if "searchAnalytics" in r.path]


async def test_a_backtracking_pattern_over_24_months_answers_at_once_from_google_and_the_copy(
    fake: FakeGoogle, tmp_path: Path
) -> None:
    fill(tmp_path)
    async with serve(fake, tmp_path) as client:
        text, data, error = await ask(client, START, END, WORDS_ONLY)
        assert not error, text
        old_text, old, old_error = await ask(client, START, FIRST - dt.timedelta(days=1), WORDS_ONLY)
    assert not old_error, old_text
    sources = data["sources"]
    assert sources["searchdesk_copy"][0]["start"] == START.isoformat()
    assert sources["google"] == [{"start": FIRST.isoformat(), "end": END.isoformat()}]
    queries = {r["query"] for r in data["rows"]}
    assert WORDY_QUERY in queries and SLOW_QUERY not in queries  # matched as Google matches: RE2
    assert len(queries) > 1  # Google's days answered too (the demo's own queries)
    # The copy alone: its one word-only query, every day of it.
    assert [(r["query"], r["clicks"]) for r in old["rows"]] == [(WORDY_QUERY, 2 * len(old_days()))]


async def test_a_lookahead_is_refused_in_the_same_words_for_google_days_copied_days_and_both(
    fake: FakeGoogle, tmp_path: Path
) -> None:
    fill(tmp_path)
    ranges = {
        "google": (FIRST + dt.timedelta(days=30), END),
        "copy": (START, FIRST - dt.timedelta(days=1)),
        "both": (START, END),
    }
    answers = {}
    async with serve(fake, tmp_path) as client:
        for name, (start, end) in ranges.items():
            answers[name] = await ask(client, start, end, LOOKAHEAD)
    for name, (text, _, error) in answers.items():
        assert error, (name, text)
        assert text == REFUSED, (name, text)
    assert analytics_requests(fake) == []  # refused before anything was asked of Google


async def test_filter_match_any_is_one_re2_pattern_that_matches_alike_on_the_copy(
    fake: FakeGoogle, tmp_path: Path
) -> None:
    """`filter_match any` is sent as one pattern (Google has no "or"): equals and contains are quoted by
    RE2's own rule, so a `?` in the text is the character, on the copy's days as on Google's."""
    fill(tmp_path)
    filters = [
        {"dimension": "query", "operator": "equals", "expression": WORDY_QUERY},
        {"dimension": "query", "operator": "contains", "expression": "heavy runners?"},
    ]
    args = {
        "site": SITE,
        "start_date": START.isoformat(),
        "end_date": (FIRST - dt.timedelta(days=1)).isoformat(),
        "dimensions": ["query"],
        "filters": filters,
        "filter_match": "any",
    }
    async with serve(fake, tmp_path) as client:
        with anyio.fail_after(BOUND_S):
            result = await client.call_tool("query_search_analytics", args)
    assert not result.is_error, text_of(result)
    assert {r["query"] for r in (result.structured_content or {})["rows"]} == {WORDY_QUERY, SLOW_QUERY}
