"""searchAnalytics.query: Google's request rules and an aggregation engine over the demo's facts.

The rules follow the discovery document and Search Console's documented behaviour: final data stops
three days ago, `all` adds the fresh days, `hourly_all` is required for the hour dimension (kept for ten
days); page grouping or filtering means by-page aggregation; search appearance is grouped alone; Discover
and Google News have no queries and no positions; anonymized queries vanish once queries are involved;
rows come sorted by clicks, descending.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from operator import itemgetter
from typing import Any

from ..google import regex
from . import wire
from .clock import DemoClock, hour_key, iso_day
from .facts import (
    ANONYMIZED,
    APPEARANCE,
    CLICKS,
    COUNTRY,
    DAY,
    DEVICE,
    HOUR,
    IMPRESSIONS,
    NO_APPEARANCE,
    PAGE,
    POSITION_SUM,
    QUERY,
    Fact,
    FactSet,
    Lexicon,
    covering_family,
    first_data_day,
    hourly_facts,
    lexicon_for,
    property_facts,
)
from .faults import bad_request
from .scope import covers
from .vocab import QUERYLESS_TYPES

MAX_ROWS = 25_000
DEFAULT_ROWS = 1_000
FINAL_LAG_DAYS = 3  # final data ends three days ago; the two days after it are incomplete

DIMENSIONS = {
    "date": "date",
    "query": "query",
    "page": "page",
    "country": "country",
    "device": "device",
    "searchappearance": "searchAppearance",
    "hour": "hour",
}
FILTER_DIMENSIONS = {k: v for k, v in DIMENSIONS.items() if v not in ("date", "hour")}
TYPES = {"web": "web", "image": "image", "video": "video", "news": "news", "discover": "discover"}
TYPES["googlenews"] = "googleNews"
DATA_STATES = {"final": "final", "all": "all", "hourlyall": "hourly_all", "datastateunspecified": "final"}
AGGREGATIONS = {"auto": "auto", "byproperty": "byProperty", "bypage": "byPage"}
AGGREGATIONS["bynewsshowcasepanel"] = "byNewsShowcasePanel"
OPERATORS = {
    "equals": "equals",
    "notequals": "notEquals",
    "contains": "contains",
    "notcontains": "notContains",
    "includingregex": "includingRegex",
    "excludingregex": "excludingRegex",
}
GROUP_TYPES = {"and": "and"}
REQUEST_FIELDS = (
    "startDate",
    "endDate",
    "dimensions",
    "type",
    "searchType",
    "dimensionFilterGroups",
    "aggregationType",
    "rowLimit",
    "startRow",
    "dataState",
)
_INDEX = {
    "date": DAY,
    "query": QUERY,
    "page": PAGE,
    "country": COUNTRY,
    "device": DEVICE,
    "searchAppearance": APPEARANCE,
    "hour": HOUR,
}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
MAX_EXPRESSION = 4096


@dataclass(frozen=True)
class Filter:
    dimension: str
    operator: str
    expression: str


@dataclass(frozen=True)
class ReceivedQuery:
    """A searchAnalytics.query request as Google reads its body, checked by `parse`."""

    start: date
    end: date
    dimensions: tuple[str, ...]
    search_type: str
    data_state: str
    aggregation: str
    filters: tuple[Filter, ...]
    row_limit: int
    start_row: int


def parse(body: dict[str, Any]) -> ReceivedQuery:
    """A request body checked as Google checks it; every refusal is Google's 400."""
    obj = wire.fields(body, REQUEST_FIELDS)
    start = _date(obj, "startDate")
    end = _date(obj, "endDate")
    if end < start:
        raise bad_request("startDate must be earlier than or equal to endDate.")
    dimensions = []
    for index, raw in enumerate(wire.array(obj, "dimensions")):
        if not isinstance(raw, str) or wire.enum_key(raw) not in DIMENSIONS:
            raise wire.invalid(f"dimensions[{index}]", "type.googleapis.com/wmx.api.Dimension", raw)
        dimensions.append(DIMENSIONS[wire.enum_key(raw)])
    if len(set(dimensions)) != len(dimensions):
        raise bad_request("Each dimension may be requested only once.")
    kind = "type.googleapis.com/wmx.api.SearchType"
    search_type = wire.enum(obj, "type", TYPES, "", kind)
    alias = wire.enum(obj, "searchType", TYPES, "", kind)
    if search_type and alias and search_type != alias:
        raise bad_request("type and searchType disagree; send only one of them.")
    row_limit = wire.integer(obj, "rowLimit", 0) or DEFAULT_ROWS
    if not 1 <= row_limit <= MAX_ROWS:
        raise bad_request(f"rowLimit must be between 1 and {MAX_ROWS:,} (inclusive); it was {row_limit}.")
    start_row = wire.integer(obj, "startRow", 0)
    if start_row < 0:
        raise bad_request("startRow must be a non-negative number.")
    return ReceivedQuery(
        start=start,
        end=end,
        dimensions=tuple(dimensions),
        search_type=search_type or alias or "web",
        data_state=wire.enum(obj, "dataState", DATA_STATES, "final", "type.googleapis.com/wmx.api.DataState"),
        aggregation=wire.enum(
            obj, "aggregationType", AGGREGATIONS, "auto", "type.googleapis.com/wmx.api.AggregationType"
        ),
        filters=_filters(wire.array(obj, "dimensionFilterGroups")),
        row_limit=row_limit,
        start_row=start_row,
    )


