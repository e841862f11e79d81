"""A Search Analytics request built from a tool call's arguments: dates, dimensions, filters.

Checked here, before anything reaches Google, so a mistake gets a sentence that says what to change.
A regular expression is checked by RE2, as Google reads it (`google.regex`): one Google would refuse is
refused here in the same words whether the days asked for come from Google or from SearchDesk's copy.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...google import regex
from ...result import ToolFailure
from ...runtime import Call
from ...tool_spec import DEFAULT_ROWS
from .dates import date_range, google_today

QUERY = "webmasters/v3/sites/{siteUrl}/searchAnalytics/query"
POSITIVE_OPERATORS = ("equals", "contains", "includingRegex")
REGEX_OPERATORS = ("includingRegex", "excludingRegex")


def filter_groups(args: Mapping[str, Any]) -> list[dict[str, Any]]:
    filters = args.get("filters") or []
    if not filters:
        return []
    parsed = []
    for i, f in enumerate(filters):
        if not f.get("expression", "").strip():
            raise ToolFailure(f"filters[{i}].expression is empty.")
        if f.get("operator") in REGEX_OPERATORS:
            try:
                regex.check(f["expression"])
            except regex.RegexRefused as refused:
                raise ToolFailure(f"The pattern in filters[{i}] cannot be used. {refused}") from None
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
            parts.append(f"^{regex.escape(expr)}$")
        elif f["operator"] == "contains":
            parts.append(regex.escape(expr))
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
    today = today or google_today(call.config.today)
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


async def search_analytics(
    call: Call, site: str, body: Mapping[str, Any], *, decode: Callable[[bytes], object | None] | None = None
) -> Any:
    """One Search Analytics request as every analytics tool and report sends it (retried: a read),
    with the days Google no longer keeps from the archive (`archive.reader.fetch`).

    ``decode`` (the Google client's fast decoder, rows.common_answer) reads Google's answer straight
    into typed rows for a range that starts on or after Google's first day. A range wholly before it
    is answered by SearchDesk's copy as columns, read the same way (rows.common_columns); a range
    with days on both sides is merged into the plain JSON of any other answer."""
    from ...archive.answers import Columns
    from ...archive.reader import fetch, google_first_day
    from ...google.http import Api, Limit
    from .rows import common_columns

    today = google_today(call.config.today)
    typed = decode is not None
    if decode is not None and dt.date.fromisoformat(str(body["startDate"])) < google_first_day(today):
        decode = None

    async def send(request: dict[str, Any]) -> Any:
        return await call.google.call(
            Api.SEARCHCONSOLE,
            "POST",
            QUERY,
            path_params={"siteUrl": site},
            body=request,
            limit=Limit.ANALYTICS,
            retry=True,
            decode=decode,
        )

    raw = await fetch(call, site, body, send, today, typed=typed)
    if isinstance(raw, Columns):
        return common_columns(raw, len(body.get("dimensions") or [])) or {"rows": raw.shaped()}
    return raw
