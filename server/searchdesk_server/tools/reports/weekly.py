"""report_weekly_summary: the last full week against the week before and the same week a year earlier.

"What changed this week?" is the question a site owner asks most; answering it from rows means
three periods, two breakdowns and many sums. The week is the last whole Monday-Sunday week in
Google's day (Pacific time) whose every day is final, so no day is half-counted; "a year earlier"
is 52 weeks back so weekdays line up, and comes from SearchDesk's copy where Google no longer has it
(every request goes through the one door, `analytics.query.search_analytics`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ...google import shapes as sh
from ...result import Output
from ...runtime import Call, plural
from .._listing import listing
from ..analytics.concurrency import Job, together
from ..analytics.metrics import Sums, as_count, column, ctr, position, rounded, summed, tally
from ..analytics.paging import Pages, Reader
from ..analytics.rows import entries
from . import render
from .calendar import last_full_week
from .comparison import compared_row, move
from .index_moves import IndexMoves, index_moves
from .periods import YEAR_DAYS, Period, timeline
from .provenance import Read, provenance

TOP: Final = 10  # rows shown per section; the counts and totals cover every key
SECTIONS: Final = ("page gained", "page lost", "query gained", "query lost", "query new")


def sections(pages: Mapping[Any, Sums], queries: Mapping[Any, Sums]) -> dict[str, list[Any]]:
    """Every key of each section, in the order shown: gains and losses by clicks this week against the
    week before (largest change first), new queries (impressions this week, none the week before) by
    impressions; ties by impressions, then the key."""

    def moved(sums: Mapping[Any, Sums], sign: int) -> list[Any]:
        keys = [k for k, s in sums.items() if (s[0] - s[4]) * sign > 0]
        return sorted(keys, key=lambda k: (-abs(sums[k][0] - sums[k][4]), -sums[k][1], k))

    new = [k for k, s in queries.items() if s[1] > 0 and not s[4] and not s[5]]
    new.sort(key=lambda k: (-queries[k][1], -queries[k][0], k))
    return {
        "page gained": moved(pages, 1),
        "page lost": moved(pages, -1),
        "query gained": moved(queries, 1),
        "query lost": moved(queries, -1),
        "query new": new,
    }


def section_totals(section: str, keys: list[Any], sums: Mapping[Any, Sums]) -> dict[str, Any]:
    """What a section adds up to over every key in it (shown or not): the count, and the change in
    clicks (new queries: their clicks and impressions this week)."""
    if section == "query new":
        return {
            "count": len(keys),
            "clicks": as_count(sum(sums[k][0] for k in keys)),
            "impressions": as_count(sum(sums[k][1] for k in keys)),
        }
    return {"count": len(keys), "clicks_change": as_count(sum(sums[k][0] - sums[k][4] for k in keys))}


def _row(section: str, key: Any, s: Sums) -> dict[str, Any]:
    full = compared_row("key", key, s)
    kind, what = section.split(" ", 1)
    return {
        "section": what,
        "kind": kind,
        "key": key,
        **{f: full[f] for f in ("clicks", "clicks_prev", "clicks_change", "impressions", "impressions_prev")},
        "position": full["position"],
        "position_prev": full["position_prev"],
    }


def _cells(r: Mapping[str, Any]) -> list[str]:
    num = render.number
    return [
        f"{r['kind']} {r['section']}",
        sh.cell(r["key"]),
        f"{num(r['clicks_prev'], 'i')} → {num(r['clicks'], 'i')} ({render.signed(r['clicks_change'], 'i')})",
        f"{num(r['impressions_prev'], 'i')} → {num(r['impressions'], 'i')}",
        f"{num(r['position_prev'], 'position')} → {num(r['position'], 'position')}",
    ]


def _pair(now: Sums, before: Sums) -> dict[str, Any]:
    row = compared_row("key", "", now + before)
    del row["key"], row["status"]
    return row


def _totals_words(label: str, t: Mapping[str, Any]) -> str:
    return f"{label}: " + "; ".join(f"{m} {move(t, m)}" for m in ("clicks", "impressions", "ctr", "position"))


def _index_lines(moves: IndexMoves | None) -> tuple[list[str], dict[str, Any] | None]:
    """The index section: what the coverage watch saw, or why there is nothing to say."""
    if moves is None:
        return [
            "Pages that left or entered Google's index: SearchDesk's coverage watch does not run for this "
            "property, so this summary cannot say."
        ], None
    lines = [
        f"{plural(len(moves.left), 'page')} left Google's index this week"
        + (": " + ", ".join(sh.cell(u) for u in moves.left[:TOP]) if moves.left else "")
        + (f" (and {len(moves.left) - TOP:,} more)" if len(moves.left) > TOP else "")
        + ".",
        f"{plural(len(moves.entered), 'page')} entered it"
        + (": " + ", ".join(sh.cell(u) for u in moves.entered[:TOP]) if moves.entered else "")
        + (f" (and {len(moves.entered) - TOP:,} more)" if len(moves.entered) > TOP else "")
        + ".",
    ]
    return lines, {
        "left": list(moves.left[:TOP]),
        "entered": list(moves.entered[:TOP]),
        "left_count": len(moves.left),
        "entered_count": len(moves.entered),
    }


@dataclass
class _Weeks:
    """The three weeks read: pages and queries summed per key (this week at slot 0, the week before at
    4), the property's own totals per week, and what each paged read found."""

    pages: dict[Any, Sums] = field(default_factory=dict)
    queries: dict[Any, Sums] = field(default_factory=dict)
    totals: dict[str, Sums] = field(default_factory=dict)
    found: dict[str, Pages] = field(default_factory=dict)


