"""The tool menu as a client sees it, over a real stdio subprocess, in both protocol revisions."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

from searchdesk_server import catalogue, tool_spec
from tests.server.stdio import MODES, connect

pytestmark = pytest.mark.anyio

READS = {
    "list_sites",
    "get_site",
    "list_sitemaps",
    "get_sitemap",
    "query_search_analytics",
    "inspect_url",
    "inspect_urls",
    "list_verified_sites",
    "get_verified_site",
    "get_verification_token",
    "get_indexing_status",
    "setup_site",
}
REPORTS = {
    "compare_periods",
    "report_traffic_drops",
    "report_quick_wins",
    "report_cannibalisation",
    # issue 38
    "report_weekly_summary",
    "report_content_decay",
    "report_ctr_gaps",
    "report_new_queries",
    "report_brand_split",
}
CHANGES = {"list_changes"}  # SearchDesk's own record of changes on this computer (issue 25)
COVERAGE = {"index_coverage"}  # SearchDesk's own watch of which pages are in Google (issue 37)
WRITES = {"add_site", "submit_sitemap", "submit_sitemaps", "verify_site", "request_indexing"}
GUARDED = {"delete_site", "delete_sitemap", "unverify_site", "update_site_owners"}
ESSENTIAL = {"list_sites", "get_site", "list_sitemaps", "query_search_analytics", "inspect_url"}


@pytest.mark.parametrize("mode", MODES)
async def test_menu_matches_the_catalogue(mode: str) -> None:
    async with connect(mode) as client:
        tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == [t.name for t in catalogue.TOOLS]
    assert len(tools) == 32
    assert {t.name for t in tools[:21]} == READS | WRITES | GUARDED  # the 21 Search Console tools first
    assert {t.name for t in tools[21:30]} == REPORTS  # then the reports
    assert {t.name for t in tools[30:31]} == CHANGES  # then the record of changes
    assert {t.name for t in tools[31:]} == COVERAGE  # then the coverage watch
    for tool in tools:
        spec = catalogue.BY_NAME[tool.name]
        hints = tool.annotations.model_dump(by_alias=True, exclude_none=True)
        expected = {
            "readOnlyHint": tool.name in READS | REPORTS | CHANGES | COVERAGE,
            "destructiveHint": tool.name in GUARDED,
            "idempotentHint": True,
            "openWorldHint": False,
        }
        assert hints == expected, tool.name
        assert tool.title == spec.title and tool.title
        assert tool.description == spec.description
        assert tool.input_schema == spec.menu_schema
        assert tool.output_schema == spec.output_schema and tool.output_schema["type"] == "object"
        assert tool.output_schema == {"type": "object"} or tool.name in COVERAGE
        assert (tool.name in GUARDED) == ("confirm_token" in tool.input_schema.get("properties", {}))


def test_table_of_kinds_is_the_issues_table() -> None:
    assert {t.name for t in catalogue.TOOLS if t.kind == "read"} == READS | REPORTS | CHANGES | COVERAGE
    assert {t.name for t in catalogue.TOOLS if t.kind == "write"} == WRITES
    assert {t.name for t in catalogue.TOOLS if t.kind == "guarded"} == GUARDED
    assert set(catalogue.group_members("essential")) == ESSENTIAL
    assert set(catalogue.group_members("reports")) == REPORTS
    assert set(catalogue.group_members("changes")) == CHANGES
    assert set(catalogue.group_members("coverage")) == COVERAGE
    for group in tool_spec.GROUPS[1:]:
        assert catalogue.group_members(group), group


def test_each_entry_names_its_handler_question_and_quota() -> None:
    """By qualified name, so a search for a handler finds its entry; resolved only when called."""
    for spec in catalogue.all_tools(diagnostics=True):
        for ref in filter(None, (spec.handler, spec.question)):
            fn = catalogue.resolve(ref)
            assert f"{fn.__module__}.{fn.__qualname__}" == ref
            assert inspect.iscoroutinefunction(fn), ref
        assert spec.guarded == (spec.name in GUARDED) == (spec.question is not None)
    quotas = {t.name: t.quota for t in catalogue.TOOLS if t.quota is not None}
    assert quotas == {"inspect_url": "inspection", "inspect_urls": "inspection", "request_indexing": "indexing"}


def test_a_guarded_tool_and_only_one_names_a_question() -> None:
    spec = catalogue.BY_NAME["delete_sitemap"]
    with pytest.raises(ValueError, match="question builder"):
        dataclasses.replace(spec, question=None)
    with pytest.raises(ValueError, match="question builder"):
        dataclasses.replace(catalogue.BY_NAME["list_sites"], question=spec.question)


async def test_menu_stays_small() -> None:
    """Claude reads the whole menu on every turn: ≤ 500 characters per tool on average (2025-11-25 wire)."""
    async with connect("legacy") as client:
        result = await client.list_tools()
    wire = json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json"), separators=(",", ":"))
    assert len(wire) / len(result.tools) <= 500, len(wire)
    for tool in result.tools:
        if tool.name in COVERAGE:  # issue 37: the whole entry, output schema and all
            entry = json.dumps(tool.model_dump(by_alias=True, exclude_none=True, mode="json"), separators=(",", ":"))
            assert len(entry) <= 1_100, (tool.name, len(entry))


#: The essential preset's menu, counted as the whole menu is (compact JSON of the tools/list result,
#: 2025-11-25 wire): 2,981 before issue 38, 2,925 after its wording was trimmed, 2,702 with Google's
#: own lists of values (search type, data state, aggregation, a filter's dimension and operator)
#: left to the validator, 2,489 with the dimension names too, the lower bounds, the count of filters
#: and a filter's required keys (`catalogue.MENU_UNSAID`).
ESSENTIAL_NOW = 2_489
ESSENTIAL_TARGET = 2_500


async def essential_menu() -> int:
    async with connect("legacy", env={"GSC_ALLOW_TOOLS": "essential"}) as client:
        result = await client.list_tools()
    assert {t.name for t in result.tools} == ESSENTIAL
    return len(json.dumps(result.model_dump(by_alias=True, exclude_none=True, mode="json"), separators=(",", ":")))


async def test_the_essential_preset_never_grows() -> None:
    """The preset a person picks to keep Claude's context small: each word of it is paid on every turn."""
    assert await essential_menu() <= ESSENTIAL_NOW


