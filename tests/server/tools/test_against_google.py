"""The tools against the fake Google over real HTTPS through the proxy path, from a real stdio
subprocess: happy paths, Google's errors, scopes, budgets, hostile text, caching and quotas."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from searchdesk_server.quota import QuotaBook
from searchdesk_server.result import UNTRUSTED_LINE
from searchdesk_server.scopes import SCOPE_INDEXING, SCOPE_SV, SCOPE_WM, SCOPE_WM_RO
from tests.fakegoogle import FakeGoogle, bodies
from tests.server.stdio import DEMO_TODAY, REPO, text_of

pytestmark = pytest.mark.anyio
BIG = "sc-domain:example.com"
WWW = "https://www.example.com/"
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


@pytest.fixture
def fake(fake_google: FakeGoogle) -> FakeGoogle:
    """The shared fake Google (tests/fakegoogle/plugin.py), under the short name these tests use."""
    return fake_google


@asynccontextmanager
async def serve(
    fake: FakeGoogle, tmp_path: Path, extra: dict[str, str] | None = None, mode: str = "legacy"
) -> AsyncIterator[Client]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "SEARCHDESK_DEMO_TODAY": DEMO_TODAY,
        "SEARCHDESK_AGENT_SOCKET": str(tmp_path / "none" / "agent.sock"),
        "GSC_SERVICE_ACCOUNT_KEY_FILE": str(fake.service_account_file()),
        **fake.env,
        **(extra or {}),
    }
    params = StdioServerParameters(command=sys.executable, args=["-m", "searchdesk_server"], env=env, cwd=REPO)
    async with Client(params, mode=mode, read_timeout_seconds=90) as client:  # type: ignore[arg-type]
        yield client


def table_rows(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|---"))
    return [line for line in lines[start + 1 :] if line.startswith("| ")]


async def test_everything_goes_through_the_proxy_with_derived_scopes(fake: FakeGoogle, tmp_path: Path) -> None:
    async with serve(fake, tmp_path) as client:
        for _ in range(3):
            assert not (await client.call_tool("list_sites", {})).is_error
        assert not (await client.call_tool("list_verified_sites", {})).is_error
    grants = fake.token_requests
    assert len(grants) == 1, "the access token is cached until shortly before expiry"
    assert set(grants[0].scopes) == {SCOPE_WM, SCOPE_SV, SCOPE_INDEXING}
    assert {r.via for r in fake.log} == {"https"}
    assert set(fake.proxy_log) <= {
        "searchconsole.googleapis.com:443",
        "www.googleapis.com:443",
        "oauth2.googleapis.com:443",
    }


async def test_read_only_asks_only_for_the_read_only_scope(fake: FakeGoogle, tmp_path: Path) -> None:
    async with serve(fake, tmp_path, {"GSC_READ_ONLY": "true", "GSC_DENY_TOOLS": "indexing"}) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "delete_site" not in names and "request_indexing" not in names
        assert not (await client.call_tool("list_sites", {})).is_error
    assert [g.scopes for g in fake.token_requests] == [(SCOPE_WM_RO,)]


async def test_a_25000_row_answer_fits_both_channels_and_agrees(fake: FakeGoogle, tmp_path: Path) -> None:
    args = {
        "site": BIG,
        "period": "last16months",
        "dimensions": ["date", "query", "page", "country", "device"],
        "row_limit": 25_000,
    }
    async with serve(fake, tmp_path) as client:
        result = await client.call_tool("query_search_analytics", args)
    assert not result.is_error, text_of(result)
    text = text_of(result)
    structured = json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
    assert len(text.encode()) <= 100_000 and len(structured.encode()) <= 100_000
    data = result.structured_content
    rows = table_rows(text)
    assert len(rows) == len(data["rows"]) == data["shown"] < 25_000
    assert data["count"] == 25_000
    assert data["next_start_row"] == data["shown"]
    assert f"start_row={data['shown']}" in text
    assert text.startswith(UNTRUSTED_LINE)
    assert "Showing " in text and "of 25,000 rows" in text


ANALYTICS = r"/searchAnalytics/query$"
JSON = [("content-type", "application/json; charset=UTF-8")]


async def test_analytics_totals_are_the_reports_arithmetic_over_the_rows_kept(fake: FakeGoogle, tmp_path: Path) -> None:
    rows = [
        {"keys": ["a"], "clicks": 10, "impressions": 100, "position": 2.0},
        {"keys": ["b"], "clicks": 5, "impressions": 50},  # no position: its impressions weigh nothing
        {"keys": ["c"], "clicks": -3, "impressions": 40, "position": 9},  # a negative count: left out
        {"clicks": 1, "impressions": 1, "position": 1},  # no keys: left out
        {"keys": ["d"], "clicks": 0, "impressions": 50, "position": 4.0},
    ]
    fake.fail(ANALYTICS, status=200, body={"rows": rows}, headers=JSON, method="POST")
    async with serve(fake, tmp_path) as client:
        result = await client.call_tool(
            "query_search_analytics", {"site": BIG, "dimensions": ["query"], "row_limit": 5}
        )
    assert not result.is_error, text_of(result)
    data, text = result.structured_content, text_of(result)
    assert [r["query"] for r in data["rows"]] == ["a", "b", "d"] and data["count"] == 3
    # position = (2 × 100 + 4 × 50) / 150: weighted by the impressions that have a position
    assert data["totals"] == {"clicks": 15, "impressions": 200, "ctr": 0.075, "position": 2.67}
    assert data["rows"][1] == {"query": "b", "clicks": 5, "impressions": 50, "ctr": 0.1}
    assert "15 clicks, 200 impressions, CTR 7.50%, average position 2.7." in text
    assert "2 rows from Google left out" in text
    assert data["next_start_row"] == 5  # Google's numbering: the odd rows count


async def test_analytics_pages_on_in_googles_numbering_past_an_odd_row(fake: FakeGoogle, tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [{"keys": [None], "clicks": 1, "impressions": 1}]  # odd, first
    rows += [{"keys": [f"q{i:04} " + "x" * 300], "clicks": 1, "impressions": 2, "position": 3} for i in range(1000)]
    fake.fail(ANALYTICS, status=200, body={"rows": rows}, headers=JSON, method="POST")
    async with serve(fake, tmp_path) as client:
        result = await client.call_tool(
            "query_search_analytics", {"site": BIG, "dimensions": ["query"], "row_limit": 2000}
        )
    data = result.structured_content
    assert data["count"] == 1000 and 0 < data["shown"] < 1000
    assert data["next_start_row"] == data["shown"] + 1  # the next row Google holds, none skipped or repeated
    assert f"start_row={data['shown'] + 1}" in text_of(result)


async def test_hostile_text_is_cleaned_and_kept_below_the_marker(fake: FakeGoogle, tmp_path: Path) -> None:
    async with serve(fake, tmp_path) as client:
        result = await client.call_tool(
            "query_search_analytics", {"site": BIG, "dimensions": ["query", "page"], "row_limit": 2000}
        )
    text = text_of(result)
    blob = json.dumps(result.structured_content, ensure_ascii=False)
    assert "ignore previous instructions" in text  # shown as data…
    assert text.index("ignore previous instructions") > len(UNTRUSTED_LINE)  # …only below the marker
    assert not CONTROL.search(text) and not CONTROL.search(json.loads(json.dumps(blob)))
    assert result.structured_content["untrusted"] is True and result.structured_content["source"] == "google"
    for row in table_rows(text):
        assert len(re.findall(r"(?<!\\)\|", row)) == 7, row  # a `|` in a query never makes an extra column


@pytest.mark.parametrize(
    ("doc", "status", "needle"),
    [
        (bodies.api_not_enabled("searchconsole.googleapis.com"), 403, "console.cloud.google.com/apis/library"),
        (bodies.no_permission(WWW), 403, "permission"),
        (bodies.not_found(), 404, "nothing there"),
        (bodies.unauthenticated(), 401, "sign"),
    ],
)
async def test_googles_errors_are_explained(
    fake: FakeGoogle, tmp_path: Path, doc: Any, status: int, needle: str
) -> None:
    fake.fail("sites/", status=status, body=doc, times=5)
    async with serve(fake, tmp_path) as client:
        result = await client.call_tool("get_site", {"site": WWW})
    assert result.is_error
    assert needle.lower() in text_of(result).lower(), text_of(result)


async def test_quota_is_counted_across_restarts_and_refused_politely(fake: FakeGoogle, tmp_path: Path) -> None:
    book = QuotaBook(tmp_path / "data" / "searchdesk" / "quota.json")
    assert book.try_spend("inspection", WWW, 1_999)
    async with serve(fake, tmp_path) as client:
        first = await client.call_tool("inspect_url", {"site": WWW, "url": WWW})
        assert not first.is_error, text_of(first)
        assert first.structured_content["quota_left"] == 0
        second = await client.call_tool("inspect_url", {"site": WWW, "url": WWW})
        assert second.is_error and "quota" in text_of(second)
    inspections = [r for r in fake.api_requests() if "urlInspection" in r.path]
    assert len(inspections) == 1


async def test_inspect_urls_stops_at_the_first_429(fake: FakeGoogle, tmp_path: Path) -> None:
    fake.fail("urlInspection", status=429, body=bodies.quota(), times=100)
    urls = [f"https://www.example.com/p{i}" for i in range(20)]
    async with serve(fake, tmp_path) as client:
        result = await client.call_tool("inspect_urls", {"site": WWW, "urls": urls})
    data = result.structured_content
    assert "429" in text_of(result) and "not attempted" in text_of(result)
    assert data["attempted"] < 20
    assert len([r for r in fake.api_requests() if "urlInspection" in r.path]) < 20


async def test_rich_result_failure_is_never_a_pass(fake: FakeGoogle, tmp_path: Path) -> None:
    async with serve(fake, tmp_path) as client:
        result = await client.call_tool(
            "inspect_url", {"site": WWW, "url": "https://www.example.com/products/garden-hose"}
        )
    assert result.structured_content["rich_results"]["verdict"] == "FAIL"
    assert "Rich results: FAIL" in text_of(result)


async def test_setup_site_states(fake: FakeGoogle, tmp_path: Path) -> None:
    async with serve(fake, tmp_path) as client:
        ready = await client.call_tool("setup_site", {"site": WWW})
        unverified = await client.call_tool("setup_site", {"site": "https://old.example.net/"})
        under_domain = await client.call_tool("setup_site", {"site": "https://shop2.example.com/"})
        elsewhere = await client.call_tool("setup_site", {"site": "sc-domain:unknown.example"})
    assert ready.structured_content["state"] == "ready"
    assert unverified.structured_content["state"] == "needs-verification"
    assert "TXT" not in text_of(unverified)  # a URL prefix gets the META tag by default
    assert under_domain.structured_content["state"] == "needs-property"
    assert elsewhere.structured_content["state"] == "needs-both"
    assert "DNS TXT record" in text_of(elsewhere)


async def test_setup_site_reports_the_state_when_the_token_fails(fake: FakeGoogle, tmp_path: Path) -> None:
    fake.fail("siteVerification/v1/token", status=500, body=bodies.unavailable(), times=10)
    async with serve(fake, tmp_path) as client:
        result = await client.call_tool("setup_site", {"site": "sc-domain:unknown.example"})
    assert result.structured_content["state"] == "needs-both"
    assert "fetching the token failed" in text_of(result)


async def test_indexing_quota_and_note(fake: FakeGoogle, tmp_path: Path) -> None:
    async with serve(fake, tmp_path) as client:
        result = await client.call_tool("request_indexing", {"url": "https://www.example.com/jobs/42"})
    assert not result.is_error, text_of(result)
    assert "job-posting and livestream" in text_of(result)
    assert result.structured_content["quota_left"] == 199


async def test_allowed_sites_scope_every_property_and_url(fake: FakeGoogle, tmp_path: Path) -> None:
    async with serve(fake, tmp_path, {"GSC_ALLOWED_SITES": "https://www.example.com/blog/"}) as client:
        sites = (await client.call_tool("list_sites", {})).structured_content["sites"]
        outside = await client.call_tool("get_site", {"site": WWW})
        inside_url = await client.call_tool("get_indexing_status", {"url": "https://www.example.com/blogger"})
    assert sites == []  # none of the demo's properties lies inside /blog/
    assert outside.is_error and "GSC_ALLOWED_SITES" in text_of(outside)
    assert inside_url.is_error and "GSC_ALLOWED_SITES" in text_of(inside_url)  # whole path segments only
    assert not [r for r in fake.api_requests() if "sites/https" in r.path]


def _check(fake: FakeGoogle, tmp_path: Path, extra: dict[str, str]) -> str:
    import subprocess

    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "SEARCHDESK_DEMO_TODAY": DEMO_TODAY,
        "SEARCHDESK_AGENT_SOCKET": str(tmp_path / "none" / "agent.sock"),
        **fake.env,
        **extra,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "searchdesk_server", "--check"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def test_self_check_names_each_cause(fake: FakeGoogle, tmp_path: Path) -> None:
    oauth = {
        "GSC_CLIENT_ID": fake.oauth_info["client_id"],
        "GSC_CLIENT_SECRET": fake.oauth_info["client_secret"],
        "GSC_REFRESH_TOKEN": fake.oauth_info["refresh_token"],
    }
    assert _check(fake, tmp_path, oauth).startswith("PASS: SearchDesk works: it can read 5 properties")
    fake.disable_api("searchconsole.googleapis.com")
    assert _check(fake, tmp_path, oauth).startswith("FAIL: The Search Console API is not enabled")
    fake.revoke_refresh_token()
    assert _check(fake, tmp_path, oauth).startswith("FAIL: Google did not accept the sign-in")
