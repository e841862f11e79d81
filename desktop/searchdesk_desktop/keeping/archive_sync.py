"""The archive's copier thread: each property's daily search performance, from Google into the archive.

The copy itself (which days, the pace, the back-off, the scope) is keeping/archive_copier.py; the files and the
person's answer are keeping/archive_keeper.py. This holds the thread the copy runs on and its Google client.

- **Its own thread, its own event loop.** Every request is on the copier's thread (``ArchiveSync``),
  never the Qt thread's: the agent socket keeps answering and the approval dialog keeps time during a
  16-month backfill. Tokens come from the app's providers, as a server's do (``Core.provider``; the
  refresh token never leaves the keyring, no access token is written anywhere), on a worker thread of
  their own because they block.
- **The server's hardened client.** Google's hosts only, its ceilings, no redirects (``google_caller``);
  the client's own retries are off, as the copier backs off itself.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from searchdesk_server.archive.store import SEARCH_TYPES
from searchdesk_server.google.errors import ErrorKind, GoogleError
from searchdesk_server.tools.analytics.dates import google_today

from .archive_copier import READ_SCOPE, Backoff, Caller, Copier, Pace, Scope, Stopped, Store
from .sync_thread import SyncThread

log = logging.getLogger(__name__)

#: Between two looks for new final days when everything is copied.
RECHECK_SECONDS = 3 * 3600.0


class AccessTokenFor(Protocol):
    """An access token for an account, from the app's providers (``Core.provider``): a plain function,
    not the server's ``google.credentials.TokenSource`` (``_AppTokens`` makes one of it)."""

    def __call__(self, account: str, scopes: Sequence[str], force_refresh: bool) -> str: ...


class _AppTokens:
    """``GoogleClient``'s token source from the app's providers; they block, so a worker thread asks."""

    kind = "desktop"  # the app's own sign-ins, as a server's tokens from the app are

    def __init__(self, tokens: AccessTokenFor) -> None:
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


def google_caller(tokens: AccessTokenFor, transport: Any = None) -> tuple[Caller, Callable[[], Any]]:
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


class ArchiveSync(SyncThread):
    """The copier's thread: started after the yes, stopped by the switch, told the scope by the app."""

    thread_name = "searchdesk-archive"
    ended = "archive: the copier stopped"
    log = log
    stopped = (Stopped,)

    def __init__(
        self,
        store: Store,
        tokens: AccessTokenFor,
        *,
        pace: Pace | None = None,
        backoff: Backoff | None = None,
        search_types: Sequence[str] = SEARCH_TYPES,
        today: Callable[[], dt.date] = google_today,
        recheck: float = RECHECK_SECONDS,
        transport: Any = None,
        on_copied: Callable[[], None] = lambda: None,
    ) -> None:
        super().__init__()
        self.store = store
        self._tokens = tokens
        self._transport = transport
        self._recheck = recheck
        self._on_copied = on_copied
        self.copier: Copier | None = None
        self._copier_args: dict[str, Any] = {
            "pace": pace,
            "backoff": backoff,
            "search_types": search_types,
            "today": today,
        }

    def scope(self) -> Scope:
        with self._lock:
            return self._scope

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
