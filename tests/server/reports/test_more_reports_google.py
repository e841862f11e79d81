"""The five reports of issue 38 against the fake Google over real HTTPS from a real stdio server,
with Google's published Search Analytics quotas enforced: every report answers within the time a
client gives a call, with Google's words marked untrusted, and no request is ever refused."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fakegoogle import FakeGoogle
from tests.fakegoogle.quotas import Quotas
from tests.server.stdio import text_of
from tests.server.tools.test_against_google import BIG, serve
from tests.server.tools.test_against_google import fake as fake

pytestmark = pytest.mark.anyio
REPORTS = ("report_weekly_summary", "report_content_decay", "report_ctr_gaps", "report_new_queries",
           "report_brand_split")  # fmt: skip
CLIENT_WAIT = 50  # seconds: what clients give a call


async def test_every_report_over_https_within_googles_quotas(fake: FakeGoogle, tmp_path: Path) -> None:
    quotas = fake.enforce_quotas(Quotas())
    async with serve(fake, tmp_path) as client:
        for tool in REPORTS:
            before = len(fake.api_requests())
            started = time.monotonic()
            result = await client.call_tool(tool, {"site": BIG})
            took = time.monotonic() - started
            text = text_of(result)
            assert not result.is_error, text
            assert took < CLIENT_WAIT, (tool, took)
            data = result.structured_content
            assert data["untrusted"] is True and data["source"] == "google" and len(text.encode()) <= 100_000
            asked = [r for r in fake.api_requests()[before:] if r.path.endswith("/searchAnalytics/query")]
            assert asked and all(r.via == "https" for r in asked), tool
            assert data["requests"] == len(asked), tool  # the answer counts what it asked Google
    assert quotas.refused == []


async def test_a_refused_quota_is_an_answer_a_person_can_act_on(fake: FakeGoogle, tmp_path: Path) -> None:
    from tests.fakegoogle import bodies

    fake.fail("searchAnalytics", status=429, body=bodies.quota(), times=1000)
    async with serve(fake, tmp_path) as client:
        result = await client.call_tool("report_weekly_summary", {"site": BIG})
    text = text_of(result)
    assert result.is_error and "quota" in text.lower()
