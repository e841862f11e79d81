"""The coverage watch's inspector: each watched page through Google's URL Inspection, within one quota.

Google's API has no page-indexing report: one URL at a time, at most 2,000 a day and 600 a minute per
property. Once the person has said yes, the inspector (on keeping/coverage_sync.py's thread) goes through each
property's watched pages in the store's order (never inspected, then pages with clicks, then the
oldest result: ``CoverageStore.due``) and keeps every result. No Qt here.

Why it is built this way:

- **One count, shared.** Every inspection is taken from the same per-property count the server keeps
  for ``inspect_url`` (``QuotaBook.try_spend_watch``): never the property's last 500 of Google's day,
  so Claude's own inspections always have room, and at most 60 a minute. Requests are also spaced
  evenly (``Pace``, 60 a minute), so a minute's 60 are not one burst.
- **Backs off, then stops for the day.** A 429 for the minute: Google's Retry-After, else a doubling
  wait with jitter (``Backoff``), and the spend given back (it never reached Google's count). A daily
  quota answer stops that property until Google's next day (midnight Pacific); a project-wide one
  stops every watch — every person using SearchDesk's built-in sign-in shares Google's per-project
  quota, and jitter keeps many computers from coming back together.
- **Resumes without repeats.** A pass records when it started (``WatchState.pass_started``); the store
  answers only pages not inspected since, so a kill, a sleep or a lost network repeats no page. When
  nothing is due the pass is over and the next one is set for when the oldest result turns 7 days old.
"""

from __future__ import annotations

import datetime as dt
import enum
import logging
import math
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from searchdesk_server.coverage.records import PageResult, WatchState
from searchdesk_server.coverage.store import RECHECK, CoverageStore
from searchdesk_server.google.errors import ErrorKind, GoogleError
from searchdesk_server.quota import WATCH_PER_MINUTE, WATCH_SPARE, QuotaBook, QuotaKind

from .archive_copier import Backoff, Pace

log = logging.getLogger(__name__)

INSPECT_PATH = "v1/urlInspection/index:inspect"
#: Google's URL Inspection quota per property per day (developers.google.com/webmaster-tools/limits).
GOOGLE_PER_DAY = 2_000
#: What the watch may take of a property's day: Google's less the 500 left for Claude.
WATCH_PER_DAY = GOOGLE_PER_DAY - WATCH_SPARE
#: Pages asked of the store at a time.
BATCH = 50


class Inspect(Protocol):
    """One inspection: Google's answer for ``url`` of ``site`` as the account sees it."""

    def __call__(self, account: str, site: str, url: str) -> Awaitable[Any]: ...


class Quota(enum.Enum):
    """Which of Google's limits a 429 named."""

    MINUTE = "minute"  # back off and try again
    PROPERTY_DAY = "property"  # this property, until Google's next day
    PROJECT_DAY = "project"  # every watch, until Google's next day


def quota_answer(err: GoogleError) -> Quota:
    """Which limit Google's quota answer is about, from its words: a daily limit names "per day"; a
    property's names the site or property as well; any other daily limit is taken as the project's,
    which stops every watch (the cautious reading)."""
    words = f"{err.upstream or ''} {err.reason}".lower()
    if "per day" not in words and "daily" not in words:
        return Quota.MINUTE
    if "per site" in words or "per property" in words:
        return Quota.PROPERTY_DAY
    return Quota.PROJECT_DAY


def first_pass_days(pages: int, per_day: int = WATCH_PER_DAY) -> int:
    """Days a first full pass of ``pages`` takes at the watch's share of Google's day."""
    return max(1, math.ceil(pages / per_day)) if pages else 0


def first_pass_words(pages: int) -> str:
    """ "about 7 days for 10,000 pages", for Settings."""
    days = first_pass_days(pages)
    if pages == 0:
        return "no pages to check yet"
    if days <= 1:
        return f"about a day for {pages:,} pages"
    return f"about {days} days for {pages:,} pages"


@dataclass(frozen=True)
class Target:
    """One property to watch, with the account it is inspected as."""

    account: str
    site: str


class Stopped(Exception):
    """The inspector was stopped (switched off, paused, quit) while it worked or waited."""


