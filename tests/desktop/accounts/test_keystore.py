"""The keyring: a real Secret Service round trip, refusals, and the locked-keyring message."""

from __future__ import annotations

from dataclasses import replace

import pytest
from keyring.backend import KeyringBackend

from searchdesk_desktop.accounts.keystore import (
    ENTRY,
    SERVICE,
    CorruptRecord,
    KeyringLocked,
    KeyStore,
    NoSecureKeyring,
    RecordTooLarge,
    SignInRecord,
)

RECORD = SignInRecord(
    refresh_token="1//0g-refresh-token-" + "x" * 80,
    account="owner@example.com",
    client_kind="own",
    client_id="123-abc.apps.googleusercontent.com",
    client_secret="GOCSPX-secret",
    scopes=("https://www.googleapis.com/auth/webmasters.readonly",),
    issued_at=1_790_000_000,
)


class PlaintextLike(KeyringBackend):
    """Stands in for keyrings.alt's PlaintextKeyring: a viable backend that is not an OS keyring."""

    priority = 1  # type: ignore[assignment]

    def get_password(self, service: str, username: str) -> str | None:
        return None

    def set_password(self, service: str, username: str, password: str) -> None:
        raise AssertionError("must never be written to")

    def delete_password(self, service: str, username: str) -> None:
        pass


def test_round_trip_in_real_secret_service(real_keyring: object) -> None:
    store = KeyStore()
    assert store.backend_name == "Secret Service"
    assert store.load(RECORD.account) is None
    store.save(RECORD)
    again = KeyStore().load("Owner@Example.com")  # Google compares addresses without regard to case
    assert again == RECORD
    store.delete(RECORD.account)
    assert KeyStore().load(RECORD.account) is None
    store.delete(RECORD.account)  # signing out twice is fine


def test_each_account_has_its_own_record(real_keyring: object) -> None:
    other = replace(RECORD, account="agency@example.net", refresh_token="1//0g-other-" + "y" * 80)
    store = KeyStore()
    store.save(RECORD)
    store.save(other)
    assert (store.load(RECORD.account), store.load(other.account)) == (RECORD, other)
    assert store.load_legacy() is None  # the single entry of earlier versions is not written
    store.delete(other.account)
    assert (store.load(RECORD.account), store.load(other.account)) == (RECORD, None)


def test_refresh_token_not_in_repr() -> None:
    assert RECORD.refresh_token not in repr(RECORD)
    assert RECORD.client_secret not in repr(RECORD)


def test_record_is_compact_for_windows() -> None:
    assert len(RECORD.encode().encode("utf-16-le")) < 2560
    huge = SignInRecord(refresh_token="t" * 1300, account="a", client_kind="packaged", client_id="c")
    with pytest.raises(RecordTooLarge):
        huge.encode()


def test_plaintext_backend_refused() -> None:
    with pytest.raises(NoSecureKeyring) as info:
        KeyStore(PlaintextLike())
    assert "not an OS keyring" in info.value.details


def test_no_bus_is_a_clear_error(no_dbus: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    with pytest.raises(NoSecureKeyring) as info:
        KeyStore().load(RECORD.account)
    text = str(info.value)
    assert "GNOME Keyring" in text and "never keeps your sign-in in a plain file" in text
    # No programmer words for the person: which backends were tried, and why not, is for support.
    assert "Error" not in text and "Secret Service" not in text and "backend" not in text
    assert "Secret Service: FileNotFoundError" in info.value.details


def test_locked_keyring_says_unlock(fresh_keyring: object) -> None:
    store = KeyStore()
    store.save(RECORD)
    fresh_keyring.lock()  # type: ignore[attr-defined]
    with pytest.raises(KeyringLocked, match=r"[Uu]nlock your keyring"):
        KeyStore().load(RECORD.account)
    with pytest.raises(KeyringLocked):
        KeyStore().save(RECORD)


def test_foreign_entry_is_reported_not_guessed(real_keyring: object) -> None:
    import keyring.backends.SecretService as ss

    ss.Keyring().set_password(SERVICE, ENTRY, "not json at all, but secret-ish")
    with pytest.raises(CorruptRecord) as info:
        KeyStore().load_legacy()
    assert "secret-ish" not in str(info.value)
