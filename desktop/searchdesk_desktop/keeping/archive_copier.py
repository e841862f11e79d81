"""The archive's copy: which days are missing, and fetching them from Google, paced and backed off.

Google deletes Search Console's performance data after 16 months. Once the person has said yes
(keeping/archive_keeper.py), the copier (on keeping/archive_sync.py's thread) copies what Google still has, oldest
day first (the oldest are the next to go), and after that, each day, the days Google has made final
(``dataState: final``). Nothing is requested before the yes: no copier exists until then. No Qt here.

Why it is built this way:

- **Within Google's quotas.** Search Analytics allows 1,200 queries a minute per site and per user and
  has a short-term load quota that favours small requests spread over time. The copier makes one
  request at a time, evenly spaced (``Pace``: 300 a minute by default, a quarter of either quota, so
  that Claude's live questions, which share them, still have room), and on a 429 or a server error it
  waits — Google's Retry-After when it sends one, else an exponential back-off — and tries again.
- **No gaps, no duplicates.** A day is copied whole (the totals; rows by page, query, country, device,
  and by query and page, each its own request, paged 25,000 rows at a time up to Google's 50,000 a day)
  and written to the store in one transaction with its progress record, keyed by (site, day, search
  type); re-copying a day replaces it. What is left to copy is always worked out from the store, so a
  kill, a restart, a sleep or a lost network only means the day in flight is fetched again.
- **Only the accounts Claude may use, only the allowed properties.** The list is handed in by the app
  (``ArchiveSync.update``) and looked at before every request: a withheld or removed account is never copied for
  again; whether its archive is kept is the person's choice (keeping/archive_keeper.py).
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from searchdesk_server.archive.store import ROW_LIMIT, SEARCH_TYPES, TABLES
from searchdesk_server.google.errors import ErrorKind, GoogleError
from searchdesk_server.tools.analytics.dates import google_today, months_back

log = logging.getLogger(__name__)

READ_SCOPE = "https://www.googleapis.com/auth/webmasters.readonly"
QUERY_PATH = "webmasters/v3/sites/{siteUrl}/searchAnalytics/query"
SITES_PATH = "webmasters/v3/sites"
#: How long Google keeps performance data.
KEPT_BY_GOOGLE_MONTHS = 16
#: One request's rows (Google's maximum) and one day's rows per table and search type (Google's limit).
PAGE_ROWS = 25_000
#: One day's rows per table and search type (Google's limit), the six tables of a day (name -> the
#: dimensions of its request; each its own request, so each as complete as Google makes it) and the
#: search types: one definition, the store's.
DAY_ROWS = ROW_LIMIT
#: Discover and Google News have no queries: Google refuses those tables for them.
QUERYLESS = frozenset({"discover", "googleNews"})
#: The default pace: a quarter of the per-site and per-user quotas (1,200 a minute each).
DEFAULT_PER_MINUTE = 300.0
#: Back-off after a 429, a server error or a lost network: from BACKOFF_FIRST, doubling, at most BACKOFF_MAX.
BACKOFF_FIRST = 2.0
BACKOFF_MAX = 15 * 60.0


def tables_for(search_type: str) -> dict[str, tuple[str, ...]]:
    """The tables Google can answer for a search type."""
    return {name: dims for name, dims in TABLES.items() if not (search_type in QUERYLESS and "query" in dims)}


@dataclass(frozen=True)
class Table:
    """One day's rows of one table, exactly as Google returned them, and whether Google cut it at its
    row limit (``DAY_ROWS``)."""

    rows: list[dict[str, Any]]
    cut: bool
    aggregation: str


class Store(Protocol):
    """What the copier needs of the archive (``archive_keeper.Archives``, over ``searchdesk_server.archive.store``)."""

    def copied_days(self, account: str, site: str, search_type: str) -> set[dt.date]: ...

    def put_day(
        self, account: str, site: str, search_type: str, day: dt.date, tables: Mapping[str, Table], copied_at: float
    ) -> None: ...

    def roll_up(self, account: str, site: str, search_type: str, before: dt.date) -> int: ...


class Caller(Protocol):
    """The one call the copier makes (``searchdesk_server.google.http.GoogleClient.call``'s shape)."""

    async def __call__(self, method: str, path: str, *, account: str, site: str | None, body: object | None) -> Any: ...


@dataclass
class Pace:
    """Evenly spaced requests: at most ``per_minute`` in any ``minute`` seconds (None: no pacing, which
    only a test uses, to show the quotas being broken). ``minute`` is shorter in tests."""

    per_minute: float | None = DEFAULT_PER_MINUTE
    minute: float = 60.0
    clock: Callable[[], float] = time.monotonic
    _next: float = field(default=0.0, init=False)

    def delay(self) -> float:
        """Seconds to wait before the next request may leave (and reserve its slot)."""
        if self.per_minute is None:
            return 0.0
        now = self.clock()
        slot = max(now, self._next)
        self._next = slot + self.minute / self.per_minute
        return slot - now


@dataclass
class Backoff:
    """Waits after refusals: Google's Retry-After when given, else BACKOFF_FIRST doubling, jittered."""

    first: float = BACKOFF_FIRST
    most: float = BACKOFF_MAX
    failures: int = 0

    def next(self, retry_after: float | None) -> float:
        self.failures += 1
        wait = float(self.first * 2 ** (self.failures - 1) * (0.75 + random.random() / 2))
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(wait, self.most)

    def reset(self) -> None:
        self.failures = 0


@dataclass(frozen=True)
class Scope:
    """What may be copied now: the accounts Claude may use, and Settings' allowed properties (empty:
    every property an account sees), less the paused ones."""

    accounts: tuple[str, ...] = ()
    allowed_sites: tuple[str, ...] = ()
    paused: tuple[str, ...] = ()

    def site_ok(self, site: str) -> bool:
        return (not self.allowed_sites or site in self.allowed_sites) and site not in self.paused


class Stopped(Exception):
    """The copier was stopped (or its scope changed) while it waited; the day in flight is dropped."""


def _transient(err: GoogleError) -> bool:
    return err.status == 429 or (err.status is not None and err.status >= 500) or err.kind is ErrorKind.NETWORK


class Copier:
    """The copy itself, on one event loop: which days are missing, and fetching them. No Qt here."""

    def __init__(
        self,
        store: Store,
        call: Caller,
        scope: Callable[[], Scope],
        *,
        pace: Pace | None = None,
        backoff: Backoff | None = None,
        search_types: Sequence[str] = SEARCH_TYPES,
        today: Callable[[], dt.date] = google_today,
        stopped: Callable[[], bool] = lambda: False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self._call = call
        self._scope = scope
        self.pace = pace or Pace()
        self.backoff = backoff or Backoff()
        self.search_types = tuple(search_types)
        self._today = today
        self._stopped = stopped
        self._clock = clock
        self.requests = 0  # sent by this copier (its status line, and the tests)

    async def _nap(self, seconds: float) -> None:
        import anyio

        end = time.monotonic() + seconds
        while True:
            if self._stopped():
                raise Stopped()
            left = end - time.monotonic()
            if left <= 0:
                return
            await anyio.sleep(min(left, 0.05))

    async def request(self, account: str, site: str | None, body: object | None) -> Any:
        """One request under the pace, retried after a back-off for as long as it takes (a 429, a server
        error, no network); any other refusal is raised."""
        while True:
            if account not in self._scope().accounts:
                raise Stopped()
            await self._nap(self.pace.delay())
            self.requests += 1
            try:
                method, path = ("POST", QUERY_PATH) if site is not None else ("GET", SITES_PATH)
                answer = await self._call(method, path, account=account, site=site, body=body)
            except GoogleError as err:
                if not _transient(err):
                    raise
                wait = self.backoff.next(err.retry_after)
                log.info("archive: Google asked to wait (%s); waiting %.1f s", err.status or "no network", wait)
                await self._nap(wait)
                continue
            self.backoff.reset()
            return answer

    async def sites(self, account: str) -> list[str]:
        """The properties an account sees (Google's list), within the scope."""
        answer = await self.request(account, None, None)
        entries = answer.get("siteEntry", []) if isinstance(answer, dict) else []
        found = [str(e["siteUrl"]) for e in entries if isinstance(e, dict) and isinstance(e.get("siteUrl"), str)]
        scope = self._scope()
        return [site for site in found if scope.site_ok(site)]

    async def final_days(
        self, account: str, site: str, search_type: str, first: dt.date, last: dt.date
    ) -> list[dt.date]:
        """The days to copy: from the oldest day Google has a row for (not before ``first``) to the last day
        Google has made final — asked of Google in one request by date, ``dataState: final``. A day with
        no row between them is final and empty (it is kept, empty, as Google has it); the days before a
        property's first row are not asked for day by day (a property added a month ago costs a month)."""
        body = {
            "startDate": first.isoformat(),
            "endDate": last.isoformat(),
            "dimensions": ["date"],
            "type": search_type,
            "dataState": "final",
            "rowLimit": PAGE_ROWS,
        }
        answer = await self.request(account, site, body)
        days = [row["keys"][0] for row in _rows(answer) if isinstance(row.get("keys"), list) and row["keys"]]
        if not days:
            return []
        dates = [dt.date.fromisoformat(str(day)) for day in days]
        return _every_day(max(first, min(dates)), max(dates))

    async def copy_day(self, account: str, site: str, search_type: str, day: dt.date) -> dict[str, Table]:
        """One day of one site and search type, every table, paged."""
        tables: dict[str, Table] = {}
        for name, dims in tables_for(search_type).items():
            rows: list[dict[str, Any]] = []
            aggregation = ""
            while True:
                body = {
                    "startDate": day.isoformat(),
                    "endDate": day.isoformat(),
                    "dimensions": list(dims),
                    "type": search_type,
                    "dataState": "final",
                    "rowLimit": PAGE_ROWS,
                    "startRow": len(rows),
                }
                answer = await self.request(account, site, body)
                page = _rows(answer)
                aggregation = str(answer.get("responseAggregationType", "")) if isinstance(answer, dict) else ""
                rows.extend(page)
                if len(page) < PAGE_ROWS or len(rows) >= DAY_ROWS:
                    break
            tables[name] = Table(rows, cut=len(rows) >= DAY_ROWS, aggregation=aggregation)
        return tables

    async def run_once(self) -> int:
        """Copy everything missing now, oldest first; the number of days written."""
        written = 0
        today = self._today()
        first = months_back(today, KEPT_BY_GOOGLE_MONTHS)
        for account in self._scope().accounts:
            try:
                sites = await self.sites(account)
            except Stopped:
                if self._stopped():
                    raise
                continue
            for site in sites:
                for search_type in self.search_types:
                    try:
                        written += await self._copy_site(account, site, search_type, first, today)
                    except Stopped:
                        if self._stopped():
                            raise
                    except GoogleError as err:  # e.g. no permission any more: the next round tries again
                        log.warning("archive: a property could not be copied (%s)", err.status)
        return written

    async def _copy_site(self, account: str, site: str, search_type: str, first: dt.date, today: dt.date) -> int:
        # Months Google no longer has never change again: summed once for the reports (archive/months.py).
        self.store.roll_up(account, site, search_type, first)
        done = self.store.copied_days(account, site, search_type)
        missing_from = min((d for d in _every_day(first, today) if d not in done), default=None)
        if missing_from is None:
            return 0
        written = 0
        for day in await self.final_days(account, site, search_type, missing_from, today):
            if day in done:
                continue
            if not self._scope().site_ok(site) or account not in self._scope().accounts:
                raise Stopped()
            tables = await self.copy_day(account, site, search_type, day)
            self.store.put_day(account, site, search_type, day, tables, self._clock())
            written += 1
        return written


def _every_day(first: dt.date, last: dt.date) -> list[dt.date]:
    return [first + dt.timedelta(days=n) for n in range((last - first).days + 1)]


def _rows(answer: Any) -> list[dict[str, Any]]:
    rows = answer.get("rows", []) if isinstance(answer, dict) else []
    return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []
