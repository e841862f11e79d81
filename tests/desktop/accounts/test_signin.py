"""Sign-in against a fake Google OAuth server on loopback: PKCE S256, keyring, refresh, revoke."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from searchdesk_desktop.accounts import signin
from searchdesk_desktop.accounts.keystore import KeyStore, SignInRecord
from searchdesk_desktop.accounts.signin import TokenRequestFailed
from searchdesk_desktop.accounts.tokens import OAuthTokens, ScopeNotGranted, ServiceAccountTokens
from tests.desktop.fake_oauth import CLIENT_ID, CLIENT_SECRET, EMAIL, FakeOAuth, fake_oauth_server

WM_RO = "https://www.googleapis.com/auth/webmasters.readonly"
WM = "https://www.googleapis.com/auth/webmasters"
CLIENT = signin.OAuthClient(CLIENT_ID, CLIENT_SECRET, "own", testing=True)


@pytest.fixture
def fake() -> Iterator[FakeOAuth]:
    with fake_oauth_server() as f:
        yield f


def run_browser(fake: FakeOAuth, opened: list[str]) -> list[httpx.Response]:
    """The system browser, in a thread, as a person's would be."""
    pages: list[httpx.Response] = []

    def open_browser(url: str) -> bool:
        opened.append(url)
        threading.Thread(target=lambda: pages.append(fake.browser(url)), daemon=True).start()
        return True

    return pages, open_browser  # type: ignore[return-value]


def sign_in(fake: FakeOAuth, scopes: list[str]) -> tuple[signin.LoopbackSignIn, object, list[str], list]:
    opened: list[str] = []
    pages, browser = run_browser(fake, opened)
    flow = signin.LoopbackSignIn(CLIENT, scopes, open_browser=browser, auth_uri=fake.auth_uri)
    flow.start()
    return flow, flow.wait(timeout=10), opened, pages


def test_sign_in_with_pkce_lands_in_real_keyring(fake: FakeOAuth, real_keyring: object) -> None:
    _flow, record, _opened, pages = sign_in(fake, [WM])
    # The browser was sent to the auth endpoint with PKCE S256 and exactly our scopes.
    asked = fake.auth_requests[0]
    assert asked["code_challenge_method"] == "S256"
    assert asked["scope"].split() == [WM, "openid", "email"]
    assert asked["access_type"] == "offline"
    # The token request carried the verifier matching that challenge (the fake refuses otherwise).
    verifier = fake.token_requests[0]["code_verifier"]
    assert 43 <= len(verifier) <= 128
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert digest == asked["code_challenge"]
    assert record.account == EMAIL
    assert record.scopes == (WM,)
    assert record.client_kind == "own" and record.client_secret == CLIENT_SECRET
    # The person sees a closing page in the browser (its thread may still be reading it).
    deadline = time.monotonic() + 5
    while not pages and time.monotonic() < deadline:
        time.sleep(0.01)
    assert pages and "close this tab" in pages[0].text
    # Into the real keyring and back.
    KeyStore().save(record)
    stored = KeyStore().load(EMAIL)
    assert stored == record
    # Refresh, cached reuse, force_refresh, then revoke.
    tokens = OAuthTokens(CLIENT, stored)
    first = tokens.access_token([WM_RO])  # webmasters covers webmasters.readonly
    assert first.token in fake.issued and first.kind == "oauth" and first.account == EMAIL
    assert tokens.access_token([WM]).token == first.token
    forced = tokens.access_token([WM], force_refresh=True)
    assert forced.token != first.token
    with pytest.raises(ScopeNotGranted):
        tokens.access_token(["https://www.googleapis.com/auth/indexing"])
    assert signin.revoke(record.refresh_token)
    with pytest.raises(signin.SignInRevoked, match="Sign in with Google again"):
        tokens.access_token([WM], force_refresh=True)


