"""report_brand_split: clicks and impressions from branded and non-branded queries, week by week.

How much of a site's search traffic is people who already know it is the first question of any SEO
review, and the number Search Console will not give without a regular expression. The brand terms
are named in every answer and come from, in order: the `terms` Claude passes, the list the person
keeps for the property in SearchDesk's Settings, or the domain name (`brand.domain_terms`). Each term
is escaped (`brand.escaped`) and the two filters (includingRegex / excludingRegex on the query) go
through the one door every request takes, so Google, SearchDesk's copy and the demo each evaluate
them as Google would. Queries Google keeps private (anonymised) match neither filter; they are the
difference between the property's own total and the two parts, and the answer says so.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Final

from ...brand import brand_pattern, clean_terms, domain_terms, printable
from ...result import Output, ToolFailure
from ...runtime import Call
from ...text.cleaning import clean
from .._listing import listing
from ..analytics.concurrency import Job, together
from ..analytics.metrics import Sums, as_count, empty_sums, tally
from ..analytics.paging import Pages, Reader
from . import render
from .calendar import buckets, last_full_week
from .periods import Period, current_period, timeline
from .provenance import Read, provenance

DEFAULT_WEEKS: Final = 13  # a quarter of whole Monday-Sunday weeks
WEEKLY_UP_TO: Final = 26 * 7  # periods up to 26 weeks are split by week, longer ones by month
#: Where the terms came from (the structured half's `terms_from`) and how the text says it.
ORIGINS: Final = {
    "argument": "given in this request",
    "settings": "as kept for this property in SearchDesk's Settings",
    "domain": "taken from the domain name (none are kept for this property in SearchDesk's Settings)",
}


def brand_terms(call: Call, site: str) -> tuple[tuple[str, ...], str]:
    """(terms, where they came from: a key of ORIGINS): the argument, else the person's Settings list for `site`,
    else the domain name."""
    if "terms" in call.args:
        given = [" ".join(t.split()) for t in call.args["terms"] if isinstance(t, str)]
        if any(word and not printable(word) for word in given):
            raise ToolFailure(
                "terms: a brand term holds a control or invisible character; give the words as people type "
                "them in Google."
            )
        terms = clean_terms(call.args["terms"])
        if not terms:
            raise ToolFailure("terms: give at least one brand term (a word or phrase people search for).")
        return terms, "argument"
    kept = clean_terms(call.config.brand_terms.get(site, ()))
    if kept:
        return kept, "settings"
    derived = domain_terms(site)
    if not derived:
        raise ToolFailure(
            f"{site} has no domain name to take brand terms from; pass terms (the words people use for the brand)."
        )
    return derived, "domain"


def default_period(args: Mapping[str, Any], last_final: dt.date, tl: Any) -> Period:
    """The dates asked for, else the last `DEFAULT_WEEKS` whole Monday-Sunday weeks."""
    if "start_date" in args or "end_date" in args:
        return current_period(args, tl)
    week = last_full_week(last_final)
    return Period(week.start - dt.timedelta(weeks=DEFAULT_WEEKS - 1), week.end)


def _filter(pattern: str, operator: str) -> list[dict[str, Any]]:
    return [{"groupType": "and", "filters": [{"dimension": "query", "operator": operator, "expression": pattern}]}]


def split_rows(spans: list[Period], by_day: Mapping[Any, Sums]) -> list[dict[str, Any]]:
    """One row per bucket: branded, non-branded and the property's own clicks and impressions; the rest
    (the property's total minus the two) is what Google keeps private. Brand share = branded / (branded +
    non-branded), of clicks and of impressions."""
    out = []
    for span in spans:
        s = empty_sums(12)
        day = span.start
        while day <= span.end:
            cell = by_day.get(day.isoformat())
            if cell:
                s = [a + b for a, b in zip(s, cell, strict=True)]
            day += dt.timedelta(days=1)
        out.append(split_row(span, s))
    return out


def split_row(span: Period | None, s: Sums) -> dict[str, Any]:
    """A bucket's (or the whole period's) row from 12 slots: branded 0-3, non-branded 4-7, property 8-11."""
    named = s[0] + s[4]
    named_i = s[1] + s[5]
    row: dict[str, Any] = {} if span is None else {"start": span.start.isoformat(), "end": span.end.isoformat()}
    row.update(
        {
            "branded_clicks": as_count(s[0]),
            "branded_impressions": as_count(s[1]),
            "non_branded_clicks": as_count(s[4]),
            "non_branded_impressions": as_count(s[5]),
            "private_clicks": as_count(max(0.0, s[8] - named)),
            "private_impressions": as_count(max(0.0, s[9] - named_i)),
            "property_clicks": as_count(s[8]),
            "property_impressions": as_count(s[9]),
            "brand_share_clicks": round(s[0] / named, 4) if named else None,
            "brand_share_impressions": round(s[1] / named_i, 4) if named_i else None,
        }
    )
    return row


def _cells(r: Mapping[str, Any]) -> list[str]:
    num = render.number
    return [
        r["start"] if r["start"] == r["end"] else f"{r['start']} to {r['end']}",
        f"{num(r['branded_clicks'], 'i')} / {num(r['branded_impressions'], 'i')}",
        f"{num(r['non_branded_clicks'], 'i')} / {num(r['non_branded_impressions'], 'i')}",
        f"{num(r['private_clicks'], 'i')} / {num(r['private_impressions'], 'i')}",
        f"{render.share(r['brand_share_clicks'])} / {render.share(r['brand_share_impressions'])}",
    ]


async def report_brand_split(call: Call) -> Output:
    """The report_brand_split tool: branded and non-branded traffic per week (or month), with its terms."""
    site = call.site()
    terms, origin = brand_terms(call, site)
    pattern = brand_pattern(terms)
    reader = Reader(call, site)
    tl = await timeline(reader)
    period = default_period(call.args, tl.last_final or tl.today - dt.timedelta(days=3), tl)
    weekly = period.days <= WEEKLY_UP_TO
    by_day: dict[Any, Sums] = {}
    found: dict[str, Pages] = {}

    def job(name: str, at: int, filters: list[dict[str, Any]] | None) -> Job:
        async def run() -> None:
            body = period.body(["date"])
            if filters:
                body["dimensionFilterGroups"] = filters
            found[name] = await reader.pages(body, tally(12, 1, at, by_day))

        return run

    await together(
        job("branded", 0, _filter(pattern, "includingRegex")),
        job("non_branded", 4, _filter(pattern, "excludingRegex")),
        job("property", 8, None),
    )
    rows = split_rows(buckets(period, weekly), by_day)
    whole = empty_sums(12)
    for s in by_day.values():
        whole = [a + b for a, b in zip(whole, s, strict=True)]
    total = split_row(None, whole)
    named_clicks = whole[0] + whole[4]
    reads = (
        Read("branded", "branded queries", found["branded"], whole[0], whole[8]),
        Read("non_branded", "the rest", found["non_branded"], whole[4], whole[8]),
    )
    lines, data = provenance(reader, tl, "date", reads)
    lines = [line for line in lines if not line.startswith("These rows hold")]
    shown_terms = ", ".join(f'"{" ".join(clean(t).split())}"' for t in terms)  # control characters out
    head = [
        f"Brand split for {site}: {period.words()}, by {'Monday-Sunday week' if weekly else 'calendar month'} "
        "(the first and last may be partial).",
        *lines,
        f"Brand terms, {ORIGINS[origin]}: {shown_terms}. A query is branded when it contains any of them, "
        "in any letter case, each term taken word for word (Google applies the filter itself).",
        f"In all: branded {total['branded_clicks']:,} clicks / {total['branded_impressions']:,} impressions; "
        f"non-branded {total['non_branded_clicks']:,} / {total['non_branded_impressions']:,}; brand share "
        f"{render.share(total['brand_share_clicks'])} of clicks and "
        f"{render.share(total['brand_share_impressions'])} of impressions. "
        f"Queries Google keeps private: {total['private_clicks']:,} clicks / {total['private_impressions']:,} "
        f"impressions (the property's total {total['property_clicks']:,} / {total['property_impressions']:,}, "
        "minus the two; no filter can sort them).",
    ]
    if not named_clicks and not whole[1] + whole[5]:
        head.append("No query data in this period.")
    return listing(
        entries=rows,
        headers=["Dates", "Branded clicks / impressions", "Non-branded", "Private queries", "Brand share"],
        row=_cells,
        intro="\n".join(head),
        key="rows",
        narrow=render.NARROW_DATES,
        noun="weeks" if weekly else "months",
        extra={
            "site": site,
            "period": period.data(),
            "bucket": "week" if weekly else "month",
            "terms": list(terms),
            "terms_from": origin,
            "expression": pattern,
            **data,
            "totals": total,
        },
        footer="Cells: clicks / impressions. Brand share = branded / (branded + non-branded).",
    )
