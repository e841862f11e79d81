"""Search performance (Search Analytics): dates in Google's day, a table a person can read,
totals computed here (CTR = clicks / impressions, position weighted by impressions).
With all_rows the rows go to a CSV file instead (tools/export.py).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..catalogue import DEFAULT_ROWS
from ..google.http import Api, Limit
from ..result import Output, ToolFailure
from ..runtime import Call, plural
from . import _shape as sh
from ._listing import listing

QUERY = "webmasters/v3/sites/{siteUrl}/searchAnalytics/query"
GOOGLE_TZ = "America/Los_Angeles"
POSITIVE_OPERATORS = ("equals", "contains", "includingRegex")
MONTHS = {"last3months": 3, "last6months": 6, "last12months": 12, "last16months": 16}
DAYS = {"last7days": 7, "last28days": 28}


def google_today() -> dt.date:
    """Today in Google's day (Pacific time), which is what Search Console's dates mean.

    SEARCHDESK_DEMO_TODAY (checked at start by config) pins it, so the demo's data and the
    periods asked of it stay aligned on any date the tests run.
    """
    from zoneinfo import ZoneInfo

    pinned = os.environ.get("SEARCHDESK_DEMO_TODAY", "").strip()
    if pinned:
        return dt.date.fromisoformat(pinned)
    return dt.datetime.now(ZoneInfo(GOOGLE_TZ)).date()


def _months_back(day: dt.date, months: int) -> dt.date:
    year, month = divmod(day.year * 12 + day.month - 1 - months, 12)
    month += 1
    for d in (day.day, 30, 29, 28):
        try:
            return dt.date(year, month, d)
        except ValueError:
            continue
    raise AssertionError("unreachable")


def resolve_period(period: str, today: dt.date) -> tuple[dt.date, dt.date]:
    """Both ends inclusive. `lastN…` are the whole days before today (today is always partial)."""
    yesterday = today - dt.timedelta(days=1)
    if period == "today":
        return today, today
    if period == "yesterday":
        return yesterday, yesterday
    if period in DAYS:
        return today - dt.timedelta(days=DAYS[period]), yesterday
    if period in MONTHS:
        return _months_back(today, MONTHS[period]), yesterday
    raise ToolFailure(f"Unknown period; use one of {', '.join(('today', 'yesterday', *DAYS, *MONTHS))}.")


def _date(key: str, value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise ToolFailure(f"{key} must be a real date written YYYY-MM-DD.") from None


def date_range(args: Mapping[str, Any], today: dt.date) -> tuple[dt.date, dt.date]:
    has_dates = "start_date" in args or "end_date" in args
    if has_dates and "period" in args:
        raise ToolFailure("Give either period or start_date and end_date, not both.")
    if has_dates:
        if "start_date" not in args or "end_date" not in args:
            raise ToolFailure("Give both start_date and end_date (YYYY-MM-DD), or a period instead.")
        start, end = _date("start_date", args["start_date"]), _date("end_date", args["end_date"])
        if start > end:
            raise ToolFailure("start_date is after end_date; swap them.")
        if end > today:
            raise ToolFailure(f"end_date is in the future (today is {today.isoformat()} in Google's time zone).")
        if start < _months_back(today, 16) - dt.timedelta(days=31):
            raise ToolFailure("Search Console keeps about 16 months of data; choose a later start_date.")
        return start, end
    return resolve_period(args.get("period", "last28days"), today)


def filter_groups(args: Mapping[str, Any]) -> list[dict[str, Any]]:
    filters = args.get("filters") or []
    if not filters:
        return []
    parsed = []
    for i, f in enumerate(filters):
        if not f.get("expression", "").strip():
            raise ToolFailure(f"filters[{i}].expression is empty.")
        parsed.append(
            {
                "dimension": f["dimension"],
                "operator": f.get("operator", "equals"),
                "expression": f["expression"],
            }
        )
    if args.get("filter_match", "all") == "all":
        return [{"groupType": "and", "filters": parsed}]
    # Google only supports "and" inside a group; "any" is written as one regex when it can be.
    dims = {f["dimension"] for f in parsed}
    if len(dims) != 1 or any(f["operator"] not in POSITIVE_OPERATORS for f in parsed):
        raise ToolFailure(
            "filter_match any works for filters on one dimension with equals, contains or includingRegex "
            "(Google itself only supports 'all'); run separate queries otherwise."
        )
    parts = []
    for f in parsed:
        expr = f["expression"]
        if f["operator"] == "equals":
            parts.append(f"^{re.escape(expr)}$")
        elif f["operator"] == "contains":
            parts.append(re.escape(expr))
        else:
            parts.append(f"(?:{expr})")
    merged = {"dimension": dims.pop(), "operator": "includingRegex", "expression": "|".join(parts)}
    return [{"groupType": "and", "filters": [merged]}]


@dataclass
class Query:
    site: str
    start: dt.date
    end: dt.date
    dimensions: list[str]
    body: dict[str, Any]
    row_limit: int
    start_row: int


def build_query(call: Call, today: dt.date | None = None) -> Query:
    args = call.args
    site = call.site()
    today = today or google_today()
    start, end = date_range(args, today)
    dims = list(dict.fromkeys(args.get("dimensions", [])))
    data_state = args.get("data_state")
    if "hour" in dims and data_state != "hourly_all":
        raise ToolFailure("The hour dimension needs data_state hourly_all.")
    row_limit = int(args.get("row_limit", DEFAULT_ROWS))
    start_row = int(args.get("start_row", 0))
    body: dict[str, Any] = {
        "startDate": start.isoformat(),
        "endDate": end.isoformat(),
        "rowLimit": row_limit,
        "startRow": start_row,
    }
    if dims:
        body["dimensions"] = dims
    if "type" in args:
        body["type"] = args["type"]
    if data_state:
        body["dataState"] = data_state
    if "aggregation_type" in args:
        body["aggregationType"] = args["aggregation_type"]
    groups = filter_groups(args)
    if groups:
        body["dimensionFilterGroups"] = groups
    return Query(site, start, end, dims, body, row_limit, start_row)


def parse_rows(raw: object, dims: list[str]) -> list[dict[str, Any]]:
    """Google's rows -> ours, keyed by dimension name; odd rows dropped, odd metrics left out.

    One pass per row: each kept field is cleaned by `text`/`number` as it is picked, rather than
    cleaning whole rows first (25,000 rows is the hot path)."""
    rows = []
    for entry in sh.objects(raw, "rows"):
        keys = entry.get("keys", [])
        if not isinstance(keys, list):
            keys = []
        row: dict[str, Any] = {}
        for i, name in enumerate(dims):
            key = sh.text(keys[i]) if i < len(keys) else None
            row[name] = key if key is not None else ""
        for metric in ("clicks", "impressions", "ctr", "position"):
            value = sh.number(entry.get(metric))
            if value is not None:
                row[metric] = value
        rows.append(row)
    return rows


_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}(?:T[0-9:.+\-Z]{2,30})?")


def _stamp(value: object) -> str | None:
    """Google's first incomplete date (or hour), only when it is one: it goes into our own sentence."""
    text = sh.text(value)
    return text if text is not None and _STAMP.fullmatch(text) else None


