"""``searchdesk --uninstall-cleanup``: what an uninstaller asks of the app before it deletes the files.

Only the app holds the Google refresh token, so only the app can revoke it. In order:

1. ask a running copy to quit (through the single-instance channel), so it hands out no more tokens
   and writes nothing while we clean up;
2. sign out of every account: revoke each token at Google, then delete its keyring entry;
3. turn off start at login;
4. remove SearchDesk's entry from every Claude Desktop settings file (everything else stays).

No window, nothing on stdout (an uninstaller has no console to show it), and the exit status is 0
even when a step fails: each failure is logged, and the uninstaller removes what it can itself. The
app's own settings file stays (like any app's preferences; the Linux uninstaller says where).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ..accounts.keystore import CorruptRecord, KeyStore, SignInRecord
from ..accounts.signin import revoke
from ..accounts.store import AccountStore
from ..claude import config_file as cc
from ..settings import AppSettings
from .autostart import Autostart

log = logging.getLogger(__name__)

#: An uninstaller waits for us: offline, give up on Google after this many seconds (and say so).
REVOKE_TIMEOUT = 10.0


@dataclass
class Outcome:
    """Each step's result, in order: (name, done, what happened). Logged; tests read it."""

    steps: list[tuple[str, bool, str]] = field(default_factory=list)

    def add(self, name: str, ok: bool, detail: str) -> None:
        self.steps.append((name, ok, detail))
        (log.info if ok else log.warning)("uninstall cleanup: %s: %s", name, detail)

    @property
    def ok(self) -> bool:
        return all(ok for _, ok, _ in self.steps)

    def detail(self, name: str) -> str:
        return next(d for n, _, d in self.steps if n == name)


def quit_running(name: str | None = None, timeout: float = 5.0) -> str:
    from PySide6.QtCore import QCoreApplication

    from .single_instance import ask_to_quit

    app = QCoreApplication.instance() or QCoreApplication([])  # Qt sockets want an application object
    try:
        return "it quit" if ask_to_quit(name, timeout) else "none was running"
    finally:
        del app  # held until here: an unreferenced application object could be destroyed at once


def sign_out(keystore: KeyStore, settings_path: Path | None = None) -> str:
    """Every sign-in (the account list's, and an earlier version's single one): revoked at Google first
    (while the token is still at hand), then forgotten here regardless."""
    store = AccountStore(keystore, AppSettings.load(settings_path), settings_path)
    entries: list[tuple[Callable[[], SignInRecord | None], Callable[[], None]]] = [
        (keystore.load_legacy, keystore.delete_legacy),
    ]
    for ref in store.refs:
        if ref.kind == "oauth":
            entries.append((partial(keystore.load, ref.email), partial(keystore.delete, ref.email)))
    done, unreadable, unconfirmed = 0, 0, 0
    for load, delete in entries:
        try:
            record = load()
        except CorruptRecord:
            delete()  # not ours to read, but under our name: an uninstall still clears it
            unreadable += 1
            continue
        if record is None:
            continue
        revoked = False
        try:
            revoked = revoke(record.refresh_token, seconds=REVOKE_TIMEOUT)
        finally:
            delete()
        done += 1
        unconfirmed += not revoked
    if unconfirmed:
        raise RuntimeError(
            f"{_sign_ins(done)} removed from the keyring, but Google did not confirm the revocation of "
            f"{unconfirmed}; remove SearchDesk at https://myaccount.google.com/permissions"
        )
    if unreadable and not done:
        return "removed an unreadable sign-in record from the keyring (nothing to revoke)"
    if not done:
        return "nobody was signed in"
    return f"{'' if done == 1 else _sign_ins(done) + ' '}revoked at Google and removed from the keyring"


def _sign_ins(n: int) -> str:
    return "the sign-in was" if n == 1 else f"{n} sign-ins were"


def forget_key_file(settings_path: Path | None) -> str:
    """A service-account key stays in the person's own file; we only stop pointing at it. The account
    list goes too (its sign-ins were removed from the keyring by the step before)."""
    settings = AppSettings.load(settings_path)
    files = sum(a.get("kind") == "service_account" for a in settings.accounts if isinstance(a, dict))
    files += bool(settings.service_account_file)
    if not files and not settings.accounts:
        return "no key file in use"
    settings.service_account_file = ""
    settings.accounts, settings.default_account, settings.withheld_accounts = [], "", []
    settings.save(settings_path)
    if not files:
        return "no key file in use"
    return "stopped using the service-account key file" if files == 1 else f"stopped using {files} key files"


def remove_from_claude(paths: Sequence[Path]) -> str:
    removed, failed = [], []
    for path in paths:
        try:
            if cc.remove(path).changed:
                removed.append(path)
        except cc.ClaudeConfigError as exc:
            failed.append(f"{path}: {type(exc).__name__}")
    if failed:
        raise RuntimeError("could not edit " + "; ".join(failed))
    return f"removed from {len(removed)} settings file(s)" if removed else "no entry found"


def run(
    *,
    keystore: KeyStore | None = None,
    autostart: Autostart | None = None,
    claude_paths: Sequence[Path] | None = None,
    settings_path: Path | None = None,
    instance_name: str | None = None,
    quit_timeout: float = 5.0,
) -> Outcome:
    """Every step, each on its own: one failing never stops the next."""
    outcome = Outcome()
    steps: list[tuple[str, Callable[[], str]]] = [
        ("quit the running app", lambda: quit_running(instance_name, quit_timeout)),
        ("sign out", lambda: sign_out(keystore or KeyStore(), settings_path)),
        ("service-account key", lambda: forget_key_file(settings_path)),
        ("start at login", lambda: _autostart_off(autostart or Autostart())),
        ("Claude Desktop", lambda: remove_from_claude(cc.every_location() if claude_paths is None else claude_paths)),
    ]
    for name, step in steps:
        try:
            outcome.add(name, True, step())
        except Exception as exc:  # logged, never raised: the uninstaller carries on either way
            outcome.add(name, False, f"{type(exc).__name__}: {exc}")
    return outcome


def _autostart_off(autostart: Autostart) -> str:
    was = autostart.present()  # the real app's entry or the demo's: either goes
    autostart.disable()
    if autostart.present():
        raise RuntimeError("the start-at-login entry is still there")
    return "turned off" if was else "was off"


def main() -> int:
    """The command's body: always 0 (see the module docstring)."""
    log.info("uninstall cleanup started")
    try:
        outcome = run()
    except Exception:  # pragma: no cover (run() catches per step; this is the last line of defence)
        log.exception("uninstall cleanup failed")
        return 0
    log.info("uninstall cleanup finished%s", "" if outcome.ok else " with problems (see above)")
    return 0