class Inspector:
    """The watch's inspections, on one event loop. ``targets`` answers, before every request, which
    properties may be watched now (switched on, not paused, the account still one Claude may use);
    ``stores`` opens an account's store."""

    def __init__(
        self,
        stores: Callable[[str], CoverageStore],
        book: QuotaBook,
        inspect: Inspect,
        targets: Callable[[], Sequence[Target]],
        *,
        pacing: bool = True,
        pace: Pace | None = None,
        backoff: Backoff | None = None,
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
        today: Callable[[], dt.date] | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        stopped: Callable[[], bool] = lambda: False,
        every: dt.timedelta = RECHECK,
    ) -> None:
        self.stores = stores
        self.book = book
        self.inspect = inspect
        self.targets = targets
        self.pacing = pacing
        self.pace = pace if pace is not None else Pace(per_minute=WATCH_PER_MINUTE if pacing else None)
        self.backoff = backoff or Backoff()
        self.now = now
        self.today = today or book.today
        self._sleep = sleep
        self.stopped = stopped
        self.every = every
        #: Properties stopped for Google's day by a quota answer (and the project, for all): the day.
        self.done_for: dict[str, dt.date] = {}
        self.inspected = 0

    async def _nap(self, seconds: float) -> None:
        if self._sleep is not None:
            await self._sleep(seconds)
        else:
            import anyio

            await anyio.sleep(seconds)
        if self.stopped():
            raise Stopped

    def _spend(self, site: str) -> bool:
        if not self.pacing:  # only a test: to show Google's quota broken without the watch's share
            return True
        return self.book.try_spend_watch(site)

    def _resting(self, site: str) -> bool:
        today = self.today()
        return self.done_for.get(site) == today or self.done_for.get("*") == today

    async def run_once(self) -> int:
        """Inspect what is due for every property that may be watched now, until each is done, has used
        its share for now, or is stopped for the day. Returns how many pages were inspected."""
        done = 0
        for target in list(self.targets()):
            if self.stopped():
                raise Stopped
            if target not in self.targets() or self._resting(target.site):
                continue
            done += await self._site(target)
        return done

    async def _site(self, target: Target) -> int:
        store = self.stores(target.account)
        site = target.site
        state = store.watch(site)
        if state is None or not state.running:
            return 0
        if state.pass_started is None:
            state = WatchState(True, False, pass_started=self.now(), next_pass=None)
            store.set_watch(site, state)
        done = 0
        while True:
            due = store.due(site, BATCH, now=self.now(), every=self.every)
            if not due:
                self._pass_over(store, site, state)
                return done
            for url in due:
                if self.stopped() or target not in self.targets():
                    raise Stopped
                if not await self._one(store, target, url):
                    return done
                done += 1

    async def _one(self, store: CoverageStore, target: Target, url: str) -> bool:
        """Inspect one page; False when the property is done for now (its share or a quota answer)."""
        site = target.site
        while True:
            await self._nap(self.pace.delay())
            state = store.watch(site)
            if state is None or not state.running:  # paused or deleted in Settings: seen before the request
                return False
            day = self.book.today()
            if not self._spend(site):
                return False
            try:
                answer = await self.inspect(target.account, site, url)
            except GoogleError as err:
                if err.kind is not ErrorKind.QUOTA and not _transient(err):
                    log.info("coverage: %s not inspected: %s", url, err.summary)
                    raise
                if self.pacing and err.status == 429:
                    self.book.refund(QuotaKind.INSPECTION, site, day=day)  # refused: not counted by Google
                which = quota_answer(err) if err.kind is ErrorKind.QUOTA else Quota.MINUTE
                if which is Quota.MINUTE:
                    await self._nap(self.backoff.next(err.retry_after))
                    continue
                self.done_for["*" if which is Quota.PROJECT_DAY else site] = self.today()
                log.info("coverage: Google's daily quota reached (%s); the watch rests until tomorrow", which.value)
                return False
            self.backoff.reset()
            store.record(site, url, PageResult.from_google(_index(answer)), inspected_at=self.now())
            self.inspected += 1
            return True

    def _pass_over(self, store: CoverageStore, site: str, state: WatchState) -> None:
        counts = store.counts(site)
        oldest = counts.oldest or self.now()
        following = oldest + self.every
        if state.pass_started is not None or state.next_pass != following:
            store.set_watch(site, WatchState(True, False, pass_started=None, next_pass=following))


def _transient(err: GoogleError) -> bool:
    return err.status == 429 or (err.status is not None and err.status >= 500) or err.kind is ErrorKind.NETWORK


def _index(answer: Any) -> object:
    result = answer.get("inspectionResult") if isinstance(answer, Mapping) else None
    return result.get("indexStatusResult") if isinstance(result, Mapping) else None


def jittered(seconds: float) -> float:
    """``seconds`` give or take a quarter, so many computers do not come back at once."""
    return float(seconds * (0.75 + random.random() / 2))