def test_verifier_is_required(fake: FakeOAuth) -> None:
    """The fake is a fair judge: a wrong verifier is refused, so the test above could fail."""
    status, _body = fake.token(
        {"grant_type": "authorization_code", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
    )
    assert status == 400


def test_denied_in_browser(fake: FakeOAuth) -> None:
    fake.deny = True
    with pytest.raises(signin.SignInDenied):
        sign_in(fake, [WM_RO])
    assert fake.token_requests == []


def test_redirect_with_wrong_state_is_ignored(fake: FakeOAuth) -> None:
    flow = signin.LoopbackSignIn(CLIENT, [WM_RO], open_browser=lambda url: None, auth_uri=fake.auth_uri)
    flow.start()
    forged = httpx.get(flow.redirect_uri + "?code=evil&state=guess", trust_env=False)
    assert forged.status_code == 400
    flow.cancel()
    with pytest.raises(signin.SignInCancelled):
        flow.wait(timeout=5)
    assert fake.token_requests == []


def test_partial_grant_keeps_what_was_granted(fake: FakeOAuth) -> None:
    fake.grant_scopes = [WM_RO, "openid", "email"]
    _, record, _, _ = sign_in(fake, [WM])
    assert record.scopes == (WM_RO,)
    with pytest.raises(ScopeNotGranted, match="webmasters"):
        OAuthTokens(CLIENT, record).access_token([WM])


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


@pytest.fixture
def rsa_key() -> tuple[str, bytes]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public


def test_key_files_are_told_apart(tmp_path: Path, rsa_key: tuple[str, bytes]) -> None:
    sa = write(
        tmp_path / "sa.json",
        {"type": "service_account", "client_email": "bot@p.iam.gserviceaccount.com", "private_key": rsa_key[0]},
    )
    desktop = write(tmp_path / "client.json", {"installed": {"client_id": CLIENT_ID, "client_secret": "s"}})
    web = write(tmp_path / "web.json", {"web": {"client_id": "w"}})
    junk = write(tmp_path / "junk.txt", "not json")
    assert signin.classify_key_file(sa) is signin.KeyFileKind.SERVICE_ACCOUNT
    assert signin.classify_key_file(desktop) is signin.KeyFileKind.DESKTOP_CLIENT
    with pytest.raises(signin.WrongKeyFile, match="is a service-account key, not an OAuth client file"):
        signin.load_client_file(sa)
    with pytest.raises(signin.WrongKeyFile, match=r"is an OAuth client file .Desktop app., not a service-account key"):
        signin.load_service_account_file(desktop)
    with pytest.raises(signin.WrongKeyFile, match=r"Web application.*Desktop app"):
        signin.load_client_file(web)
    with pytest.raises(signin.WrongKeyFile, match="not a JSON file"):
        signin.load_service_account_file(junk)
    client = signin.load_client_file(desktop)
    assert client.client_id == CLIENT_ID and client.kind == "own" and client.testing
    key = signin.load_service_account_file(sa)
    assert key.client_email == "bot@p.iam.gserviceaccount.com"
    assert rsa_key[0] not in repr(key)


def test_service_account_tokens(tmp_path: Path, fake: FakeOAuth, rsa_key: tuple[str, bytes]) -> None:
    email = "bot@p.iam.gserviceaccount.com"
    fake.service_accounts[email] = rsa_key[1]
    key = {"type": "service_account", "client_email": email, "private_key": rsa_key[0], "private_key_id": "k1"}
    # A key naming another token endpoint changes nothing: the signed assertion goes to Google alone.
    path = write(tmp_path / "sa.json", {**key, "token_uri": "https://oauth2.attacker.example/token"})
    tokens = ServiceAccountTokens(signin.load_service_account_file(path))
    token = tokens.access_token([WM_RO])
    assert token.kind == "service_account" and token.account == email
    assert token.token.endswith(WM_RO)  # the fake echoes the scope it verified in the signed assertion
    assert tokens.access_token([WM_RO]).token == token.token
    assert tokens.access_token([WM_RO], force_refresh=True).token != token.token


def test_only_google_answers_for_google(fake: FakeOAuth) -> None:
    """The app's token requests go through the server's hardened client: an answer that sends it to
    another host, or one over the 1 MB ceiling, is refused and never used; Google's next answer is."""
    refresh = "1//refresh-kept"
    fake.refresh_tokens[refresh] = [WM]
    tokens = OAuthTokens(CLIENT, SignInRecord(refresh, EMAIL, "own", CLIENT_ID, CLIENT_SECRET, scopes=(WM,)))
    fake.fail("/token", status=302, headers=[("location", "https://oauth2.attacker.example/token")])
    with pytest.raises(TokenRequestFailed, match="answered in Google's place"):
        tokens.access_token([WM])
    huge = fake.fail("/token", status=200, size=256 << 20)
    with pytest.raises(TokenRequestFailed, match="answered in Google's place"):
        tokens.access_token([WM])
    # It stopped reading past the ceiling (what the sockets and the proxy buffer was still sent).
    assert huge.remaining == 0 and huge.bytes_out < 40 << 20
    assert fake.token_requests == []  # neither reached the real endpoint
    assert tokens.access_token([WM]).token in fake.issued


def test_google_out_of_reach_is_said_plainly(fake: FakeOAuth, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(Path(__file__)))  # no authority trusts the fake's certificate
    fake.refresh_tokens["1//r"] = [WM]
    tokens = OAuthTokens(CLIENT, SignInRecord("1//r", EMAIL, "own", CLIENT_ID, CLIENT_SECRET, scopes=(WM,)))
    with pytest.raises(TokenRequestFailed, match="could not reach Google"):
        tokens.access_token([WM])
    assert fake.token_requests == []


def test_packaged_client(tmp_path: Path) -> None:
    with pytest.raises(signin.NoOAuthClient) as info:
        signin.packaged_client({}, tmp_path / "absent.json")
    assert "demo" in str(info.value) and "service-account key file" in str(info.value)
    bundled = write(tmp_path / "oauth_client.json", {"installed": {"client_id": CLIENT_ID, "client_secret": "s"}})
    client = signin.packaged_client({}, bundled)
    assert client.kind == "packaged" and not client.testing
    other = write(
        tmp_path / "o.json", {"installed": {"client_id": "x", "client_secret": "s"}, "searchdesk_testing": True}
    )
    via_env = signin.packaged_client({signin.CLIENT_FILE_VAR: str(other)}, bundled)
    assert via_env.client_id == "x" and via_env.testing