def totals(rows: list[dict[str, Any]]) -> dict[str, float]:
    clicks = sum(r.get("clicks", 0) for r in rows)
    impressions = sum(r.get("impressions", 0) for r in rows)
    weighted = sum(r["position"] * r.get("impressions", 0) for r in rows if "position" in r)
    out: dict[str, float] = {"clicks": clicks, "impressions": impressions}
    if impressions:
        out["ctr"] = round(clicks / impressions, 6)
        out["position"] = round(weighted / impressions, 2)
    return out


def _metrics(r: Mapping[str, Any]) -> list[str]:
    ctr = r.get("ctr")
    pos = r.get("position")
    return [
        sh.cell(r.get("clicks")),
        sh.cell(r.get("impressions")),
        f"{ctr * 100:.1f}%" if isinstance(ctr, int | float) else "",
        f"{pos:.1f}" if isinstance(pos, int | float) else "",
    ]


async def query_search_analytics(call: Call) -> Output:
    if call.args.get("all_rows"):
        from .reports.paging import ROW_CAP

        if "row_limit" in call.args or "start_row" in call.args:
            raise ToolFailure(
                f"all_rows reads every row from the first (up to {ROW_CAP:,}); leave out row_limit and start_row."
            )
        from .export import export_rows

        return await export_rows(call, build_query(call))
    q = build_query(call)
    raw = await call.google(
        Api.SEARCHCONSOLE,
        "POST",
        QUERY,
        path_params={"siteUrl": q.site},
        body=q.body,
        limit=Limit.ANALYTICS,
        retry=True,
    )
    rows = parse_rows(raw, q.dimensions)
    meta = sh.record(raw.get("metadata")) if isinstance(raw, dict) else {}
    incomplete = _stamp(meta.get("firstIncompleteDate")) or _stamp(meta.get("firstIncompleteHour"))
    total = totals(rows)
    more_at_google = len(rows) >= q.row_limit
    span = f"{q.start.isoformat()} to {q.end.isoformat()}"
    by = f" by {', '.join(q.dimensions)}" if q.dimensions else ""
    intro = f"Search performance for {q.site}, {span} (Pacific time){by}: {plural(len(rows), 'row')}"
    if q.start_row:
        intro += f" from row {q.start_row:,}"
    intro += "."
    notes = [
        "Totals of these rows: "
        f"{total['clicks']:,} clicks, {total['impressions']:,} impressions"
        + (f", CTR {total['ctr'] * 100:.2f}%, average position {total['position']:.1f}." if "ctr" in total else "."),
        "Data lags about 2-3 days"
        + (f"; numbers from {sh.cell(incomplete)} on are incomplete and may still change." if incomplete else "."),
    ]
    if {"query", "page"} & set(q.dimensions):
        notes.append("Rows grouped by query or page do not add up to the property total (Google omits rare queries).")
    if more_at_google:
        notes.append(f"Google may have more rows: call again with start_row={q.start_row + len(rows)}.")
    out = listing(
        entries=rows,
        headers=[*q.dimensions, "Clicks", "Impressions", "CTR", "Position"],
        row=lambda r: [*(sh.cell(r.get(d, ""), 200) for d in q.dimensions), *_metrics(r)],
        intro=intro,
        key="rows",
        narrow=lambda shown: f"Narrow with filters or page on with start_row={q.start_row + shown}.",
        noun="rows",
        extra={
            "site": q.site,
            "start_date": q.start.isoformat(),
            "end_date": q.end.isoformat(),
            "dimensions": q.dimensions,
            "totals": total,
            "first_incomplete": incomplete,
            "start_row": q.start_row,
        },
        footer="\n".join(notes),
    )
    shown = out.data.get("shown", len(rows))
    if shown < len(rows) or more_at_google:
        out.data["next_start_row"] = q.start_row + shown
    return out
