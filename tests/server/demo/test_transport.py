"""The transport itself: hosts, authorization, scopes, the request log, and determinism over dates."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from searchdesk_server.demo import DemoGoogle, demo_transport

from .conftest import AUTH, BIG, IDX, SC, SV, TODAY, WWW, analytics_url, enc, error_of, site, sitemap

pytestmark = pytest.mark.anyio

WM = "https://www.googleapis.com/auth/webmasters"
WM_RO = "https://www.googleapis.com/auth/webmasters.readonly"
SV_SCOPE = "https://www.googleapis.com/auth/siteverification"
SV_VERIFY = "https://www.googleapis.com/auth/siteverification.verify_only"
INDEXING = "https://www.googleapis.com/auth/indexing"


def client_for(google: DemoGoogle, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(google), headers=AUTH if headers is None else headers)


async def test_demo_transport_answers_through_a_real_client() -> None:
    transport = demo_transport(TODAY)
    assert isinstance(transport, httpx.AsyncBaseTransport)
    async with httpx.AsyncClient(transport=transport, headers=AUTH) as client:
        response = await client.get(SC + "webmasters/v3/sites")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=UTF-8"
    assert response.json()["siteEntry"][0]["siteUrl"] == BIG


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("GET", "https://example.com/webmasters/v3/sites"),
        ("GET", "https://oauth2.googleapis.com/token"),
        ("GET", "https://www.googleapis.com/webmasters/v3/sites"),
        ("GET", SC + "webmasters/v3/sitez"),
        ("POST", SC + "webmasters/v3/sites"),
        ("GET", SC + "webmasters/v3/sites/https://www.example.com//sitemaps"),
        ("GET", SC + "v1/mobileFriendlyTest"),
        ("GET", "https://indexing.googleapis.com/v3/urlNotifications:publish"),
        ("HEAD", SV + "webResource"),
    ],
)
async def test_anything_else_is_a_google_shaped_404(client: httpx.AsyncClient, method: str, url: str) -> None:
    response = await client.request(method, url)
    assert response.status_code == 404
    if method != "HEAD":
        assert error_of(response)["status"] == "NOT_FOUND"


@pytest.mark.parametrize("header", [None, "", "Basic dXNlcjpwYXNz", "Bearer", "Bearer two words"])
async def test_a_bearer_token_is_required(google: DemoGoogle, header: str | None) -> None:
    headers = {} if header is None else {"authorization": header}
    async with client_for(google, headers) as client:
        response = await client.get(SC + "webmasters/v3/sites")
    assert response.status_code == 401
    error = error_of(response)
    assert error["status"] == "UNAUTHENTICATED"
    assert response.headers["www-authenticate"].startswith('Bearer realm="https://accounts.google.com/"')


async def test_any_token_is_accepted_without_a_scope_hook(google: DemoGoogle) -> None:
    async with client_for(google, {"authorization": "bearer anything-at-all"}) as client:
        assert (await client.get(SC + "webmasters/v3/sites")).status_code == 200


def scoped(*scopes: str) -> DemoGoogle:
    granted = {"read-only": {WM_RO}, "full": {WM, SV_SCOPE, INDEXING}, "verify-only": {SV_VERIFY}}
    seen: list[str] = []

    def hook(token: str) -> set[str]:
        seen.append(token)
        return granted.get(token, set(scopes))

    google = DemoGoogle(TODAY, scopes_for_token=hook)
    google.seen = seen  # type: ignore[attr-defined]
    return google


async def test_missing_scope_is_googles_403(google: DemoGoogle) -> None:
    google = scoped()
    async with client_for(google, {"authorization": "Bearer read-only"}) as client:
        assert (await client.get(SC + "webmasters/v3/sites")).status_code == 200
        response = await client.delete(sitemap(WWW, WWW + "feed.atom"))
        assert (await client.get(sitemap(WWW, WWW + "feed.atom"))).status_code == 200  # nothing happened
        indexing = await client.get(IDX + "urlNotifications/metadata", params={"url": WWW})
    assert google.seen == ["read-only"] * 4  # type: ignore[attr-defined]
    for refused in (response, indexing):
        assert refused.status_code == 403
        error = error_of(refused)
        assert error["message"] == "Request had insufficient authentication scopes."
        assert error["status"] == "PERMISSION_DENIED"
        assert error["errors"][0]["reason"] == "insufficientPermissions"
        assert error["details"][0]["reason"] == "ACCESS_TOKEN_SCOPE_INSUFFICIENT"
        assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]


async def test_verify_only_scope_reaches_token_and_insert_but_not_list() -> None:
    google = scoped()
    async with client_for(google, {"authorization": "Bearer verify-only"}) as client:
        body = {"site": {"type": "INET_DOMAIN", "identifier": "example.com"}, "verificationMethod": "DNS_TXT"}
        assert (await client.post(SV + "token", json=body)).status_code == 200
        assert (await client.get(SV + "webResource")).status_code == 403
    async with client_for(google, {"authorization": "Bearer full"}) as client:
        assert (await client.get(SV + "webResource")).status_code == 200
        assert (await client.delete(sitemap(WWW, WWW + "feed.atom"))).status_code == 204


async def test_unknown_query_parameters_are_refused_and_standard_ones_accepted(client: httpx.AsyncClient) -> None:
    bad = await client.get(SC + "webmasters/v3/sites", params={"sitemapIndex": "x"})
    assert bad.status_code == 400 and "Cannot bind query parameter" in error_of(bad)["message"]
    ok = await client.get(SC + "webmasters/v3/sites", params={"prettyPrint": "false", "alt": "json"})
    assert ok.status_code == 200
    twice = await client.get(IDX + "urlNotifications/metadata", params=[("url", WWW), ("url", WWW)])
    assert twice.status_code == 400


async def test_the_log_records_every_request_without_its_query(google: DemoGoogle, client: httpx.AsyncClient) -> None:
    await client.get(site(WWW, "sitemaps"), params={"sitemapIndex": WWW + "sitemap_index.xml"})
    await client.post(analytics_url(BIG), json={})
    await client.get("https://elsewhere.test/x?y=1")
    assert google.log == [
        ("GET", SC + "webmasters/v3/sites/" + enc(WWW) + "/sitemaps"),
        ("POST", SC + "webmasters/v3/sites/sc-domain%3Aexample.com/searchAnalytics/query"),
        ("GET", "https://elsewhere.test/x"),
    ]


REQUESTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", SC + "webmasters/v3/sites", None),
    ("GET", site(BIG, "sitemaps"), None),
    ("GET", sitemap(WWW, WWW + "sitemap_index.xml"), None),
    ("POST", SC + "v1/urlInspection/index:inspect", {"inspectionUrl": WWW + "products/garden-hose", "siteUrl": WWW}),
    ("GET", SV + "webResource", None),
    ("GET", IDX + "urlNotifications/metadata?url=https://www.example.com/jobs/store-manager-portland", None),
]


async def answers(google: DemoGoogle) -> list[bytes]:
    analytics: list[dict[str, Any]] = [
        {"startDate": "2025-01-01", "endDate": "2026-12-31", "dimensions": ["query", "page", "date"], "rowLimit": 5000},
        {"startDate": "2026-06-01", "endDate": "2026-06-15", "dimensions": ["hour"], "dataState": "hourly_all"},
        {"startDate": "2026-05-01", "endDate": "2026-06-15", "dimensions": ["date"], "dataState": "all"},
    ]
    out: list[bytes] = []
    async with client_for(google) as client:
        for method, url, body in REQUESTS:
            out.append((await client.request(method, url, json=body)).content)
        for query_body in analytics:
            out.append((await client.post(analytics_url(BIG), json=query_body)).content)
        published = await client.post(
            IDX + "urlNotifications:publish", json={"url": WWW + "jobs/a", "type": "URL_UPDATED"}
        )
        out.append(published.content)
    return out


async def test_two_instances_with_the_same_today_answer_byte_for_byte() -> None:
    first, second = DemoGoogle(TODAY), DemoGoogle(TODAY)
    assert first.today == second.today == TODAY
    assert await answers(first) == await answers(second)


async def test_a_later_today_shifts_the_dates_and_keeps_the_values() -> None:
    shift = 9
    early, late = DemoGoogle(TODAY), DemoGoogle(TODAY + timedelta(days=shift))

    async def by_date(google: DemoGoogle, end: date) -> list[dict[str, Any]]:
        start = end - timedelta(days=60)
        body = {"startDate": start.isoformat(), "endDate": end.isoformat(), "dimensions": ["date", "query"]}
        async with client_for(google) as client:
            response = await client.post(analytics_url(BIG), json={**body, "rowLimit": 25_000})
        rows: list[dict[str, Any]] = response.json()["rows"]
        return rows

    before = await by_date(early, TODAY - timedelta(days=3))
    after = await by_date(late, TODAY + timedelta(days=shift - 3))
    moved = [
        {**row, "keys": [(date.fromisoformat(row["keys"][0]) + timedelta(days=shift)).isoformat(), row["keys"][1]]}
        for row in before
    ]
    assert after == moved and len(after) > 1_000


async def test_timestamps_follow_today() -> None:
    async def submitted(google: DemoGoogle) -> str:
        async with client_for(google) as client:
            response = await client.get(sitemap(WWW, WWW + "news-sitemap.xml"))
        value: str = response.json()["lastSubmitted"]
        return value

    assert await submitted(DemoGoogle(date(2026, 1, 10))) == "2026-01-07T11:31:40.000Z"
    assert await submitted(DemoGoogle(date(2026, 1, 20))) == "2026-01-17T11:31:40.000Z"


def test_today_is_the_pinned_date_or_the_pacific_date(monkeypatch: pytest.MonkeyPatch) -> None:
    assert DemoGoogle(date(2024, 2, 29)).today == date(2024, 2, 29)
    monkeypatch.setenv("SEARCHDESK_DEMO_TODAY", "2025-12-31")  # the server's Config reads it, not the demo
    from datetime import datetime
    from zoneinfo import ZoneInfo

    before = datetime.now(ZoneInfo("America/Los_Angeles")).date()
    today = DemoGoogle().today
    assert today in (before, before + timedelta(days=1))


async def test_writes_are_per_instance(client: httpx.AsyncClient) -> None:
    assert (await client.delete(site(WWW))).status_code == 204
    async with client_for(DemoGoogle(TODAY)) as other:
        assert (await other.get(site(WWW))).status_code == 200


async def test_bodies_arrive_as_unread_streams_with_their_length(client: httpx.AsyncClient) -> None:
    """Clients that read raw chunks under their own byte ceiling (as SearchDesk's does) must work."""
    response = await client.send(client.build_request("GET", SC + "webmasters/v3/sites"), stream=True)
    raw = b"".join([chunk async for chunk in response.aiter_raw()])
    await response.aclose()
    assert raw.startswith(b'{"siteEntry":[')
    assert int(response.headers["content-length"]) == len(raw)
    empty = await client.send(client.build_request("PUT", site("https://new.example.com/")), stream=True)
    assert [chunk async for chunk in empty.aiter_raw()] in ([], [b""])
    await empty.aclose()
