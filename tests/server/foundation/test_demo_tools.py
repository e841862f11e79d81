"""Every tool answers from the demo over a real stdio subprocess, in both protocol revisions."""

from __future__ import annotations

import pytest

from searchdesk_server import catalogue
from searchdesk_server.result import UNTRUSTED_LINE
from tests.server.stdio import MODES, connect, text_of

pytestmark = pytest.mark.anyio

BIG = "sc-domain:example.com"
WWW = "https://www.example.com/"

CALLS: list[tuple[str, dict[str, object]]] = [
    ("list_sites", {}),
    ("get_site", {"site": WWW}),
    ("list_sitemaps", {"site": WWW}),
    ("query_search_analytics", {"site": BIG, "dimensions": ["query"], "row_limit": 10}),
    ("query_search_analytics", {"site": BIG, "period": "last3months", "dimensions": ["page", "device"]}),
    ("inspect_url", {"site": WWW, "url": "https://www.example.com/"}),
    ("inspect_urls", {"site": WWW, "urls": ["https://www.example.com/", "https://www.example.com/blog/"]}),
    ("list_verified_sites", {}),
    ("get_verified_site", {"site": WWW}),
    ("get_verification_token", {"site": BIG}),
    ("get_verification_token", {"site": WWW, "method": "FILE"}),
    ("setup_site", {"site": "https://new.example.com/"}),
    ("get_indexing_status", {"url": "https://www.example.com/jobs/1"}),
]


@pytest.mark.parametrize("mode", MODES)
async def test_read_tools_answer_from_the_demo(mode: str) -> None:
    async with connect(mode) as client:
        for name, args in CALLS:
            result = await client.call_tool(name, args)
            text = text_of(result)
            assert not result.is_error, (name, text)
            assert text.startswith(UNTRUSTED_LINE) or result.structured_content.get("untrusted") is False, name
            data = result.structured_content
            assert data["untrusted"] is (data["source"] == "google"), name
            assert len(text.encode()) <= 100_000


async def test_sites_listing_and_analytics_shapes() -> None:
    async with connect("legacy") as client:
        sites = (await client.call_tool("list_sites", {})).structured_content["sites"]
        assert sites[0]["site"] == BIG and len(sites) >= 4
        perf = await client.call_tool("query_search_analytics", {"site": BIG, "dimensions": ["query"], "row_limit": 10})
        data = perf.structured_content
        assert len(data["rows"]) == 10
        assert data["next_start_row"] == 10
        table_rows = [line for line in text_of(perf).splitlines() if line.startswith("| ") and "Clicks" not in line]
        assert len(table_rows) == 10
        assert "start_row=10" in text_of(perf)


@pytest.mark.parametrize("mode", MODES)
async def test_write_tools_act_on_the_demo(mode: str) -> None:
    async with connect(mode) as client:
        added = await client.call_tool("add_site", {"site": "https://added.example.com"})
        assert not added.is_error, text_of(added)
        assert "https://added.example.com/" in text_of(added)
        sites = (await client.call_tool("list_sites", {})).structured_content["sites"]
        assert "https://added.example.com/" in [s["site"] for s in sites]
        sub = await client.call_tool(
            "submit_sitemaps",
            {"site": WWW, "feedpaths": '["https://www.example.com/a.xml", "https://www.example.com/b.xml"]'},
        )
        assert not sub.is_error and sub.structured_content["submitted"] == 2, text_of(sub)


#: Example arguments on the demo's data for each guarded tool of the catalogue (a new one needs one).
GUARDED_EXAMPLES: dict[str, dict[str, object]] = {
    "delete_site": {"site": WWW},
    "delete_sitemap": {"site": WWW, "feedpath": "https://www.example.com/sitemap.xml"},
    "unverify_site": {"site": WWW},
    "update_site_owners": {"site": WWW, "owners": ["someone@example.com"]},
}


@pytest.mark.parametrize("tool", [t.name for t in catalogue.TOOLS if t.guarded])
async def test_guarded_tools_never_act_unasked(tool: str) -> None:
    args = GUARDED_EXAMPLES[tool]
    async with connect("legacy") as client:
        before = (await client.call_tool("list_sites", {})).structured_content["sites"]
        maps_before = (await client.call_tool("list_sitemaps", {"site": WWW})).structured_content["sitemaps"]
        result = await client.call_tool(tool, args)
        assert result.is_error
        assert "did nothing" in text_of(result)
        assert (await client.call_tool("list_sites", {})).structured_content["sites"] == before
        assert (await client.call_tool("list_sitemaps", {"site": WWW})).structured_content["sitemaps"] == maps_before


async def test_bad_arguments_get_clear_errors() -> None:
    async with connect("legacy") as client:
        cases = [
            ("get_site", {"site": "example.com"}, "sc-domain:example.com"),
            ("query_search_analytics", {"site": BIG, "row_limit": 25_001}, "maximum is 25,000"),
            (
                "query_search_analytics",
                {"site": BIG, "start_date": "2026-02-30", "end_date": "2026-03-01"},
                "real date",
            ),
            (
                "query_search_analytics",
                {"site": BIG, "start_date": "2026-03-02", "end_date": "2026-03-01"},
                "swap",
            ),
            ("query_search_analytics", {"site": BIG, "dimensions": ["hour"]}, "hourly_all"),
            ("query_search_analytics", {"site": BIG, "bogus": 1}, "unknown argument"),
            (
                "inspect_url",
                {"site": WWW, "url": "https://www.example.com/", "language_code": "en_US!"},
                "language tag",
            ),
            ("get_site", {}, "GSC_SITE_URL"),
            ("update_site_owners", {"site": WWW, "owners": ["ab"]}, "at least 3"),
            (
                "inspect_urls",
                {"site": WWW, "urls": [f"https://www.example.com/{i}" for i in range(21)]},
                "give 1 to 20",
            ),
        ]
        for tool, args, needle in cases:
            result = await client.call_tool(tool, args)
            assert result.is_error, tool
            assert needle in text_of(result), (tool, text_of(result))