def _date(obj: dict[str, Any], field: str) -> date:
    raw = wire.text(obj, field)
    if raw is None:
        raise bad_request(f"{field} field is required.")
    if not _DATE.fullmatch(raw):
        raise bad_request(f"{field} must be a date in YYYY-MM-DD format.")
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise bad_request(f"{field} is not a valid calendar date.") from None


def _filters(groups: list[Any]) -> tuple[Filter, ...]:
    out: list[Filter] = []
    for g, raw_group in enumerate(groups):
        where = f"dimension_filter_groups[{g}]"
        group = wire.fields(wire.obj_at(raw_group, where), ("filters", "groupType"), where)
        wire.enum(group, "groupType", GROUP_TYPES, "and", "type.googleapis.com/wmx.api.GroupType")
        for f, raw_filter in enumerate(wire.array(group, "filters")):
            at = f"{where}.filters[{f}]"
            item = wire.fields(wire.obj_at(raw_filter, at), ("dimension", "operator", "expression"), at)
            raw_dimension = item.get("dimension")
            if not isinstance(raw_dimension, str) or wire.enum_key(raw_dimension) not in FILTER_DIMENSIONS:
                raise wire.invalid(f"{at}.dimension", "type.googleapis.com/wmx.api.FilterDimension", raw_dimension)
            operator = wire.enum(item, "operator", OPERATORS, "equals", "type.googleapis.com/wmx.api.Operator")
            expression = wire.text(item, "expression", "") or ""
            if len(expression) > MAX_EXPRESSION:
                raise bad_request(f"The filter expression is longer than {MAX_EXPRESSION} characters.")
            if operator in ("includingRegex", "excludingRegex"):
                _check_regex(expression)
            out.append(Filter(FILTER_DIMENSIONS[wire.enum_key(raw_dimension)], operator, expression))
    return tuple(out)


def _check_regex(expression: str) -> None:
    """Google evaluates RE2 (`google.regex`): what RE2 cannot read is Google's 400, and whatever it can
    (nested repeats among it) is answered, in time linear in each value."""
    try:
        regex.check(expression)
    except regex.RegexRefused as refused:
        raise bad_request(f"Invalid regular expression: {refused.engine}.") from None


@dataclass(frozen=True)
class Source:
    """What the query engine reads: a property's facts and Google's "today"."""

    site_url: str
    clock: DemoClock


