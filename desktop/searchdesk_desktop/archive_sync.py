"""The archive's copier: each property's daily search performance, from Google into the archive.

Google deletes Search Console's performance data after 16 months. Once the person has said yes
(``AppSettings.archive_on``, asked once after sign-in and in Settings), the app copies what Google
still has, oldest day first (the oldest are the next to go), and after that, each day, the days Google
has made final (``dataState: final``). Nothing is requested before the yes: no copier exists until then.

Why it is built this way:

- **Its own thread, its own event loop.** Every request is on the copier's thread (``ArchiveSync``),
  never the Qt thread's: the agent socket keeps answering and the approval dialog keeps time during a
  16-month backfill. Tokens come from the app's providers, as a server's do (``Core.provider``; the
  refresh token never leaves the keyring, no access token is written anywhere), on a worker thread of
  their own because they block.
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
  (``update``) and looked at before every request: a withheld or removed account is never copied for
  again; whether its archive is kept is the person's choice (``ArchiveSync.delete``).
"""

from __future__ import annotations

import datetime as dt
import glob
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

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
DAY_ROWS = 50_000
#: The tables of one day: name -> the dimensions of its request. Each is its own request, so each is
#: as complete as Google makes it.
TABLES: Mapping[str, tuple[str, ...]] = {
    "totals": (),
    "page": ("page",),
    "query": ("query",),
    "country": ("country",),
    "device": ("device",),
    "query_page": ("query", "page"),
}
SEARCH_TYPES = ("web", "image", "video", "news", "discover", "googleNews")
#: Discover and Google News have no queries: Google refuses those tables for them.
QUERYLESS = frozenset({"discover", "googleNews"})
#: The default pace: a quarter of the per-site and per-user quotas (1,200 a minute each).
DEFAULT_PER_MINUTE = 300.0
#: Back-off after a 429, a server error or a lost network: from BACKOFF_FIRST, doubling, at most BACKOFF_MAX.
BACKOFF_FIRST = 2.0
BACKOFF_MAX = 15 * 60.0
#: Between two looks for new final days when everything is copied.
RECHECK_SECONDS = 3 * 3600.0


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
    """What the copier needs of the archive (``Archives`` below, over ``searchdesk_server.archive.store``)."""

    def copied_days(self, account: str, site: str, search_type: str) -> set[dt.date]: ...

    def put_day(
        self, account: str, site: str, search_type: str, day: dt.date, tables: Mapping[str, Table], copied_at: float
    ) -> None: ...


