"""A real httpx.AsyncClient over the demo transport, with helpers for Google's URLs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import date
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from searchdesk_server.demo import DemoGoogle

TODAY = date(2026, 6, 15)
BIG = "sc-domain:example.com"
WWW = "https://www.example.com/"
BLOG = "https://blog.example.com/"
SHOP = "https://shop.example.org/"
OLD = "https://old.example.net/"
SC = "https://searchconsole.googleapis.com/"
SV = "https://www.googleapis.com/siteVerification/v1/"
IDX = "https://indexing.googleapis.com/v3/"
AUTH = {"authorization": "Bearer ya29.demo-test-token"}


def enc(value: str) -> str:
    """A path parameter as Google's client sends it."""
    return quote(value, safe="")


def site(site_url: str, *rest: str) -> str:
    return SC + "webmasters/v3/sites/" + "/".join([enc(site_url), *rest])


def sitemap(site_url: str, feedpath: str) -> str:
    return site(site_url, "sitemaps", enc(feedpath))


def analytics_url(site_url: str) -> str:
    return site(site_url, "searchAnalytics", "query")


def days_ago(n: int) -> str:
    return date.fromordinal(TODAY.toordinal() - n).isoformat()


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}
    error: dict[str, Any] = body["error"]
    assert error["code"] == response.status_code
    assert error["errors"][0]["domain"] == "global"
    return error


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def google() -> DemoGoogle:
    return DemoGoogle(TODAY)


@pytest.fixture
async def client(google: DemoGoogle) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.MockTransport(google), headers=AUTH) as c:
        yield c


async def query(client: httpx.AsyncClient, site_url: str, **body: Any) -> dict[str, Any]:
    """A searchAnalytics.query that must succeed (dates default to the last 28 final days)."""
    body.setdefault("startDate", days_ago(30))
    body.setdefault("endDate", days_ago(3))
    response = await client.post(analytics_url(site_url), json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result