def run(query: ReceivedQuery, source: Source) -> dict[str, Any]:
    """The response body for a parsed query."""
    page_involved = "page" in query.dimensions or any(f.dimension == "page" for f in query.filters)
    level = _level(query, page_involved)
    queryless = query.search_type in QUERYLESS_TYPES
    query_involved = "query" in query.dimensions or any(f.dimension == "query" for f in query.filters)
    if queryless and query_involved:
        raise bad_request(f"The query dimension is not available for search type {query.search_type}.")
    if "hour" in query.dimensions and query.data_state != "hourly_all":
        raise bad_request("Grouping by hour requires dataState HOURLY_ALL.")
    if "searchAppearance" in query.dimensions and len(query.dimensions) > 1:
        raise bad_request("searchAppearance cannot be grouped with other dimensions; group by it alone, then filter.")
    response: dict[str, Any] = {}
    if level == "byNewsShowcasePanel":
        response["responseAggregationType"] = level
        return response
    fact_level = "page" if level == "byPage" else "property"
    facts, lexicon = _facts(query, source, fact_level)
    if lexicon is not None:
        rows = _aggregate(facts, lexicon, query, query_involved=query_involved, level=fact_level)
        page = rows[query.start_row : query.start_row + query.row_limit]
        if page:
            response["rows"] = _render(page, lexicon, query)
    response["responseAggregationType"] = level
    metadata = _metadata(query, source.clock)
    if metadata:
        response["metadata"] = metadata
    return response


def _level(query: ReceivedQuery, page_involved: bool) -> str:
    if query.aggregation == "byNewsShowcasePanel":
        if query.search_type not in QUERYLESS_TYPES:
            raise bad_request("byNewsShowcasePanel aggregation is available only for Discover and Google News.")
        return query.aggregation
    if query.aggregation == "byProperty" and page_involved:
        raise bad_request("Cannot aggregate by property when grouping or filtering by page; use AUTO or BY_PAGE.")
    if query.aggregation == "auto":
        return "byPage" if page_involved else "byProperty"
    return query.aggregation


def _facts(query: ReceivedQuery, source: Source, level: str) -> tuple[Sequence[Fact], Lexicon | None]:
    family = covering_family(lambda url: covers(source.site_url, url))
    if family is None:
        return (), None
    lexicon = lexicon_for(family)
    pages = tuple(i for i, url in enumerate(lexicon.pages) if covers(source.site_url, url))
    today = source.clock.ordinal
    if "hour" in query.dimensions:
        fact_set: FactSet = hourly_facts(family, pages, query.search_type, level, today)
    else:
        fact_set = property_facts(family, pages, query.search_type, level, today)
    last = today - (FINAL_LAG_DAYS if query.data_state == "final" else 0)
    first = max(query.start.toordinal(), first_data_day(source.clock.today).toordinal())
    return fact_set.between(first, min(query.end.toordinal(), last)), lexicon


def _aggregate(
    facts: Sequence[Fact], lexicon: Lexicon, query: ReceivedQuery, *, query_involved: bool, level: str
) -> list[Any]:
    masks: list[tuple[int, list[bool]]] = []
    if query_involved:
        masks.append((QUERY, [i != ANONYMIZED for i in range(len(lexicon.queries))]))
    if "searchAppearance" in query.dimensions:
        masks.append((APPEARANCE, [i != NO_APPEARANCE for i in range(len(lexicon.appearances))]))
    for item in query.filters:
        masks.append(_mask(item, lexicon))
    selected: Sequence[Fact] = facts
    for index, mask in masks:
        selected = [fact for fact in selected if mask[fact[index]]]
    indices = [_INDEX[name] for name in query.dimensions]
    rows = _group(selected, indices, unique=_covers_fact_key(query.dimensions, level))
    rows.sort(key=_KEY)  # ties keep key order: sorted by the words themselves, since ids follow them
    rows.sort(key=_CLICKS, reverse=True)  # stable, so this is clicks descending, then keys
    return rows


_KEY = itemgetter(0)
_CLICKS = itemgetter(1)


def _covers_fact_key(dimensions: Sequence[str], level: str) -> bool:
    """Whether every fact is its own row (no two facts share a key), so grouping can be skipped."""
    names = set(dimensions)
    needed = {"hour" if "hour" in names else "date", "query", "country", "device"}
    if level == "page":
        needed.add("page")
    return needed <= names


