"""The pages the coverage watch looks after: the property's sitemaps, read from the person's website.

Google lists a property's sitemaps (``listed_sitemaps``, through the server's Google client); the files
themselves are on the person's website, which SearchDesk treats as hostile ground. ``SitemapReader``
fetches them with its own HTTP client and nothing else:

- **Its own client.** Never the Google client: no Google token, no cookie (the jar refuses every
  cookie), no ``.netrc`` or environment settings (``trust_env=False``); the proxy, when there is one, is
  handed in. Redirects are followed by hand, at most 5, each new address checked as the first one.
- **Where it may go** (keeping/coverage_address.py): the property's own hosts on global addresses, the
  connection made to the address that was checked. Through a proxy the name is checked here but the
  proxy makes the connection (the remaining risk is named in docs/security.md).
- **How much it reads.** At most 50 MB unpacked and 50,000 URLs a file (sitemaps.org's limits); a
  time budget per file; a sitemap index is followed one level deep; a cap on files read per property
  per day (``DailyFetches``); URLs longer than 2,048 characters are skipped.
- **How it parses** (coverage_sitemap_file.py): bytes counted after every layer of decoding, XML as a
  stream through expat with every document type declaration refused.

No Qt here: the watcher's thread calls it.
"""

from __future__ import annotations

import datetime as dt
import http.cookiejar
import json
import ssl
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpcore
import httpx

from .coverage_address import (
    PinnedBackend,
    Refused,
    Resolver,
    Site,
    Why,
    check_url,
    resolve_checked,
    system_resolver,
)
from .coverage_sitemap_file import FileRead, SitemapParser, decoded

__all__ = [
    "DailyFetches",
    "FileRead",
    "Limits",
    "SitemapPages",
    "SitemapReader",
    "listed_sitemaps",
]

#: Google's sitemaps list for a property (the server's tools/sitemaps.py reads the same).
LIST_PATH: Final = "webmasters/v3/sites/{siteUrl}/sitemaps"


@dataclass(frozen=True)
class Limits:
    """The reader's limits; the defaults are sitemaps.org's and the issue's (tests shrink time only)."""

    max_bytes: int = 50 * 1000 * 1000
    max_urls: int = 50_000
    max_redirects: int = 5
    seconds_per_file: float = 60.0
    #: Files read per property per Google day (an index's files included).
    files_per_day: int = 200
    #: One network step (connect, one read) at most.
    step_seconds: float = 15.0


@dataclass
class SitemapPages:
    """Every page URL the property's sitemaps list (in the property, each once) and every file kept out."""

    urls: list[str] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    files: list[FileRead] = field(default_factory=list)

    def notes(self) -> list[str]:
        """What was left out, in a site owner's words."""
        out = [f"Not read: {r.url} — {r.why.value}." for r in self.refused]
        long = sum(f.skipped_long for f in self.files)
        outside = sum(f.skipped_outside for f in self.files)
        if long:
            out.append(f"{long:,} addresses longer than 2,048 characters were skipped.")
        if outside:
            out.append(f"{outside:,} addresses outside your property were skipped.")
        for f in self.files:
            if f.truncated:
                out.append(f"{f.url} lists more than 50,000 addresses; the first 50,000 were read.")
        return out


class DailyFetches:
    """The cap on sitemap files read per property per day, kept in a small JSON file (or in memory)."""

    def __init__(self, path: Path | None, per_day: int, today: Callable[[], dt.date]) -> None:
        self.path = path
        self.per_day = per_day
        self.today = today
        self._counts: dict[str, Any] = {}
        if path is not None and path.exists():
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
                self._counts = loaded if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self._counts = {}

    def take(self, site: str) -> bool:
        """Count one file for ``site`` today; False when today's are used up."""
        day = self.today().isoformat()
        if self._counts.get("day") != day:
            self._counts = {"day": day, "sites": {}}
        sites: dict[str, int] = self._counts.setdefault("sites", {})
        if sites.get(site, 0) >= self.per_day:
            return False
        sites[site] = sites.get(site, 0) + 1
        if self.path is not None:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self._counts), encoding="utf-8")
            tmp.replace(self.path)
        return True


def _google_today() -> dt.date:
    from searchdesk_server.tools.analytics.dates import google_today

    return google_today()


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    """A cookie policy that neither keeps nor sends any cookie."""

    def set_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
        return False

    def return_ok(self, cookie: http.cookiejar.Cookie, request: Any) -> bool:
        return False


class _PinnedTransport(httpx.HTTPTransport):
    """httpx's transport over a connection pool whose network backend is ``PinnedBackend``.

    httpx 0.28 (pinned in pyproject) takes no network backend, so the pool it built is replaced by one
    that has it; ``_pool`` is the one attribute handle_request uses."""

    def __init__(self, backend: PinnedBackend, context: ssl.SSLContext, limits: Limits) -> None:
        super().__init__(verify=context, trust_env=False, retries=0)
        self._pool = httpcore.ConnectionPool(
            ssl_context=context,
            max_connections=2,
            max_keepalive_connections=1,
            keepalive_expiry=5.0,
            http1=True,
            http2=False,
            retries=0,
            network_backend=backend,
        )


