"""The app's state and actions, shared by the tray, the main window and the headless check.

One object owns the Google accounts, the agent listener, the approval book and the Claude Desktop
entry; windows only show its state (``changed``, and the ``accounts`` list model) and call its
actions. Slow work (the keyring, Google, the self-check) runs on worker threads and comes back
through queued signals.

The Core is the one facade the windows talk to; it is built from parts that live beside it, each in a
module of its own without Qt: the accounts (accounts/google_accounts.py) and the sign-in under way
(accounts/signin_flow.py), Claude Desktop (claude/desktop.py), the last check (check/last_check.py),
the record, the archive and the coverage watch (keeping/). The Core adds the threads, the signals and
the order of the steps.
"""

from __future__ import annotations

import logging
import sys
import webbrowser
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from searchdesk_server.agent.protocol import AccountInfo, ErrorCode
from searchdesk_server.google import grants

from .accounts.google_accounts import AccountStatus, GoogleAccounts, scopes_for
from .accounts.keystore import KeyStore, KeystoreError, SignInRecord
from .accounts.signin import OAuthClient, load_client_file, packaged_client, revoke
from .accounts.signin_flow import SignInFlow
from .accounts.tokens import TokenProvider
from .agent_socket.listener import AgentListener
from .approval.book import ApprovalBook, State
from .check import run as check_run
from .check.last_check import BUSY, LastCheck
from .check.run import CheckSubject, SeenSites
from .claude import config_file as cc
from .claude import extension
from .claude import found as claude_found
from .claude import install as claude_install
from .claude.desktop import ClaudeDesktop
from .claude.state import ClaudeStatus
from .keeping.archive_copier import Scope
from .keeping.archive_keeper import ArchiveKeeper
from .keeping.coverage_keeper import CoverageKeeper, metered_watch
from .keeping.record_keeper import KEEPING_CHECK_MS, RecordKeeper, kept_for
from .settings import AppSettings, settings_file

log = logging.getLogger(__name__)


