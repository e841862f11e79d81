"""webmasters/v3 sites and sitemaps: listings, permissions, and writes that change the demo's state."""

from __future__ import annotations

import httpx
import pytest

from .conftest import BIG, BLOG, OLD, SC, SHOP, WWW, error_of, site, sitemap

pytestmark = pytest.mark.anyio

PERMISSIONS = [
    (BIG, "siteOwner"),
    (WWW, "siteOwner"),
    (BLOG, "siteFullUser"),
    (SHOP, "siteRestrictedUser"),
    (OLD, "siteUnverifiedUser"),
]


async def listed(client: httpx.AsyncClient) -> list[tuple[str, str]]:
    response = await client.get(SC + "webmasters/v3/sites")
    assert response.status_code == 200
    return [(e["siteUrl"], e["permissionLevel"]) for e in response.json().get("siteEntry", [])]


async def test_sites_list_is_stable_with_the_big_property_first(client: httpx.AsyncClient) -> None:
    assert await listed(client) == PERMISSIONS


@pytest.mark.parametrize(("site_url", "permission"), PERMISSIONS)
async def test_sites_get(client: httpx.AsyncClient, site_url: str, permission: str) -> None:
    response = await client.get(site(site_url))
    assert response.json() == {"siteUrl": site_url, "permissionLevel": permission}


async def test_unknown_site_is_403_with_googles_words(client: httpx.AsyncClient) -> None:
    response = await client.get(site("https://elsewhere.example.com/"))
    assert response.status_code == 403
    assert error_of(response)["message"].startswith(
        "User does not have sufficient permission for site 'https://elsewhere.example.com/'."
    )


async def test_add_site_adds_it_unverified_and_is_idempotent(client: httpx.AsyncClient) -> None:
    new = "https://new.example.com/"
    for _ in range(2):
        response = await client.put(site(new))
        assert response.status_code == 204 and response.content == b""
    assert (await listed(client))[-1] == (new, "siteUnverifiedUser")
    assert (await listed(client))[:5] == PERMISSIONS


async def test_adding_an_already_verified_site_makes_you_its_owner(client: httpx.AsyncClient) -> None:
    await client.put(site("https://docs.example.com/"))
    assert (await client.get(site("https://docs.example.com/"))).json()["permissionLevel"] == "siteOwner"


@pytest.mark.parametrize("bad", ["example.com", "https://www.example.com", "ftp://x.example.com/", "sc-domain:"])
async def test_add_site_refuses_malformed_urls(client: httpx.AsyncClient, bad: str) -> None:
    response = await client.put(site(bad))
    assert response.status_code == 400 and error_of(response)["status"] == "INVALID_ARGUMENT"


async def test_delete_site_removes_it(client: httpx.AsyncClient) -> None:
    response = await client.delete(site(WWW))
    assert response.status_code == 204
    assert WWW not in [url for url, _ in await listed(client)]
    assert (await client.get(site(WWW))).status_code == 403
    assert (await client.delete(site(WWW))).status_code == 403


async def test_sitemaps_list_top_level_with_errors_warnings_and_string_counts(client: httpx.AsyncClient) -> None:
    response = await client.get(site(BIG, "sitemaps"))
    items = response.json()["sitemap"]
    paths = [s["path"] for s in items]
    assert WWW + "sitemap_index.xml" in paths and "https://blog.example.com/sitemap.xml" in paths
    assert WWW + "sitemaps/pages.xml" not in paths  # children appear under their index only
    assert any(s["errors"] != "0" for s in items) and any(s["warnings"] != "0" for s in items)
    for s in items:
        assert isinstance(s["errors"], str) and isinstance(s["warnings"], str)
        assert s["lastSubmitted"].endswith("Z")
        for content in s.get("contents", []):
            assert isinstance(content["submitted"], str) and content["submitted"].isdigit()
            assert isinstance(content["indexed"], str)
    kinds = {s.get("type") for s in items}
    assert {"sitemap", "atomFeed", "urlList", "rssFeed"} <= kinds
    pending = [s for s in items if s["isPending"]]
    assert pending and "lastDownloaded" not in pending[0] and "contents" not in pending[0]


