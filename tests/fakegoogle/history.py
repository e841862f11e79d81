"""A light Search Console with 16 months of deterministic daily rows, for the archive's tests.

The demo's DemoGoogle aggregates real facts and takes about 0.1 s a query: a 16-month copy is some
3,000 queries, so the archive's tests use this one instead (about a millisecond a query). It keeps
Google's rules that the copy depends on: final data ends three days before ``today``; days older than
16 months are gone (the demo's ``first_data_day``, one definition of "16 months"); ``rowLimit`` up to
25,000 with ``startRow`` paging; rows sorted by clicks; by-page aggregation when pages are involved.
Each (day, dimensions) has a fixed, small set of rows, so a copy can be compared with what was served.

    api = HistoryGoogle(today, sites={"https://archive.example/": "siteOwner"})
    fake = FakeGoogle(folder, api=api, today=today)
"""

from __future__ import annotations

import datetime
import hashlib
import json
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from searchdesk_server.demo.facts import first_data_day
from tests.fakegoogle import bodies

FINAL_LAG_DAYS = 3
_KEYS = {
    "page": [f"/page-{i}" for i in range(6)],
    "query": [f"query {i}" for i in range(8)],
    "country": ["usa", "gbr", "fra"],
    "device": ["DESKTOP", "MOBILE", "TABLET"],
}


def _json(status: int, doc: object) -> httpx.Response:
    return httpx.Response(status, content=json.dumps(doc).encode(), headers={"content-type": "application/json"})


def _number(*parts: object) -> int:
    return int.from_bytes(hashlib.blake2b(repr(parts).encode(), digest_size=4).digest(), "big")


def rows_for(
    site: str, day: datetime.date, dimensions: Sequence[str], search_type: str = "web"
) -> list[dict[str, Any]]:
    """Every row Google has for one day (before paging): deterministic, sorted by clicks."""
    keys: list[list[str]] = [[]]
    for dimension in dimensions:
        keys = [[*key, value] for key in keys for value in _KEYS[dimension]]
    if dimensions == ["query", "page"]:
        keys = [key for key in keys if _number(site, day, key) % 3 == 0]  # not every query shows every page
    rows = []
    for key in keys:
        impressions = 10 + _number(site, day, search_type, key, "i") % 500
        clicks = _number(site, day, search_type, key, "c") % (impressions // 4 + 1)
        position = 1 + (_number(site, day, search_type, key, "p") % 400) / 10
        row: dict[str, Any] = {"clicks": clicks, "impressions": impressions, "ctr": clicks / impressions}
        row["position"] = position
        if key:
            row = {"keys": key, **row}
        rows.append(row)
    rows.sort(key=lambda r: (-r["clicks"], r.get("keys", [])))
    return rows


class HistoryGoogle:
    """A callable API for FakeGoogle(api=…): the sites list and searchAnalytics/query."""

    def __init__(
        self, today: datetime.date, sites: Mapping[str, str], since: Mapping[str, datetime.date] | None = None
    ) -> None:
        self.today = today  # a test may move it on (the next day's copy)
        self.sites = dict(sites)
        #: A property newer than 16 months has data from the day it was added (tests that need a short copy).
        self.since = dict(since or {})

    @property
    def last_final_day(self) -> datetime.date:
        return self.today - datetime.timedelta(days=FINAL_LAG_DAYS)

    @property
    def first_day(self) -> datetime.date:
        return first_data_day(self.today)

    def final_days(self, site: str) -> list[datetime.date]:
        """Every day of ``site`` Google still has and has made final."""
        day = max(self.first_day, self.since.get(site, self.first_day))
        days = []
        while day <= self.last_final_day:
            days.append(day)
            day += datetime.timedelta(days=1)
        return days

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.raw_path.decode().split("?", 1)[0]
        if path == "/webmasters/v3/sites" and request.method == "GET":
            return _json(200, {"siteEntry": [{"siteUrl": s, "permissionLevel": p} for s, p in self.sites.items()]})
        prefix = "/webmasters/v3/sites/"
        if path.startswith(prefix) and path.endswith("/searchAnalytics/query") and request.method == "POST":
            site = urllib.parse.unquote(path[len(prefix) : -len("/searchAnalytics/query")])
            if site not in self.sites:
                return _json(403, bodies.no_permission(site))
            return self._query(site, json.loads(request.content or b"{}"))
        return _json(404, bodies.not_found())

    def _query(self, site: str, body: dict[str, Any]) -> httpx.Response:
        start = datetime.date.fromisoformat(body["startDate"])
        end = datetime.date.fromisoformat(body["endDate"])
        dimensions = [str(d) for d in body.get("dimensions", [])]
        by_date = dimensions == ["date"]
        if by_date:
            dimensions = []
        if any(d not in _KEYS for d in dimensions) or start > end:
            return _json(400, bodies.google_error(400, "Request contains an invalid argument."))
        row_limit = int(body.get("rowLimit", 1000))
        if not 1 <= row_limit <= 25_000:
            return _json(400, bodies.google_error(400, "rowLimit must be between 1 and 25,000."))
        start_row = int(body.get("startRow", 0))
        last = self.last_final_day if body.get("dataState", "final") == "final" else self.today
        rows: list[dict[str, Any]] = []
        day = max(start, self.first_day, self.since.get(site, self.first_day))
        while day <= min(end, last):
            found = rows_for(site, day, dimensions, str(body.get("type", "web")))
            rows.extend({"keys": [day.isoformat()], **row} for row in found) if by_date else rows.extend(found)
            day += datetime.timedelta(days=1)
        page = rows[start_row : start_row + row_limit]
        doc: dict[str, Any] = {"responseAggregationType": "byPage" if "page" in dimensions else "byProperty"}
        if page:
            doc["rows"] = page
        return _json(200, doc)
