"""The demo against Google's discovery documents (copied into discovery/): paths, methods, scopes, query
parameters, and every field of every answer, int64 counts as strings included."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest

from searchdesk_server.demo import DEMO_ACCOUNT
from searchdesk_server.demo.routes import ROUTES

from .conftest import BIG, IDX, SC, SHOP, SV, WWW, analytics_url, enc, site, sitemap

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent / "discovery"
DOCUMENTS = {"searchconsole.v1.json": "", "siteVerification.v1.json": "", "indexing.v3.json": ""}
RETIRED = {"searchconsole.urlTestingTools.mobileFriendlyTest.run"}  # Google shut the test down in 2023
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")


@cache
def documents() -> dict[str, dict[str, Any]]:
    return {name: json.loads((HERE / name).read_text(encoding="utf-8")) for name in DOCUMENTS}


def methods() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Every discovery method by id, with the document it belongs to."""
    found: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}

    def walk(doc: dict[str, Any], resources: dict[str, Any]) -> None:
        for resource in resources.values():
            for method in resource.get("methods", {}).values():
                found[method["id"]] = (doc, method)
            walk(doc, resource.get("resources", {}))

    for doc in documents().values():
        walk(doc, doc["resources"])
    return found


def test_every_route_matches_its_discovery_method() -> None:
    known = methods()
    assert {route.id for route in ROUTES} == set(known) - RETIRED
    for route in ROUTES:
        doc, method = known[route.id]
        assert route.method == method["httpMethod"], route.id
        assert f"https://{route.host}/{route.path}" == doc["baseUrl"] + method["path"], route.id
        assert route.scopes == frozenset(method["scopes"]), route.id
        query = {name for name, p in method.get("parameters", {}).items() if p["location"] == "query"}
        assert route.query == frozenset(query), route.id


def _schema(doc: dict[str, Any], ref: str) -> dict[str, Any]:
    schema: dict[str, Any] = doc["schemas"][ref]
    return schema


def _enum_key(value: str) -> str:
    return value.replace("_", "").lower()


def check(doc: dict[str, Any], schema: dict[str, Any], value: Any, where: str) -> None:
    """Fail unless `value` fits the discovery schema: known fields only, Google's JSON types."""
    if "$ref" in schema:
        check(doc, _schema(doc, schema["$ref"]), value, where)
        return
    kind = schema.get("type")
    if kind == "object":
        assert isinstance(value, dict), where
        properties = schema.get("properties", {})
        for key, item in value.items():
            assert key in properties, f"{where}.{key} is not in the discovery document"
            check(doc, properties[key], item, f"{where}.{key}")
    elif kind == "array":
        assert isinstance(value, list) and value, f"{where}: Google leaves out empty lists"
        for index, item in enumerate(value):
            check(doc, schema["items"], item, f"{where}[{index}]")
    elif kind == "string":
        assert isinstance(value, str), where
        if schema.get("format") == "int64":
            assert value.isdigit(), f"{where}: int64 travels as a string of digits"
        if schema.get("format") == "google-datetime":
            assert RFC3339.fullmatch(value), where
        if "enum" in schema:
            # The URL Inspection API writes its enums as listed; the older webmasters resources write
            # them in lowerCamel on the wire (siteOwner, byProperty, rssFeed) — same value, other case.
            assert _enum_key(value) in {_enum_key(e) for e in schema["enum"]}, where
    elif kind == "number":
        assert isinstance(value, int | float) and not isinstance(value, bool), where
    elif kind == "integer":
        assert isinstance(value, int) and not isinstance(value, bool), where
    elif kind == "boolean":
        assert isinstance(value, bool), where
    else:
        raise AssertionError(f"{where}: unexpected schema {schema}")


INSPECTED = [
    WWW,
    WWW + "products/garden-hose",
    WWW + "products/hedge-trimmer",
    WWW + "about/",
    WWW + "amp/guides/when-to-plant-tomatoes",
    WWW + "sale/",
    WWW + "stores/",
    WWW + "nothing",
    "https://blog.example.com/posts/kids-garden-projects",
    "https://blog.example.com/posts/no-dig-gardening",
]
ANALYTICS: list[dict[str, Any]] = [
    {"dimensions": ["query", "page", "country", "device", "date"], "rowLimit": 200},
    {"dimensions": ["date"], "dataState": "all"},
    {"dimensions": ["hour"], "dataState": "hourly_all"},
    {"dimensions": ["searchAppearance"]},
    {"dimensions": ["page"], "type": "discover"},
    {},
]


