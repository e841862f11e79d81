"""The coverage watch's thread: sitemaps read and pages inspected in the background, never on Qt's.

The rules are in keeping/coverage_sitemaps.py (what is fetched from the website) and keeping/coverage_inspector.py
(what is asked of Google); this holds the thread they run on, its Google client, and its rhythm:

- **Its own thread, its own event loop**, as the archive's (keeping/archive_sync.py): tokens from the app's
  providers, the server's hardened client for Google (Google's hosts only, no redirects, its own
  retries off: the inspector backs off itself).
- **Wakes at most once a minute when idle**: between rounds it blocks for ``IDLE_SECONDS`` (a
  computer asleep overnight looks again within a minute of waking), unless the app wakes it (a switch,
  Pause, a new scope). Nothing polls in between: the bench counts its threads' wake-ups.
- **Pauses on a metered connection** where the system says so: ``metered`` is asked before each round
  (the app passes ``metered_now``, Qt's QNetworkInformation; where the system cannot tell, it is not
  treated as metered).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from searchdesk_server.coverage.records import WatchState, Why
from searchdesk_server.coverage.store import MAX_PAGES, CoverageStore
from searchdesk_server.deadlines import IDLE_WAKE_SECONDS
from searchdesk_server.google.errors import GoogleError
from searchdesk_server.quota import QuotaBook

from .archive_sync import AccessTokenFor, _AppTokens
from .coverage_inspector import INSPECT_PATH, Inspect, Inspector, Stopped, Target
from .sync_thread import SyncThread

log = logging.getLogger(__name__)

#: The longest the thread sleeps when idle, and so the most often it wakes: once a minute.
IDLE_SECONDS = IDLE_WAKE_SECONDS
READ_SCOPE = "https://www.googleapis.com/auth/webmasters.readonly"


def google_inspect(tokens: AccessTokenFor, transport: Any = None) -> tuple[Inspect, Callable[[], Any]]:
    """URL Inspection through the server's hardened client; the call and the coroutine that closes it."""
    from searchdesk_server.google.http import Api, GoogleClient, Limit

    client = GoogleClient(_AppTokens(tokens), [READ_SCOPE], transport=transport)

    async def inspect(account: str, site: str, url: str) -> Any:
        return await client.call(
            Api.SEARCHCONSOLE,
            "POST",
            INSPECT_PATH,
            body={"inspectionUrl": url, "siteUrl": site, "languageCode": "en-US"},
            limit=Limit.INSPECTION,
            retry=False,  # the inspector backs off itself
            account=account,
        )

    return inspect, client.aclose


def system_proxy(site: str) -> str | None:
    """The proxy the system's environment names for the website (HTTPS_PROXY, NO_PROXY), as the Google
    client's httpx finds it; None for a direct connection."""
    import urllib.request

    from .coverage_address import Site

    bounds = Site.of(site)
    host = bounds.domain or bounds.host
    proxies = urllib.request.getproxies_environment()
    if not proxies or urllib.request.proxy_bypass(host):
        return None
    return proxies.get("https") or proxies.get("http")


class Metered:
    """Whether the system says the connection is metered (Qt's QNetworkInformation), kept up to date by
    its signal. Made on the Qt thread; the watch's thread only reads the flag. Where the system cannot
    say (no backend, or one without the Metered feature), it is not treated as metered."""

    def __init__(self) -> None:
        self.metered = False
        from PySide6.QtNetwork import QNetworkInformation

        if QNetworkInformation.instance() is None and not QNetworkInformation.loadDefaultBackend():
            return
        info = QNetworkInformation.instance()
        if info is None or not info.supports(QNetworkInformation.Feature.Metered):
            return
        self.metered = bool(info.isMetered())
        info.isMeteredChanged.connect(self._changed)

    def _changed(self, metered: bool) -> None:
        self.metered = bool(metered)

    def __call__(self) -> bool:
        return self.metered


async def _seen_pages(call: Any, account: str, site: str, today: dt.date) -> dict[str, int]:
    """The property's pages with impressions in Google's last 28 days, with their clicks (one request,
    Google's row limit: the pages people see most)."""
    from .archive_copier import PAGE_ROWS, QUERY_PATH

    body = {
        "startDate": (today - dt.timedelta(days=28)).isoformat(),
        "endDate": today.isoformat(),
        "dimensions": ["page"],
        "type": "web",
        "rowLimit": PAGE_ROWS,
        "dataState": "all",
    }
    try:
        answer = await call("POST", QUERY_PATH, account=account, site=site, body=body)
    except GoogleError as err:
        log.info("coverage: the pages seen in Google for %s not read: %s", site, err.summary)
        return {}
    rows = answer.get("rows", []) if isinstance(answer, dict) else []
    out: dict[str, int] = {}
    for row in rows:
        keys = row.get("keys") if isinstance(row, dict) else None
        if isinstance(keys, list) and keys and isinstance(keys[0], str) and row.get("impressions", 0):
            out[keys[0]] = int(row.get("clicks") or 0)
    return out


