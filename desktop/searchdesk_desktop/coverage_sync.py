"""The coverage watch's thread: sitemaps read and pages inspected in the background, never on Qt's.

The rules are in coverage_sitemaps.py (what is fetched from the website) and coverage_inspector.py
(what is asked of Google); this holds the thread they run on, its Google client, and its rhythm:

- **Its own thread, its own event loop**, as the archive's (archive_sync.py): tokens from the app's
  providers, the server's hardened client for Google (Google's hosts only, no redirects, its own
  retries off: the inspector backs off itself).
- **Wakes at most once a minute when idle**: between rounds it sleeps ``IDLE_SECONDS`` on the wall
  clock (a computer asleep overnight looks again when it wakes), unless the app wakes it (a switch,
  Pause, a new scope).
- **Pauses on a metered connection** where the system says so: ``metered`` is asked before each round
  (the app passes ``metered_now``, Qt's QNetworkInformation; where the system cannot tell, it is not
  treated as metered).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from searchdesk_server.coverage.store import MAX_PAGES, CoverageStore, Why
from searchdesk_server.google.errors import GoogleError
from searchdesk_server.quota import QuotaBook

from .archive_sync import AccessTokenFor, _AppTokens
from .coverage_inspector import INSPECT_PATH, Inspect, Inspector, Stopped, Target

log = logging.getLogger(__name__)

#: The longest the thread sleeps when idle, and so the most often it wakes: once a minute.
IDLE_SECONDS = 60.0
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


def metered_now() -> bool:
    """Whether the system says the connection is metered (QNetworkInformation); False where it cannot
    say. Call from the Qt thread (the app asks and hands the answer to the watch)."""
    from PySide6.QtNetwork import QNetworkInformation

    if QNetworkInformation.instance() is None and not QNetworkInformation.loadDefaultBackend():
        return False
    info = QNetworkInformation.instance()
    if info is None or not info.supports(QNetworkInformation.Feature.Metered):
        return False
    return bool(info.isMetered())


class CoverageSync:
    """The inspector's thread: started after the yes, stopped by the switch, told the targets by the app."""

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
        self.stores = stores
        self.book = book
        self._tokens = tokens
        self._transport = transport
        self._metered = metered
        self._idle_seconds = idle
        self._lock = threading.Lock()
        self._targets: tuple[Target, ...] = ()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._args = inspector_args or {}
        #: The sitemap reader's options (tests: a resolver and a trust store for their fake website).
        self._reader_args = reader_args or {}
        self._gathered: dict[tuple[str, str], dt.date] = {}
        self.inspector: Inspector | None = None
        #: How many times the loop woke (the tests' measure of "at most once a minute when idle").
        self.wakes = 0
        #: The last round's outcome, for the person ("" while all is well).
        self.problem = ""

    def update(self, targets: Sequence[Target]) -> None:
        """From the Qt thread: which properties may be watched now (takes effect before the next request)."""
        with self._lock:
            self._targets = tuple(targets)
        self._wake.set()

    def targets(self) -> tuple[Target, ...]:
        with self._lock:
            return () if self._metered() else self._targets

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._main, name="searchdesk-coverage", daemon=True)
        self._thread.start()

    def stop(self, wait: float | None = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None and wait is not None:
            self._thread.join(wait)

    def _main(self) -> None:
        import anyio

        try:
            anyio.run(self._loop)
        except Stopped:
            pass
        except Exception:  # a bug must not take the app down; the next start tries again
            log.exception("coverage: the watch stopped")

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

    async def _gather(self) -> None:
        """Once a Google day per property: the pages its sitemaps list, read from its website (on a worker
        thread: the reader is synchronous) and added to the watch (the store keeps at most 100,000)."""
        import anyio

        from .archive_sync import google_caller
        from .coverage_sitemaps import SitemapReader, listed_sitemaps

        today = self.book.today()
        for target in self.targets():
            key = (target.account, target.site)
            if self._gathered.get(key) == today or self._stop.is_set():
                continue
            call, close = google_caller(self._tokens, self._transport)
            try:
                listed = await listed_sitemaps(call, target.account, target.site)
            except GoogleError as err:
                log.info("coverage: the sitemaps of %s not listed: %s", target.site, err.summary)
                continue
            finally:
                await close()

            def read(site: str = target.site, urls: list[str] = listed) -> list[str]:
                args = {"proxy": system_proxy(site), **self._reader_args}
                with SitemapReader(site, **args) as reader:
                    found = reader.read_all(urls, most=MAX_PAGES)
                for note in found.notes():
                    log.info("coverage: %s", note)
                return found.urls

            urls = await anyio.to_thread.run_sync(read)
            store = self.stores(target.account)
            store.add_pages(target.site, urls, Why.SITEMAP, now=dt.datetime.now(dt.UTC))
            self._gathered[key] = today

    async def _idle(self, seconds: float) -> None:
        import anyio

        end = time.time() + seconds
        while time.time() < end and not self._stop.is_set() and not self._wake.is_set():  # noqa: ASYNC110
            await anyio.sleep(0.05)