def _default_context() -> ssl.SSLContext:
    import truststore

    return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class SitemapReader:
    """Reads one property's sitemaps from its website within the limits above.

    ``resolver`` (a constructor argument, never the environment) answers host names; ``allow_loopback``
    lets loopback addresses through and exists for the tests' fake website only."""

    def __init__(
        self,
        site_url: str,
        *,
        resolver: Resolver = system_resolver,
        allow_loopback: bool = False,
        ssl_context: ssl.SSLContext | None = None,
        proxy: str | None = None,
        limits: Limits = Limits(),
        daily: DailyFetches | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.site_url = site_url
        self.site = Site.of(site_url)
        self.resolver = resolver
        self.allow_loopback = allow_loopback
        self.limits = limits
        self.proxy = proxy
        self.clock = clock
        self.daily = daily if daily is not None else DailyFetches(None, limits.files_per_day, _google_today)
        context = ssl_context if ssl_context is not None else _default_context()
        self.backend = PinnedBackend(resolver, allow_loopback=allow_loopback)
        transport: httpx.BaseTransport
        if proxy is None:
            transport = _PinnedTransport(self.backend, context, limits)
        else:
            transport = httpx.HTTPTransport(verify=context, trust_env=False, proxy=proxy, retries=0)
        self.client = httpx.Client(
            transport=transport,
            trust_env=False,
            follow_redirects=False,
            cookies=http.cookiejar.CookieJar(policy=_NoCookies()),
            timeout=httpx.Timeout(limits.step_seconds),
            headers={"User-Agent": "SearchDesk sitemap reader", "Accept-Encoding": "gzip, deflate"},
        )

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> SitemapReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one file -------------------------------------------------------------------------------

    def read_file(self, text: str) -> FileRead:
        """One sitemap file's URLs, or Refused saying why it was kept out."""
        url = check_url(self.site, text)
        if not self.daily.take(self.site_url):
            raise Refused(Why.DAILY, text)
        deadline = self.clock() + self.limits.seconds_per_file
        for _ in range(self.limits.max_redirects + 1):
            if self.proxy is not None:
                # Through a proxy the proxy connects; the name is at least checked here.
                port = url.port or (443 if url.scheme == "https" else 80)
                resolve_checked(self.resolver, url.host, port, allow_loopback=self.allow_loopback, url=str(url))
            request = self.client.build_request("GET", url)
            request.headers.pop("Cookie", None)
            try:
                response = self.client.send(request, stream=True)
            except httpx.TimeoutException:
                raise Refused(Why.SLOW, str(url)) from None
            except httpx.HTTPError as exc:
                raise Refused(Why.NETWORK, str(url), type(exc).__name__) from None
            try:
                if response.is_redirect:
                    location = response.headers.get("Location", "")
                    url = check_url(self.site, str(url.join(location)))
                    continue
                if response.status_code != 200:
                    raise Refused(Why.STATUS, str(url), f"HTTP {response.status_code}")
                return self._parse(str(url), response, deadline)
            finally:
                response.close()
        raise Refused(Why.REDIRECTS, text)

    def _parse(self, url: str, response: httpx.Response, deadline: float) -> FileRead:
        chunks = self._timed(url, response.iter_raw(64 * 1024), deadline)
        encoding = response.headers.get("Content-Encoding", "")
        return SitemapParser(url, self.site, self.limits.max_urls).read(
            decoded(chunks, encoding, self.limits.max_bytes, url)
        )

    def _timed(self, url: str, chunks: Iterator[bytes], deadline: float) -> Iterator[bytes]:
        try:
            for chunk in chunks:
                if self.clock() > deadline:
                    raise Refused(Why.SLOW, url)
                yield chunk
        except httpx.TimeoutException:
            raise Refused(Why.SLOW, url) from None
        except httpx.HTTPError as exc:
            raise Refused(Why.NETWORK, url, type(exc).__name__) from None

    # -- a property's sitemaps ------------------------------------------------------------------

    def read_all(self, sitemap_urls: Iterable[str], *, most: int | None = None) -> SitemapPages:
        """Every page the listed sitemaps hold (an index followed one level deep), each once, in the
        order found, at most ``most``; each file kept out is in ``refused`` with why."""
        out = SitemapPages()
        seen: set[str] = set()

        def add(read: FileRead) -> None:
            out.files.append(read)
            for page in read.urls:
                if page not in seen and (most is None or len(out.urls) < most):
                    seen.add(page)
                    out.urls.append(page)

        for listed in dict.fromkeys(sitemap_urls):
            try:
                read = self.read_file(listed)
            except Refused as why:
                out.refused.append(why)
                continue
            if not read.index:
                add(read)
                continue
            out.files.append(read)
            for child in read.urls:
                try:
                    inner = self.read_file(child)
                except Refused as why:
                    out.refused.append(why)
                    if why.why is Why.DAILY:
                        return out
                    continue
                if inner.index:
                    out.refused.append(Refused(Why.NESTED, child))
                    continue
                add(inner)
        return out


#: The one call listed_sitemaps makes (archive_copier.Caller's shape).
Call = Callable[..., Awaitable[Any]]


async def listed_sitemaps(call: Call, account: str, site: str) -> list[str]:
    """The sitemap addresses Google lists for the property (its own and any submitted), each once."""
    answer = await call("GET", LIST_PATH, account=account, site=site, body=None)
    found: list[str] = []
    for entry in (answer or {}).get("sitemap", []) if isinstance(answer, dict) else []:
        path = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(path, str) and path not in found:
            found.append(path)
    return found
