"""Credentials: token exchange through our client, caching, one refresh after a 401, refusals."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from searchdesk_server.agent.client import (
    AgentUnavailable,
    AppRefreshFailed,
    AppScopeNotGranted,
    AppSignedOut,
    AppUnknownAccount,
)
from searchdesk_server.agent.protocol import ErrorCode
from searchdesk_server.credential_setting import Credential
from searchdesk_server.google.credentials import DEMO_TOKEN, DesktopSource, token_source
from searchdesk_server.google.errors import ErrorKind, GoogleError
from searchdesk_server.google.http import Api
from tests.fakegoogle import bodies
from tests.fakegoogle.certs import make_service_account_key
from tests.fakegoogle.scopes import INDEXING, SV, WM, WM_RO

from .conftest import Clients

pytestmark = pytest.mark.anyio

SITES = "webmasters/v3/sites"


def api_calls(clients: Clients) -> int:
    return len(clients.fake.api_requests())


async def test_tokens_are_cached_per_scope_set(clients: Clients) -> None:
    tokens = clients.tokens()
    client = clients.client(tokens, scopes=[WM_RO, INDEXING])
    for _ in range(3):
        await client.call(Api.SEARCHCONSOLE, "GET", SITES)
    assert [t.scopes for t in clients.fake.token_requests] == [(INDEXING, WM_RO)]
    other = clients.client(tokens, scopes=[INDEXING, WM_RO])  # the same set, another order
    await other.call(Api.SEARCHCONSOLE, "GET", SITES)
    assert len(clients.fake.token_requests) == 1
    third = clients.client(tokens, scopes=[WM])
    await third.call(Api.SEARCHCONSOLE, "GET", SITES)
    assert [t.scopes for t in clients.fake.token_requests] == [(INDEXING, WM_RO), (WM,)]
    assert len(clients.fake.tokens_seen_by_host()["searchconsole.googleapis.com"]) == 2


async def test_a_token_about_to_expire_is_not_reused(clients: Clients) -> None:
    clients.fake.token_lifetime = 45  # under the 60 s margin
    client = clients.client()
    for _ in range(3):
        await client.call(Api.SEARCHCONSOLE, "GET", SITES)
    assert len(clients.fake.token_requests) == 3


async def test_a_401_gets_exactly_one_refresh_and_one_retry(clients: Clients) -> None:
    client = clients.client()
    await client.call(Api.SEARCHCONSOLE, "GET", SITES)
    clients.fake.revoke_tokens()  # the cached token is now refused
    answer = await client.call(Api.SEARCHCONSOLE, "GET", SITES)
    assert "siteEntry" in answer
    assert len(clients.fake.token_requests) == 2
    assert api_calls(clients) == 3
    first, refused, retried = clients.fake.api_requests()
    assert first.token == refused.token != retried.token


@pytest.mark.parametrize("retry", [True, False])
async def test_a_401_that_persists_is_not_looped_on(clients: Clients, retry: bool) -> None:
    clients.fake.fail(r"/sites$", status=401, body=bodies.unauthenticated(), times=100)
    client = clients.client()
    with pytest.raises(GoogleError) as caught:
        await client.call(Api.SEARCHCONSOLE, "GET", SITES, retry=retry)
    assert caught.value.kind is ErrorKind.AUTH and caught.value.status == 401
    assert api_calls(clients) == 2
    assert len(clients.fake.token_requests) == 2


async def test_the_token_exchange_is_retried_like_any_safe_request(clients: Clients) -> None:
    clients.fake.fail(r"oauth2\.googleapis\.com/token", status=503, body=b"busy", times=2)
    await clients.client().call(Api.SEARCHCONSOLE, "GET", SITES)
    assert len([e for e in clients.fake.log if e.host == "oauth2.googleapis.com"]) == 3


async def test_a_service_account_key_pointing_elsewhere_is_refused_before_anything_is_sent(
    clients: Clients,
) -> None:
    tokens = clients.tokens(token_uri="https://oauth2.attacker.example/token")
    with pytest.raises(GoogleError) as caught:
        await clients.client(tokens).call(Api.SEARCHCONSOLE, "GET", SITES)
    err = caught.value
    assert err.kind is ErrorKind.AUTH and "token_uri" in str(err)
    assert "attacker" not in str(err)
    assert clients.fake.log == [] and clients.fake.proxy_log == []


async def test_an_unreadable_private_key_is_described_not_quoted(clients: Clients) -> None:
    tokens = clients.tokens(private_key="-----BEGIN PRIVATE KEY-----\nNOTAKEYPLANTED\n-----END PRIVATE KEY-----\n")
    with pytest.raises(GoogleError) as caught:
        await clients.client(tokens).call(Api.SEARCHCONSOLE, "GET", SITES)
    assert caught.value.kind is ErrorKind.AUTH
    assert "PLANTED" not in str(caught.value) and "private_key" in str(caught.value)
    assert clients.fake.log == []


async def test_a_key_google_does_not_know_is_refused_with_advice(clients: Clients) -> None:
    other_key, _ = make_service_account_key()
    tokens = clients.tokens(private_key=other_key)
    with pytest.raises(GoogleError) as caught:
        await clients.client(tokens).call(Api.SEARCHCONSOLE, "GET", SITES)
    err = caught.value
    assert err.kind is ErrorKind.AUTH and "service account" in str(err)
    assert "BEGIN" not in str(err) and "eyJ" not in str(err)  # neither key nor assertion
    assert [t.ok for t in clients.fake.token_requests] == [False]
    assert clients.fake.api_requests() == []


async def test_oauth_refresh_token(clients: Clients) -> None:
    client = clients.client(clients.tokens("oauth"), scopes=[WM_RO, SV])
    await client.call(Api.SEARCHCONSOLE, "GET", SITES)
    await client.call(Api.SEARCHCONSOLE, "GET", SITES)
    assert [(t.grant, t.scopes) for t in clients.fake.token_requests] == [("refresh_token", (SV, WM_RO))]


async def test_a_revoked_sign_in_says_to_sign_in_again(clients: Clients) -> None:
    clients.fake.revoke_refresh_token()
    with pytest.raises(GoogleError) as caught:
        await clients.client(clients.tokens("oauth")).call(Api.SEARCHCONSOLE, "GET", SITES)
    text = str(caught.value)
    assert caught.value.kind is ErrorKind.AUTH
    assert "the sign-in was revoked or expired; sign in again" in text
    for secret in clients.fake.oauth_info.values():
        if secret.startswith(("1//", "GOCSPX-")):
            assert secret not in text
    assert len(clients.fake.token_requests) == 1  # a refusal is not retried


async def test_a_wrong_client_secret_is_auth_and_not_echoed(clients: Clients) -> None:
    tokens = clients.tokens("oauth", client_secret="GOCSPX-wrongPLANTED")
    with pytest.raises(GoogleError) as caught:
        await clients.client(tokens).call(Api.SEARCHCONSOLE, "GET", SITES)
    assert caught.value.kind is ErrorKind.AUTH and "PLANTED" not in str(caught.value)


async def test_a_narrower_grant_falls_back_to_what_was_granted(clients: Clients) -> None:
    clients.fake.grant_scopes([WM_RO])
    client = clients.client(clients.tokens("oauth"), scopes=[WM_RO, INDEXING])
    assert "siteEntry" in await client.call(Api.SEARCHCONSOLE, "GET", SITES)
    with pytest.raises(GoogleError) as caught:
        await client.call(
            Api.INDEXING, "GET", "v3/urlNotifications/metadata", query={"url": "https://www.example.com/"}
        )
    assert caught.value.kind is ErrorKind.MISSING_SCOPE
    assert [(t.scopes, t.ok) for t in clients.fake.token_requests] == [((INDEXING, WM_RO), False), ((WM_RO,), True)]


async def test_demo_and_none() -> None:
    demo = token_source(Credential("demo", "SEARCHDESK_DEMO"))
    assert demo.kind == "demo" and await demo.token([WM]) == DEMO_TOKEN
    none = token_source(Credential("none", ""))
    with pytest.raises(GoogleError) as caught:
        await none.token([WM])
    text = str(caught.value)
    assert caught.value.kind is ErrorKind.NOT_CONFIGURED
    for name in (
        "SearchDesk app",
        "GSC_SERVICE_ACCOUNT_KEY_FILE",
        "GSC_CLIENT_ID",
        "GSC_CLIENT_SECRET",
        "GSC_REFRESH_TOKEN",
    ):
        assert name in text


class FakeAgent:
    """Stands in for the agent client (the real socket is tested with the reference agent)."""

    def __init__(self, token: str, failure: Exception | None = None) -> None:
        self.token_value = token
        self.failure = failure
        self.asked: list[tuple[tuple[str, ...], bool]] = []
        self.named: list[str | None] = []  # the account each request named (None: an older server's way)
        self.refreshed_value = ""
        self.account = "a@example.com"  # whose token the app hands out

    async def token(
        self, scopes: Sequence[str], force_refresh: bool = False, requester: object = None, **named: str
    ) -> dict[str, object]:
        self.asked.append((tuple(scopes), force_refresh))
        self.named.append(named.get("account"))
        if self.failure is not None:
            raise self.failure
        if force_refresh and self.refreshed_value:
            self.token_value = self.refreshed_value  # the app mints a new one only when told to
        return {"access_token": self.token_value, "expires_in": 3599, "kind": "oauth", "account": self.account}


async def test_desktop_tokens_are_asked_for_every_call_and_force_refreshed_after_a_401(clients: Clients) -> None:
    """No token outlives the app: each call asks it (so after it quits, nothing reaches Google)."""
    first = clients.fake.mint_token([WM_RO])
    agent = FakeAgent(first)
    client = clients.client(DesktopSource(agent), scopes=[WM_RO])
    await client.call(Api.SEARCHCONSOLE, "GET", SITES)
    await client.call(Api.SEARCHCONSOLE, "GET", SITES)
    assert agent.asked == [((WM_RO,), False), ((WM_RO,), False)]
    clients.fake.revoke_tokens()  # the app's cached token dies at Google: a 401, then a forced refresh
    agent.refreshed_value = clients.fake.mint_token([WM_RO])
    await client.call(Api.SEARCHCONSOLE, "GET", SITES)
    assert agent.asked[2:] == [((WM_RO,), False), ((WM_RO,), True)]
    agent.failure = AgentUnavailable("The SearchDesk app is not running.")  # the app quits
    before = len(clients.fake.api_requests())
    with pytest.raises(GoogleError, match="is not running"):
        await client.call(Api.SEARCHCONSOLE, "GET", SITES)
    assert len(clients.fake.api_requests()) == before


@pytest.mark.parametrize(
    ("failure", "kind", "words"),
    [
        (AppRefreshFailed("revoked", code=ErrorCode.REFRESH_FAILED), ErrorKind.AUTH, "sign in again"),
        (AppScopeNotGranted("missing", code=ErrorCode.SCOPE_NOT_GRANTED), ErrorKind.MISSING_SCOPE, "Sign in again"),
        (AppSignedOut("signed out", code=ErrorCode.SIGNED_OUT), ErrorKind.NOT_CONFIGURED, "sign in with Google"),
        (AgentUnavailable("The SearchDesk app is not running."), ErrorKind.NOT_CONFIGURED, "is not running"),
    ],
)
async def test_desktop_app_refusals_say_what_to_do(failure: Exception, kind: ErrorKind, words: str) -> None:
    source = DesktopSource(FakeAgent("unused", failure))
    with pytest.raises(GoogleError) as caught:
        await source.token([WM_RO])
    assert caught.value.kind is kind and words in str(caught.value)


async def test_a_token_for_another_account_than_the_one_named_is_never_sent(clients: Clients) -> None:
    """An app that hands out the wrong account's token (a bug, or an app from before accounts that
    ignored the name): the server sends Google nothing with it."""
    agent = FakeAgent(clients.fake.mint_token([WM_RO]))
    client = clients.client(DesktopSource(agent), scopes=[WM_RO])
    await client.call(Api.SEARCHCONSOLE, "GET", SITES, account="A@example.com")  # the same address, other case
    before = len(clients.fake.api_requests())
    with pytest.raises(GoogleError, match=r"another Google account than b@example\.com"):
        await client.call(Api.SEARCHCONSOLE, "GET", SITES, account="b@example.com")
    assert len(clients.fake.api_requests()) == before
    assert agent.named == ["A@example.com", "b@example.com"]
    await client.call(Api.SEARCHCONSOLE, "GET", SITES)  # no account named: no name sent, as before accounts
    assert agent.named[-1] is None


@pytest.mark.parametrize(
    ("failure", "words"),
    [
        (
            AppRefreshFailed("revoked", code=ErrorCode.REFRESH_FAILED),
            "sign-in of b@example.com: the sign-in was revoked",
        ),
        (AppUnknownAccount("gone", code=ErrorCode.UNKNOWN_ACCOUNT), "b@example.com is no longer one Claude may use"),
    ],
)
async def test_an_accounts_refusal_names_the_account(failure: Exception, words: str) -> None:
    source = DesktopSource(FakeAgent("unused", failure))
    with pytest.raises(GoogleError) as caught:
        await source.token([WM_RO], account="b@example.com")
    assert words in str(caught.value)