async def calls(client: httpx.AsyncClient) -> list[tuple[str, httpx.Response]]:
    """One or more real answers for every method that has a response body."""
    out: list[tuple[str, httpx.Response]] = [
        ("webmasters.sites.list", await client.get(SC + "webmasters/v3/sites")),
        ("webmasters.sites.get", await client.get(site(SHOP))),
        ("webmasters.sitemaps.list", await client.get(site(BIG, "sitemaps"))),
        (
            "webmasters.sitemaps.list",
            await client.get(site(WWW, "sitemaps"), params={"sitemapIndex": WWW + "sitemap_index.xml"}),
        ),
        ("webmasters.sitemaps.get", await client.get(sitemap(WWW, WWW + "sitemap-new-products.xml"))),
        ("webmasters.sitemaps.get", await client.get(sitemap(WWW, WWW + "feed.atom"))),
        ("siteVerification.webResource.list", await client.get(SV + "webResource")),
        ("siteVerification.webResource.get", await client.get(SV + "webResource/" + enc("dns://example.com"))),
        (
            "siteVerification.webResource.getToken",
            await client.post(
                SV + "token", json={"site": {"type": "SITE", "identifier": WWW}, "verificationMethod": "META"}
            ),
        ),
        (
            "siteVerification.webResource.insert",
            await client.post(
                SV + "webResource",
                params={"verificationMethod": "FILE"},
                json={"site": {"type": "SITE", "identifier": "https://new.example.com/"}},
            ),
        ),
        (
            "siteVerification.webResource.update",
            await client.put(SV + "webResource/" + enc(WWW), json={"owners": ["a@example.com", DEMO_ACCOUNT]}),
        ),
        ("siteVerification.webResource.patch", await client.patch(SV + "webResource/" + enc(WWW), json={})),
        (
            "indexing.urlNotifications.publish",
            await client.post(IDX + "urlNotifications:publish", json={"url": WWW + "jobs/x", "type": "URL_DELETED"}),
        ),
        (
            "indexing.urlNotifications.getMetadata",
            await client.get(IDX + "urlNotifications/metadata", params={"url": WWW + "jobs/store-manager-portland"}),
        ),
    ]
    for url in INSPECTED:
        response = await client.post(SC + "v1/urlInspection/index:inspect", json={"inspectionUrl": url, "siteUrl": BIG})
        out.append(("searchconsole.urlInspection.index.inspect", response))
    for body in ANALYTICS:
        full = {"startDate": "2026-06-01", "endDate": "2026-06-15", **body}
        out.append(("webmasters.searchanalytics.query", await client.post(analytics_url(BIG), json=full)))
    return out


async def test_every_answer_fits_the_discovery_schema(client: httpx.AsyncClient) -> None:
    known = methods()
    answered = set()
    for method_id, response in await calls(client):
        assert response.status_code == 200, (method_id, response.text)
        doc, method = known[method_id]
        check(doc, {"$ref": method["response"]["$ref"]}, response.json(), method_id)
        answered.add(method_id)
    with_bodies = {m for m, (_, method) in known.items() if "response" in method} - RETIRED
    assert answered == with_bodies


def test_the_checker_can_fail() -> None:
    doc = documents()["searchconsole.v1.json"]
    sitemap_schema = {"$ref": "WmxSitemap"}
    check(doc, sitemap_schema, {"path": "x", "errors": "3", "isPending": False}, "ok")
    bad_values: list[dict[str, Any]] = [
        {"errors": 3},
        {"isPending": "no"},
        {"unknown": 1},
        {"contents": []},
        {"lastSubmitted": "today"},
    ]
    for bad in bad_values:
        with pytest.raises(AssertionError):
            check(doc, sitemap_schema, bad, "bad")


async def test_error_bodies_have_googles_shape(client: httpx.AsyncClient) -> None:
    responses = [
        await client.get(site("https://nobody.example.com/")),
        await client.post(analytics_url(BIG), json={"rowLimit": 1}),
        await client.get(SC + "nothing"),
    ]
    for response in responses:
        body = response.json()
        assert list(body) == ["error"]
        error = body["error"]
        assert set(error) == {"code", "message", "errors", "status"}
        assert error["code"] == response.status_code
        assert error["errors"] == [
            {"message": error["message"], "domain": "global", "reason": error["errors"][0]["reason"]}
        ]
