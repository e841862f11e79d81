"""The Google accounts as the app knows them: each one's state, its row and the token provider a server's
request is answered from.

`AccountStore` keeps the list (settings) and the sign-ins (keyring); this reads them into the rows the
windows show (`AccountsModel`) and into the default account's status, and remembers what the Core learns
about each account: Google refused its sign-in, the properties the last check saw. The Core owns the
threads and the signals; this holds the state they change.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from searchdesk_server.agent.protocol import AccountInfo, client_project
from searchdesk_server.google import grants

from ..refusals import SignedOut
from ..settings import AppSettings
from .keystore import CorruptRecord, KeyStore, KeystoreError, SignInRecord
from .model import AccountRow, AccountsModel, AccountState
from .signin import OAuthClient, SignInError, load_service_account_file, packaged_client
from .store import AccountRef, AccountStore
from .tokens import DemoTokens, OAuthTokens, ServiceAccountTokens, TokenProvider

TESTING_LIFETIME = 7 * 24 * 3600
TESTING_WARN_BEFORE = 2 * 24 * 3600


@dataclass(frozen=True)
class AccountStatus:
    """The default account at a glance (the main window's first step and the tray)."""

    state: AccountState
    account: str = ""
    detail: str = ""  # one plain sentence for the UI
    warning: str = ""  # e.g. a Testing app's 7-day limit
    store: str = ""  # which keyring holds the sign-in
    warning_due: bool = False  # the limit is near: say it loudly
    damaged: bool = False  # the keyring holds something under our name that is not a sign-in: sign out clears it
    details: str = ""  # for support only (which keyrings were tried and why not): "Details for support"

    @property
    def ok(self) -> bool:
        return self.state in (AccountState.DEMO, AccountState.SIGNED_IN, AccountState.SERVICE_ACCOUNT)

    @property
    def short(self) -> str:
        return {
            AccountState.DEMO: "Demo (no Google account)",
            AccountState.SIGNED_OUT: "Not signed in",
            AccountState.SIGNED_IN: f"Signed in as {self.account or 'your Google account'}",
            AccountState.SERVICE_ACCOUNT: f"Service account {self.account}",
            AccountState.EXPIRED: "Sign-in expired: sign in again",
            AccountState.KEYRING: "Keyring unavailable",
        }[self.state]


def scopes_for(settings: AppSettings) -> tuple[str, ...]:
    """The scopes a sign-in asks Google for: those the tools Settings offers need."""
    from searchdesk_server import config as server_config
    from searchdesk_server.credential_setting import Credential

    tools, _ = server_config.select_tools(settings.read_only, tuple(settings.groups), ())
    conf = server_config.Config(
        credential=Credential("desktop", "SearchDesk app"),
        read_only=settings.read_only,
        tools=tools,
    )
    return conf.scopes


class GoogleAccounts:
    """The accounts' state: read on the Qt thread (`read`), except `provider`, which a server's request
    calls on a worker thread (hence its lock)."""

    def __init__(
        self, keystore: KeyStore, settings: AppSettings, settings_path: Path | None, *, demo: bool = False
    ) -> None:
        self.demo = demo
        self.keystore = keystore
        self.settings = settings
        #: The list (settings) and their sign-ins (keyring), and the rows the windows show.
        self.store = AccountStore(keystore, settings, settings_path)
        self.rows = AccountsModel()
        self._providers: dict[str, TokenProvider] = {}  # by account key, made on a server's first request
        self._provider_lock = threading.Lock()
        self._records: dict[str, SignInRecord] = {}  # the sign-ins as last read, by account key
        self._expired: set[str] = set()  # account keys whose sign-in Google refused to refresh
        self._counts: dict[str, int] = {}  # account key -> properties it saw at the last check
        self._problem: AccountStatus | None = None  # the keyring could not be read at all
        self.status = AccountStatus(AccountState.DEMO if demo else AccountState.SIGNED_OUT)

    # --- reading --------------------------------------------------------------------------------
    def read(self) -> None:
        """Read the accounts again (moving an earlier version's sign-in into the list first)."""
        self._problem = None
        if not self.demo:
            try:
                self.store.migrate()
            except KeystoreError as exc:
                damaged = isinstance(exc, CorruptRecord)
                self._problem = AccountStatus(
                    AccountState.KEYRING, detail=str(exc), damaged=damaged, details=getattr(exc, "details", "")
                )
        self.rows.set_rows([] if self.demo else [self._row(ref) for ref in self.store.refs])
        self.status = self._compute_status()

    def record(self, email: str | None = None) -> SignInRecord | None:
        """The sign-in of `email` (default: the default account's) as last read; None for a key file."""
        ref = self.store.find(email) if email is not None else self.store.default
        return self._records.get(ref.key) if ref is not None else None

    def missing_scopes(self, wanted: Sequence[str]) -> list[str]:
        """Of ``wanted``, the scopes the default account's Google sign-in did not grant."""
        record = self.record()
        if self.demo or record is None or self.status.state is not AccountState.SIGNED_IN:
            return []
        return grants.missing_scopes(record.scopes, wanted)

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
                    ref.email, ref.kind, AccountState.SIGNED_OUT, detail=detail, key_file=ref.key_file, **common
                )
            return AccountRow(
                ref.email,
                ref.kind,
                AccountState.SERVICE_ACCOUNT,
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
            return AccountRow(ref.email, ref.kind, AccountState.EXPIRED, detail=detail, **common)
        except KeystoreError as exc:
            return AccountRow(ref.email, ref.kind, AccountState.KEYRING, detail=str(exc), **common)
        if record is None:
            self._records.pop(ref.key, None)
            detail = "This sign-in is no longer in your keyring. Sign in again, or remove the account."
            return AccountRow(ref.email, ref.kind, AccountState.EXPIRED, detail=detail, **common)
        self._records[ref.key] = record
        project = client_project(record.client_id)
        if ref.key in self._expired:
            detail = "Google no longer accepts this sign-in. Sign in again."
            return AccountRow(ref.email, ref.kind, AccountState.EXPIRED, detail=detail, quota_project=project, **common)
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
            AccountState.SIGNED_IN,
            detail=f"Your sign-in is kept in {store}.",
            warning=warning,
            warning_due=due,
            quota_project=project,
            **common,
        )

    def _compute_status(self) -> AccountStatus:
        if self.demo:
            return AccountStatus(
                AccountState.DEMO, "demo", "The demo answers with made-up data; no Google account is used."
            )
        if self._problem is not None:
            return self._problem
        default = self.store.default
        row = self.rows.find(default.email) if default is not None else None
        if row is None:
            if self.settings.service_account_file:  # an earlier version's key file that cannot be read now
                try:
                    load_service_account_file(Path(self.settings.service_account_file))
                except SignInError as exc:
                    return AccountStatus(
                        AccountState.SIGNED_OUT, detail=f"The service-account key file cannot be used: {exc}"
                    )
            try:
                store = self.keystore.place
            except KeystoreError as exc:
                return AccountStatus(AccountState.KEYRING, detail=str(exc), details=getattr(exc, "details", ""))
            return AccountStatus(
                AccountState.SIGNED_OUT, detail="Sign in with Google so Claude can read your data.", store=store
            )
        store = "" if row.kind == "service_account" else self.keystore.place
        return AccountStatus(row.state, row.email, row.detail, row.warning, store, row.warning_due)

    @staticmethod
    def _testing(record: SignInRecord) -> bool:
        if record.client_kind == "own":
            return True
        try:
            return packaged_client().testing
        except SignInError:
            return False

    # --- what servers get -----------------------------------------------------------------------
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
            for row in self.rows.rows
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

    @staticmethod
    def _client_for(record: SignInRecord) -> OAuthClient:
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

    # --- what the Core learns -------------------------------------------------------------------
    def expire(self, account: str) -> bool:
        """Google refused to refresh `account`'s sign-in; True when that is news (read the rows again)."""
        key = account.casefold()
        if not key or key in self._expired:
            return False
        self._expired.add(key)
        self._forget_provider(key)
        return True

    def add_sign_in(self, record: SignInRecord) -> None:
        """A new account, or a fresh sign-in of one already here: it works again from now on."""
        ref = self.store.add_sign_in(record)
        self._expired.discard(ref.key)
        self._forget_provider(ref.key)

    def add_key_file(self, path: Path) -> None:
        """Raises SignInError when the file is not a service-account key."""
        self._forget_provider(self.store.add_key_file(path).key)

    def remove(self, email: str) -> SignInRecord | None:
        """Forget everything about the account; its sign-in (for revoking), if it had one."""
        record = self.store.remove(email)
        key = email.casefold()
        self._expired.discard(key)
        self._records.pop(key, None)
        self._counts.pop(key, None)
        self._forget_provider(key)
        return record

    def counted(self, counts: Mapping[str, int]) -> None:
        """How many properties each account (casefolded address) saw at a check."""
        self._counts.update(counts)
