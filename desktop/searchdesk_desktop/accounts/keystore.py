"""The one kind of secret the app keeps: Google refresh tokens, in the OS keyring and nowhere else.

Why an allowlist instead of ``keyring.get_keyring()``: keyring silently prefers whatever backend
is installed, and with ``keyrings.alt`` present that is a base64 "plaintext" file. We accept only
backends that hand the secret to the operating system's own store, and otherwise refuse with a
message that says how to fix it. There is no fallback.

Why one compact record per account: Windows Credential Manager caps a credential blob at 2,560
bytes, and keyring stores the text as UTF-16, so a record must stay under 1,280 characters however
many accounts there are. A record holds one refresh token and a few small facts the UI needs
(account, which OAuth client, when it was issued), never a credentials JSON.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from searchdesk_server.agent.protocol import ErrorCode

from ..refusals import Refusal

log = logging.getLogger(__name__)

SERVICE = "searchdesk"
#: The one sign-in of versions before several accounts; migrated to its account's entry on start.
ENTRY = "google-sign-in"
#: keyring's Windows backend stores text as UTF-16; the credential blob limit is 2,560 bytes.
MAX_RECORD_BYTES_UTF16 = 2560

#: ``module:class`` of every backend we trust, with the name the UI shows.
ALLOWED_BACKENDS: dict[str, str] = {
    "keyring.backends.macOS:Keyring": "macOS Keychain",
    "keyring.backends.Windows:WinVaultKeyring": "Windows Credential Locker",
    "keyring.backends.SecretService:Keyring": "Secret Service",
    "keyring.backends.libsecret:Keyring": "Secret Service (libsecret)",
    "keyring.backends.kwallet:DBusKeyring": "KWallet",
    "keyring.backends.kwallet:DBusKeyringKWallet4": "KWallet",
}

ClientKind = Literal["packaged", "own"]


def describe_place(backend_name: str, desktop: str = "") -> str:
    """Where the sign-in is kept, named as the person knows it ("your Mac's keychain", say).

    On Linux the Secret Service is usually GNOME Keyring; on KDE Plasma it is KDE Wallet.
    """
    if backend_name.startswith("macOS"):
        return "your Mac's keychain"
    if backend_name.startswith("Windows"):
        return "Windows Credential Manager"
    kde = backend_name == "KWallet" or "KDE" in desktop.upper().split(":")
    return "your system's keyring (KDE Wallet)" if kde else "your system's keyring (GNOME Keyring)"


class KeystoreError(Refusal):
    """Base of everything this module raises; ``str()`` is written for the person at the screen."""


class NoSecureKeyring(KeystoreError):
    """No trusted OS keyring is reachable; we refuse to store the token anywhere else. ``str()`` is the
    person's sentence; ``details`` (which keyrings were tried and why not) is for support only."""

    code = ErrorCode.KEYRING_LOCKED

    def __init__(self, detail: str = "", platform: str = sys.platform) -> None:
        if platform == "darwin":
            where, fix = "your Mac's keychain", "Restart your Mac, then try again."
        elif platform == "win32":
            where, fix = "Windows Credential Manager", "Restart Windows, then try again."
        else:
            where = "your system's keyring"
            fix = (
                "Open your desktop's keyring app (GNOME Keyring, or KDE Wallet on KDE Plasma) or log out and "
                "in again, then try again; if your system has none, install GNOME Keyring."
            )
        super().__init__(
            f"SearchDesk keeps your Google sign-in only in {where} and could not use it. {fix} SearchDesk "
            "never keeps your sign-in in a plain file instead."
        )
        self.details = detail
        if detail:
            # For support: the log, and the window only under "Details for support" (collapsed).
            log.warning("no keyring SearchDesk can use: %s", detail)


class KeyringLocked(KeystoreError):
    """The keyring exists but is locked (or the unlock prompt could not be shown)."""

    code = ErrorCode.KEYRING_LOCKED

    def __init__(self) -> None:
        super().__init__(
            "Your keyring is locked. Unlock your keyring (for example by logging in to your desktop "
            "session, or opening your keyring app and unlocking 'Login'), then try again."
        )


class RecordTooLarge(KeystoreError):
    """A record would not fit the smallest supported store (Windows, 2,560 bytes)."""


class CorruptRecord(KeystoreError):
    """The keyring holds something under our name that we did not write; we do not guess."""