class Archives:
    """The app's side of the store: one archive file per account (the store's ``path_for``), opened to
    write on the copier's thread only; the windows read with connections of their own (``kept``), so
    a read never sees a day half written and never waits on the copier."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._open: dict[str, Any] = {}
        self._lock = threading.Lock()

    def path(self, account: str) -> Path:
        from searchdesk_server.archive import store

        return (self.folder / store.account_file(account)) if self.folder else store.path_for(account)

    def _writer(self, account: str) -> Any:
        from searchdesk_server.archive import store

        with self._lock:
            archive = self._open.get(account.casefold())
            if archive is None:
                path = self.path(account)
                try:
                    archive = _open_writer(path)
                except store.ArchiveDamaged:
                    recovery = store.recover(path)  # set aside, never deleted; the loss is recorded in the new file
                    log.warning("archive: a damaged file was set aside; %d days lost", len(recovery.lost))
                    archive = store.Archive.open(path)
                self._open[account.casefold()] = archive
            return archive

    def copied_days(self, account: str, site: str, search_type: str) -> set[dt.date]:
        return set(self._writer(account).days(site, search_type))

    def put_day(
        self, account: str, site: str, search_type: str, day: dt.date, tables: Mapping[str, Table], copied_at: float
    ) -> None:
        from searchdesk_server.archive import store

        # Discover and Google News have no queries: their query tables are kept, empty, as Google has them.
        rows = {name: list(tables[name].rows) if name in tables else [] for name in store.TABLES}
        cut = {name: tables[name].cut if name in tables else False for name in store.TABLES}
        when = dt.datetime.fromtimestamp(copied_at, dt.UTC)
        self._writer(account).write_day(site, day, search_type, rows, copied_at=when, truncated=cut)

    def kept(self, account: str, site: str) -> Any:
        """For the windows: the store's ``Kept`` for a property (None: nothing kept)."""
        from searchdesk_server.archive import store

        try:
            archive = store.Archive.open_readonly(self.path(account))
        except store.ArchiveError:
            return None
        if archive is None:
            return None
        with archive:
            kept = archive.kept(site)
        return kept if kept.days else None

    def accounts(self) -> list[str]:
        """The accounts with an archive file here, a removed account's included (to keep or delete)."""
        import urllib.parse

        from searchdesk_server.archive import store

        folder = self.folder or store.folder()
        try:
            names = sorted(p.name for p in folder.glob("*.sqlite3") if p.name != store.DEMO_FILE)
        except OSError:
            return []
        return [urllib.parse.unquote(name.removesuffix(".sqlite3")) for name in names]

    def properties(self, account: str) -> list[str]:
        """The properties with kept days in an account's archive."""
        from searchdesk_server.archive import store

        try:
            archive = store.Archive.open_readonly(self.path(account))
        except store.ArchiveError:
            return []
        if archive is None:
            return []
        with archive:
            return list(archive.sites())

    def files(self, account: str) -> tuple[list[Path], list[Path]]:
        """An account's files on this computer: its archive (with SQLite's two side files), and the
        damaged ones set aside beside it (``store.recover``: ``<name>.damaged-<time>``). What the person
        is asked to keep or delete when the account is withheld or removed, and what Delete removes."""
        path = self.path(account)
        kept = [p for p in (Path(f"{path}{s}") for s in ("", "-wal", "-shm")) if p.exists()]
        try:
            aside = sorted(path.parent.glob(f"{glob.escape(path.name)}.damaged-*"))
        except OSError:
            aside = []
        return kept, aside

    def delete(self, account: str, site: str | None = None) -> None:
        """The person's Delete: one property's days, or (``site`` None) every file the account has here,
        the damaged ones set aside included. Runs on a worker thread: it takes the file's write lock."""
        from searchdesk_server.archive import store

        with self._lock:
            archive = self._open.pop(account.casefold(), None)
        if archive is not None:
            archive.close()
        path = self.path(account)
        if site is None:
            kept, aside = self.files(account)
            for file in (*kept, *aside):
                file.unlink(missing_ok=True)
            return
        if path.exists():
            with store.Archive.open(path) as writer:
                writer.delete_site(site)
                writer.vacuum()

    def close(self) -> None:
        with self._lock:
            for archive in self._open.values():
                archive.close()
            self._open.clear()


def _open_writer(path: Path) -> Any:
    """The store's writer, checked for damage; a file a reader is just opening (the server recovering a
    killed copier's write-ahead log) is tried again for a few seconds rather than given up on."""
    import sqlite3

    from searchdesk_server.archive import store

    for attempt in range(10):
        try:
            return store.Archive.open(path, check=path.exists())
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == 9:
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable")


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


class TokenSource(Protocol):
    def __call__(self, account: str, scopes: Sequence[str], force_refresh: bool) -> str: ...


class _AppTokens:
    """``GoogleClient``'s token source from the app's providers; they block, so a worker thread asks."""

    kind = "desktop"  # the app's own sign-ins, as a server's tokens from the app are

    def __init__(self, tokens: TokenSource) -> None:
        self._tokens = tokens

    async def token(self, scopes: Sequence[str], *, force_refresh: bool = False, account: str | None = None) -> str:
        import anyio.to_thread

        if account is None:
            raise GoogleError(ErrorKind.AUTH, "No Google account was named for the copy.")
        try:
            return await anyio.to_thread.run_sync(self._tokens, account, scopes, force_refresh)
        except GoogleError:
            raise
        except Exception as exc:  # signed out, revoked, a scope not granted: the app's refusals say why
            raise GoogleError(ErrorKind.AUTH, str(exc) or "SearchDesk could not get access for this account.") from None


