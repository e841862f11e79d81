"""The five reports of issue 38 on hand-computed fixtures from a scripted Google (the real server
in-process): every number below was worked out by hand from the rows written here, and each test
names the rule it checks. A property with no data and a budget-sized answer too."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.server.reports.conftest import BIG, ScriptedGoogle, Table, period, row, served, text_of

pytestmark = pytest.mark.anyio

WEEK, PREV, YEAR = "2026-11-09", "2026-11-02", "2025-11-10"  # LAST_FINAL is Tuesday 2026-11-17


def total(clicks: int, impressions: int, pos: float) -> Table:
    """Google's one row for a request without dimensions."""
    return Table.of([{"clicks": clicks, "impressions": impressions, "ctr": clicks / impressions, "position": pos}])


async def call(google: ScriptedGoogle, tool: str, args: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
    async with served(google.transport()) as client:
        result = await client.call_tool(tool, {"site": BIG, **(args or {})})
    text = text_of(result)
    assert not result.is_error, text
    data = result.structured_content
    json.dumps(data, allow_nan=False)
    assert data["untrusted"] is True and data["source"] == "google"
    assert len(text.encode()) <= 100_000
    return data, text


async def test_weekly_summary_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    from searchdesk_server.tools.reports import weekly

    async def no_watch(*_: Any) -> None:  # the in-process server is the demo's, whose watch would answer
        return None

    monkeypatch.setattr(weekly, "index_moves", no_watch)
    g = ScriptedGoogle()
    g.tables[(WEEK, ())] = total(20, 300, 3.0)
    g.tables[(PREV, ())] = total(18, 250, 3.2)
    g.tables[(YEAR, ())] = total(10, 200, 4.0)
    g.tables[(WEEK, ("query",))] = Table.of(
        [row("a", 10, 100, 2), row("b", 5, 50, 3), row("fresh", 2, 40, 5), row("seen", 1, 20, 6)]
    )
    # "seen" had impressions but no clicks the week before: not new
    g.tables[(PREV, ("query",))] = Table.of(
        [row("a", 4, 80, 2.5), row("b", 9, 60, 3), row("c", 3, 30, 4), row("seen", 0, 15, 6)]
    )
    g.tables[(WEEK, ("page",))] = Table.of([row("/x", 12, 150, 2), row("/y", 8, 150, 4)])
    g.tables[(PREV, ("page",))] = Table.of([row("/x", 15, 150, 2), row("/y", 3, 100, 4)])
    data, text = await call(g, "report_weekly_summary")
    assert data["week"] == {"start": WEEK, "end": "2026-11-15", "days": 7}  # Monday to Sunday, all final
    assert data["previous"]["start"] == PREV and data["year_earlier"]["start"] == YEAR  # 52 weeks back
    s = data["sections"]
    assert s["query_gained"] == {"count": 3, "clicks_change": 9}  # a +6, fresh +2, seen +1
    assert s["query_lost"] == {"count": 2, "clicks_change": -7}  # b −4, c −3
    assert s["query_new"] == {"count": 1, "clicks": 2, "impressions": 40}
    assert s["page_gained"] == {"count": 1, "clicks_change": 5} and s["page_lost"] == {"count": 1, "clicks_change": -3}
    assert data["vs_previous"]["clicks_change"] == 2 and data["vs_year_earlier"]["clicks_change"] == 10
    assert data["vs_previous"]["ctr"] == 0.0667 and data["vs_previous"]["ctr_prev"] == 0.072  # 20/300, 18/250
    assert data["totals"]["year_earlier"] == {"clicks": 10, "impressions": 200, "ctr": 0.05, "position": 4.0}
    kinds = [(r["kind"], r["section"], r["key"], r["clicks_change"]) for r in data["rows"]]
    assert kinds == [
        ("page", "gained", "/y", 5),
        ("page", "lost", "/x", -3),
        ("query", "gained", "a", 6),
        ("query", "gained", "fresh", 2),
        ("query", "gained", "seen", 1),
        ("query", "lost", "b", -4),
        ("query", "lost", "c", -3),
        ("query", "new", "fresh", 2),
    ]
    assert data["index"] is None and "coverage watch does not run" in text


async def test_weekly_summary_states_what_the_coverage_watch_saw(monkeypatch: pytest.MonkeyPatch) -> None:
    from searchdesk_server.tools.reports import index_moves, weekly

    async def seen(call: Any, site: str, week: Any) -> index_moves.IndexMoves:
        return index_moves.IndexMoves(left=("https://example.com/gone",), entered=())

    monkeypatch.setattr(weekly, "index_moves", seen)
    data, text = await call(ScriptedGoogle(), "report_weekly_summary")
    assert data["index"]["left"] == ["https://example.com/gone"] and data["index"]["left_count"] == 1
    assert "1 page left Google's index this week: https://example.com/gone." in text


async def test_ctr_gaps_against_the_propertys_own_median_by_hand() -> None:
    g = ScriptedGoogle()
    now = period()[0]
    # Six pages at position 4 with 1,000 impressions: CTRs 1, 5, 6, 7, 8, 9% → median (6 + 7) / 2 = 6.5%.
    pages = [row(f"/p{c}", c * 10, 1000, 4.2) for c in (1, 5, 6, 7, 8, 9)]
    pages.append(row("/few", 0, 99, 4.0))  # under 100 impressions: neither judged nor counted in the median
    pages.append(row("/far", 0, 5000, 30.0))  # past position 20: outside the curve
    g.tables[(now, ("page",))] = Table.of(pages)
    g.tables[(now, ())] = total(350, 12_099, 6.0)
    data, text = await call(g, "report_ctr_gaps")
    bucket4 = next(b for b in data["curve"] if b["positions"] == [4, 4])
    assert bucket4 == {"positions": [4, 4], "keys": 6, "median_ctr": 0.065}
    assert [r["page"] for r in data["rows"]] == ["/p1"]  # 10 clicks < 1,000 × 6.5% × 50% = 32.5; 50 is not
    r = data["rows"][0]
    assert r["clicks_at_median"] == 65.0 and r["extra_clicks"] == 55.0 and r["bucket"] == "4"
    assert data["extra_clicks"] == 55.0 and data["gap_ratio"] == 0.5
    assert "median CTR" in text and "4: 6.50% (6 keys)" in text


async def test_new_and_rising_queries_by_hand() -> None:
    g = ScriptedGoogle()
    now, before = period()[0], period(back=28)[0]
    g.tables[(now, ("query",))] = Table.of(
        [
            row("fresh", 3, 30, 5),  # none before: new
            row("almost", 1, 12, 6),  # 2 before (at the threshold): new
            row("noise", 0, 5, 9),  # none before but only 5 now: neither
            row("edge", 0, 10, 7),  # none before and 10 now (at the threshold): new
            row("rise", 8, 100, 4),  # 40 → 100 (2.5×): rising
            row("steep", 9, 60, 4),  # 20 → 60 (3×): rising, faster than rise
            row("flat", 9, 150, 4),  # 100 → 150 (1.5×): neither
            row("small", 1, 40, 4),  # 10 → 40 (4×) but under 50 now: neither
        ]
    )
    g.tables[(before, ("query",))] = Table.of(
        [row("almost", 0, 2, 8), row("rise", 2, 40, 5), row("steep", 1, 20, 6), row("flat", 8, 100, 4),
         row("small", 0, 10, 8)]
    )  # fmt: skip
    g.tables[(now, ("query", "page"))] = Table.of(
        [row(["fresh", "/a"], 2, 20, 5), row(["fresh", "/b"], 1, 10, 5), row(["rise", "/r"], 8, 100, 4)]
    )
    data, _ = await call(g, "report_new_queries")
    assert [(r["kind"], r["query"]) for r in data["rows"]] == [
        ("new", "fresh"),
        ("new", "almost"),
        ("new", "edge"),
        ("rising", "steep"),
        ("rising", "rise"),
    ]
    fresh = data["rows"][0]
    assert fresh["page"] == "/a" and fresh["page_share"] == 0.6667 and fresh["impressions_change_pct"] is None
    assert data["rows"][3]["impressions_change_pct"] == 200.0
    assert data["new"] == {"count": 3, "impressions": 52, "clicks": 4}
    assert data["rising"] == {"count": 2, "impressions_gained": 100}  # (60 − 20) + (100 − 40)
    assert data["thresholds"] == {"almost_none": 2, "min_new": 10, "rise": 2.0, "min_rising": 50}


async def test_content_decay_by_hand() -> None:
    g = ScriptedGoogle()
    months = ["2026-05-01", "2026-06-01", "2026-07-01", "2026-08-01", "2026-09-01", "2026-10-01"]
    series = {
        "/decay": (100, 80, 70, 60, 50, 40),  # peak 100, five months ≤ 80, latest 40 (−60%): listed
        "/steady": (50, 50, 50, 50, 50, 50),  # the peak is the latest of equal bests: not decaying
        "/small": (19, 5, 5, 5, 5, 5),  # a peak under 20 clicks: noise
        "/bounce": (100, 70, 70, 100, 60, 50),  # back at its best three months ago: two months below only
        "/shallow": (30, 30, 30, 24, 24, 24),  # three months at 80% but the latest only 20% below
    }
    for i, start in enumerate(months):
        g.tables[(start, ("page",))] = Table.of([row(p, c[i], 1000, 5) for p, c in series.items()])
        g.tables[(start, ())] = total(sum(c[i] for c in series.values()), 5000, 5)
    data, text = await call(g, "report_content_decay", {"months": 6})
    assert data["months"] == [m[:7] for m in months]  # November is still running: left out
    assert [r["page"] for r in data["rows"]] == ["/decay"]
    r = data["rows"][0]
    assert (r["peak_month"], r["peak_clicks"], r["latest_clicks"], r["fall"], r["fall_pct"]) == (
        "2026-05",
        100,
        40,
        60,
        -60.0,
    )
    assert r["months_below_peak"] == 5 and r["clicks_by_month"] == list(series["/decay"])
    assert (data["peak_clicks"], data["latest_clicks"], data["fall"]) == (100, 40, 60)
    assert data["clicks_by_month"] == [sum(c[i] for c in series.values()) for i in range(6)]
    assert "at least 20 clicks" in text and "at most 80%" in text and "at least 30% below" in text


async def test_a_property_with_no_data() -> None:
    """Every report answers, with nothing listed and nothing divided by zero."""
    for tool in ("report_weekly_summary", "report_content_decay", "report_ctr_gaps", "report_new_queries",
                 "report_brand_split"):  # fmt: skip
        # Six months: the in-process server is the demo's, whose copy would answer the older months.
        data, text = await call(ScriptedGoogle(), tool, {"months": 6} if tool == "report_content_decay" else {})
        assert data["rows"] == [] or all(
            r.get("branded_clicks", 0) == 0 and r.get("brand_share_clicks") is None for r in data["rows"]
        ), tool
        assert "(none)" in text or "No query data in this period." in text, tool


async def test_a_long_answer_stays_in_the_budget_and_says_how_to_narrow() -> None:
    g = ScriptedGoogle()
    now = period()[0]
    count = 30_000
    g.tables[(now, ("query",))] = Table(count, lambda i: row(f"new query number {i:05d}", 1, 20 + i % 7, 8))
    data, text = await call(g, "report_new_queries")
    assert data["new"]["count"] == count and data["count"] == count
    assert 0 < data["shown"] < count and len(text.encode()) <= 100_000
    assert "Narrow the dates" in text
    assert data["new"]["impressions"] == sum(20 + i % 7 for i in range(count))  # the total covers every row


async def test_content_decay_answers_with_the_months_read_before_claude_stops_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import anyio

    from searchdesk_server.tools.reports import decay

    monkeypatch.setattr(decay, "TIME_BUDGET_S", 1)
    g = ScriptedGoogle()
    months = ["2026-05-01", "2026-06-01", "2026-07-01", "2026-08-01", "2026-09-01", "2026-10-01"]
    for start in months:
        g.tables[(start, ("page",))] = Table.of([row("/p", 10, 100, 5)])
        g.tables[(start, ())] = total(10, 100, 5)
    answer = g.handle

    async def slow_for_old_months(request: Any) -> Any:
        body = json.loads(request.content)
        if body.get("dimensions") != ["date"] and body["startDate"] < "2026-08-01":  # not the timeline
            await anyio.sleep(30)
        return await answer(request)

    g.handle = slow_for_old_months  # type: ignore[method-assign]
    started = anyio.current_time()
    data, text = await call(g, "report_content_decay", {"months": 6})
    assert anyio.current_time() - started < 10
    assert data["months"] == ["2026-08", "2026-09", "2026-10"] and data["months_asked"] == 6
    assert data["clicks_by_month"] == [10, 10, 10]
    assert "Stopped reading after 1 seconds" in text and "Ask for fewer months" in text
