"""The four reports over the demo's data, every number checked against an independent computation.

The checks read Google's rows straight from DemoGoogle with their own loop and add them up with
their own code (exact fractions, a plain dictionary per key, Google's own no-dimension row for the
property total), never with the server's helpers.
"""

from __future__ import annotations

import json
import math
import re
from datetime import date, timedelta
from fractions import Fraction
from typing import Any

import pytest

from searchdesk_server.text.cleaning import clean
from tests.server.reports.conftest import BIG, BLOG, LAST_FINAL, SHOP, demo, raw_rows, served, table_rows, text_of

pytestmark = pytest.mark.anyio

NOW = ((LAST_FINAL - timedelta(days=27)).isoformat(), LAST_FINAL.isoformat())  # 2026-10-21 … 2026-11-17
BEFORE = ((LAST_FINAL - timedelta(days=55)).isoformat(), (LAST_FINAL - timedelta(days=28)).isoformat())
PLAIN = re.compile(r"[\w ./:-]{1,190}")  # table cells are cut at 200 characters


class Tally:
    """Per-key sums, kept exactly."""

    def __init__(self) -> None:
        self.clicks = 0
        self.impressions = 0
        self.weighted = Fraction(0)

    @property
    def ctr(self) -> Fraction | None:
        return Fraction(self.clicks, self.impressions) if self.impressions else None

    @property
    def position(self) -> Fraction | None:
        return self.weighted / self.impressions if self.impressions else None


def tally(rows: list[dict[str, Any]], width: int = 1) -> dict[Any, Tally]:
    out: dict[Any, Tally] = {}
    for r in rows:
        words = tuple(clean(k) for k in r["keys"][:width])
        key = words[0] if width == 1 else words
        t = out.setdefault(key, Tally())
        t.clicks += r["clicks"]
        t.impressions += r["impressions"]
        t.weighted += Fraction(r["position"]) * r["impressions"]
    return out


def near(value: float | None, exact: Fraction | None, tolerance: float) -> bool:
    if exact is None or value is None:
        return value is None and exact is None
    return abs(Fraction(value) - exact) <= Fraction(tolerance) + Fraction(1, 10**9)  # half a unit, plus float slack


def pct(now: Fraction | int, before: Fraction | int) -> Fraction | None:
    return None if before == 0 else (Fraction(now) - before) / before * 100


def sign(x: float) -> int:
    return (x > 0) - (x < 0)