def _group(facts: Sequence[Fact], indices: list[int], *, unique: bool) -> list[Any]:
    """(key, clicks, impressions, position sum) per distinct key."""
    if not indices:
        if not facts:
            return []
        totals = [0, 0, 0.0]
        for fact in facts:
            totals[0] += fact[CLICKS]
            totals[1] += fact[IMPRESSIONS]
            totals[2] += fact[POSITION_SUM]
        return [((), totals[0], totals[1], totals[2])]
    key: Callable[[Fact], Any] = itemgetter(*indices)
    if unique:
        return [(key(fact), fact[CLICKS], fact[IMPRESSIONS], fact[POSITION_SUM]) for fact in facts]
    cells: dict[Any, list[Any]] = {}
    for fact in facts:
        k = key(fact)
        cell = cells.get(k)
        if cell is None:
            cells[k] = [fact[CLICKS], fact[IMPRESSIONS], fact[POSITION_SUM]]
        else:
            cell[0] += fact[CLICKS]
            cell[1] += fact[IMPRESSIONS]
            cell[2] += fact[POSITION_SUM]
    return [(k, c[0], c[1], c[2]) for k, c in cells.items()]


def _mask(item: Filter, lexicon: Lexicon) -> tuple[int, list[bool]]:
    words: Sequence[str] = {
        "query": lexicon.queries,
        "page": lexicon.pages,
        "country": lexicon.countries,
        "device": lexicon.devices,
        "searchAppearance": lexicon.appearances,
    }[item.dimension]
    exact = item.dimension in ("query", "page")
    test = _matcher(item, exact)
    mask = [test(word) for word in words]
    if item.dimension == "searchAppearance":
        mask[NO_APPEARANCE] = False
    return _INDEX[item.dimension], mask


def _matcher(item: Filter, exact: bool) -> Callable[[str], bool]:
    expression = item.expression
    folded = expression.lower()
    if item.operator == "equals":
        return (lambda w: w == expression) if exact else (lambda w: w.lower() == folded)
    if item.operator == "notEquals":
        return (lambda w: w != expression) if exact else (lambda w: w.lower() != folded)
    if item.operator == "contains":
        return lambda w: folded in w.lower()
    if item.operator == "notContains":
        return lambda w: folded not in w.lower()
    regex.check(expression)  # parse refused it already; compiled once here, then cached
    if item.operator == "includingRegex":
        return lambda w: regex.searches(expression, w)
    return lambda w: not regex.searches(expression, w)


def _render(page: list[Any], lexicon: Lexicon, query: ReceivedQuery) -> list[dict[str, Any]]:
    lookups: list[Callable[[int], str]] = []
    for name in query.dimensions:
        if name == "date":
            lookups.append(iso_day)
        elif name == "hour":
            lookups.append(hour_key)
        else:
            words = {
                "query": lexicon.queries,
                "page": lexicon.pages,
                "country": lexicon.countries,
                "device": lexicon.devices,
                "searchAppearance": lexicon.appearances,
            }[name]
            lookups.append(words.__getitem__)
    single = len(lookups) == 1
    with_position = query.search_type not in QUERYLESS_TYPES
    out: list[dict[str, Any]] = []
    for key, clicks, impressions, position_sum in page:
        row: dict[str, Any] = {}
        if lookups:
            parts = (key,) if single else key
            row["keys"] = [lookup(part) for lookup, part in zip(lookups, parts, strict=True)]
        row["clicks"] = clicks
        row["impressions"] = impressions
        row["ctr"] = clicks / impressions
        if with_position:
            row["position"] = position_sum / impressions
        out.append(row)
    return out


def _metadata(query: ReceivedQuery, clock: DemoClock) -> dict[str, str]:
    """Google's freshness note: the first incomplete date (or hour) when the answer reaches into it."""
    first_incomplete = clock.today - timedelta(days=FINAL_LAG_DAYS - 1)
    if query.data_state == "final" or query.end < first_incomplete or query.start > clock.today:
        return {}
    metadata: dict[str, str] = {}
    if "date" in query.dimensions:
        metadata["firstIncompleteDate"] = first_incomplete.isoformat()
    if "hour" in query.dimensions and query.data_state == "hourly_all":
        metadata["firstIncompleteHour"] = hour_key(first_incomplete.toordinal() * 24)
    return metadata