@dataclass(frozen=True)
class SignInRecord:
    """What the app remembers about a Google sign-in. ``refresh_token`` never leaves the app."""

    refresh_token: str = field(repr=False)
    account: str
    client_kind: ClientKind
    client_id: str
    client_secret: str = field(default="", repr=False)
    scopes: tuple[str, ...] = ()
    issued_at: int = 0

    def encode(self) -> str:
        data: dict[str, Any] = {
            "v": 1,
            "a": self.account,
            "k": self.client_kind,
            "ci": self.client_id,
            "s": list(self.scopes),
            "i": self.issued_at,
            "t": self.refresh_token,
        }
        if self.client_secret:
            data["cs"] = self.client_secret
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=True)
        if len(text.encode("utf-16-le")) > MAX_RECORD_BYTES_UTF16:
            raise RecordTooLarge(
                f"The sign-in record is {len(text)} characters; the keyring limit is "
                f"{MAX_RECORD_BYTES_UTF16 // 2}. This is a bug in SearchDesk; please report it."
            )
        return text

    @classmethod
    def decode(cls, text: str, entry: str = ENTRY) -> SignInRecord:
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.get("v") != 1:
                raise ValueError("unknown record version")
            kind = data["k"]
            if kind not in ("packaged", "own"):
                raise ValueError("unknown client kind")
            return cls(
                refresh_token=_str(data["t"]),
                account=_str(data.get("a", "")),
                client_kind=kind,
                client_id=_str(data["ci"]),
                client_secret=_str(data.get("cs", "")),
                scopes=tuple(_str(s) for s in data.get("s", [])),
                issued_at=int(data.get("i", 0)),
            )
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("keyring entry %s/%s is not a sign-in record (%d characters)", SERVICE, entry, len(text))
            raise CorruptRecord(
                "SearchDesk's saved sign-in in your system's keyring is damaged (something else changed it), "
                "so SearchDesk cannot use it. Sign out here, then sign in again."
            ) from exc


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("expected a string")
    return value


def backend_id(backend: object) -> str:
    cls = type(backend)
    return f"{cls.__module__}:{cls.__qualname__}"


def find_backend() -> Any:
    """The highest-priority allowlisted backend that is usable now, or raise :class:`NoSecureKeyring`.

    Deliberately ignores ``keyring.get_keyring()``, ``PYTHON_KEYRING_BACKEND`` and keyring's config file:
    each of those can select a plaintext backend.
    """
    best: tuple[float, Any] | None = None
    reasons: list[str] = []
    for ident, name in ALLOWED_BACKENDS.items():
        module_name, _, class_name = ident.partition(":")
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
            priority = float(cls.priority)
        except Exception as exc:  # a backend says "not viable here" by raising from .priority
            reasons.append(f"{name}: {type(exc).__name__}")
            continue
        if priority <= 0:
            continue
        if best is None or priority > best[0]:
            best = (priority, cls)
    if best is None:
        raise NoSecureKeyring("; ".join(dict.fromkeys(reasons)))
    return best[1]()


class KeyStore:
    """Reads and writes the sign-in record. Pass ``backend`` to pin one (it must still be allowlisted)."""

    def __init__(self, backend: Any | None = None) -> None:
        if backend is not None and backend_id(backend) not in ALLOWED_BACKENDS:
            raise NoSecureKeyring(f"refused backend {type(backend).__name__}: it is not an OS keyring")
        self._backend = backend

    @property
    def backend(self) -> Any:
        if self._backend is None:
            self._backend = find_backend()
        return self._backend

    @property
    def backend_name(self) -> str:
        """The backend's technical name (for logs and error details)."""
        return ALLOWED_BACKENDS[backend_id(self.backend)]

    @property
    def place(self) -> str:
        """Where the sign-in is kept, in a site owner's words."""
        return describe_place(self.backend_name, os.environ.get("XDG_CURRENT_DESKTOP", ""))

    def load(self, account: str) -> SignInRecord | None:
        """The sign-in of `account` (its e-mail address), or None when there is none."""
        return self._load(entry_for(account))

    def save(self, record: SignInRecord) -> None:
        """Store a sign-in under its own account's entry: no other account's record is touched."""
        self._call("set_password", SERVICE, entry_for(record.account), record.encode())

    def delete(self, account: str) -> None:
        self._delete(entry_for(account))

    def load_legacy(self) -> SignInRecord | None:
        """The single sign-in an earlier version kept (to be migrated)."""
        return self._load(ENTRY)

    def delete_legacy(self) -> None:
        self._delete(ENTRY)

    def _load(self, entry: str) -> SignInRecord | None:
        text = self._call("get_password", SERVICE, entry)
        return None if text is None else SignInRecord.decode(text, entry)

    def _delete(self, entry: str) -> None:
        from keyring.errors import PasswordDeleteError

        try:
            self._call("delete_password", SERVICE, entry)
        except PasswordDeleteError:
            pass  # nothing stored: already signed out

    def _call(self, method: str, *args: str) -> Any:
        from keyring.errors import InitError, KeyringError, NoKeyringError, PasswordDeleteError
        from keyring.errors import KeyringLocked as _Locked

        try:
            return getattr(self.backend, method)(*args)
        except (_Locked, InitError) as exc:
            raise KeyringLocked() from exc
        except NoKeyringError as exc:
            raise NoSecureKeyring(f"{self.backend_name}: {type(exc).__name__}") from exc
        except PasswordDeleteError:
            raise
        except KeyringError as exc:
            log.warning("the keyring refused: %s", type(exc).__name__)
            raise KeystoreError("Your system's keyring refused SearchDesk's request. Try again.") from exc
        except RuntimeError as exc:  # e.g. the D-Bus session went away after the backend was chosen
            raise NoSecureKeyring(f"{self.backend_name}: {type(exc).__name__}") from exc


def entry_for(account: str) -> str:
    """One keyring entry per Google account: `google-sign-in:<e-mail>` (lower-case, as Google compares it)."""
    return f"{ENTRY}:{account.casefold()}"


def now() -> int:
    return int(time.time())
