"""urlInspection.index.inspect: every verdict, by URL, and Google's refusals."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from searchdesk_server.demo import vocab

from .conftest import BIG, OLD, SC, SHOP, WWW, error_of

pytestmark = pytest.mark.anyio

INSPECT = SC + "v1/urlInspection/index:inspect"


async def inspect(client: httpx.AsyncClient, url: str, site_url: str = BIG, **extra: Any) -> dict[str, Any]:
    response = await client.post(INSPECT, json={"inspectionUrl": url, "siteUrl": site_url, **extra})
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["inspectionResult"]
    return result


@pytest.mark.parametrize(
    ("url", "verdict", "coverage"),
    [
        (WWW, "PASS", "Submitted and indexed"),
        (WWW + "sale/", "PARTIAL", "Indexed, though blocked by robots.txt"),
        (WWW + "stores/", "FAIL", "Server error (5xx)"),
        (WWW + "old/spring-catalog", "FAIL", "Not found (404)"),
        (vocab.HOSTILE_PAGE, "FAIL", "Soft 404"),
        (WWW + "contact/", "NEUTRAL", "Crawled - currently not indexed"),
        ("https://blog.example.com/posts/kids-garden-projects", "NEUTRAL", "Discovered - currently not indexed"),
        ("https://example.com/", "NEUTRAL", "Page with redirect"),
        (WWW + "never-heard-of-it", "NEUTRAL", "URL is unknown to Google"),
        (vocab.LONG_PAGE, "NEUTRAL", "Excluded by ‘noindex’ tag"),
    ],
)
async def test_index_verdicts(client: httpx.AsyncClient, url: str, verdict: str, coverage: str) -> None:
    status = (await inspect(client, url))["indexStatusResult"]
    assert (status["verdict"], status["coverageState"]) == (verdict, coverage)


async def test_an_indexed_page_has_the_full_record(client: httpx.AsyncClient) -> None:
    result = await inspect(client, WWW + "products/pruning-shears", WWW, languageCode="en-US")
    status = result["indexStatusResult"]
    assert status["robotsTxtState"] == "ALLOWED" and status["indexingState"] == "INDEXING_ALLOWED"
    assert status["pageFetchState"] == "SUCCESSFUL" and status["crawledAs"] == "MOBILE"
    assert status["googleCanonical"] == status["userCanonical"] == WWW + "products/pruning-shears"
    assert status["sitemap"] == [WWW + "sitemaps/products.xml"]
    assert status["referringUrls"] and status["lastCrawlTime"].endswith("Z")
    assert result["mobileUsabilityResult"] == {"verdict": "PASS"}
    assert result["richResultsResult"]["verdict"] == "PASS"
    assert result["inspectionResultLink"].startswith("https://search.google.com/search-console/inspect?")
    assert "resource_id=https%3A%2F%2Fwww.example.com%2F" in result["inspectionResultLink"]


async def test_rich_results_with_one_failing_item_fail(client: httpx.AsyncClient) -> None:
    rich = (await inspect(client, WWW + "products/garden-hose"))["richResultsResult"]
    assert rich["verdict"] == "FAIL"
    failing = [
        item
        for detected in rich["detectedItems"]
        for item in detected["items"]
        if any(issue["severity"] == "ERROR" for issue in item.get("issues", []))
    ]
    assert len(failing) == 1
    warning = (await inspect(client, WWW + "products/hedge-trimmer"))["richResultsResult"]
    assert warning["verdict"] == "PARTIAL"
    assert {i["severity"] for d in warning["detectedItems"] for it in d["items"] for i in it.get("issues", [])} == {
        "WARNING"
    }


async def test_mobile_usability_failure_and_amp(client: httpx.AsyncClient) -> None:
    mobile = (await inspect(client, WWW + "about/"))["mobileUsabilityResult"]
    assert mobile["verdict"] == "FAIL" and {i["issueType"] for i in mobile["issues"]} >= {"TAP_TARGETS_TOO_CLOSE"}
    amp = await inspect(client, WWW + "amp/guides/how-to-prune-roses")
    assert amp["ampResult"]["verdict"] == "PASS"
    assert amp["indexStatusResult"]["googleCanonical"] == WWW + "guides/how-to-prune-roses"
    broken = (await inspect(client, WWW + "amp/guides/when-to-plant-tomatoes"))["ampResult"]
    assert broken["verdict"] == "FAIL" and broken["issues"][0]["severity"] == "ERROR"


async def test_an_unknown_url_has_no_crawl_details(client: httpx.AsyncClient) -> None:
    result = await inspect(client, "https://support.example.com/help/nothing-here")
    status = result["indexStatusResult"]
    assert status["pageFetchState"] == "PAGE_FETCH_STATE_UNSPECIFIED"
    assert "lastCrawlTime" not in status and "googleCanonical" not in status
    assert "richResultsResult" not in result and "mobileUsabilityResult" not in result


async def test_every_verdict_appears_among_the_known_pages(client: httpx.AsyncClient) -> None:
    pages = (
        await client.post(
            SC + "webmasters/v3/sites/sc-domain%3Aexample.com/searchAnalytics/query",
            json={"startDate": "2025-01-01", "endDate": "2026-06-15", "dimensions": ["page"], "rowLimit": 500},
        )
    ).json()["rows"]
    verdicts = set()
    for row in pages:
        result = await inspect(client, row["keys"][0])
        verdicts.add(result["indexStatusResult"]["verdict"])
        verdicts.add(result.get("richResultsResult", {}).get("verdict", "PASS"))
    assert verdicts == {"PASS", "PARTIAL", "FAIL", "NEUTRAL"}


async def test_the_same_url_always_gets_the_same_result(client: httpx.AsyncClient) -> None:
    url = "https://blog.example.com/posts/mulch-guide"
    assert await inspect(client, url) == await inspect(client, url)


async def test_restricted_users_may_inspect(client: httpx.AsyncClient) -> None:
    status = (await inspect(client, SHOP + "products/plant-stand", SHOP))["indexStatusResult"]
    assert status["verdict"] == "NEUTRAL" and status["indexingState"] == "BLOCKED_BY_META_TAG"


@pytest.mark.parametrize(
    ("url", "site_url"),
    [
        ("https://blog.example.com/posts/mulch-guide", WWW),
        ("https://elsewhere.example.net/", BIG),
        (OLD + "archive/heirloom-beans", OLD),
        (WWW, "https://unknown.example.com/"),
    ],
)
async def test_outside_the_property_or_unowned_is_403(client: httpx.AsyncClient, url: str, site_url: str) -> None:
    response = await client.post(INSPECT, json={"inspectionUrl": url, "siteUrl": site_url})
    assert response.status_code == 403
    error = error_of(response)
    assert error["message"] == "You do not own this site, or the inspected URL is not part of this property."
    assert error["status"] == "PERMISSION_DENIED"


@pytest.mark.parametrize(
    "body",
    [
        {"siteUrl": BIG},
        {"inspectionUrl": WWW},
        {"inspectionUrl": WWW, "siteUrl": BIG, "languageCode": "en_US!"},
        {"inspectionUrl": WWW, "siteUrl": BIG, "languageCode": "x" * 36},
        {"inspectionUrl": "not a url", "siteUrl": BIG},
        {"inspectionUrl": WWW, "siteUrl": BIG, "extra": 1},
        {"inspectionUrl": 5, "siteUrl": BIG},
    ],
)
async def test_bad_requests_are_400(client: httpx.AsyncClient, body: dict[str, Any]) -> None:
    response = await client.post(INSPECT, json=body)
    assert response.status_code == 400 and error_of(response)["status"] == "INVALID_ARGUMENT"
