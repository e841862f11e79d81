"""The Google accounts the app holds: sign-ins (one keyring record each) and service-account key
files (by path, the key stays in its file). No Qt here.

The list, which one is the default and which ones Claude may not use live in the settings file,
where nothing is secret; refresh tokens live only in the keyring, one record per account, so each
stays under Windows' 2,560-byte credential limit and removing one touches no other. Adding an
account never changes another: a sign-in of an address already here replaces that account's own
record. The single sign-in record and key-file setting of earlier versions are moved into this
list on the first start that finds them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, cast

from ..settings import AppSettings
from .keystore import KeyStore, KeystoreError, SignInRecord
from .signin import SignInError, load_service_account_file

log = logging.getLogger(__name__)

AccountKind = Literal["oauth", "service_account"]
#: The name of a sign-in whose e-mail address Google did not give (it always does with the email scope).
UNNAMED = "Google account"


@dataclass(frozen=True)
class AccountRef:
    """One account as the settings file lists it: its e-mail address, kind and (service accounts) key file."""

    email: str
    kind: AccountKind
    key_file: str = ""

    @property
    def key(self) -> str:
        """Google compares e-mail addresses without regard to case; so does the app."""
        return self.email.casefold()


class AccountStore:
    """Reads and changes the account list; every change is saved at once. Used on the Qt thread;
    `refs` is an immutable snapshot that other threads may read."""

    def __init__(self, keystore: KeyStore, settings: AppSettings, settings_path: Path | None) -> None:
        self.keystore = keystore
        self.settings = settings
        self.settings_path = settings_path
        self.refs: tuple[AccountRef, ...] = tuple(_parse(settings.accounts))

    # --- reading ----------------------------------------------------------------------------------

    def find(self, email: str) -> AccountRef | None:
        return next((r for r in self.refs if r.key == email.casefold()), None)

    @property
    def default(self) -> AccountRef | None:
        """The default account: the one chosen, else the first."""
        return self.find(self.settings.default_account) or (self.refs[0] if self.refs else None)

    def for_claude(self, ref: AccountRef) -> bool:
        return ref.key not in {w.casefold() for w in self.settings.withheld_accounts}

    def claude_default(self) -> AccountRef | None:
        """The account a call that names none goes to: the default, else the first Claude may use."""
        default = self.default
        if default is not None and self.for_claude(default):
            return default
        return next((r for r in self.refs if self.for_claude(r)), None)

    # --- changes ------------------------------------------------------------------------------------

    def migrate(self) -> None:
        """Move an earlier version's key-file setting and single sign-in into the list (idempotent:
        each is removed from its old place only once it is in the new one). Raises KeystoreError."""
        if self.settings.service_account_file:
            path = Path(self.settings.service_account_file)
            try:
                self._add(self._key_file_ref(path))
            except SignInError as exc:  # left where it is: the app says why it cannot be used
                log.warning("the service-account key file cannot be migrated yet: %s", type(exc).__name__)
            else:
                self.settings.service_account_file = ""
                self._save()
                log.info("moved the service-account key file into the account list")
        record = self.keystore.load_legacy()
        if record is not None:
            self.add_sign_in(self.save_sign_in(record))
            self.keystore.delete_legacy()
            log.info("moved the sign-in into its own keyring entry")

    def save_sign_in(self, record: SignInRecord) -> SignInRecord:
        """Put a sign-in in the keyring, under its own account's entry (any thread; slow); the record as
        kept. A fresh sign-in of an account already here replaces that account's record only."""
        if not record.account:
            record = replace(record, account=UNNAMED)
        self.keystore.save(record)
        return record

    def add_sign_in(self, record: SignInRecord) -> AccountRef:
        """List a sign-in once it is in the keyring (save_sign_in)."""
        return self._add(AccountRef(record.account, "oauth"))

    def add_key_file(self, path: Path) -> AccountRef:
        """Remember a service-account key file (its path); raises SignInError when it is not one."""
        return self._add(self._key_file_ref(path))

    def remove(self, email: str) -> SignInRecord | None:
        """Forget an account; a sign-in's record leaves the keyring and is returned (to be revoked)."""
        ref = self.find(email)
        if ref is None:
            return None
        record = None
        if ref.kind == "oauth":
            try:
                record = self.keystore.load(ref.email)
                self.keystore.delete(ref.email)
            except KeystoreError as exc:  # forgotten here all the same, as signing out always was
                log.warning("could not delete a sign-in from the keyring: %s", type(exc).__name__)
        self.refs = tuple(r for r in self.refs if r.key != ref.key)
        if self.settings.default_account.casefold() == ref.key:
            self.settings.default_account = self.refs[0].email if self.refs else ""
        self.settings.withheld_accounts = [w for w in self.settings.withheld_accounts if w.casefold() != ref.key]
        self._save()
        return record

    def set_default(self, email: str) -> None:
        ref = self.find(email)
        if ref is not None:
            self.settings.default_account = ref.email
            self._save()

    def set_for_claude(self, email: str, allowed: bool) -> None:
        ref = self.find(email)
        if ref is None:
            return
        withheld = [w for w in self.settings.withheld_accounts if w.casefold() != ref.key]
        self.settings.withheld_accounts = withheld if allowed else [*withheld, ref.email]
        self._save()

    # --- inside -------------------------------------------------------------------------------------

    @staticmethod
    def _key_file_ref(path: Path) -> AccountRef:
        key = load_service_account_file(path)
        return AccountRef(key.client_email, "service_account", str(key.path.absolute()))

    def _add(self, ref: AccountRef) -> AccountRef:
        if self.find(ref.email) is not None:
            self.refs = tuple(ref if r.key == ref.key else r for r in self.refs)  # same account: its place kept
        else:
            self.refs = (*self.refs, ref)
        if self.find(self.settings.default_account) is None:
            self.settings.default_account = self.refs[0].email  # the first account; later ones change nothing
        self._save()
        return ref

    def _save(self) -> None:
        self.settings.accounts = [
            {"email": r.email, "kind": r.kind, **({"key_file": r.key_file} if r.key_file else {})} for r in self.refs
        ]
        self.settings.save(self.settings_path)


def _parse(raw: list[dict[str, str]]) -> list[AccountRef]:
    """The settings file's list, keeping only well-formed entries (a hand-edited file loses nothing else)."""
    refs: list[AccountRef] = []
    for item in raw:
        if not isinstance(item, dict):
            continue
        email, kind, key_file = item.get("email"), item.get("kind"), item.get("key_file", "")
        if not isinstance(email, str) or not email or not isinstance(key_file, str):
            continue
        if kind not in ("oauth", "service_account") or (kind == "service_account" and not key_file):
            continue
        if all(r.key != email.casefold() for r in refs):
            refs.append(AccountRef(email, cast(AccountKind, kind), key_file))
    return refs
