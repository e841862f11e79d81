"""The five reports of issue 38 over the demo's data: each has something to say in a fresh home with
no account (a real stdio server), and each number checked against sums made here from the rows
DemoGoogle serves (a plain loop, exact fractions, never the server's helpers)."""

from __future__ import annotations

import statistics
from datetime import date, timedelta
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.text.cleaning import clean
from tests.server.reports.conftest import BIG, LAST_FINAL, demo, raw_rows, served, text_of
from tests.server.stdio import connect

pytestmark = pytest.mark.anyio
WEEK_END = date(2026, 11, 15)  # the Sunday before LAST_FINAL (Tuesday 2026-11-17)


async def call(tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    async with served(demo()) as client:
        result = await client.call_tool(tool, {"site": BIG, **args})
    text = text_of(result)
    assert not result.is_error, text
    assert len(text.encode()) <= 100_000
    return result.structured_content, text


def by_key(rows: list[dict[str, Any]], width: int = 1) -> dict[Any, list[Any]]:
    """clicks, impressions, position × impressions per key, exactly."""
    out: dict[Any, list[Any]] = {}
    for r in rows:
        words = tuple(clean(k) for k in r["keys"][:width])
        s = out.setdefault(words[0] if width == 1 else words, [0, 0, Fraction(0)])
        s[0] += r["clicks"]
        s[1] += r["impressions"]
        s[2] += Fraction(r["position"]) * r["impressions"]
    return out


async def test_the_demo_answers_all_five_with_something_to_say(tmp_path: Path) -> None:
    async with connect(env={"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")}) as client:
        results = {
            tool: await client.call_tool(tool, {"site": BIG})
            for tool in (
                "report_weekly_summary",
                "report_content_decay",
                "report_ctr_gaps",
                "report_new_queries",
                "report_brand_split",
            )
        }
    data = {tool: r.structured_content for tool, r in results.items()}
    assert not any(r.is_error for r in results.values())
    assert data["report_weekly_summary"]["sections"]["query_new"]["count"] > 0
    assert data["report_content_decay"]["rows"]  # a decaying page
    assert data["report_content_decay"]["sources"]["searchdesk_copy"]  # from the demo's copy, and said so
    assert "came from SearchDesk's copy" in text_of(results["report_content_decay"])
    assert [r["page"] for r in data["report_ctr_gaps"]["rows"]] == ["https://www.example.com/products/compost-bin"]
    assert data["report_new_queries"]["new"]["count"] > 0
    share = data["report_brand_split"]["totals"]["brand_share_clicks"]
    assert 0 < share < 1 and data["report_brand_split"]["terms"] == ["example"]
    assert data["report_brand_split"]["terms_from"] == "domain"


async def test_weekly_summary_agrees_with_an_independent_sum() -> None:
    data, _ = await call("report_weekly_summary", {})
    week = (WEEK_END - timedelta(days=6), WEEK_END)
    prev = (week[0] - timedelta(days=7), week[1] - timedelta(days=7))
    now, before = by_key(raw_rows(BIG, *week, ["query"])), by_key(raw_rows(BIG, *prev, ["query"]))
    change = {q: now.get(q, [0])[0] - before.get(q, [0])[0] for q in now.keys() | before.keys()}
    gained = [c for c in change.values() if c > 0]
    lost = [c for c in change.values() if c < 0]
    new = [q for q in now if q not in before]
    s = data["sections"]
    assert s["query_gained"] == {"count": len(gained), "clicks_change": sum(gained)}
    assert s["query_lost"] == {"count": len(lost), "clicks_change": sum(lost)}
    assert s["query_new"] == {
        "count": len(new),
        "clicks": sum(now[q][0] for q in new),
        "impressions": sum(now[q][1] for q in new),
    }
    (total,) = raw_rows(BIG, *week, [])
    assert data["totals"]["week"]["clicks"] == total["clicks"]
    top = sorted(gained, reverse=True)[:10]
    assert [r["clicks_change"] for r in data["rows"] if r["kind"] == "query" and r["section"] == "gained"] == top


