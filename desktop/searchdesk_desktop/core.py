"""The app's state and actions, shared by the tray, the main window and the headless check.

One object owns the Google accounts, the agent listener, the approval book and the Claude Desktop
entry; windows only show its state (``changed``, and the ``accounts`` list model) and call its
actions. Slow work (the keyring, Google, the self-check) runs on worker threads and comes back
through queued signals.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import threading
import time
import webbrowser
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from searchdesk_server.agent.protocol import AccountInfo, ErrorCode, client_project
from searchdesk_server.config import ConfigError, parse_sites
from searchdesk_server.google import grants
from searchdesk_server.journal.paths import all_journals
from searchdesk_server.properties import covers

from . import __version__, claude_found, extension, keeping
from . import claude_config as cc
from .account_list import Account as Account  # the windows read it from here
from .account_list import AccountRow, AccountsModel
from .account_store import AccountRef, AccountStore
from .approval.book import ApprovalBook, State
from .keystore import CorruptRecord, KeyStore, KeystoreError, SignInRecord
from .listener import AgentListener, SignedOut
from .settings import AppSettings, settings_file
from .signin import (
    SIGN_IN_TIMEOUT,
    LoopbackSignIn,
    OAuthClient,
    SignInError,
    load_client_file,
    load_service_account_file,
    packaged_client,
    revoke,
)
from .tokens import DemoTokens, OAuthTokens, ServiceAccountTokens, TokenProvider

log = logging.getLogger(__name__)

TESTING_LIFETIME = 7 * 24 * 3600
TESTING_WARN_BEFORE = 2 * 24 * 3600
#: How often a running app looks whether a new day began (then it removes what is older than Settings'
#: Kept for). Hourly, not daily: a computer asleep overnight stops a day-long timer's clock with it.
KEEPING_CHECK_MS = 3_600_000

#: What "Check it works" says when it fails, in the app's words (the server's are for its command line).
CHECK_WORDS = {
    "not_configured": "Claude would get no data: SearchDesk has no Google account to use yet. Finish step 1, "
    "then check again.",
    "auth": "Google no longer accepts your sign-in. Sign in again (step 1), then check again.",
    "api_not_enabled": "The Search Console API is turned off in your Google Cloud project. Turn it on (the "
    "message below names the page), then check again.",
    "missing_scope": "Your Google sign-in did not allow everything SearchDesk needs. Sign in again (step 1) "
    "and allow each access Google asks for.",
    "permission": "This Google account has no access to that property in Search Console.",
    "quota": "Google's daily limit for this is used up. Try again tomorrow.",
    "network": "SearchDesk could not reach Google. Check your internet connection (or proxy), then check again.",
    "start": "SearchDesk did not start. What it said is under Details for support.",
    "switched_off": "Listing your properties is switched off in Settings, and the check needs it. Offer the "
    "Properties tools (or every tool), then check again.",
    "no_properties": "Your Google account has no Search Console properties yet. Add your site in Search Console first.",
    "error": "SearchDesk got an error instead of your data. What it said is under Details for support.",
}


def check_verdict(report: Any) -> str:
    """The check's verdict in the app's words (the server's own are written for its command line)."""
    return str(report.verdict) if report.ok else CHECK_WORDS.get(report.kind, report.verdict)


@dataclass(frozen=True)
class AccountStatus:
    """The default account at a glance (the main window's first step and the tray)."""

    state: Account
    account: str = ""
    detail: str = ""  # one plain sentence for the UI
    warning: str = ""  # e.g. a Testing app's 7-day limit
    store: str = ""  # which keyring holds the sign-in
    warning_due: bool = False  # the limit is near: say it loudly
    damaged: bool = False  # the keyring holds something under our name that is not a sign-in: sign out clears it
    details: str = ""  # for support only (which keyrings were tried and why not): "Details for support"

    @property
    def ok(self) -> bool:
        return self.state in (Account.DEMO, Account.SIGNED_IN, Account.SERVICE_ACCOUNT)

    @property
    def short(self) -> str:
        return {
            Account.DEMO: "Demo (no Google account)",
            Account.SIGNED_OUT: "Not signed in",
            Account.SIGNED_IN: f"Signed in as {self.account or 'your Google account'}",
            Account.SERVICE_ACCOUNT: f"Service account {self.account}",
            Account.EXPIRED: "Sign-in expired: sign in again",
            Account.KEYRING: "Keyring unavailable",
        }[self.state]


@dataclass(frozen=True)
class ClaudeStatus:
    check: cc.EntryCheck
    connected: int  # servers connected to this app right now
    extension: Path | None = None  # an installed SearchDesk extension (.mcpb) in Claude Desktop
    extension_version: str = ""  # the version its manifest names
    demo: bool = False  # this app runs the demo

    @property
    def extension_is_ours(self) -> bool:
        """The extension is this app's: this version, and never in the demo (an extension is always real)."""
        return self.extension is not None and not self.demo and self.extension_version == __version__

    @property
    def short(self) -> str:
        state = self.check.state
        if self.extension is not None and state is cc.EntryState.ABSENT:
            text = "Claude Desktop: added (extension)" if self.extension_is_ours else "Claude Desktop: needs attention"
        else:
            text = {
                cc.EntryState.ABSENT: "Claude Desktop: not added",
                cc.EntryState.OK: "Claude Desktop: added" + (" (demo)" if self.check.demo else ""),
                cc.EntryState.OTHER_MODE: "Claude Desktop: set up for "
                + ("the demo" if self.check.demo else "your real account"),
                cc.EntryState.OTHER_COPY: "Claude Desktop: needs repair",
                cc.EntryState.BROKEN: "Claude Desktop: needs repair",
                cc.EntryState.OWN_CREDENTIALS: "Claude Desktop: uses other Google credentials",
                cc.EntryState.INVALID_FILE: "Claude Desktop: settings file unreadable",
            }[state]
        if self.connected:
            text += f", {self.connected} connected now"
        return text


@dataclass(frozen=True)
class CheckSubject:
    """What a check's result is about: the Google account and the entry Claude Desktop will use.

    A result stands only while both are unchanged; ``key`` compares them.
    """

    account: str  # "you@example.com", "the demo", "no Google account"
    entry: str  # "Claude Desktop's SearchDesk entry", …
    key: tuple[str, ...]


@dataclass(frozen=True)
class SeenSites:
    """The properties the last check's Google accounts listed: what Settings offers to pick from, and
    its evidence that a default property is one no account Claude may use can see.

    Kept apart from the check's result, which stops holding when the settings change (Settings itself
    changes them): the accounts' properties do not change with the settings.
    """

    sites: tuple[str, ...]
    #: The accounts the check read (casefolded addresses); empty when it named none (the demo, one account).
    accounts: frozenset[str]
    #: The allowed properties in force at the check (the server lists only those); () for every property.
    allowed: tuple[str, ...]

    def unseen(self, prop: str, accounts: Iterable[str]) -> bool:
        """Is ``prop`` a property none of ``accounts`` (those Claude may use now) could see at the check?
        False whenever the check cannot tell: an account it did not read, or a property it was not
        allowed to list."""
        if self.accounts and not {a.casefold() for a in accounts} <= self.accounts:
            return False
        listable = not self.allowed or any(covers(a, prop) for a in self.allowed)
        return listable and prop not in self.sites


class Core(QObject):
    changed = Signal()
    signin_done = Signal(str)  # "" on success, else the message for the person
    check_done = Signal(object)  # a selfcheck.CheckReport, or a str explaining why it could not run
    _call_main = Signal(object)  # run a callable on the Qt thread

    def __init__(
        self,
        *,
        demo: bool = False,
        settings_path: Path | None = None,
        claude_path: Path | None = None,
        keystore: KeyStore | None = None,
        socket_path: str | None = None,
        server: cc.ServerCommand | None = None,
        auth_uri: str = grants.AUTH_URL,
        open_browser: Callable[[str], object] = webbrowser.open,
        bundle: Path | None = None,
        open_file: Callable[[Path], bool] = extension.open_with_system,
        find_claude: Callable[..., claude_found.Found | None] = claude_found.on_this_computer,
    ) -> None:
        super().__init__()
        #: Where Claude Desktop is looked for (claude_found.py; a test's computer passes its own home).
        self._find_claude = find_claude
        self.demo = demo
        #: Whether Settings offers "Tell me when a new SearchDesk is out" (the app sets it from its update
        #: check: false in the demo and in a build without the release key).
        self.updates_offered = False
        self.settings_path = settings_path or settings_file(demo)
        self.settings = AppSettings.load(self.settings_path)
        self.claude_path = claude_path or cc.locate()
        self.keystore = keystore or KeyStore()
        self.server = server or cc.server_command()
        self._auth_uri = auth_uri  # Google's consent page, which only the browser opens (a test serves its own)
        self._open_browser = open_browser
        #: The .mcpb this build ships (None in development and on Linux): "Add" opens it.
        self.bundle = bundle if bundle is not None else extension.find_bundle()
        self._open_file = open_file
        self.bundle_opened = False  # this session handed the .mcpb to Claude Desktop
        self.book = ApprovalBook()
        #: The Google accounts: the list (settings) and their sign-ins (keyring), and the rows the windows show.
        self.store = AccountStore(self.keystore, self.settings, settings_path)
        self.accounts = AccountsModel()
        self.listener = AgentListener(self.book, self, demo=demo, path=socket_path)
        self.listener_error = ""
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="searchdesk-core")
        self._providers: dict[str, TokenProvider] = {}  # by account key, made on a server's first request
        self._provider_lock = threading.Lock()
        self._records: dict[str, SignInRecord] = {}  # the sign-ins as last read, by account key
        self._expired: set[str] = set()  # account keys whose sign-in Google refused to refresh
        self._counts: dict[str, int] = {}  # account key -> properties it saw at the last check
        #: The properties the accounts listed at the last check that listed them (None: no check yet).
        self.seen_sites: SeenSites | None = None
        self._problem: AccountStatus | None = None  # the keyring could not be read at all
        self._account = AccountStatus(Account.DEMO if demo else Account.SIGNED_OUT)
        self._signin: LoopbackSignIn | None = None
        #: While signing in: the consent page's address (the person may need to open it themselves)
        #: and when the wait ends (monotonic).
        self.signin_url = ""
        self.signin_deadline = 0.0
        self._check: Any = None
        self._check_for: tuple[str, ...] = ()
        self._call_main.connect(self._run_main)
        self.listener.token_error.connect(self._token_error)
        self.listener.activity.connect(self.changed)
        self.listener.started_by.connect(self._started_by)
        self.listener.connections_changed.connect(self.changed)
        self.book.on_change.append(lambda entry: self.changed.emit())
        #: The record of changes (keeping.py): removals run one at a time on a thread of their own, never
        #: on the Qt thread (a server holding the journal's lock can make one wait five seconds), and
        #: never in `_pool` (token requests from servers must not queue behind them).
        self._record_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="searchdesk-record")
        self._record_timer = QTimer(self)
        self._record_timer.setInterval(KEEPING_CHECK_MS)
        self._record_timer.timeout.connect(self.keep_record)
        self._kept_on: tuple[date, int] | None = None  # the day and setting of the last removal
        #: What went wrong the last time the record was shortened or cleared ('' when nothing did).
        self.record_problem = ""

    # --- lifetime ---------------------------------------------------------------------------
    def start(self) -> None:
        try:
            self.listener.start()
            log.info("listening for SearchDesk servers")
        except Exception as exc:  # the window explains; approvals then fall back to the two-call token
            self.listener_error = str(exc)
            log.warning("agent socket unavailable: %s", type(exc).__name__)
        self.refresh_account()

    def stop(self, *, wait: bool = False) -> None:
        """Stop listening and cancel what has not started. With ``wait``, also wait for the work already
        running in the pool: a caller that deletes this object right after (the UI walk, the screenshots)
        must, or a worker's last signal would be emitted on a deleted object and crash the process."""
        if self._signin is not None:
            self._signin.cancel()
        self.listener.close()
        self._pool.shutdown(wait=wait, cancel_futures=True)
        self._record_timer.stop()
        self._record_pool.shutdown(wait=wait, cancel_futures=True)

    @Slot(object)
    def _run_main(self, fn: Callable[[], None]) -> None:
        fn()

    def _later(self, fn: Callable[[], None]) -> None:
        self._call_main.emit(fn)

    # --- the record of changes: how long it is kept, and clearing it (keeping.py) ---------------
    def record_paths(self) -> list[Path]:
        """The journals this app shows and looks after: the demo's alone in the demo."""
        return all_journals(demo=self.demo)

    def start_keeping(self) -> None:
        """The app started: remove what is older than Settings' Kept for, and again each new day."""
        self.keep_record()
        self._record_timer.start()

    def keep_record(self) -> None:
        """Remove the rows older than the setting, at most once a day and setting (on the worker)."""
        days = keeping.kept_for(self.settings.kept_for_days)
        key = (date.today(), days)
        if key == self._kept_on:
            return
        self._kept_on = key
        self._on_record_pool(lambda: keeping.prune(self.record_paths(), days), None)

    def set_kept_for(self, days: int) -> None:
        """Settings' Kept for: saved, and a shorter time applies at once."""
        self.settings.kept_for_days = keeping.kept_for(days)
        self.settings.save(self.settings_path)
        self.keep_record()

    def clear_record(self, done: Callable[[str], None]) -> None:
        """Clear the record (the person confirmed); `done` gets '' or what went wrong, on the Qt thread."""
        self._on_record_pool(lambda: keeping.clear(self.record_paths()), done)

    def _on_record_pool(self, work: Callable[[], list[keeping.Removal]], done: Callable[[str], None] | None) -> None:
        def run() -> None:
            try:
                removals = work()
            except Exception:  # a bug, not a journal refusing: still answer, so Settings never waits
                log.exception("the record of changes could not be shortened or cleared")
                removals = [keeping.Removal(Path(), error="SearchDesk could not change its record of changes.")]
            self._later(lambda: self._record_done(removals, done))

        try:
            self._record_pool.submit(run)
        except RuntimeError:  # stopping: nothing more is removed
            pass

    def _record_done(self, removals: list[keeping.Removal], done: Callable[[str], None] | None) -> None:
        """On the Qt thread, after a removal: the app's note of the newest row moves to the checkpoint."""
        keeping.note_seen(removals)
        self.record_problem = keeping.problems(removals)
        if done is None and any(r.error for r in removals):
            self._kept_on = None  # a journal was busy or unwritable: the next hourly look tries again
        if done is not None:
            done(self.record_problem)
        self.changed.emit()

    # --- accounts ---------------------------------------------------------------------------
    @property
    def account(self) -> AccountStatus:
        """The default account (what the first step of the main window and the tray show)."""
        return self._account

    def refresh_account(self) -> None:
        """Read the accounts again (moving an earlier version's sign-in into the list first)."""
        self._problem = None
        if not self.demo:
            try:
                self.store.migrate()
            except KeystoreError as exc:
                damaged = isinstance(exc, CorruptRecord)
                self._problem = AccountStatus(
                    Account.KEYRING, detail=str(exc), damaged=damaged, details=getattr(exc, "details", "")
                )
        self.accounts.set_rows([] if self.demo else [self._row(ref) for ref in self.store.refs])
        self._account = self._compute_account()
        self.changed.emit()

    def _row(self, ref: AccountRef) -> AccountRow:
        default = self.store.default
        common: dict[str, Any] = {
            "default": default is not None and default.key == ref.key,
            "for_claude": self.store.for_claude(ref),
            "properties": self._counts.get(ref.key),
        }
        if ref.kind == "service_account":
            try:
                key = load_service_account_file(Path(ref.key_file))
            except SignInError as exc:
                detail = f"The service-account key file cannot be used: {exc}"
                return AccountRow(
                    ref.email, ref.kind, Account.SIGNED_OUT, detail=detail, key_file=ref.key_file, **common
                )
            return AccountRow(
                ref.email,
                ref.kind,
                Account.SERVICE_ACCOUNT,
                detail=f"Using the service-account key in {key.path}.",
                key_file=ref.key_file,
                quota_project=key.info.get("project_id", ""),
                **common,
            )
        try:
            store = self.keystore.place
            record = self.keystore.load(ref.email)
        except CorruptRecord:  # signing in again writes a good record over it
            detail = (
                "SearchDesk's saved sign-in for this account is damaged (something else changed it). Sign in again."
            )
            return AccountRow(ref.email, ref.kind, Account.EXPIRED, detail=detail, **common)
        except KeystoreError as exc:
            return AccountRow(ref.email, ref.kind, Account.KEYRING, detail=str(exc), **common)
        if record is None:
            self._records.pop(ref.key, None)
            detail = "This sign-in is no longer in your keyring. Sign in again, or remove the account."
            return AccountRow(ref.email, ref.kind, Account.EXPIRED, detail=detail, **common)
        self._records[ref.key] = record
        project = client_project(record.client_id)
        if ref.key in self._expired:
            detail = "Google no longer accepts this sign-in. Sign in again."
            return AccountRow(ref.email, ref.kind, Account.EXPIRED, detail=detail, quota_project=project, **common)
        warning, due = "", False
        if self._testing(record):
            ends = record.issued_at + TESTING_LIFETIME
            when = time.strftime("%a %d %b, %H:%M", time.localtime(ends))
            warning = (
                "This sign-in may end 7 days after it began, around "
                f"{when}: Google does that while the Google Cloud project it signs in with is in 'Testing'. "
                "Sign in again then."
            )
            due = ends - time.time() <= TESTING_WARN_BEFORE
        return AccountRow(
            ref.email,
            ref.kind,
            Account.SIGNED_IN,
            detail=f"Your sign-in is kept in {store}.",
            warning=warning,
            warning_due=due,
            quota_project=project,
            **common,
        )

    def _compute_account(self) -> AccountStatus:
        if self.demo:
            return AccountStatus(Account.DEMO, "demo", "The demo answers with made-up data; no Google account is used.")
        if self._problem is not None:
            return self._problem
        default = self.store.default
        row = self.accounts.find(default.email) if default is not None else None
        if row is None:
            if self.settings.service_account_file:  # an earlier version's key file that cannot be read now
                try:
                    load_service_account_file(Path(self.settings.service_account_file))
                except SignInError as exc:
                    return AccountStatus(
                        Account.SIGNED_OUT, detail=f"The service-account key file cannot be used: {exc}"
                    )
            try:
                store = self.keystore.place
            except KeystoreError as exc:
                return AccountStatus(Account.KEYRING, detail=str(exc), details=getattr(exc, "details", ""))
            return AccountStatus(
                Account.SIGNED_OUT, detail="Sign in with Google so Claude can read your data.", store=store
            )
        store = "" if row.kind == "service_account" else self.keystore.place
        return AccountStatus(row.state, row.email, row.detail, row.warning, store, row.warning_due)

    def _testing(self, record: SignInRecord) -> bool:
        if record.client_kind == "own":
            return True
        try:
            return packaged_client().testing
        except SignInError:
            return False

    def usable(self) -> list[AccountInfo]:
        """For the listener (on the Qt thread): the accounts Claude may use, the default marked."""
        if self.demo:
            return [AccountInfo(DemoTokens.account, "oauth", default=True)]
        default = self.store.claude_default()
        return [
            AccountInfo(
                row.email,
                row.kind,
                default=default is not None and default.key == row.email.casefold(),
                quota_project=row.quota_project,
            )
            for row in self.accounts.rows
            if row.for_claude
        ]

    def provider(self, account: str | None = None) -> TokenProvider:
        """For the listener (on a worker thread): what hands out access tokens for `account` (one of
        `usable`; None: Claude's default). Made on first use, from the key file or the keyring."""
        with self._provider_lock:
            if self.demo:
                return self._providers.setdefault("demo", DemoTokens())
            ref = self.store.find(account) if account is not None else self.store.claude_default()
            if ref is None:
                raise SignedOut()
            cached = self._providers.get(ref.key)
            if cached is not None:
                return cached
            provider: TokenProvider
            if ref.kind == "service_account":
                key = load_service_account_file(Path(ref.key_file))
                provider = ServiceAccountTokens(key)
            else:
                record = self.keystore.load(ref.email)
                if record is None:
                    raise SignedOut()
                provider = OAuthTokens(self._client_for(record), record)
            self._providers[ref.key] = provider
            return provider

    def _client_for(self, record: SignInRecord) -> OAuthClient:
        if record.client_kind == "own":
            return OAuthClient(record.client_id, record.client_secret, "own", testing=True)
        client = packaged_client()
        if client.client_id != record.client_id:
            raise SignedOut()  # signed in with another build's client: sign in again
        return client

    def _forget_provider(self, key: str) -> None:
        """The tokens of this account are made afresh next time (from its new record or key file)."""
        with self._provider_lock:
            self._providers.pop(key, None)

    @Slot(object, str)
    def _token_error(self, code: ErrorCode, account: str) -> None:
        key = account.casefold()
        if code is ErrorCode.REFRESH_FAILED and key and key not in self._expired:
            self._expired.add(key)
            self._forget_provider(key)
            self.refresh_account()

    def remove_account(self, email: str) -> None:
        """Forget an account: a sign-in is revoked at Google (in the background) and leaves the keyring;
        a key file is simply no longer used. The others are untouched; the next call goes to them."""
        record = self.store.remove(email)
        if record is not None:
            self._pool.submit(revoke, record.refresh_token)
        key = email.casefold()
        self._expired.discard(key)
        self._records.pop(key, None)
        self._counts.pop(key, None)
        self._forget_provider(key)
        self.refresh_account()
        log.info("removed an account")

    def set_default_account(self, email: str) -> None:
        self.store.set_default(email)
        self.refresh_account()

    def set_claude_may_use(self, email: str, allowed: bool) -> None:
        """Settings: whether Claude may use this account (a withheld one is not listed to servers and
        gets no token)."""
        self.store.set_for_claude(email, allowed)
        self.refresh_account()

    # --- sign-in ----------------------------------------------------------------------------
    def scopes(self) -> tuple[str, ...]:
        from searchdesk_server import config as server_config

        tools, _ = server_config.select_tools(self.settings.read_only, tuple(self.settings.groups), ())
        conf = server_config.Config(
            credential=server_config.Credential("desktop", "SearchDesk app"),
            read_only=self.settings.read_only,
            tools=tools,
        )
        return conf.scopes

    def oauth_client(self) -> OAuthClient:
        """The build's OAuth client; NoOAuthClient in development (the window offers the choices)."""
        return packaged_client()

    def sign_in(self, client: OAuthClient | None = None) -> str:
        """Open the browser at Google's consent page; ``signin_done`` reports the outcome."""
        client = client or self.oauth_client()
        if self._signin is not None:
            self._signin.cancel()
        flow = LoopbackSignIn(client, self.scopes(), open_browser=self._open_browser, auth_uri=self._auth_uri)
        self._signin = flow
        url = flow.start()
        self.signin_url = url
        self.signin_deadline = time.monotonic() + SIGN_IN_TIMEOUT
        log.info("sign-in started")
        self._pool.submit(self._finish_sign_in, flow)
        return url

    def sign_in_again(self, email: str | None = None) -> str:
        """One click: the same OAuth client as the sign-in of `email` (default: the default account's)."""
        ref = self.store.find(email) if email is not None else self.store.default
        record = self._records.get(ref.key) if ref is not None else None
        if record is not None and record.client_kind == "own":
            return self.sign_in(OAuthClient(record.client_id, record.client_secret, "own", testing=True))
        return self.sign_in()

    def sign_in_with_client_file(self, path: Path) -> str:
        return self.sign_in(load_client_file(path, "own"))

    def _finish_sign_in(self, flow: LoopbackSignIn) -> None:
        record: SignInRecord | None = None
        try:
            record = self.store.save_sign_in(flow.wait())
            message = ""
        except (SignInError, KeystoreError) as exc:
            message = str(exc)
        except Exception:
            log.exception("sign-in failed")
            message = "The sign-in did not finish. Try again."

        def done() -> None:
            if self._signin is flow:
                self._signin = None
                self.signin_url = ""
            if record is not None:  # a new account, or a fresh sign-in of one already here
                ref = self.store.add_sign_in(record)
                self._expired.discard(ref.key)
                self._forget_provider(ref.key)
                log.info("sign-in finished")
            self.refresh_account()
            self.signin_done.emit(message)

        self._later(done)

    def cancel_sign_in(self) -> None:
        if self._signin is not None:
            self._signin.cancel()

    @property
    def signing_in(self) -> bool:
        return self._signin is not None

    def signin_seconds_left(self) -> int:
        return max(0, int(self.signin_deadline - time.monotonic()))

    def use_service_account(self, path: Path) -> None:
        """Add a service-account key file as an account (its path; the key stays in that file).
        Raises SignInError when the file is not a service-account key."""
        ref = self.store.add_key_file(path)
        self._forget_provider(ref.key)
        self.refresh_account()

    def sign_out(self) -> None:
        """Sign out of the default account (revoked at Google in the background, gone from the keyring),
        or clear what an earlier version left that cannot be used."""
        default = self.store.default
        if default is not None:
            self.remove_account(default.email)
            return
        try:
            self.keystore.delete_legacy()  # an unreadable record under our name
        except KeystoreError as exc:
            log.warning("could not delete the sign-in: %s", type(exc).__name__)
        self.settings.service_account_file = ""
        self.settings.save(self.settings_path)
        self.refresh_account()
        log.info("signed out")

    # --- Claude Desktop ---------------------------------------------------------------------
    def agent_socket_for_entry(self) -> str:
        return "" if sys.platform == "win32" else (self.listener.path or "")

    def _started_by(self, name: str, version: str) -> None:
        """A server said who started it: only Claude Desktop's own name counts for step 3 (the self-check's
        servers name themselves otherwise); remembered across restarts."""
        if name.strip().casefold() != claude_found.CLAUDE_DESKTOP_CLIENT:
            return
        self.settings.claude_seen_at = time.time()
        self.settings.claude_seen_version = version
        self.settings.save(self.settings_path)
        self.changed.emit()

    def claude_seen(self) -> tuple[float, str] | None:
        """When a server Claude Desktop started last connected to this app, and the version it gave."""
        at = self.settings.claude_seen_at
        return (at, self.settings.claude_seen_version) if at > 0 else None

    def _note_claude_folder(self) -> None:
        """Remember, before SearchDesk first writes there, whether Claude Desktop's settings folder exists."""
        if not self.settings.claude_folder_before:
            self.settings.claude_folder_before = "yes" if self.claude_path.parent.is_dir() else "no"
            self.settings.save(self.settings_path)

    def claude_evidence(self) -> claude_found.Found | None:
        """The evidence that Claude Desktop is on this computer (claude_found.py); None: step 2 is not green."""
        return self._find_claude(
            settings_predated=self.settings.claude_folder_before == "yes", connected=self.claude_seen() is not None
        )

    def claude_status(self) -> ClaudeStatus:
        check = cc.check(self.claude_path, self.server, self.agent_socket_for_entry(), demo=self.demo)
        if check.entry is None and not self.settings.claude_folder_before:
            self._note_claude_folder()  # nothing of ours there yet: what is there is Claude Desktop's
        installed = extension.installed_extension(self.claude_path)
        version = extension.extension_version(installed) if installed is not None else ""
        return ClaudeStatus(check, self.listener.connection_count, installed, version, self.demo)

    def add_method(self) -> extension.Method:
        return extension.choose_method(self.bundle, demo=self.demo)

    def open_extension(self) -> bool:
        """Hand the .mcpb to Claude Desktop (its install dialog takes over); False: use the settings file."""
        if self.bundle is None:
            return False
        self.bundle_opened = extension.open_bundle(self.bundle, self._open_file)
        self.changed.emit()
        return self.bundle_opened

    def add_to_claude(self, *, allow_demo: bool = False, replace_real: bool = False) -> cc.Change:
        """Write this app's own entry: this server, this mode, this socket and this mode's settings."""
        settings = self.settings.server_settings(demo=self.demo, agent_socket=self.agent_socket_for_entry())
        self._note_claude_folder()
        change = cc.add(self.claude_path, self.server, settings, allow_demo=allow_demo, replace_real=replace_real)
        log.info("Claude Desktop entry %s", "written" if change.changed else "already up to date")
        self.changed.emit()
        return change

    def repair_claude(self) -> cc.Change:
        change = cc.repair(self.claude_path, self.server, self.agent_socket_for_entry())
        self.changed.emit()
        return change

    # --- settings that reach the server -----------------------------------------------------
    def apply_settings(
        self, *, read_only: bool, groups: list[str], site_url: str, allowed_sites: list[str]
    ) -> cc.Change:
        """Save the settings and re-write them into our Claude Desktop entry, if there is one.

        Raises ``ClaudeConfigError`` when the entry could not be updated; the settings are saved anyway.
        """
        self.settings.read_only = read_only
        self.settings.groups = list(groups)
        self.settings.site_url = site_url
        self.settings.allowed_sites = list(allowed_sites)
        self.settings.save(self.settings_path)
        log.info("settings saved")
        try:
            server = self.settings.server_settings(demo=self.demo, agent_socket=self.agent_socket_for_entry())
            change = cc.update_settings(self.claude_path, server)
        finally:
            self.changed.emit()
        if change.changed:
            log.info("Claude Desktop entry updated with the new settings")
        return change

    def missing_scopes(self) -> list[str]:
        """Scopes the chosen tools need that the present Google sign-in did not grant."""
        default = self.store.default
        record = self._records.get(default.key) if default is not None else None
        if self.demo or record is None or self._account.state is not Account.SIGNED_IN:
            return []
        return grants.missing_scopes(record.scopes, self.scopes())

    def remove_from_claude(self) -> cc.Change:
        change = cc.remove(self.claude_path)
        self.changed.emit()
        return change

    # --- check it works ---------------------------------------------------------------------
    def check_subject(self) -> CheckSubject:
        """The accounts and the entry a check run now would be about: the server checks every account
        Claude may use, so adding, removing or withholding one changes the subject too."""
        status = self.claude_status()
        account = self._account
        if account.state is Account.DEMO:
            who = "the demo (no Google account)"
        else:
            names = [
                row.email if row.state is Account.SIGNED_IN else f"the service account {row.email}"
                for row in self.accounts.rows
                if row.for_claude and row.ok
            ]
            if len(names) > 1:
                who = f"{', '.join(names[:-1])} and {names[-1]}"
            else:
                who = names[0] if names else "no Google account"
        accounts = tuple(f"{r.kind} {r.email} {r.state.value} {r.for_claude} {r.default}" for r in self.accounts.rows)
        entry = status.check.entry
        if entry is not None:
            what = "Claude Desktop's SearchDesk entry" + (" (the demo)" if cc.is_demo_entry(entry) else "")
            key = json.dumps(entry, sort_keys=True)
        elif status.extension is not None:
            what = "the SearchDesk extension in Claude Desktop"
            key = f"extension {status.extension} {status.extension_version}"
        else:
            what = "what SearchDesk will add to Claude Desktop"
            key = json.dumps(self.settings.server_settings(demo=self.demo).env(), sort_keys=True)
        return CheckSubject(who, what, (account.state.value, *accounts, key))

    @property
    def last_check(self) -> Any:
        """The last check's result (or BUSY, or a str), while it is still about what Claude will use."""
        if self._check is not None and self._check != "busy" and self.check_subject().key != self._check_for:
            self._check = None  # the account or the entry changed since: the result no longer holds
        return self._check

    @last_check.setter
    def last_check(self, value: Any) -> None:
        self._check = value
        self._check_for = self.check_subject().key
        self._count_properties(value)

    def _count_properties(self, report: Any) -> None:
        """Each account's row says how many properties it saw at the last check that could read it; and
        Settings learns which (``seen_sites``)."""
        self._remember_sites(report)
        counted = {a.name.casefold(): a.properties for a in getattr(report, "accounts", []) if not a.error}
        if counted:
            self._counts.update(counted)
            self.refresh_account()

    def _remember_sites(self, report: Any) -> None:
        """Keep the properties a check listed (an empty list only when the accounts have none)."""
        sites = getattr(report, "sites", None)
        if not sites and getattr(report, "kind", "") != "no_properties":
            return  # it listed nothing it could vouch for: what was learnt before still holds
        try:
            _default, allowed = parse_sites(self.check_env())
        except ConfigError:
            allowed = ()
        read = frozenset(a.name.casefold() for a in getattr(report, "accounts", []) if not a.error)
        self.seen_sites = SeenSites(tuple(sites or ()), read, allowed)

    def check_blocked(self) -> str:
        """Why a check now would not test what Claude Desktop will use ('' when it would)."""
        status = self.claude_status()
        state = status.check.state
        if state is cc.EntryState.OK:
            fine = status.extension is None  # else Claude has SearchDesk twice: step 2 says so
        elif state is cc.EntryState.ABSENT:
            fine = status.extension is None or status.extension_is_ours
        else:
            fine = False
        return "" if fine else "Put step 2 right first: the check must test what Claude Desktop will use."

    def check_command(self) -> list[str]:
        """The program Claude Desktop will start: our entry's (this app's server), or the extension's own copy.

        The extension route (macOS, Windows) is not exercised here: there is no Claude Desktop on Linux.
        """
        status = self.claude_status()
        if status.check.entry is None and status.extension is not None and status.extension_is_ours:
            name = "searchdesk-server.exe" if sys.platform == "win32" else "searchdesk-server"
            program = status.extension / "server" / name
            if cc.runnable(str(program)):
                return [str(program)]
        return self.server.argv()

    def check_env(self) -> dict[str, str]:
        """The environment Claude Desktop would give the server: a bare one plus our entry's env."""
        keep = ("HOME", "PATH", "USER", "LOGNAME", "LANG", "SYSTEMROOT", "APPDATA", "LOCALAPPDATA", "TMPDIR", "TEMP")
        env = {k: os.environ[k] for k in keep if k in os.environ}
        entry = cc.entry_env(self.claude_path)
        env.update(
            entry or self.settings.server_settings(demo=self.demo, agent_socket=self.agent_socket_for_entry()).env()
        )
        return env

    def run_check(self) -> None:
        self.last_check = "busy"
        self._pool.submit(self._run_check)

    def _run_check(self) -> None:
        try:
            from searchdesk_server.selfcheck import run_check
        except ImportError:
            result: Any = "The self-check is not available in this build."
        else:
            try:
                result = asyncio.run(run_check(self.check_command(), self.check_env()))
            except Exception:
                log.exception("the check could not run")
                result = "The check could not run. Try again; if it keeps failing, SearchDesk's log says why."

        def done() -> None:
            self._check = result  # about what it was started for (a change since clears it)
            self._count_properties(result)
            self.check_done.emit(result)
            self.changed.emit()

        self._later(done)

    # --- approvals --------------------------------------------------------------------------
    def pending_count(self) -> int:
        return sum(1 for e in self.book.open_entries() if e.state is State.PENDING)