def google_caller(tokens: TokenSource, transport: Any = None) -> tuple[Caller, Callable[[], Any]]:
    """The copier's calls through the server's hardened client (Google's hosts only, ceilings, no
    redirects); returns the caller and the coroutine function that closes it."""
    from searchdesk_server.google.http import Api, GoogleClient, Limit

    client = GoogleClient(_AppTokens(tokens), [READ_SCOPE], transport=transport)

    async def call(method: str, path: str, *, account: str, site: str | None, body: object | None) -> Any:
        params = {"siteUrl": site} if site is not None else None
        return await client.call(
            Api.SEARCHCONSOLE,
            method,
            path,
            path_params=params,
            body=body,
            limit=Limit.ANALYTICS,
            retry=False,  # the copier backs off itself, for as long as it takes
            account=account,
        )

    return call, client.aclose


class ArchiveSync:
    """The copier's thread: started after the yes, stopped by the switch, told the scope by the app."""

    def __init__(
        self,
        store: Store,
        tokens: TokenSource,
        *,
        pace: Pace | None = None,
        backoff: Backoff | None = None,
        search_types: Sequence[str] = SEARCH_TYPES,
        today: Callable[[], dt.date] = google_today,
        recheck: float = RECHECK_SECONDS,
        transport: Any = None,
        on_copied: Callable[[], None] = lambda: None,
    ) -> None:
        self.store = store
        self._tokens = tokens
        self._transport = transport
        self._lock = threading.Lock()
        self._scope = Scope()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._recheck = recheck
        self._on_copied = on_copied
        self._thread: threading.Thread | None = None
        self.copier: Copier | None = None
        self._copier_args: dict[str, Any] = {
            "pace": pace,
            "backoff": backoff,
            "search_types": search_types,
            "today": today,
        }
        #: The last round's outcome, for the person ("" while all is well).
        self.problem = ""

    def update(self, scope: Scope) -> None:
        """From the Qt thread: who and what may be copied now (takes effect before the next request)."""
        with self._lock:
            self._scope = scope
        self._wake.set()

    def scope(self) -> Scope:
        with self._lock:
            return self._scope

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._main, name="searchdesk-archive", daemon=True)
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
            log.exception("archive: the copier stopped")

    async def _loop(self) -> None:
        call, close = google_caller(self._tokens, self._transport)
        self.copier = Copier(self.store, call, self.scope, stopped=self._stop.is_set, **self._copier_args)
        try:
            while not self._stop.is_set():
                self._wake.clear()
                try:
                    if await self.copier.run_once():
                        self._on_copied()
                    self.problem = ""
                except GoogleError as err:
                    self.problem = err.summary
                await self._idle(self._recheck)
        finally:
            await close()

    async def _idle(self, seconds: float) -> None:
        import anyio

        end = time.time() + seconds  # the wall clock: a computer asleep overnight looks again when it wakes
        # threading.Events, set from the Qt thread: an anyio.Event could not be set from there
        while time.time() < end and not self._stop.is_set() and not self._wake.is_set():  # noqa: ASYNC110
            await anyio.sleep(0.05)


# --- the app's side: the yes, the switch, pause and delete ---------------------------------------------

QUESTION = "Keep your history beyond 16 months on this computer?"
EXPLAINED = (
    "Google keeps your search performance for 16 months, then deletes it. SearchDesk can keep a copy on this "
    "computer — each property's clicks, impressions, pages and the searches people made — so that Claude can "
    "compare with earlier years. It copies in the background, a little at a time, and sends nothing anywhere "
    "but to Google, to ask for your own data."
)


@dataclass(frozen=True)
class PropertyLine:
    """One property's line in Settings: "Kept since <date> · <size> on this computer · last copied <time>"."""

    account: str
    site: str
    text: str
    paused: bool
    copied: bool  # still being copied (an account Claude may use); False: kept only until deleted