async def test_the_essential_preset_meets_its_target() -> None:
    assert await essential_menu() <= ESSENTIAL_TARGET


def test_input_schemas_are_closed_over_known_keywords() -> None:
    """Every schema keyword the catalogue uses is one the server's validator enforces."""
    known = {
        "type",
        "enum",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "items",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "description",
    }

    def walk(schema: dict) -> None:
        assert set(schema) <= known, set(schema) - known
        for sub in schema.get("properties", {}).values():
            walk(sub)
        if "items" in schema:
            walk(schema["items"])

    for spec in catalogue.TOOLS:
        walk(spec.input_schema)


def test_the_menu_leaves_only_googles_own_values_and_obvious_checks_to_the_validator() -> None:
    """The menu may show a parameter's type instead of its list of values (`menu_terse`), and leave off a
    lower bound, a count of items and an item's required keys; nothing else differs from the schema
    the validator checks: same parameters, same required ones, same upper bounds."""
    for spec in catalogue.all_tools(diagnostics=True):
        full, menu = spec.input_schema, spec.menu_schema
        assert set(menu) == set(full) and menu.get("required") == full.get("required"), spec.name
        for path in sorted(spec.menu_terse, key=lambda p: -p.count(".")):  # a filter's keys before filters
            assert spec.name == "query_search_analytics", spec.name  # Google's API names, passed on as they are
            *parents, leaf = path.split(".")
            a, b = full["properties"], menu["properties"]
            for name in parents:
                a, b = a[name]["items"]["properties"], b[name]["items"]["properties"]
            if "enum" in a[leaf]:
                assert b[leaf] == {"type": "string"}, path
            else:
                kept = {k: v for k, v in a[leaf].items() if k not in ("minimum", "maxItems", "items")}
                assert {k: v for k, v in b[leaf].items() if k != "items"} == kept, path
                if "items" in a[leaf]:
                    items = a[leaf]["items"]
                    shown = (
                        {"type": "string"} if "enum" in items else {k: v for k, v in items.items() if k != "required"}
                    )
                    assert b[leaf]["items"] == shown, path
            b[leaf] = a[leaf]  # put back: the rest must be identical
        assert menu == full, spec.name


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"dimensions": ["keyword"]}, "use one of: date, query, page, country, device, searchAppearance, hour"),
        ({"row_limit": 0}, "the minimum is 1"),
        ({"start_row": -1}, "the minimum is 0"),
        ({"filters": [{"dimension": "query", "expression": "x"}] * 21}, "give 0 to 20"),
        ({"filters": [{"operator": "contains"}]}, "missing required arguments: dimension, expression"),
    ],
)
async def test_a_check_the_menu_leaves_off_is_still_made(arguments: dict, named: str) -> None:
    """Over a real stdio server: what the menu does not say, the validator still refuses, in words."""
    async with connect("legacy", env={"GSC_ALLOW_TOOLS": "essential"}) as client:
        result = await client.call_tool("query_search_analytics", arguments)
    assert result.is_error
    text = result.content[0].text
    assert named in text, text


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"type": "pictures"}, "web, image, video, news, discover, googleNews"),
        ({"data_state": "fresh"}, "final, all, hourly_all"),
        ({"aggregation_type": "bySite"}, "auto, byPage, byProperty"),
        ({"filters": [{"dimension": "date", "expression": "x"}]}, "query, page, country, device, searchAppearance"),
        ({"filters": [{"dimension": "query", "operator": "startsWith", "expression": "x"}]}, "includingRegex"),
    ],
)
async def test_a_value_the_menu_does_not_list_is_still_refused_with_the_list(arguments: dict, named: str) -> None:
    """Over a real stdio server: checked exactly as before, and the refusal names the values to use."""
    async with connect("legacy", env={"GSC_ALLOW_TOOLS": "essential"}) as client:
        result = await client.call_tool("query_search_analytics", arguments)
    assert result.is_error
    text = result.content[0].text
    assert "use one of" in text and named in text, text