async def _read_weeks(reader: Reader, week: Period, previous: Period, year: Period) -> _Weeks:
    """The week's and the week before's pages and queries, and the three weeks' totals, together."""
    got = _Weeks()

    def total(name: str, period: Period) -> Job:
        async def run() -> None:
            raw = await reader.request({**period.body([]), "rowLimit": 1, "startRow": 0})
            got.totals[name] = summed(entries(raw.get("rows"), 0))

        return run

    def rows(name: str, period: Period, dim: str, into: dict[Any, Sums], at: int) -> Job:
        async def run() -> None:
            got.found[name] = await reader.pages(period.body([dim]), tally(8, 1, at, into))

        return run

    await together(
        total("week", week),
        total("previous", previous),
        total("year", year),
        rows("week_queries", week, "query", got.queries, 0),
        rows("previous_queries", previous, "query", got.queries, 4),
        rows("week_pages", week, "page", got.pages, 0),
        rows("previous_pages", previous, "page", got.pages, 4),
    )
    return got


async def report_weekly_summary(call: Call) -> Output:
    """The report_weekly_summary tool: totals of three weeks, the movers, new queries, the index."""
    site = call.site()
    reader = Reader(call, site)
    tl = await timeline(reader)
    week = last_full_week(tl.last_final or tl.today - dt.timedelta(days=3))
    previous, year = week.shifted(7), week.shifted(YEAR_DAYS)
    got = await _read_weeks(reader, week, previous, year)
    pages, queries, totals, found = got.pages, got.queries, got.totals, got.found
    moves = await index_moves(call, site, week)
    reads = (
        Read("week_queries", "this week's queries", found["week_queries"], column(queries, 0), totals["week"][0]),
        Read(
            "previous_queries",
            "the week before's",
            found["previous_queries"],
            column(queries, 4),
            totals["previous"][0],
        ),
    )
    lines, data = provenance(reader, tl, "query", reads)
    data["rows_read"].update({k: found[k].rows for k in ("week_pages", "previous_pages")})
    keys = sections(pages, queries)
    sums_of = {s: (pages if s.startswith("page") else queries) for s in SECTIONS}
    summary = {s.replace(" ", "_"): section_totals(s, keys[s], sums_of[s]) for s in SECTIONS}
    vs_prev = _pair(totals["week"], totals["previous"])
    vs_year = _pair(totals["week"], totals["year"])
    index_lines, index_data = _index_lines(moves)
    s = summary
    head = [
        f"Weekly summary for {site}: the week {week.words()}, Monday to Sunday in Google's day (Pacific time), "
        "the last whole week with final data.",
        *lines,
        "The property's own totals (each cell: the earlier week → this week):",
        _totals_words(f"against the week before ({previous.words()})", vs_prev) + ".",
        _totals_words(f"against the same week a year earlier ({year.words()})", vs_year) + ".",
        f"Against the week before: {plural(s['page_gained']['count'], 'page')} gained "
        f"{render.signed(s['page_gained']['clicks_change'], 'i')} clicks and "
        f"{plural(s['page_lost']['count'], 'page')} lost {render.signed(s['page_lost']['clicks_change'], 'i')}; "
        f"{plural(s['query_gained']['count'], 'query', 'queries')} gained "
        f"{render.signed(s['query_gained']['clicks_change'], 'i')} and "
        f"{plural(s['query_lost']['count'], 'query', 'queries')} lost "
        f"{render.signed(s['query_lost']['clicks_change'], 'i')}; "
        f"{plural(s['query_new']['count'], 'query', 'queries')} new this week (impressions this week, none the "
        f"week before), with {s['query_new']['impressions']:,} impressions and {s['query_new']['clicks']:,} clicks.",
        *index_lines,
        f"Below: the {TOP} largest of each (by clicks gained or lost; new queries by impressions).",
    ]
    shown = [_row(sec, k, sums_of[sec][k]) for sec in SECTIONS for k in keys[sec][:TOP]]
    return listing(
        entries=shown,
        headers=["What", "Page or query", "Clicks", "Impressions", "Position"],
        row=_cells,
        intro="\n".join(head),
        key="rows",
        narrow="Ask compare_periods for every page or query of the week.",
        noun="rows",
        extra={
            "site": site,
            "week": week.data(),
            "previous": previous.data(),
            "year_earlier": year.data(),
            "week_rule": "last whole Monday-Sunday week in Pacific time whose every day is final",
            **data,
            "totals": {
                "week": _week_totals(totals["week"]),
                "previous": _week_totals(totals["previous"]),
                "year_earlier": _week_totals(totals["year"]),
            },
            "vs_previous": vs_prev,
            "vs_year_earlier": vs_year,
            "sections": summary,
            "top": TOP,
            "index": index_data,
        },
        footer="Cells: the week before → this week. A lower position is better.",
    )


def _week_totals(s: Sums) -> dict[str, Any]:
    """One week's property totals as the structured half states them."""
    return {
        "clicks": as_count(s[0]),
        "impressions": as_count(s[1]),
        "ctr": rounded(ctr(s[0], s[1]), 4),
        "position": rounded(position(s[2], s[3]), 2),
    }