async def test_sitemap_index_children(client: httpx.AsyncClient) -> None:
    index = WWW + "sitemap_index.xml"
    parent = (await client.get(sitemap(WWW, index))).json()
    assert parent["isSitemapsIndex"] is True
    children = (await client.get(site(WWW, "sitemaps"), params={"sitemapIndex": index})).json()["sitemap"]
    assert [c["path"] for c in children] == [WWW + f"sitemaps/{n}.xml" for n in ("pages", "products", "videos")]
    assert sum(int(c["errors"]) for c in children) == int(parent["errors"])
    assert sum(int(c["warnings"]) for c in children) == int(parent["warnings"])
    plain = (await client.get(site(WWW, "sitemaps"), params={"sitemapIndex": WWW + "urls.txt"})).json()
    assert plain == {}
    missing = await client.get(site(WWW, "sitemaps"), params={"sitemapIndex": WWW + "nope.xml"})
    assert missing.status_code == 404 and error_of(missing)["status"] == "NOT_FOUND"


async def test_sitemap_get_and_not_found(client: httpx.AsyncClient) -> None:
    got = await client.get(sitemap(BLOG, "https://blog.example.com/sitemap.xml"))
    assert got.json()["warnings"] == "3"
    assert (await client.get(sitemap(BLOG, "https://blog.example.com/other.xml"))).status_code == 404


async def test_submit_sitemap_adds_a_pending_one_and_resubmits(client: httpx.AsyncClient) -> None:
    path = WWW + "sitemap-2.xml"
    assert (await client.put(sitemap(WWW, path))).status_code == 204
    got = (await client.get(sitemap(WWW, path))).json()
    assert got["isPending"] is True and got["path"] == path and got["errors"] == "0"
    old = (await client.get(sitemap(WWW, WWW + "feed.atom"))).json()["lastSubmitted"]
    assert (await client.put(sitemap(WWW, WWW + "feed.atom"))).status_code == 204
    assert (await client.get(sitemap(WWW, WWW + "feed.atom"))).json()["lastSubmitted"] > old


async def test_submit_sitemap_outside_the_property_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.put(sitemap(WWW, "https://blog.example.com/sitemap-x.xml"))
    assert response.status_code == 400
    assert (await client.put(sitemap(BIG, "https://blog.example.com/sitemap-x.xml"))).status_code == 204


async def test_sitemap_writes_need_owner_or_full_user(client: httpx.AsyncClient) -> None:
    assert (await client.put(sitemap(BLOG, BLOG + "new.xml"))).status_code == 204
    for site_url in (SHOP, OLD):
        response = await client.put(sitemap(site_url, site_url + "new.xml"))
        assert response.status_code == 403
    assert (await client.delete(sitemap(SHOP, SHOP + "sitemap.xml"))).status_code == 403
    assert (await client.get(site(SHOP, "sitemaps"))).status_code == 200  # restricted users may read
    assert (await client.get(site(OLD, "sitemaps"))).status_code == 403


async def test_delete_sitemap_removes_it_and_its_children(client: httpx.AsyncClient) -> None:
    index = WWW + "sitemap_index.xml"
    assert (await client.delete(sitemap(WWW, WWW + "sitemaps/pages.xml"))).status_code == 404  # child only
    assert (await client.delete(sitemap(WWW, index))).status_code == 204
    paths = [s["path"] for s in (await client.get(site(WWW, "sitemaps"))).json()["sitemap"]]
    assert index not in paths
    assert (await client.get(sitemap(WWW, WWW + "sitemaps/pages.xml"))).status_code == 404
    assert (await client.delete(sitemap(WWW, index))).status_code == 404
    # the domain property keeps its own records
    assert (await client.get(sitemap(BIG, index))).status_code == 200