class CoverageSync(SyncThread):
    """The inspector's thread: started after the yes, stopped by the switch, told the targets by the app
    (`update`: a withheld account's properties are not inspected again)."""

    thread_name = "searchdesk-coverage"
    ended = "coverage: the watch stopped"
    log = log
    stopped = (Stopped,)

    def __init__(
        self,
        stores: Callable[[str], CoverageStore],
        book: QuotaBook,
        tokens: AccessTokenFor,
        *,
        metered: Callable[[], bool] = lambda: False,
        idle: float = IDLE_SECONDS,
        transport: Any = None,
        inspector_args: dict[str, Any] | None = None,
        reader_args: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.stores = stores
        self.book = book
        self._tokens = tokens
        self._transport = transport
        self._metered = metered
        self._idle_seconds = idle
        #: Every (account, property) the accounts listed at the last look (once a Google day).
        self._seen: tuple[Target, ...] = ()
        self._args = inspector_args or {}
        #: The sitemap reader's options (tests: a resolver and a trust store for their fake website).
        self._reader_args = reader_args or {}
        self._gathered: dict[tuple[str, str], dt.date] = {}
        self._looked: dt.date | None = None
        self.inspector: Inspector | None = None
        #: How many times the loop woke (the tests' measure of "at most once a minute when idle").
        self.wakes = 0

    def targets(self) -> tuple[Target, ...]:
        """The properties to work on now: those the accounts saw at the last look, within the scope."""
        with self._lock:
            scope = self._scope
            if self._metered():
                return ()
            return tuple(t for t in self._seen if t.account in scope.accounts and scope.site_ok(t.site))

    async def _loop(self) -> None:
        inspect, close = google_inspect(self._tokens, self._transport)
        self.inspector = Inspector(
            self.stores, self.book, inspect, self.targets, stopped=self._stop.is_set, **self._args
        )
        try:
            while not self._stop.is_set():
                self._wake.clear()
                self.wakes += 1
                try:
                    await self._gather()
                    await self.inspector.run_once()
                    self.problem = ""
                except Stopped:
                    if self._stop.is_set():
                        return
                except GoogleError as err:
                    self.problem = err.summary
                await self._idle(self._idle_seconds)
        finally:
            await close()

    async def _look(self) -> None:
        """The properties each account sees (Google's list), switched on in its store when new."""
        from .archive_copier import SITES_PATH
        from .archive_sync import google_caller

        with self._lock:
            accounts = self._scope.accounts
        call, close = google_caller(self._tokens, self._transport)
        seen: list[Target] = []
        try:
            for account in accounts:
                try:
                    answer = await call("GET", SITES_PATH, account=account, site=None, body=None)
                except GoogleError as err:
                    log.info("coverage: the properties of an account not listed: %s", err.summary)
                    continue
                entries = answer.get("siteEntry", []) if isinstance(answer, dict) else []
                for entry in entries:
                    site = entry.get("siteUrl") if isinstance(entry, dict) else None
                    if isinstance(site, str) and entry.get("permissionLevel") != "siteUnverifiedUser":
                        seen.append(Target(account, site))
                        store = self.stores(account)
                        if store.watch(site) is None:
                            store.set_watch(site, WatchState(switched_on=True))
        finally:
            await close()
        with self._lock:
            self._seen = tuple(seen)

    async def _gather(self) -> None:
        """Once a Google day per property: the pages its sitemaps list, read from its website (on a worker
        thread: the reader is synchronous), and the pages with impressions in Google's last 28 days,
        added to the watch (the store keeps at most 100,000)."""
        import anyio

        from .archive_sync import google_caller
        from .coverage_sitemaps import SitemapReader, listed_sitemaps

        today = self.book.today()
        if self._looked != today:
            await self._look()
            self._looked = today
        for target in self.targets():
            key = (target.account, target.site)
            if self._gathered.get(key) == today or self._stop.is_set():
                continue
            call, close = google_caller(self._tokens, self._transport)
            try:
                try:
                    listed = await listed_sitemaps(call, target.account, target.site)
                except GoogleError as err:
                    log.info("coverage: the sitemaps of %s not listed: %s", target.site, err.summary)
                    listed = []
                clicks = await _seen_pages(call, target.account, target.site, today)
            finally:
                await close()

            def read(site: str = target.site, urls: list[str] = listed) -> list[str]:
                if not urls:
                    return []
                args = {"proxy": system_proxy(site), **self._reader_args}
                with SitemapReader(site, **args) as reader:
                    found = reader.read_all(urls, most=MAX_PAGES)
                for refused in found.refused:  # with the detail the person's words leave out
                    log.info("coverage: sitemap not read: %s", refused)
                for note in found.notes()[len(found.refused) :]:
                    log.info("coverage: %s", note)
                return found.urls

            urls = await anyio.to_thread.run_sync(read)
            store = self.stores(target.account)
            now = dt.datetime.now(dt.UTC)
            # The pages people found first: their clicks put them early in the watcher's order, and the
            # store keeps those with the most clicks when a property has more than it holds.
            if clicks:
                store.add_pages(target.site, list(clicks), Why.IMPRESSIONS, now=now, clicks=clicks)
            store.add_pages(target.site, urls, Why.SITEMAP, now=now)
            self._gathered[key] = today
