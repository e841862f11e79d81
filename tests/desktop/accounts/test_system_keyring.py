"""macOS and Windows: the sign-in round trip in the system's own keyring (the Keychain, Credential Manager).

On Linux the same round trip runs against a real gnome-keyring on a private bus (test_keystore.py); these
run in ci.yml's macOS and Windows jobs, where there is no gnome-keyring and the system's keyring is the one
a person's sign-in goes to. The account is unique to the run and removed afterwards, so nobody's own
SearchDesk sign-in is read or touched.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from dataclasses import replace

import pytest

from searchdesk_desktop.accounts.keystore import KeyStore, SignInRecord

pytestmark = pytest.mark.skipif(
    sys.platform not in ("darwin", "win32"),
    reason="the macOS Keychain and Windows Credential Manager exist only there (Linux: test_keystore.py)",
)

EXPECTED = {"darwin": "macOS Keychain", "win32": "Windows Credential Locker"}


@pytest.fixture
def record() -> Iterator[SignInRecord]:
    made = SignInRecord(
        refresh_token="1//0g-refresh-token-" + "x" * 80,
        account=f"ci-{uuid.uuid4().hex[:12]}@example.com",
        client_kind="own",
        client_id="123-abc.apps.googleusercontent.com",
        client_secret="GOCSPX-secret",
        scopes=("https://www.googleapis.com/auth/webmasters.readonly",),
        issued_at=1_790_000_000,
    )
    yield made
    KeyStore().delete(made.account)


def test_the_system_keyring_is_the_one_chosen() -> None:
    assert KeyStore().backend_name == EXPECTED[sys.platform]


def test_round_trip_in_the_system_keyring(record: SignInRecord) -> None:
    store = KeyStore()
    assert store.load(record.account) is None
    store.save(record)
    assert KeyStore().load(record.account.upper()) == record  # Google compares addresses without regard to case
    newer = replace(record, refresh_token="1//0g-newer-" + "y" * 80)
    store.save(newer)
    assert KeyStore().load(record.account) == newer
    store.delete(record.account)
    assert KeyStore().load(record.account) is None
    store.delete(record.account)  # signing out twice is fine