def size_text(size: int) -> str:
    """Bytes as a person reads them (decimal units, as file managers show them)."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{size} bytes"


def kept_text(kept: Any) -> str:
    since = f"{kept.since.day} {kept.since:%B %Y}" if kept.since else "—"
    when = kept.last_copied.astimezone() if kept.last_copied else None
    copied = f"{when.day} {when:%B} at {when:%H:%M}" if when else "never"
    return f"Kept since {since} · {size_text(kept.size_bytes)} on this computer · last copied {copied}"


class ArchiveKeeper:
    """What the app holds of the archive: the person's answer (``AppSettings.archive_on``), the copier
    (made only after the yes), and the controls Settings offers. Called on the Qt thread; the copy and
    deletions run on threads of their own."""

    def __init__(
        self,
        settings: Any,
        save: Callable[[], None],
        tokens: TokenSource,
        scope: Callable[[], Scope],
        *,
        demo: bool = False,
        archives: Archives | None = None,
        accounts: Callable[[], Sequence[str]] = lambda: (),
        on_copied: Callable[[], None] = lambda: None,
        **sync_options: Any,
    ) -> None:
        self.settings = settings
        self._save = save
        self._tokens = tokens
        self._scope = scope
        self.demo = demo
        self.archives = archives or Archives()
        self._accounts = accounts
        self._on_copied = on_copied
        self._sync_options = sync_options
        self.sync: ArchiveSync | None = None

    @property
    def should_ask(self) -> bool:
        """Asked once, after a sign-in: never in the demo (its server has an archive of its own)."""
        return not self.demo and not self.settings.archive_asked and bool(self._accounts())

    @property
    def on(self) -> bool:
        return bool(self.settings.archive_on) and not self.demo

    def scope(self) -> Scope:
        scope = self._scope()
        return Scope(scope.accounts, scope.allowed_sites, tuple(self.settings.archive_paused))

    def set_on(self, on: bool) -> None:
        """The person's answer (the question, or Settings' switch): a yes starts the copy, a no stops it."""
        self.settings.archive_on = bool(on)
        self.settings.archive_asked = True
        self._save()
        if self.on:
            self.start()
        else:
            self.stop()

    def start(self) -> None:
        if not self.on:
            return  # before the yes nothing is made that could reach Google
        if self.sync is None:
            self.sync = ArchiveSync(self.archives, self._tokens, on_copied=self._on_copied, **self._sync_options)
        self.sync.update(self.scope())
        self.sync.start()

    def refresh(self) -> None:
        """The accounts, allowed properties or pauses changed: the copier sees it before its next request."""
        if self.sync is not None:
            self.sync.update(self.scope())

    def stop(self, wait: float | None = 5.0) -> None:
        if self.sync is not None:
            self.sync.stop(wait)
            self.sync = None

    def pause(self, site: str, paused: bool) -> None:
        kept = [s for s in self.settings.archive_paused if s != site]
        self.settings.archive_paused = [*kept, site] if paused else kept
        self._save()
        self.refresh()

    def lines(self) -> list[PropertyLine]:
        """Every kept property of every account the app knows (a withheld one's too, to keep or delete)."""
        scope = self.scope()
        out = []
        known = list(self._accounts())
        folded = {a.casefold() for a in known}
        for account in [*known, *(a for a in self.archives.accounts() if a.casefold() not in folded)]:
            for site in self.archives.properties(account):
                kept = self.archives.kept(account, site)
                if kept is None:
                    continue
                copied = self.on and account in scope.accounts and scope.site_ok(site)
                out.append(PropertyLine(account, site, kept_text(kept), site in scope.paused, copied))
        return out

    def has_copy(self, account: str) -> bool:
        """Whether the account has archive files here (its copy, or a damaged one set aside): only then
        is the person asked, when it is withheld or removed, whether to keep or delete them."""
        kept, aside = self.archives.files(account)
        return bool(kept or aside) and not self.demo

    def delete(self, account: str, site: str | None, done: Callable[[], None] = lambda: None) -> None:
        """The person's Delete, on a thread of its own (it takes the file's write lock)."""

        def work() -> None:
            try:
                self.archives.delete(account, site)
            finally:
                done()

        threading.Thread(target=work, name="searchdesk-archive-delete", daemon=True).start()
