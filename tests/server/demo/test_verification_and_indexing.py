"""Site Verification (webResource, getToken) and the Indexing API, with their effects on properties."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from searchdesk_server.demo import DEMO_ACCOUNT

from .conftest import BIG, IDX, OLD, SV, WWW, days_ago, enc, error_of, site

pytestmark = pytest.mark.anyio

DOMAIN = {"type": "INET_DOMAIN", "identifier": "example.com"}


async def resources(client: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    response = await client.get(SV + "webResource")
    assert response.status_code == 200
    return {r["id"]: r for r in response.json().get("items", [])}


async def test_list_and_get_verified_sites_with_owners(client: httpx.AsyncClient) -> None:
    items = await resources(client)
    assert set(items) == {"dns://example.com", WWW, "https://docs.example.com/"}
    assert items["dns://example.com"]["site"] == DOMAIN
    assert DEMO_ACCOUNT in items["dns://example.com"]["owners"] and len(items["dns://example.com"]["owners"]) == 3
    got = await client.get(SV + "webResource/" + enc("dns://example.com"))
    assert got.json() == items["dns://example.com"]
    assert (await client.get(SV + "webResource/" + enc(WWW))).json()["site"] == {"type": "SITE", "identifier": WWW}


async def test_get_of_a_site_you_do_not_own_is_403(client: httpx.AsyncClient) -> None:
    response = await client.get(SV + "webResource/" + enc("https://shop.example.org/"))
    assert response.status_code == 403 and error_of(response)["message"] == "You are not an owner of this site."
    assert (await client.get(SV + "webResource/" + enc("not a site"))).status_code == 400


@pytest.mark.parametrize(
    ("site_obj", "method", "shape"),
    [
        (DOMAIN, "DNS_TXT", "google-site-verification="),
        (DOMAIN, "DNS", "google-site-verification="),
        (DOMAIN, "DNS_CNAME", " CNAME gv-"),
        ({"type": "SITE", "identifier": WWW}, "FILE", "google"),
        ({"type": "SITE", "identifier": WWW}, "META", '<meta name="google-site-verification" content="'),
        ({"type": "SITE", "identifier": WWW}, "ANALYTICS", "G-"),
        ({"type": "SITE", "identifier": WWW}, "TAG_MANAGER", "GTM-"),
        ({"type": "SITE", "identifier": "https://new.example.com/"}, "DNS_TXT", "google-site-verification="),
    ],
)
async def test_get_token(client: httpx.AsyncClient, site_obj: dict[str, str], method: str, shape: str) -> None:
    body = {"site": site_obj, "verificationMethod": method}
    first = await client.post(SV + "token", json=body)
    assert first.status_code == 200, first.text
    assert first.json()["method"] == method and shape in first.json()["token"]
    assert (await client.post(SV + "token", json=body)).json() == first.json()


async def test_tokens_differ_by_site_and_file_tokens_are_html_files(client: httpx.AsyncClient) -> None:
    def body(identifier: str) -> dict[str, Any]:
        return {"site": {"type": "SITE", "identifier": identifier}, "verificationMethod": "FILE"}

    a = (await client.post(SV + "token", json=body(WWW))).json()["token"]
    b = (await client.post(SV + "token", json=body("https://blog.example.com/"))).json()["token"]
    assert a != b and a.endswith(".html") and a.startswith("google")


@pytest.mark.parametrize(
    "body",
    [
        {"site": DOMAIN, "verificationMethod": "FILE"},
        {"site": DOMAIN, "verificationMethod": "META"},
        {"site": DOMAIN},
        {"verificationMethod": "DNS_TXT"},
        {"site": {"type": "WEBSITE", "identifier": WWW}, "verificationMethod": "META"},
        {"site": {"type": "SITE", "identifier": "example.com"}, "verificationMethod": "META"},
        {"site": {"type": "INET_DOMAIN", "identifier": "https://x.example.com/"}, "verificationMethod": "DNS"},
        {"site": DOMAIN, "verificationMethod": "DNS_TXT", "owners": []},
    ],
)
async def test_get_token_refusals(client: httpx.AsyncClient, body: dict[str, Any]) -> None:
    response = await client.post(SV + "token", json=body)
    assert response.status_code == 400 and error_of(response)["status"] == "INVALID_ARGUMENT"


async def test_verifying_your_own_site_succeeds_and_makes_you_owner(client: httpx.AsyncClient) -> None:
    assert (await client.get(site(OLD))).json()["permissionLevel"] == "siteUnverifiedUser"
    response = await client.post(
        SV + "webResource",
        params={"verificationMethod": "META"},
        json={"site": {"type": "SITE", "identifier": OLD}},
    )
    assert response.status_code == 200
    assert response.json() == {"id": OLD, "site": {"type": "SITE", "identifier": OLD}, "owners": [DEMO_ACCOUNT]}
    assert (await client.get(site(OLD))).json()["permissionLevel"] == "siteOwner"
    assert OLD in await resources(client)


async def test_verifying_a_domain_by_dns(client: httpx.AsyncClient) -> None:
    response = await client.post(
        SV + "webResource",
        params={"verificationMethod": "DNS_TXT"},
        json={"site": {"type": "INET_DOMAIN", "identifier": "old.example.net"}},
    )
    assert response.json()["id"] == "dns://old.example.net"


@pytest.mark.parametrize(
    ("identifier", "kind", "method"),
    [("https://shop.example.org/", "SITE", "META"), ("evil.test", "INET_DOMAIN", "DNS_TXT")],
)
async def test_verifying_someone_elses_site_fails(
    client: httpx.AsyncClient, identifier: str, kind: str, method: str
) -> None:
    response = await client.post(
        SV + "webResource",
        params={"verificationMethod": method},
        json={"site": {"type": kind, "identifier": identifier}},
    )
    assert response.status_code == 400
    assert "verification failed" in error_of(response)["message"]


async def test_insert_needs_a_fitting_method(client: httpx.AsyncClient) -> None:
    no_method = await client.post(SV + "webResource", json={"site": DOMAIN})
    assert no_method.status_code == 400
    wrong = await client.post(SV + "webResource", params={"verificationMethod": "FILE"}, json={"site": DOMAIN})
    assert wrong.status_code == 400


async def test_update_replaces_owners_and_patch_keeps_them(client: httpx.AsyncClient) -> None:
    url = SV + "webResource/" + enc("dns://example.com")
    owners = [DEMO_ACCOUNT, "new.owner@example.com"]
    updated = await client.put(url, json={"site": DOMAIN, "owners": owners})
    assert updated.status_code == 200 and updated.json()["owners"] == owners
    assert (await client.get(url)).json()["owners"] == owners
    patched = await client.patch(url, json={"site": DOMAIN})
    assert patched.json()["owners"] == owners
    patched = await client.patch(url, json={"owners": [DEMO_ACCOUNT]})
    assert patched.json()["owners"] == [DEMO_ACCOUNT]


@pytest.mark.parametrize(
    "body",
    [
        {"site": DOMAIN},
        {"site": DOMAIN, "owners": []},
        {"site": DOMAIN, "owners": ["not-an-email"]},
        {"site": DOMAIN, "owners": ["x" * 250 + "@example.com"]},
        {"site": {"type": "INET_DOMAIN", "identifier": "other.com"}, "owners": [DEMO_ACCOUNT]},
        {"id": "dns://other.com", "owners": [DEMO_ACCOUNT]},
    ],
)
async def test_update_refusals(client: httpx.AsyncClient, body: dict[str, Any]) -> None:
    response = await client.put(SV + "webResource/" + enc("dns://example.com"), json=body)
    assert response.status_code == 400


async def test_unverify_removes_the_resource_and_ownership(client: httpx.AsyncClient) -> None:
    url = SV + "webResource/" + enc("dns://example.com")
    assert (await client.delete(url)).status_code == 204
    assert "dns://example.com" not in await resources(client)
    assert (await client.get(url)).status_code == 403
    assert (await client.get(site(BIG))).json()["permissionLevel"] == "siteUnverifiedUser"
    analytics = await client.post(
        site(BIG, "searchAnalytics", "query"), json={"startDate": days_ago(9), "endDate": days_ago(3)}
    )
    assert analytics.status_code == 403
    assert (await client.delete(url)).status_code == 403


async def test_publish_and_metadata(client: httpx.AsyncClient) -> None:
    url = "https://www.example.com/jobs/night-gardener"
    missing = await client.get(IDX + "urlNotifications/metadata", params={"url": url})
    assert missing.status_code == 404 and error_of(missing)["status"] == "NOT_FOUND"
    published = await client.post(IDX + "urlNotifications:publish", json={"url": url, "type": "URL_UPDATED"})
    assert published.status_code == 200
    meta = published.json()["urlNotificationMetadata"]
    assert meta["url"] == url and meta["latestUpdate"]["type"] == "URL_UPDATED"
    assert meta["latestUpdate"]["url"] == url and meta["latestUpdate"]["notifyTime"].endswith("Z")
    removed = await client.post(IDX + "urlNotifications:publish", json={"url": url, "type": "URL_DELETED"})
    latest = removed.json()["urlNotificationMetadata"]
    assert latest["latestRemove"]["type"] == "URL_DELETED"
    assert latest["latestRemove"]["notifyTime"] > latest["latestUpdate"]["notifyTime"]
    read = (await client.get(IDX + "urlNotifications/metadata", params={"url": url})).json()
    assert read == latest


async def test_seeded_notifications(client: httpx.AsyncClient) -> None:
    url = "https://www.example.com/jobs/store-manager-portland"
    meta = (await client.get(IDX + "urlNotifications/metadata", params={"url": url})).json()
    assert set(meta) == {"url", "latestUpdate", "latestRemove"}


@pytest.mark.parametrize(
    "url",
    ["https://shop.example.org/jobs/1", "https://old.example.net/live/x", "https://elsewhere.test/"],
)
async def test_indexing_needs_a_verified_owner(client: httpx.AsyncClient, url: str) -> None:
    for response in (
        await client.post(IDX + "urlNotifications:publish", json={"url": url, "type": "URL_UPDATED"}),
        await client.get(IDX + "urlNotifications/metadata", params={"url": url}),
    ):
        assert response.status_code == 403
        assert error_of(response)["message"] == "Permission denied. Failed to verify the URL ownership."


async def test_blog_urls_are_owned_through_the_domain(client: httpx.AsyncClient) -> None:
    body = {"url": "https://blog.example.com/live/q-and-a", "type": "URL_UPDATED"}
    assert (await client.post(IDX + "urlNotifications:publish", json=body)).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"url": "https://www.example.com/jobs/1"},
        {"url": "https://www.example.com/jobs/1", "type": "URL_REMOVED"},
        {"type": "URL_UPDATED"},
        {"url": "mailto:x@example.com", "type": "URL_UPDATED"},
        {"url": "https://www.example.com/jobs/1", "type": "URL_UPDATED", "priority": 1},
    ],
)
async def test_publish_refusals(client: httpx.AsyncClient, body: dict[str, Any]) -> None:
    response = await client.post(IDX + "urlNotifications:publish", json=body)
    assert response.status_code == 400


async def test_metadata_needs_a_url(client: httpx.AsyncClient) -> None:
    assert (await client.get(IDX + "urlNotifications/metadata")).status_code == 400
