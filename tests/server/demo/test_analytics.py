"""searchAnalytics.query over the demo: volume, paging, filters, states, types, and Google's refusals."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

import httpx
import pytest

from searchdesk_server.demo import vocab

from .conftest import BIG, BLOG, OLD, SHOP, TODAY, WWW, analytics_url, days_ago, error_of, query

pytestmark = pytest.mark.anyio

SIXTEEN_MONTHS = {"startDate": (TODAY - timedelta(days=500)).isoformat(), "endDate": TODAY.isoformat()}
ALL_KEYS = ["query", "page", "country", "device", "date"]


async def all_rows(client: httpx.AsyncClient, site_url: str, **body: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    start = 0
    while True:
        page = await query(client, site_url, rowLimit=25_000, startRow=start, **body)
        got = page.get("rows", [])
        if not got:
            return rows
        assert len(got) <= 25_000
        rows.extend(got)
        start += 25_000


async def test_the_big_property_has_over_60000_distinct_rows_across_16_months(client: httpx.AsyncClient) -> None:
    rows = await all_rows(client, BIG, dimensions=ALL_KEYS, dataState="all", **SIXTEEN_MONTHS)
    keys = {tuple(row["keys"]) for row in rows}
    assert len(keys) == len(rows) >= 60_000
    dates = sorted({row["keys"][4] for row in rows})
    first, last = date.fromisoformat(dates[0]), date.fromisoformat(dates[-1])
    assert last == TODAY
    assert first == date(2025, 2, 15)  # 16 months before 2026-06-15
    assert len(dates) == (last - first).days + 1  # every day has data


async def test_paging_boundaries_at_exactly_25000(client: httpx.AsyncClient) -> None:
    body = {"dimensions": ALL_KEYS, **SIXTEEN_MONTHS}
    first = await query(client, BIG, rowLimit=25_000, **body)
    assert len(first["rows"]) == 25_000
    second = await query(client, BIG, rowLimit=2, startRow=24_999, **body)
    assert second["rows"][0] == first["rows"][-1]
    third = await query(client, BIG, rowLimit=1, startRow=25_000, **body)
    assert third["rows"][0] == second["rows"][1]
    assert third["rows"][0]["keys"] not in [row["keys"] for row in first["rows"]]
    total = len(await all_rows(client, BIG, **body))
    last = await query(client, BIG, rowLimit=25_000, startRow=total - 1, **body)
    assert len(last["rows"]) == 1
    beyond = await query(client, BIG, rowLimit=25_000, startRow=total, **body)
    assert "rows" not in beyond and beyond["responseAggregationType"] == "byPage"


@pytest.mark.parametrize("limit", [25_001, -1, 100_000])
async def test_row_limit_over_25000_is_googles_400(client: httpx.AsyncClient, limit: int) -> None:
    response = await client.post(
        analytics_url(BIG), json={"startDate": days_ago(9), "endDate": days_ago(3), "rowLimit": limit}
    )
    assert response.status_code == 400
    error = error_of(response)
    assert error["status"] == "INVALID_ARGUMENT" and "25,000" in error["message"]


async def test_row_limit_defaults_to_1000_and_zero_means_default(client: httpx.AsyncClient) -> None:
    assert len((await query(client, BIG, dimensions=["query", "date"]))["rows"]) == 1_000
    assert len((await query(client, BIG, dimensions=["query", "date"], rowLimit=0))["rows"]) == 1_000


async def test_rows_sorted_by_clicks_then_keys_with_number_types(client: httpx.AsyncClient) -> None:
    rows = (await query(client, BIG, dimensions=["query", "country"], rowLimit=5_000))["rows"]
    order = [(-row["clicks"], row["keys"]) for row in rows]
    assert order == sorted(order)
    for row in rows:
        assert type(row["clicks"]) is int and type(row["impressions"]) is int
        assert type(row["ctr"]) is float and type(row["position"]) is float
        assert row["ctr"] == row["clicks"] / row["impressions"]
        assert row["position"] >= 1.0 and 0 <= row["clicks"] <= row["impressions"]


async def test_no_dimensions_gives_one_total_row_without_keys(client: httpx.AsyncClient) -> None:
    result = await query(client, BIG)
    assert len(result["rows"]) == 1 and "keys" not in result["rows"][0]
    assert result["responseAggregationType"] == "byProperty"


async def test_position_is_impression_weighted_when_aggregating(client: httpx.AsyncClient) -> None:
    total = (await query(client, BIG))["rows"][0]
    days = (await query(client, BIG, dimensions=["date"]))["rows"]
    assert sum(r["impressions"] for r in days) == total["impressions"]
    assert sum(r["clicks"] for r in days) == total["clicks"]
    weighted = sum(r["position"] * r["impressions"] for r in days) / total["impressions"]
    assert weighted == pytest.approx(total["position"], rel=1e-9)
    plain = sum(r["position"] for r in days) / len(days)
    assert plain != pytest.approx(total["position"], rel=1e-9)


async def test_by_page_and_by_property_differ_as_in_search_console(client: httpx.AsyncClient) -> None:
    by_property = (await query(client, BIG))["rows"][0]
    by_page = await query(client, BIG, aggregationType="byPage")
    assert by_page["responseAggregationType"] == "byPage"
    assert by_page["rows"][0]["impressions"] > by_property["impressions"]
    auto_page = await query(client, BIG, dimensions=["page"])
    assert auto_page["responseAggregationType"] == "byPage"
    filtered = await query(client, BIG, dimensionFilterGroups=[{"filters": [{"dimension": "page", "expression": WWW}]}])
    assert filtered["responseAggregationType"] == "byPage"


@pytest.mark.parametrize(
    "body",
    [
        {"dimensions": ["page"], "aggregationType": "byProperty"},
        {"aggregationType": "BY_PROPERTY", "dimensionFilterGroups": [{"filters": [{"dimension": "PAGE"}]}]},
    ],
)
async def test_by_property_with_page_is_refused(client: httpx.AsyncClient, body: dict[str, Any]) -> None:
    response = await client.post(analytics_url(BIG), json={"startDate": days_ago(9), "endDate": days_ago(3), **body})
    assert response.status_code == 400 and "page" in error_of(response)["message"]


async def test_anonymized_queries_count_in_totals_but_not_in_query_rows(client: httpx.AsyncClient) -> None:
    total = (await query(client, BIG, aggregationType="byPage"))["rows"][0]
    by_query = (await query(client, BIG, dimensions=["query"], rowLimit=25_000))["rows"]
    assert sum(r["impressions"] for r in by_query) < total["impressions"]
    assert "" not in {r["keys"][0] for r in by_query}


async def test_final_data_stops_three_days_ago_and_all_reaches_today(client: httpx.AsyncClient) -> None:
    body = {"dimensions": ["date"], "startDate": days_ago(9), "endDate": TODAY.isoformat()}
    final = await query(client, BIG, **body)
    assert max(r["keys"][0] for r in final["rows"]) == days_ago(3)
    assert "metadata" not in final
    fresh = await query(client, BIG, dataState="all", **body)
    assert max(r["keys"][0] for r in fresh["rows"]) == TODAY.isoformat()
    assert fresh["metadata"] == {"firstIncompleteDate": days_ago(2)}
    no_date = await query(client, BIG, dataState="all", dimensions=["query"], startDate=days_ago(9))
    assert "metadata" not in no_date
    old_range = await query(client, BIG, dataState="all", dimensions=["date"], endDate=days_ago(5))
    assert "metadata" not in old_range


async def test_today_is_partial(client: httpx.AsyncClient) -> None:
    days = (await query(client, BIG, dataState="all", dimensions=["date"], endDate=TODAY.isoformat()))["rows"]
    by_day = {r["keys"][0]: r["impressions"] for r in days}
    assert by_day[TODAY.isoformat()] < 0.6 * by_day[days_ago(7)]


async def test_hour_needs_hourly_all(client: httpx.AsyncClient) -> None:
    response = await client.post(
        analytics_url(BIG), json={"startDate": days_ago(2), "endDate": days_ago(1), "dimensions": ["hour"]}
    )
    assert response.status_code == 400 and "HOURLY_ALL" in error_of(response)["message"]


async def test_hourly_rows_cover_the_last_ten_days_up_to_the_demo_hour(client: httpx.AsyncClient) -> None:
    result = await query(
        client, BIG, dimensions=["hour"], dataState="HOURLY_ALL", startDate=days_ago(30), endDate=TODAY.isoformat()
    )
    hours = sorted(r["keys"][0] for r in result["rows"])
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:00:00-07:00", h) for h in hours)  # June: PDT
    assert hours[0] == days_ago(9) + "T00:00:00-07:00"
    assert hours[-1] == TODAY.isoformat() + "T09:00:00-07:00"
    assert len(hours) == 9 * 24 + 10
    assert result["metadata"] == {"firstIncompleteHour": days_ago(2) + "T00:00:00-07:00"}
    both = await query(
        client, BIG, dimensions=["date", "hour"], dataState="hourly_all", startDate=days_ago(1), endDate=days_ago(1)
    )
    assert {r["keys"][0] for r in both["rows"]} == {days_ago(1)}
    assert set(both["metadata"]) == {"firstIncompleteDate", "firstIncompleteHour"}


async def test_hourly_totals_match_the_day(client: httpx.AsyncClient) -> None:
    day = {"startDate": days_ago(4), "endDate": days_ago(4), "dataState": "hourly_all"}
    hours = (await query(client, BIG, dimensions=["hour"], **day))["rows"]
    total = (await query(client, BIG, **day))["rows"][0]
    assert sum(r["impressions"] for r in hours) == total["impressions"]
    assert sum(r["clicks"] for r in hours) == total["clicks"]


@pytest.mark.parametrize("search_type", ["image", "video", "news", "IMAGE", "Video"])
async def test_other_search_types_have_their_own_rows(client: httpx.AsyncClient, search_type: str) -> None:
    web = await query(client, BIG, dimensions=["query"], rowLimit=5)
    other = await query(client, BIG, dimensions=["query"], rowLimit=5, type=search_type)
    assert other["rows"] and other["rows"] != web["rows"]
    assert "position" in other["rows"][0]


@pytest.mark.parametrize("search_type", ["discover", "googleNews", "GOOGLE_NEWS"])
async def test_discover_and_news_have_pages_but_no_queries_or_positions(
    client: httpx.AsyncClient, search_type: str
) -> None:
    rows = (await query(client, BIG, dimensions=["page"], searchType=search_type))["rows"]
    assert rows and all("position" not in r for r in rows)
    assert all(r["keys"][0].startswith(("https://blog.example.com/", WWW + "guides/")) for r in rows)
    response = await client.post(
        analytics_url(BIG),
        json={"startDate": days_ago(9), "endDate": days_ago(3), "dimensions": ["query"], "type": search_type},
    )
    assert response.status_code == 400


async def test_search_appearance_is_grouped_alone(client: httpx.AsyncClient) -> None:
    rows = (await query(client, BIG, dimensions=["searchAppearance"]))["rows"]
    names = {r["keys"][0] for r in rows}
    assert {"PRODUCT_SNIPPETS", "MERCHANT_LISTINGS", "VIDEO", "FAQ_RICH_RESULT", "AMP_BLUE_LINK"} <= names
    assert "" not in names
    response = await client.post(
        analytics_url(BIG),
        json={"startDate": days_ago(9), "endDate": days_ago(3), "dimensions": ["searchAppearance", "date"]},
    )
    assert response.status_code == 400
    video = await query(
        client,
        BIG,
        dimensions=["page"],
        dimensionFilterGroups=[{"filters": [{"dimension": "searchAppearance", "expression": "VIDEO"}]}],
    )
    assert video["rows"] and all("/guides/" in r["keys"][0] for r in video["rows"])


def _filter(dimension: str, operator: str, expression: str) -> list[dict[str, Any]]:
    return [{"groupType": "and", "filters": [{"dimension": dimension, "operator": operator, "expression": expression}]}]


async def _keys(client: httpx.AsyncClient, dimension: str, groups: list[dict[str, Any]] | None = None) -> set[str]:
    body: dict[str, Any] = {"dimensions": [dimension], "rowLimit": 25_000}
    if groups:
        body["dimensionFilterGroups"] = groups
    return {r["keys"][0] for r in (await query(client, BIG, **body)).get("rows", [])}


async def test_the_six_operators(client: httpx.AsyncClient) -> None:
    every = await _keys(client, "query")
    contains = await _keys(client, "query", _filter("query", "contains", "GARDEN HOSE"))
    assert contains == {q for q in every if "garden hose" in q.lower()} and contains
    not_contains = await _keys(client, "query", _filter("query", "notContains", "garden"))
    assert not_contains == {q for q in every if "garden" not in q.lower()}
    assert await _keys(client, "query", _filter("query", "equals", "garden gloves")) == {"garden gloves"}
    assert await _keys(client, "query", _filter("query", "equals", "Garden Gloves")) == set()  # case-sensitive
    not_equals = await _keys(client, "query", _filter("query", "notEquals", "garden gloves"))
    assert not_equals == every - {"garden gloves"}
    regex = await _keys(client, "query", _filter("query", "includingRegex", r"^best .*(shears|loppers)$"))
    assert regex == {"best pruning shears", "best bypass loppers"}
    excluding = await _keys(client, "query", _filter("query", "excludingRegex", "example"))
    assert excluding == {q for q in every if "example" not in q}
    # RE2, as at Google (issue 36): a nested repeat is answered (the demo used to refuse it), matching as
    # Python's re would; `\d` is ASCII digits only and `(?i)` turns case off inside the pattern.
    nested = await _keys(client, "query", _filter("query", "includingRegex", r"^(\w+\s?)+$"))
    assert nested == {q for q in every if re.fullmatch(r"[A-Za-z0-9_]+(?: ?[A-Za-z0-9_]+)*", q)} and nested
    assert await _keys(client, "query", _filter("query", "includingRegex", "(?i)^GARDEN GLOVES$")) == {"garden gloves"}


async def test_filters_on_page_country_and_device(client: httpx.AsyncClient) -> None:
    blog_pages = await _keys(client, "page", _filter("page", "contains", "blog.example.com"))
    assert blog_pages and all(p.startswith(BLOG) for p in blog_pages)
    assert await _keys(client, "country", _filter("country", "equals", "USA")) == {"usa"}
    assert await _keys(client, "device", _filter("device", "notEquals", "mobile")) == {"DESKTOP", "TABLET"}
    both = [
        {"filters": [{"dimension": "country", "expression": "deu"}]},
        {"groupType": "AND", "filters": [{"dimension": "device", "expression": "DESKTOP"}]},
    ]
    rows = (await query(client, BIG, dimensions=["country", "device"], dimensionFilterGroups=both))["rows"]
    assert [r["keys"] for r in rows] == [["deu", "DESKTOP"]]


async def test_language_specific_queries_come_from_their_countries(client: httpx.AsyncClient) -> None:
    rows = (
        await query(
            client, BIG, dimensions=["country"], dimensionFilterGroups=_filter("query", "equals", "gartenschere test")
        )
    )["rows"]
    assert [r["keys"][0] for r in rows] == ["deu"]


@pytest.mark.parametrize(
    "groups",
    [
        _filter("date", "equals", "2026-01-01"),
        _filter("query", "startsWith", "a"),
        _filter("query", "includingRegex", "(unclosed"),
        _filter("query", "includingRegex", "garden(?=s)"),
        _filter("query", "includingRegex", r"(garden) \1"),
        _filter("query", "includingRegex", "gloves(?!s)"),
        [{"groupType": "or", "filters": []}],
        [{"filters": [{"dimension": "query", "expression": "x", "bogus": 1}]}],
        ["not an object"],
    ],
)
async def test_bad_filters_are_googles_400(client: httpx.AsyncClient, groups: list[Any]) -> None:
    response = await client.post(
        analytics_url(BIG), json={"startDate": days_ago(9), "endDate": days_ago(3), "dimensionFilterGroups": groups}
    )
    assert response.status_code == 400
    assert error_of(response)["status"] == "INVALID_ARGUMENT"


@pytest.mark.parametrize(
    "body",
    [
        {"endDate": "2026-06-01"},
        {"startDate": "2026-06-01"},
        {"startDate": "2026-6-1", "endDate": "2026-06-02"},
        {"startDate": "2026-02-30", "endDate": "2026-03-02"},
        {"startDate": "2026-06-02", "endDate": "2026-06-01"},
        {"startDate": "2026-06-01", "endDate": "2026-06-02", "dimensions": ["day"]},
        {"startDate": "2026-06-01", "endDate": "2026-06-02", "dimensions": ["query", "query"]},
        {"startDate": "2026-06-01", "endDate": "2026-06-02", "rowLimit": "many"},
        {"startDate": "2026-06-01", "endDate": "2026-06-02", "startRow": -1},
        {"startDate": "2026-06-01", "endDate": "2026-06-02", "dataState": "fresh"},
        {"startDate": "2026-06-01", "endDate": "2026-06-02", "type": "web", "searchType": "image"},
        {"startDate": "2026-06-01", "endDate": "2026-06-02", "aggregationType": "byNewsShowcasePanel"},
        {"startDate": "2026-06-01", "endDate": "2026-06-02", "unknownField": True},
    ],
)
async def test_bad_bodies_are_googles_400(client: httpx.AsyncClient, body: dict[str, Any]) -> None:
    response = await client.post(analytics_url(BIG), json=body)
    assert response.status_code == 400, body
    assert error_of(response)["status"] == "INVALID_ARGUMENT"


async def test_unparseable_json_is_googles_400(client: httpx.AsyncClient) -> None:
    for content in (b"{not json", b"[1, 2]", b"", b"\xff\xfe"):
        response = await client.post(analytics_url(BIG), content=content)
        assert response.status_code == 400
        assert error_of(response)["message"].startswith("Invalid JSON payload received.")


async def test_snake_case_names_and_any_case_enums_are_accepted(client: httpx.AsyncClient) -> None:
    camel = await query(client, BIG, dimensions=["QUERY"], rowLimit=3, dataState="ALL", type="WEB")
    snake = await query(
        client, BIG, dimensions=["query"], row_limit=3, data_state="all", search_type="web", aggregation_type="AUTO"
    )
    assert camel == snake


async def test_url_prefix_properties_are_slices_of_the_domain(client: httpx.AsyncClient) -> None:
    for prefix in (WWW, BLOG):
        pages = {r["keys"][0] for r in (await query(client, prefix, dimensions=["page"], rowLimit=25_000))["rows"]}
        assert pages and all(p.startswith(prefix) for p in pages)
    shop = await query(client, SHOP, dimensions=["page"])
    assert all(r["keys"][0].startswith(SHOP) for r in shop["rows"])
    big_www = await query(client, BIG, dimensions=["page"], dimensionFilterGroups=_filter("page", "contains", WWW))
    www = await query(client, WWW, dimensions=["page"])
    assert big_www["rows"][:20] == www["rows"][:20]


async def test_unverified_and_unknown_properties_are_refused(client: httpx.AsyncClient) -> None:
    for site_url in (OLD, "https://nobody.example.com/", "https://www.example.com"):
        response = await client.post(analytics_url(site_url), json={"startDate": days_ago(9), "endDate": days_ago(3)})
        assert response.status_code == 403
        error = error_of(response)
        assert error["status"] == "PERMISSION_DENIED" and error["errors"][0]["reason"] == "forbidden"
        assert error["message"] == (
            f"User does not have sufficient permission for site '{site_url}'. "
            "See also: https://support.google.com/webmasters/answer/2451999."
        )


async def test_dates_outside_the_data_give_no_rows(client: httpx.AsyncClient) -> None:
    future = await query(client, BIG, startDate=(TODAY + timedelta(days=1)).isoformat(), endDate="2030-01-01")
    assert "rows" not in future
    ancient = await query(client, BIG, startDate="2020-01-01", endDate="2020-12-31")
    assert "rows" not in ancient


async def test_hostile_strings_are_in_the_data_and_rank_high(client: httpx.AsyncClient) -> None:
    raw = await client.post(
        analytics_url(BIG),
        json={"startDate": days_ago(30), "endDate": days_ago(3), "dimensions": ["query"], "rowLimit": 25},
    )
    assert "\u202e".encode() in raw.content  # non-ASCII arrives as raw UTF-8, as Google sends it
    top = [r["keys"][0] for r in raw.json()["rows"]]
    for hostile in (vocab.HOSTILE_INJECTION, vocab.HOSTILE_BIDI, vocab.HOSTILE_ZERO_WIDTH):
        assert hostile in top
    assert vocab.HOSTILE_INJECTION in top[:10]
    assert "\u202e" in vocab.HOSTILE_BIDI and "\u200b" in vocab.HOSTILE_ZERO_WIDTH
    every = await _keys(client, "query")
    assert {vocab.HOSTILE_PIPE, vocab.HOSTILE_LONG} <= every and len(vocab.HOSTILE_LONG) > 200
    response = await client.post(
        analytics_url(BIG),
        json={"startDate": days_ago(30), "endDate": days_ago(3), "dimensions": ["page"], "rowLimit": 20},
    )
    assert "\\u001b[31mflash-sale" in response.text  # the control character arrives escaped in the JSON
    assert vocab.HOSTILE_PAGE in {r["keys"][0] for r in response.json()["rows"]}