async def call(tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    async with served(demo()) as client:
        result = await client.call_tool(tool, args)
    text = text_of(result)
    assert not result.is_error, text
    data = result.structured_content
    json.dumps(data, allow_nan=False)  # no NaN or Infinity anywhere
    assert data["untrusted"] is True and data["source"] == "google"
    assert len(text.encode()) <= 100_000
    return data, text


@pytest.mark.parametrize("by", ["page", "query", "country", "device"])
async def test_compare_periods_agrees_with_an_independent_sum(by: str) -> None:
    data, text = await call("compare_periods", {"site": BIG, "by": by})
    assert data["period"] == {"start": NOW[0], "end": NOW[1], "days": 28}
    assert data["previous"] == {"start": BEFORE[0], "end": BEFORE[1], "days": 28}
    assert data["first_incomplete_date"] == (LAST_FINAL + timedelta(days=1)).isoformat()
    now_rows, before_rows = raw_rows(BIG, *NOW, [by]), raw_rows(BIG, *BEFORE, [by])
    assert data["rows_read"] == {"period": len(now_rows), "previous": len(before_rows)}
    a, b = tally(now_rows), tally(before_rows)
    assert data["count"] == len(set(a) | set(b))
    assert data["keys"] == {
        "both": len(set(a) & set(b)),
        "new": len(set(a) - set(b)),
        "gone": len(set(b) - set(a)),
    }
    empty = Tally()
    for r in data["rows"]:
        x, y = a.get(r[by], empty), b.get(r[by], empty)
        assert (r["clicks"], r["clicks_prev"], r["clicks_change"]) == (x.clicks, y.clicks, x.clicks - y.clicks)
        assert (r["impressions"], r["impressions_prev"]) == (x.impressions, y.impressions)
        assert r["impressions_change"] == x.impressions - y.impressions
        assert near(r["clicks_change_pct"], pct(x.clicks, y.clicks), 0.05)
        assert near(r["impressions_change_pct"], pct(x.impressions, y.impressions), 0.05)
        assert near(r["ctr"], x.ctr, 0.00005) and near(r["ctr_prev"], y.ctr, 0.00005)
        assert near(r["position"], x.position, 0.005) and near(r["position_prev"], y.position, 0.005)
        if x.ctr is not None and y.ctr is not None:
            assert near(r["ctr_change"], x.ctr - y.ctr, 0.0001 + 1e-9)
            assert r["ctr_change"] == pytest.approx(r["ctr"] - r["ctr_prev"], abs=1e-9)  # agrees with the columns
            assert r["position_change"] == pytest.approx(r["position"] - r["position_prev"], abs=1e-9)
        # The sign of every change is the sign of now minus before: growth is never called a decline.
        assert sign(r["clicks_change"]) == sign(x.clicks - y.clicks)
        if r["clicks_change_pct"] is not None:
            assert sign(r["clicks_change_pct"]) == sign(x.clicks - y.clicks)
    changes = [abs(r["clicks_change"]) for r in data["rows"]]
    assert changes == sorted(changes, reverse=True)
    totals = data["totals"]
    assert totals["clicks"] == sum(t.clicks for t in a.values())
    assert totals["clicks_prev"] == sum(t.clicks for t in b.values())
    for key, (start, end) in (("", NOW), ("_prev", BEFORE)):
        (whole,) = raw_rows(BIG, start, end, [])
        assert data["property_totals"][f"clicks{key}"] == whole["clicks"]
        assert data["property_totals"][f"impressions{key}"] == whole["impressions"]
        assert data["property_totals"][f"ctr{key}"] == pytest.approx(whole["ctr"], abs=0.00005)
        assert data["property_totals"][f"position{key}"] == pytest.approx(whole["position"], abs=0.005)
    coverage = Fraction(totals["clicks"], data["property_totals"]["clicks"])
    assert data["clicks_coverage"]["period"] == pytest.approx(float(coverage), abs=0.00005)
    assert data["may_be_incomplete"] is (by == "query")  # Google leaves out anonymised queries
    cells = table_rows(text)
    assert len(cells) == data["shown"] == len(data["rows"])
    for cell, r in zip(cells, data["rows"], strict=True):
        if PLAIN.fullmatch(r[by]):
            assert cell[0] == r[by]
        assert cell[1] == r["status"]
        assert cell[2].startswith(f"{r['clicks_prev']:,} → {r['clicks']:,} ({r['clicks_change']:+,}, ")


async def test_growth_reads_as_growth_year_on_year() -> None:
    """Peers' users saw models call growth a decline; the server's totals say +, with both numbers."""
    data, text = await call("compare_periods", {"site": BIG, "by": "query", "vs": "year"})
    before = (date.fromisoformat(NOW[0]) - timedelta(days=364), date.fromisoformat(NOW[1]) - timedelta(days=364))
    assert data["previous"]["start"] == before[0].isoformat() and data["previous"]["end"] == before[1].isoformat()
    now_clicks = sum(r["clicks"] for r in raw_rows(BIG, *NOW, ["query"]))
    then_clicks = sum(r["clicks"] for r in raw_rows(BIG, *before, ["query"]))
    assert now_clicks > then_clicks  # the demo grew over the year
    t = data["totals"]
    assert (t["clicks"], t["clicks_prev"], t["clicks_change"]) == (now_clicks, then_clicks, now_clicks - then_clicks)
    assert t["clicks_change_pct"] > 0
    growth = f"clicks {then_clicks:,} → {now_clicks:,} (+{now_clicks - then_clicks:,}, +"
    assert growth in text


async def test_a_key_in_one_period_only() -> None:
    data, text = await call("compare_periods", {"site": BIG, "by": "query"})
    a, b = tally(raw_rows(BIG, *NOW, ["query"])), tally(raw_rows(BIG, *BEFORE, ["query"]))
    new, gone = set(a) - set(b), set(b) - set(a)
    assert new and gone
    by_key = {r["query"]: (i, r) for i, r in enumerate(data["rows"])}
    cells = table_rows(text)
    seen_new = seen_gone = False
    for key in new & set(by_key):
        i, r = by_key[key]
        assert r["status"] == "new" and r["clicks_prev"] == 0 and r["impressions_prev"] == 0
        assert r["ctr_prev"] is None and r["position_prev"] is None and r["ctr_change"] is None
        assert r["impressions_change_pct"] is None  # no base: undefined, not infinite
        assert cells[i][1] == "new" and cells[i][3].endswith(", new)")
        seen_new = True
    for key in gone & set(by_key):
        i, r = by_key[key]
        assert r["status"] == "gone" and r["clicks"] == 0 and r["impressions"] == 0
        assert r["impressions_change_pct"] == -100.0 and r["ctr"] is None and r["position"] is None
        assert cells[i][4].startswith(f"{r['ctr_prev'] * 100:.2f}% → – (–, –)")
        seen_gone = True
    assert seen_new and seen_gone


async def test_traffic_drops_agree_with_an_independent_diagnosis() -> None:
    data, text = await call("report_traffic_drops", {"site": BIG, "by": "page"})
    a, b = tally(raw_rows(BIG, *NOW, ["page"])), tally(raw_rows(BIG, *BEFORE, ["page"]))
    empty = Tally()
    losers = [k for k in set(a) | set(b) if a.get(k, empty).clicks < b.get(k, empty).clicks]
    losers.sort(key=lambda k: (a.get(k, empty).clicks - b[k].clicks, -b[k].clicks, k))
    assert [r["page"] for r in data["rows"]] == losers[: data["shown"]]
    assert data["count"] == len(losers)
    assert data["lost_clicks"] == sum(b[k].clicks - a.get(k, empty).clicks for k in losers)

    def cause(k: str) -> str:
        now, then = a.get(k, empty), b[k]
        if now.impressions == 0:
            return "gone"
        fewer = Fraction(now.impressions, then.impressions) <= Fraction(4, 5)
        worse = now.position is not None and then.position is not None and now.position - then.position >= 1
        if fewer:
            return "ranking" if worse else "visibility"
        if worse:
            return "position"
        assert now.ctr is not None and then.ctr is not None
        return "snippet" if now.ctr <= then.ctr * Fraction(4, 5) else "mixed"

    expected: dict[str, int] = {}
    for k in losers:
        expected[cause(k)] = expected.get(cause(k), 0) + 1
    assert data["causes"] == expected
    for r, cells in zip(data["rows"], table_rows(text), strict=True):
        assert r["cause"] == cause(r["page"])
        assert r["clicks_change"] < 0 and cells[1].startswith(f"{r['clicks_prev']:,} → {r['clicks']:,} (-")
        assert cells[5].startswith(r["cause"] + ": ")
    assert "first incomplete date is 2026-11-18" in text


CURVE = {4: 0.08, 5: 0.06, 6: 0.045, 7: 0.035, 8: 0.03, 9: 0.025, 10: 0.02}
CURVE.update({p: 0.012 for p in range(11, 16)})
CURVE.update({p: 0.008 for p in range(16, 21)})


@pytest.mark.parametrize(("site", "by"), [(BIG, "query"), (BIG, "page"), (BLOG, "query")])
async def test_quick_wins_agree_with_an_independent_ranking(site: str, by: str) -> None:
    data, text = await call("report_quick_wins", {"site": site, "by": by})
    buckets = {
        p: b["ctr"] for b in data["ctr_curve"]["buckets"] for p in range(b["positions"][0], b["positions"][1] + 1)
    }
    assert {p: buckets[p] for p in CURVE} == CURVE  # the curve the text states is the one applied
    assert "CTR curve used" in text and "4: 8.0%" in text and "16-20: 0.8%" in text
    assert "industry averages" in data["ctr_curve"]["source"]
    rows = tally(raw_rows(site, *NOW, [by]))
    wins: dict[str, Fraction] = {}
    for key, t in rows.items():
        if t.impressions < 100 or t.position is None:
            continue
        place = math.floor(t.position + Fraction(1, 2))
        if place in CURVE:
            gap = t.impressions * Fraction(str(CURVE[place])) - t.clicks  # the curve's decimal value
            if gap > 0:
                wins[key] = gap
    order = sorted(wins, key=lambda k: (-wins[k], -rows[k].impressions, k))
    assert data["count"] == len(order)
    assert [r[by] for r in data["rows"]] == order[: data["shown"]]
    for r in data["rows"]:
        t = rows[r[by]]
        assert near(r["extra_clicks"], wins[r[by]], 0.05)
        assert near(r["ctr"], t.ctr, 0.00005) and near(r["position"], t.position, 0.005)
        assert t.position is not None and 4 <= math.floor(t.position + Fraction(1, 2)) <= 20
        assert r["ctr"] <= r["expected_ctr"] == CURVE[math.floor(t.position + Fraction(1, 2))]
    assert near(data["extra_clicks"], sum(wins.values(), Fraction(0)), 0.05)
    assert len(table_rows(text)) == data["shown"]


@pytest.mark.parametrize("site", [BIG, SHOP])
async def test_cannibalisation_agrees_with_an_independent_split(site: str) -> None:
    data, text = await call("report_cannibalisation", {"site": site})
    pairs = tally(raw_rows(site, *NOW, ["query", "page"]), width=2)
    per_query: dict[str, dict[str, Tally]] = {}
    for (query, page), t in pairs.items():
        per_query.setdefault(query, {})[page] = t
    expected = []
    for query, pages in per_query.items():
        total = sum(t.impressions for t in pages.values())
        big = {p: t for p, t in pages.items() if total >= 100 and Fraction(t.impressions, total) >= Fraction(1, 10)}
        if len(big) >= 2:
            for page in sorted(big, key=lambda p: (-big[p].impressions, p)):
                expected.append((total, query, page, Fraction(big[page].impressions, total)))
    expected.sort(key=lambda e: (-e[0], e[1]))  # stable: pages keep their order within a query
    assert data["count"] == len(expected) and data["queries"] == len({e[1] for e in expected})
    assert expected, "the demo has split queries"
    for r, (total, query, page, share) in zip(data["rows"], expected, strict=False):
        assert (r["query"], r["page"], r["query_impressions"]) == (query, page, total)
        assert near(r["share"], share, 0.00005)
        assert r["impressions"] == pairs[(query, page)].impressions and r["clicks"] == pairs[(query, page)].clicks
    cells = table_rows(text)
    assert len(cells) == data["shown"]
    assert all(c[4].endswith("%") for c in cells)


async def test_reports_refuse_days_that_are_not_final() -> None:
    async with served(demo()) as client:
        late = await client.call_tool(
            "report_quick_wins", {"site": BIG, "start_date": "2026-11-01", "end_date": "2026-11-18"}
        )
        overlap = await client.call_tool("compare_periods", {"site": BIG, "vs": NOW[0]})
        odd = await client.call_tool("report_traffic_drops", {"site": BIG, "vs": "last week"})
    assert late.is_error and "2026-11-17, the last day with final data" in text_of(late)
    assert overlap.is_error and "must end before 2026-10-21" in text_of(overlap)
    assert odd.is_error and "previous, year" in text_of(odd) and "last week" not in text_of(odd)


async def test_explicit_dates_and_a_chosen_earlier_period() -> None:
    args = {"site": BIG, "by": "device", "start_date": "2026-11-01", "end_date": "2026-11-14", "vs": "2026-10-04"}
    data, _ = await call("compare_periods", args)
    assert data["period"] == {"start": "2026-11-01", "end": "2026-11-14", "days": 14}
    assert data["previous"] == {"start": "2026-10-04", "end": "2026-10-17", "days": 14}
    a = tally(raw_rows(BIG, "2026-11-01", "2026-11-14", ["device"]))
    b = tally(raw_rows(BIG, "2026-10-04", "2026-10-17", ["device"]))
    for r in data["rows"]:
        assert (r["clicks"], r["clicks_prev"]) == (a[r["device"]].clicks, b[r["device"]].clicks)
