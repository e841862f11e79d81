"""The app's side of the coverage watch: the person's yes, the switch, Pause, Delete, Settings' lines.

"Keep track of which of your pages are in Google?" is asked once after sign-in, after the archive's
question, and Settings has the one switch (``AppSettings.coverage_on``). Nothing is fetched from a
website or inspected before the yes: no CoverageSync exists until then. Pause is per property and
kept in the store's watch state (``WatchState.paused``), which the inspector reads before every
request; Delete removes a property's pages and changes, or an account's whole file. An account
withheld from Claude or removed is asked about as its archive is: keep (unread, nothing more
inspected for it) or delete.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from searchdesk_server.coverage.records import WatchState
from searchdesk_server.coverage.store import CoverageStore
from searchdesk_server.coverage.words import QUESTION as QUESTION  # the app asks what the server names

from .archive_copier import Scope
from .archive_sync import AccessTokenFor
from .coverage_inspector import first_pass_words
from .keeper import Keeper, account_files

if TYPE_CHECKING:
    from .coverage_sync import CoverageSync

log = logging.getLogger(__name__)

EXPLAINED = (
    "SearchDesk reads your sitemaps from your own website and, in the background, asks Google about each "
    "page, a little each day, so Claude can tell you at once which pages are in Google and which are not. "
    "The results stay on this computer. It always leaves room in Google's daily limit for Claude's own "
    "checks. You can pause it or delete what it keeps in Settings."
)
SWITCH = "Keep track of which of my pages are in Google"


@dataclass(frozen=True)
class WatchLine:
    """One property's line in Settings."""

    account: str
    site: str
    text: str
    paused: bool
    watched: bool  # False: an account Claude may no longer use (kept, unread, until deleted)


def line_text(known: int, in_google: int, inspected: int, next_pass: dt.datetime | None, running: bool) -> str:
    """ "Watching N pages · M in Google · K not · X% checked · next pass <date>" (while a pass is under
    way and no next one is set: how long the rest takes, "about 7 days for 10,000 pages")."""
    checked = f"{(inspected * 100 // known) if known else 0}%"
    text = f"Watching {known:,} pages · {in_google:,} in Google · {inspected - in_google:,} not · {checked} checked"
    if next_pass is not None:
        when = next_pass.astimezone()
        return f"{text} · next pass {when.day} {when:%B}"
    if running and inspected < known:
        return f"{text} · {first_pass_words(known - inspected)} to go"
    return text


class CoverageKeeper(Keeper["CoverageSync"]):
    """What the app holds of the watch; called on the Qt thread, the work runs on CoverageSync's."""

    on_setting = "coverage_on"
    asked_setting = "coverage_asked"
    delete_thread = "searchdesk-coverage-delete"

    def __init__(
        self,
        settings: Any,
        save: Callable[[], None],
        tokens: AccessTokenFor,
        scope: Callable[[], Scope],
        *,
        demo: bool = False,
        folder: Path | None = None,
        accounts: Callable[[], Sequence[str]] = lambda: (),
        metered: Callable[[], bool] = lambda: False,
        **sync_options: Any,
    ) -> None:
        super().__init__(settings, save, tokens, scope, demo=demo, accounts=accounts, sync_options=sync_options)
        self.folder = folder
        self._metered = metered

    def path(self, account: str) -> Path:
        from searchdesk_server.archive.store import account_file
        from searchdesk_server.coverage.store import path_for

        return (self.folder / account_file(account)) if self.folder else path_for(account)

    def writer(self, account: str) -> CoverageStore:
        """A store to write (the watch's thread; Settings' Pause and Delete)."""
        from searchdesk_server.coverage.records import CoverageDamaged
        from searchdesk_server.coverage.store import recover

        path = self.path(account)
        try:
            return CoverageStore.open(path, check=True)
        except CoverageDamaged:
            recovery = recover(path)  # set aside, never deleted, as the archive's
            log.warning("coverage: a damaged file was set aside; %d pages kept", recovery.pages)
            return CoverageStore.open(path)

    @property
    def should_ask(self) -> bool:
        """Once, after sign-in and after the archive's question was answered; never in the demo."""
        return (
            not self.demo
            and not self.settings.coverage_asked
            and bool(self.settings.archive_asked)
            and bool(self._accounts())
        )

    def scope(self) -> Scope:
        """What the watch may work on now: the accounts Claude may use and the allowed properties."""
        return self._scope() if self.on else Scope()

    def _new_sync(self) -> CoverageSync:
        from searchdesk_server.quota import QuotaBook

        from .coverage_sync import CoverageSync

        return CoverageSync(
            self._writer_for_thread(), QuotaBook(), self._tokens, metered=self._metered, **self._sync_options
        )

    def _writer_for_thread(self) -> Callable[[str], CoverageStore]:
        opened: dict[str, CoverageStore] = {}

        def get(account: str) -> CoverageStore:
            if account not in opened:
                opened[account] = self.writer(account)
            return opened[account]

        return get

    def pause(self, account: str, site: str, paused: bool) -> None:
        with self.writer(account) as store:
            state = store.watch(site) or WatchState(switched_on=True)
            store.set_watch(site, WatchState(state.switched_on, paused, state.pass_started, state.next_pass))
        self.refresh()

    def lines(self) -> list[WatchLine]:
        """Every watched property of every account the app knows, read with a reader's connection."""
        scope = self.scope()
        out: list[WatchLine] = []
        for account in self._accounts():
            store = CoverageStore.open_readonly(self.path(account))
            if store is None:
                continue
            with store:
                for site in store.sites():
                    counts = store.counts(site)
                    state = store.watch(site)
                    paused = bool(state and state.paused)
                    text = line_text(
                        counts.known,
                        counts.by_verdict.get("PASS", 0),
                        counts.inspected,
                        state.next_pass if state else None,
                        self.on and not paused,
                    )
                    watched = account in scope.accounts and scope.site_ok(site)
                    out.append(WatchLine(account, site, text, paused, watched))
        return out

    def has_copy(self, account: str) -> bool:
        """Whether the account has watch files here (its file, or a damaged one set aside): only then is
        the person asked to keep or delete them."""
        kept, aside = account_files(self.path(account))
        return not self.demo and bool(kept or aside)

    def delete(self, account: str, site: str | None, done: Callable[[], None] = lambda: None) -> None:
        """The person's Delete (a property's, or an account's whole file), on a thread of its own."""

        def work() -> None:
            if site is None:  # the account's file, and the damaged ones set aside beside it
                kept, aside = account_files(self.path(account))
                for file in (*kept, *aside):
                    file.unlink(missing_ok=True)
            else:
                with self.writer(account) as store:
                    store.delete_site(site)

        self._in_background(work, done)


def metered_watch() -> Callable[[], bool]:
    """The system's word on a metered connection, on the Qt thread (coverage_sync.Metered). Imported
    only when the app starts: the watch's thread and its network code are not loaded before."""
    from .coverage_sync import Metered

    try:
        return Metered()
    except Exception:  # no network information on this system: not known to be metered
        log.info("coverage: the system does not say whether the connection is metered")
        return lambda: False