class Core(QObject):
    changed = Signal()
    signin_done = Signal(str)  # "" on success, else the message for the person
    check_done = Signal(object)  # a stdio_check.CheckReport, or a str explaining why it could not run
    _call_main = Signal(object)  # run a callable on the Qt thread
    archive_deleted = Signal()  # a copy was deleted (on a worker): Settings' lines are read again

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
        archive_options: Mapping[str, Any] | None = None,
        coverage_options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.demo = demo
        #: The system whose rules step 2 follows (`sys.platform`; a test of another system's rules sets it).
        self.system = sys.platform
        #: Whether Settings offers "Tell me when a new SearchDesk is out" (the app sets it from its update
        #: check: false in the demo and in a build without the release key).
        self.updates_offered = False
        self.settings_path = settings_path or settings_file(demo)
        self.settings = AppSettings.load(self.settings_path)
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="searchdesk-core")
        self._call_main.connect(self._run_main)
        #: Claude Desktop: its settings file, our entry's server, the .mcpb this build ships (claude/desktop.py).
        self.claude = ClaudeDesktop(
            self.settings, self._save_settings, demo=demo, path=claude_path, server=server, bundle=bundle,
            open_file=open_file, find=find_claude,
        )  # fmt: skip
        self._hold_accounts(keystore, settings_path, open_browser, auth_uri)
        self._listen(socket_path)
        self.checks = LastCheck(self.check_subject, self.check_env, self._counted)  # the last check, what it taught
        self._keep_record()
        self._keep_archive_and_coverage(archive_options, coverage_options)

    # --- the parts, in the order they are made ------------------------------------------------
    def _hold_accounts(
        self,
        keystore: KeyStore | None,
        settings_path: Path | None,
        open_browser: Callable[[str], object],
        auth_uri: str,
    ) -> None:
        """The Google accounts: the list (settings) and their sign-ins (keyring), the rows the windows
        show, and the one sign-in under way."""
        self.keystore = keystore or KeyStore()
        self.google = GoogleAccounts(self.keystore, self.settings, settings_path, demo=self.demo)
        self.store = self.google.store
        self.accounts = self.google.rows
        self.signins = SignInFlow(
            self.store, self._pool, self._later, self._signed_in, open_browser=open_browser, auth_uri=auth_uri
        )

    def _listen(self, socket_path: str | None) -> None:
        """The agent socket and the approval book behind it; their news reaches the windows as ``changed``."""
        self.book = ApprovalBook()
        self.listener = AgentListener(self.book, self, demo=self.demo, path=socket_path)
        self.listener_error = ""
        self.listener.token_error.connect(self._token_error)
        self.listener.activity.connect(self.changed)
        self.listener.started_by.connect(self._started_by)
        self.listener.connections_changed.connect(self.changed)
        self.book.on_change.append(lambda entry: self.changed.emit())

    def _keep_record(self) -> None:
        """The record of changes (keeping/record_keeper.py): removals run one at a time on a thread of
        their own, never on the Qt thread (a server holding the journal's lock can make one wait five
        seconds), and never in `_pool` (token requests from servers must not queue behind them)."""
        self._record_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="searchdesk-record")
        self._record_timer = QTimer(self)
        self._record_timer.setInterval(KEEPING_CHECK_MS)
        self._record_timer.timeout.connect(self.keep_record)
        self.record_keeper = RecordKeeper(self._record_pool, self._later, self.changed.emit, demo=self.demo)

    def _keep_archive_and_coverage(
        self, archive_options: Mapping[str, Any] | None, coverage_options: Mapping[str, Any] | None
    ) -> None:
        """The archive and the coverage watch: each one's thread is made only after the person's yes, and
        is told the accounts Claude may use and the allowed properties each time they change
        (refresh_account); nothing is fetched or inspected before. The options are tests'."""

        def accounts() -> list[str]:
            return [ref.email for ref in self.store.refs]

        demo, save = self.demo, self._save_settings
        self.archive = ArchiveKeeper(
            self.settings, save, self._archive_token, self._archive_scope, demo=demo, accounts=accounts,
            on_copied=lambda: self._later(self.changed.emit), **dict(archive_options or {}),
        )  # fmt: skip
        self._metered: Callable[[], bool] = lambda: False  # the system's word, from start() on
        self.coverage = CoverageKeeper(
            self.settings, save, self._archive_token, self._archive_scope, demo=demo, accounts=accounts,
            metered=lambda: self._metered(), **dict(coverage_options or {}),
        )  # fmt: skip

    # --- lifetime ---------------------------------------------------------------------------
    def start(self) -> None:
        try:
            self.listener.start()
            log.info("listening for SearchDesk servers")
        except Exception as exc:  # the window explains; approvals then fall back to the two-call token
            self.listener_error = str(exc)
            log.warning("agent socket unavailable: %s", type(exc).__name__)
        self.refresh_account()
        self.archive.start()  # only if the person said yes
        self._metered = metered_watch()
        self.coverage.start()  # likewise

    def stop(self, *, wait: bool = False) -> None:
        """Stop listening and cancel what has not started. With ``wait``, also wait for the work already
        running in the pool: a caller that deletes this object right after (the UI walk, the screenshots)
        must, or a worker's last signal would be emitted on a deleted object and crash the process."""
        self.signins.cancel()
        self.listener.close()
        self._pool.shutdown(wait=wait, cancel_futures=True)
        self._record_timer.stop()
        self._record_pool.shutdown(wait=wait, cancel_futures=True)
        self.archive.stop(5.0 if wait else None)
        self.coverage.stop(5.0 if wait else None)

    def _save_settings(self) -> None:
        self.settings.save(self.settings_path)

    @Slot(object)
    def _run_main(self, fn: Callable[[], None]) -> None:
        fn()

    def _later(self, fn: Callable[[], None]) -> None:
        self._call_main.emit(fn)

    # --- the record of changes: how long it is kept, and clearing it (keeping/record_keeper.py) --
    def record_paths(self) -> list[Path]:
        """The journals this app shows and looks after: the demo's alone in the demo."""
        return self.record_keeper.paths()

    def start_keeping(self) -> None:
        """The app started: remove what is older than Settings' Kept for, and again each new day."""
        self.keep_record()
        self._record_timer.start()

    def keep_record(self) -> None:
        """Remove the rows older than the setting, at most once a day and setting (on the worker)."""
        self.record_keeper.keep(self.settings.kept_for_days)

    def set_kept_for(self, days: int) -> None:
        """Settings' Kept for: saved, and a shorter time applies at once."""
        self.settings.kept_for_days = kept_for(days)
        self.settings.save(self.settings_path)
        self.keep_record()

    def clear_record(self, done: Callable[[str], None]) -> None:
        """Clear the record (the person confirmed); `done` gets '' or what went wrong, on the Qt thread."""
        self.record_keeper.clear(done)

    @property
    def record_problem(self) -> str:
        """What went wrong the last time the record was shortened or cleared ('' when nothing did)."""
        return self.record_keeper.problem

    # --- accounts (accounts/google_accounts.py) ----------------------------------------------
    @property
    def account(self) -> AccountStatus:
        """The default account (what the first step of the main window and the tray show)."""
        return self.google.status

    def refresh_account(self) -> None:
        """Read the accounts again (moving an earlier version's sign-in into the list first)."""
        self.google.read()
        self.archive.refresh()  # a withheld or removed account is not copied for from its next request on
        self.coverage.refresh()  # nor inspected for
        self.changed.emit()

    def _archive_scope(self) -> Scope:
        """On the Qt thread: what the copier may copy now (the accounts Claude may use, the allowed
        properties)."""
        accounts = tuple(info.account for info in self.usable())  # as the listener lists them to servers
        return Scope(accounts=accounts, allowed_sites=tuple(self.settings.allowed_sites))

    def _archive_token(self, account: str, scopes: Sequence[str], force_refresh: bool) -> str:
        """On the copier's worker thread: an access token, from the same providers a server's come from."""
        return self.provider(account).access_token(scopes, force_refresh=force_refresh).token

    def usable(self) -> list[AccountInfo]:
        """For the listener (on the Qt thread): the accounts Claude may use, the default marked."""
        return self.google.usable()

    def provider(self, account: str | None = None) -> TokenProvider:
        """For the listener (on a worker thread): what hands out access tokens for `account` (one of
        `usable`; None: Claude's default). Made on first use, from the key file or the keyring."""
        return self.google.provider(account)

    @Slot(object, str)
    def _token_error(self, code: ErrorCode, account: str) -> None:
        if code is ErrorCode.REFRESH_FAILED and self.google.expire(account):
            self.refresh_account()

    def remove_account(self, email: str) -> None:
        """Forget an account: a sign-in is revoked at Google (in the background) and leaves the keyring;
        a key file is simply no longer used. The others are untouched; the next call goes to them."""
        record = self.google.remove(email)
        if record is not None:
            self._pool.submit(revoke, record.refresh_token)
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
        """What Google must allow for the tools Settings offers."""
        return scopes_for(self.settings)

    def oauth_client(self) -> OAuthClient:
        """The build's OAuth client; NoOAuthClient in development (the window offers the choices)."""
        return packaged_client()

    def sign_in(self, client: OAuthClient | None = None) -> str:
        """Open the browser at Google's consent page; ``signin_done`` reports the outcome."""
        return self.signins.start(client or self.oauth_client(), self.scopes())

    def sign_in_again(self, email: str | None = None) -> str:
        """One click: the same OAuth client as the sign-in of `email` (default: the default account's)."""
        record = self.google.record(email)
        if record is not None and record.client_kind == "own":
            return self.sign_in(OAuthClient(record.client_id, record.client_secret, "own", testing=True))
        return self.sign_in()

    def sign_in_with_client_file(self, path: Path) -> str:
        return self.sign_in(load_client_file(path, "own"))

    def _signed_in(self, record: SignInRecord | None, message: str) -> None:
        """On the Qt thread, when a sign-in ended: a new account, or a fresh sign-in of one already here."""
        if record is not None:
            self.google.add_sign_in(record)
            log.info("sign-in finished")
        self.refresh_account()
        self.signin_done.emit(message)

    def cancel_sign_in(self) -> None:
        self.signins.cancel()

    @property
    def signing_in(self) -> bool:
        return self.signins.running

    @property
    def signin_url(self) -> str:
        """While signing in: the consent page's address (the person may need to open it themselves)."""
        return self.signins.url

    def signin_seconds_left(self) -> int:
        return self.signins.seconds_left()

    def use_service_account(self, path: Path) -> None:
        """Add a service-account key file as an account (its path; the key stays in that file).
        Raises SignInError when the file is not a service-account key."""
        self.google.add_key_file(path)
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

    # --- Claude Desktop (claude/desktop.py) ------------------------------------------------
    def agent_socket_for_entry(self) -> str:
        return "" if sys.platform == "win32" else (self.listener.path or "")

    def _entry_settings(self) -> cc.ServerSettings:
        """What this app's entry carries: this mode's settings and this app's socket."""
        return self.settings.server_settings(demo=self.demo, agent_socket=self.agent_socket_for_entry())

    def _started_by(self, name: str, version: str) -> None:
        if self.claude.started_by(name, version):
            self.changed.emit()

    @property
    def claude_path(self) -> Path:
        """Claude Desktop's settings file, where our entry is written."""
        return self.claude.path

    @property
    def bundle_opened(self) -> bool:
        """Whether this session handed the .mcpb to Claude Desktop."""
        return self.claude.bundle_opened

    def claude_seen(self) -> tuple[float, str] | None:
        """When a server Claude Desktop started last connected to this app, and the version it gave."""
        return self.claude.seen()

    def claude_evidence(self) -> claude_found.Found | None:
        """The evidence that Claude Desktop is on this computer (claude/found.py); None: step 2 is not green."""
        return self.claude.evidence()

    def claude_desktop_offered(self) -> bool:
        """Whether step 2 offers to add SearchDesk to Claude Desktop (claude/install.py offers_claude_desktop)."""
        return claude_install.offers_claude_desktop(self.system, claude_found=self.claude_evidence() is not None)

    def claude_status(self) -> ClaudeStatus:
        return self.claude.status(self.agent_socket_for_entry(), self.listener.connection_count)

    def add_method(self) -> extension.Method:
        return self.claude.add_method()

    def open_extension(self) -> bool:
        """Hand the .mcpb to Claude Desktop (its install dialog takes over); False: use the settings file."""
        if self.claude.bundle is None:
            return False
        opened = self.claude.open_extension()
        self.changed.emit()
        return opened

    def add_to_claude(self, *, allow_demo: bool = False, replace_real: bool = False) -> cc.Change:
        """Write this app's own entry: this server, this mode, this socket and this mode's settings."""
        change = self.claude.add(self._entry_settings(), allow_demo=allow_demo, replace_real=replace_real)
        self.changed.emit()
        return change

    def repair_claude(self) -> cc.Change:
        change = cc.repair(self.claude_path, self.claude.server, self.agent_socket_for_entry())
        self.changed.emit()
        return change

    # --- settings that reach the server -----------------------------------------------------
    def apply_settings(
        self,
        *,
        read_only: bool,
        groups: list[str],
        site_url: str,
        allowed_sites: list[str],
        brand_terms: Mapping[str, list[str]] | None = None,
    ) -> cc.Change:
        """Save the settings and re-write them into our Claude Desktop entry, if there is one.
        `brand_terms`: the brand's names kept per property (None: as they are).

        Raises ``ClaudeConfigError`` when the entry could not be updated; the settings are saved anyway.
        """
        self.settings.choose(
            read_only=read_only, groups=groups, site_url=site_url, allowed_sites=allowed_sites, brand_terms=brand_terms
        )
        self.settings.save(self.settings_path)
        log.info("settings saved")
        try:
            change = cc.update_settings(self.claude_path, self._entry_settings())
        finally:
            self.changed.emit()
        if change.changed:
            log.info("Claude Desktop entry updated with the new settings")
        return change

    def missing_scopes(self) -> list[str]:
        """Scopes the chosen tools need that the present Google sign-in did not grant."""
        return self.google.missing_scopes(self.scopes())

    def remove_from_claude(self) -> cc.Change:
        change = cc.remove(self.claude_path)
        self.changed.emit()
        return change

    # --- check it works (check/run.py, check/last_check.py) ---------------------------------
    def check_subject(self) -> CheckSubject:
        """The accounts and the entry a check run now would be about: the server checks every account
        Claude may use, so adding, removing or withholding one changes the subject too."""
        planned = self.settings.server_settings(demo=self.demo).env()
        return check_run.check_subject(self.account.state, self.accounts.rows, self.claude_status(), planned)

    @property
    def last_check(self) -> Any:
        """The last check's result (or BUSY, or a str), while it is still about what Claude will use."""
        return self.checks.result

    @last_check.setter
    def last_check(self, value: Any) -> None:
        self.checks.keep(value)

    @property
    def seen_sites(self) -> SeenSites | None:
        """The properties the accounts listed at the last check that listed them (None: no check yet)."""
        return self.checks.seen_sites

    def _counted(self, counted: dict[str, int]) -> None:
        """Each account's row says how many properties it saw at the last check that could read it."""
        self.google.counted(counted)
        self.refresh_account()

    def check_blocked(self) -> str:
        """Why a check now would not test what Claude Desktop will use ('' when it would)."""
        return check_run.check_blocked(self.claude_status())

    def check_command(self) -> list[str]:
        """The program Claude Desktop will start: our entry's (this app's server), or the extension's own copy."""
        return check_run.check_command(self.claude_status(), self.claude.server)

    def check_env(self) -> dict[str, str]:
        """The environment Claude Desktop would give the server: a bare one plus our entry's env."""
        planned = self._entry_settings()
        return check_run.check_env(self.claude_path, planned.env())

    def run_check(self) -> None:
        self.last_check = BUSY
        self._pool.submit(self._run_check)

    def _run_check(self) -> None:
        result = check_run.run_check(self.check_command, self.check_env)

        def done() -> None:
            self.checks.finished(result)
            self.check_done.emit(result)
            self.changed.emit()

        self._later(done)

    # --- approvals --------------------------------------------------------------------------
    def pending_count(self) -> int:
        return sum(1 for e in self.book.open_entries() if e.state is State.PENDING)
