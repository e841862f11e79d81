"""Batches answer before the client stops waiting: inspect_urls and submit_sitemaps end by the one
budget in deadlines.py, start no request that could outlast it, list what they did not start, and
report (and journal) what was still waiting for Google at the deadline as possibly done.

The timed tests run the real server in-process through the real proxy path with every time scaled
down ten-fold (Google's 15 s answers take 1.5 s, the 50 s budget is 5 s, the 30 s request limit 3 s);
one test shows the real server, over stdio, uses the real budget."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client

from searchdesk_server import deadlines
from searchdesk_server.config import load
from searchdesk_server.google.http import RetryPolicy
from searchdesk_server.journal.paths import journal_path
from searchdesk_server.journal.store import Journal, Result
from searchdesk_server.runtime import Runtime
from searchdesk_server.server import build_server
from tests.fakegoogle import FakeGoogle
from tests.server.stdio import text_of

from .test_against_google import WWW, serve

pytestmark = pytest.mark.anyio

SCALE = 10.0  # every time below is the real one divided by this
ANSWER = {"inspectionResult": {"indexStatusResult": {"verdict": "PASS", "coverageState": "Submitted and indexed"}}}


@asynccontextmanager
async def in_process(
    fake: FakeGoogle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, budget: float, request: float
) -> AsyncIterator[Client]:
    fake.apply_env(monkeypatch)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    config = load(
        {
            "GSC_SERVICE_ACCOUNT_KEY_FILE": str(fake.service_account_file()),
            "SEARCHDESK_AGENT_SOCKET": str(tmp_path / "none" / "agent.sock"),
        }
    )
    runtime = Runtime(config)
    runtime.batch_seconds = budget
    (await runtime.client()).policy = RetryPolicy(attempts=2, base_delay=0.01, max_wait=0.05, request_timeout=request)
    async with Client(build_server(config, runtime=runtime), mode="legacy") as client:
        yield client
    await runtime.aclose()


def slow(fake: FakeGoogle, pattern: str, seconds: float, body: object = b"{}", times: int = 100) -> None:
    """Google answers after ``seconds``: the body, then spaces to 4 kB, with the wait between them."""
    fake.fail(pattern, status=200, body=body, size=4096, chunk_size=4096, delay=seconds, times=times)  # type: ignore[arg-type]


async def test_a_20_url_batch_against_a_slow_google_answers_within_the_budget(
    fake_google: FakeGoogle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = deadlines.BATCH_SECONDS / SCALE
    slow(fake_google, "urlInspection", 15 / SCALE, ANSWER)
    urls = [f"{WWW}p{i}" for i in range(20)]
    async with in_process(fake_google, tmp_path, monkeypatch, budget=budget, request=30 / SCALE) as client:
        started = time.monotonic()
        result = await client.call_tool("inspect_urls", {"site": WWW, "urls": urls})
        took = time.monotonic() - started
    data = result.structured_content
    assert data is not None and not result.is_error, text_of(result)
    # The promise is the client's wait (60 s, scaled); the 10 s margin is what a loaded machine may use.
    wait = deadlines.CLIENT_WAIT_SECONDS / SCALE
    assert took < wait, f"the batch took {took:.1f} s; the client waits {wait:.1f} s"
    # What was started: inspected, or (on a machine loaded enough to slow Google's 1.5 s past its 3 s
    # limit) failed with a timeout — never left running at the deadline, never listed as not started.
    started_urls = [r["url"] for r in data["results"] if r["status"] != "not attempted"]
    done = [r["url"] for r in data["results"] if r["status"] == "inspected"]
    assert 5 <= len(started_urls) < 20 and done, "it did what fitted, and no more"
    assert {r["status"] for r in data["results"]} <= {"inspected", "failed", "not attempted"}
    assert data["not_started"] == [u for u in urls if u not in started_urls]
    assert data["budget_seconds"] == budget and data["may_have_been_done"] == 0
    sent = [r for r in fake_google.api_requests() if "urlInspection" in r.path]
    asked = {json.loads(r.body)["inspectionUrl"] for r in sent}
    assert asked == set(started_urls), "no request started that could not finish by the deadline"
    text = text_of(result)
    assert f"{len(data['not_started'])} not started" in text
    assert "call inspect_urls again with just those URLs" in text


async def test_a_change_still_waiting_at_the_deadline_may_have_been_done_and_is_journaled_unknown(
    fake_google: FakeGoogle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The token arrives late, so the sitemap's request leaves with less time than it may take: the
    deadline cuts it off after it left."""
    token = {"access_token": fake_google.mint_token(), "expires_in": 3600, "token_type": "Bearer"}
    slow(fake_google, r"oauth2\.googleapis\.com/token", 1.0, token, times=1)
    slow(fake_google, "/sitemaps/", 3.0)
    feeds = [f"{WWW}sitemap-{i}.xml" for i in range(2)]
    async with in_process(fake_google, tmp_path, monkeypatch, budget=1.6, request=1.5) as client:
        started = time.monotonic()
        result = await client.call_tool("submit_sitemaps", {"site": WWW, "feedpaths": feeds})
        took = time.monotonic() - started
    data = result.structured_content
    assert data is not None, text_of(result)
    assert took < 2.5, f"the batch took {took:.1f} s of a 1.6 s budget"
    assert [r["status"] for r in data["results"]] == ["may have been done"] * 2
    assert data["may_have_been_done"] == 2 and data["not_started"] == []
    assert "may have been done" in text_of(result)
    outcomes = [row for row in Journal(journal_path()).rows() if row.result]
    assert [row.result for row in outcomes] == [Result.UNKNOWN] * 2


async def test_the_real_server_uses_the_one_budget(fake_google: FakeGoogle, tmp_path: Path) -> None:
    assert deadlines.BATCH_SECONDS == deadlines.CLIENT_WAIT_SECONDS - deadlines.MARGIN_SECONDS == 50.0
    async with serve(fake_google, tmp_path) as client:
        inspected = await client.call_tool("inspect_urls", {"site": WWW, "urls": [WWW]})
        submitted = await client.call_tool("submit_sitemaps", {"site": WWW, "feedpaths": [WWW + "sitemap.xml"]})
    for result in (inspected, submitted):
        assert result.structured_content is not None, text_of(result)
        assert result.structured_content["budget_seconds"] == 50.0