async def test_ctr_gaps_agree_with_an_independent_curve() -> None:
    data, _ = await call("report_ctr_gaps", {"by": "query"})
    start = LAST_FINAL - timedelta(days=27)
    keys = by_key(raw_rows(BIG, start, LAST_FINAL, ["query"]))
    buckets: dict[tuple[int, int], list[Fraction]] = {}
    places = {}
    for q, (c, i, w) in keys.items():
        if i < 100:
            continue
        place = int(w / i + Fraction(1, 2))  # rounded to a whole place, halves up
        b = (place, place) if place <= 10 else (11, 15) if place <= 15 else (16, 20) if place <= 20 else None
        if b:
            buckets.setdefault(b, []).append(Fraction(c, i))
            places[q] = b
    medians = {b: statistics.median(r) for b, r in buckets.items() if len(r) >= 5}
    gaps = {
        q: keys[q][1] * medians[b] - keys[q][0]
        for q, b in places.items()
        if b in medians and keys[q][0] < keys[q][1] * medians[b] / 2
    }
    assert {r["query"] for r in data["rows"]} == set(gaps)
    for r in data["rows"]:
        assert abs(Fraction(r["extra_clicks"]) - gaps[r["query"]]) <= Fraction(1, 20) + Fraction(1, 10**9)
    assert data["extra_clicks"] == round(sum(r["extra_clicks"] for r in data["rows"]), 1)


async def test_brand_split_with_terms_a_pattern_treats_specially_agrees_with_a_literal_match() -> None:
    terms = ["Example Garden", "x|pruning", "[e]xample", "c++ (shears)"]
    data, text = await call("report_brand_split", {"terms": terms})
    literal = [t.lower() for t in terms]
    start, end = date.fromisoformat(data["period"]["start"]), date.fromisoformat(data["period"]["end"])
    rows = raw_rows(BIG, start, end, ["date", "query"])
    branded = sum(r["clicks"] for r in rows if any(t in r["keys"][1].lower() for t in literal))
    other = sum(r["clicks"] for r in rows if not any(t in r["keys"][1].lower() for t in literal))
    assert data["totals"]["branded_clicks"] == branded and data["totals"]["non_branded_clicks"] == other
    assert branded and other
    assert data["terms"] == literal and all(f'"{t}"' in text for t in literal)
    first = data["rows"][0]
    week = [r for r in rows if start.isoformat() <= r["keys"][0] <= first["end"]]
    assert first["branded_clicks"] == sum(r["clicks"] for r in week if any(t in r["keys"][1].lower() for t in literal))


async def test_brand_terms_kept_in_the_apps_settings_reach_the_report(tmp_path: Path) -> None:
    """The app's Settings → its Claude entry's env → a real stdio server: the report uses the person's list."""
    from searchdesk_desktop.settings import AppSettings

    damaged: Any = {"not a property": ["x"], "https://www.example.com/": 3}  # left out, never a stopped server
    kept = AppSettings(brand_terms={BIG: ["Example Garden", "garden (supply)"], **damaged})
    env = {k: v for k, v in kept.server_settings(demo=True).env().items() if k.startswith("GSC_")}
    async with connect(env={"HOME": str(tmp_path), **env}) as client:
        result = await client.call_tool("report_brand_split", {"site": BIG})
        other = await client.call_tool("report_brand_split", {"site": "https://shop.example.org/"})
    data = result.structured_content
    assert data["terms"] == ["example garden", "garden (supply)"] and data["terms_from"] == "settings"
    assert "as kept for this property in SearchDesk's Settings" in text_of(result)
    assert other.structured_content["terms"] == ["example"] and other.structured_content["terms_from"] == "domain"


@pytest.mark.parametrize("bad", ["\x7f", "garden\u200bshop", "\u202eniaga", "\x1b[31mred"])
async def test_a_brand_term_with_a_control_or_invisible_character_is_refused(bad: str) -> None:
    """No query a person typed holds one, and the answer echoes every term: refused, in words to act on."""
    async with served(demo()) as client:
        result = await client.call_tool("report_brand_split", {"site": BIG, "terms": ["example", bad]})
    assert result.is_error
    assert "control or invisible character" in text_of(result)


def test_a_kept_term_with_a_control_character_is_left_out() -> None:
    from searchdesk_server.brand import clean_terms

    assert clean_terms(["Example", "bad\x7f", "\u200b", "Garden  Shop"]) == ("example", "garden shop")
