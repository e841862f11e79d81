"""Where access tokens come from: a service-account key, an OAuth refresh token, the desktop app,
the demo, or nowhere (then every call explains how to set SearchDesk up).

Tokens are cached per scope set until a minute before they expire (refreshing on every call costs
a round trip and a quota unit each time). A token or key is never logged, echoed or put in an error.
Key signing uses google-auth; the token exchange goes through our own hardened client, so it obeys
the same hosts, proxy, trust store and limits as every other request.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import anyio

from searchdesk_server.deadlines import TOKEN_USED_SECONDS
from searchdesk_server.google import grants
from searchdesk_server.google.errors import ErrorKind, GoogleError

if TYPE_CHECKING:
    import httpx

    from searchdesk_server.agent.client import AgentClient
    from searchdesk_server.credential_setting import Credential

__all__ = [
    "DEMO_TOKEN",
    "TokenSource",
    "token_source",
]

DEMO_TOKEN = "demo-access-token"  # noqa: S105 (the demo's public stand-in)
EARLY_REFRESH = TOKEN_USED_SECONDS  # seconds before expiry at which a cached token is no longer used


class TokenSource(Protocol):
    """Hands out access tokens for a set of scopes; raises GoogleError when it cannot. `account` names
    the Google account when the source holds several (the app); a source of one account ignores it."""

    kind: str

    async def token(self, scopes: Sequence[str], *, force_refresh: bool = False, account: str | None = None) -> str: ...


class _Cached:
    """The caching half every real source shares: one token per scope set, one fetch at a time."""

    kind: str = ""

    def __init__(self) -> None:
        self._cache: dict[frozenset[str], tuple[str, float]] = {}
        self._lock = anyio.Lock()

    async def token(self, scopes: Sequence[str], *, force_refresh: bool = False, account: str | None = None) -> str:
        from searchdesk_server.google.wire import usable_token

        key = frozenset(scopes)
        async with self._lock:
            cached = self._cache.get(key)
            if cached is not None and not force_refresh and time.monotonic() < cached[1]:
                return cached[0]
            self._cache.pop(key, None)
            raw, lifetime = await self._fetch(sorted(key), force_refresh)
            token = usable_token(raw)
            if lifetime > EARLY_REFRESH:
                self._cache[key] = (token, time.monotonic() + lifetime - EARLY_REFRESH)
            return token

    async def _fetch(self, scopes: list[str], force_refresh: bool) -> tuple[object, float]:
        """Get a fresh token and its lifetime in seconds (validated by the caller)."""
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------------
# Sources


class ServiceAccountSource(_Cached):
    """A service-account key: a JWT assertion signed locally, exchanged for an access token."""

    kind = "service_account"

    def __init__(self, info: Mapping[str, str], origin: str, transport: httpx.AsyncBaseTransport | None) -> None:
        super().__init__()
        self._info = dict(info)
        self._origin = origin
        self._transport = transport
        self._refusal = self._check(self._info, origin)

    @staticmethod
    def _check(info: Mapping[str, str], origin: str) -> GoogleError | None:
        """A key we will not use is refused before anything is signed or sent."""
        token_uri = info.get("token_uri") or grants.TOKEN_URL
        if token_uri != grants.TOKEN_URL:
            return GoogleError(
                ErrorKind.AUTH,
                f"The service-account key ({origin}) names a token_uri other than Google's "
                f"({grants.TOKEN_URL}). SearchDesk refuses it, because the signed assertion would be sent "
                "there. Download the key from the Google Cloud console again.",
            )
        universe = info.get("universe_domain") or "googleapis.com"
        if universe != "googleapis.com":
            return GoogleError(
                ErrorKind.AUTH,
                f"The service-account key ({origin}) belongs to another Google Cloud universe; "
                "SearchDesk works only with googleapis.com.",
            )
        if not info.get("client_email") or not info.get("private_key"):
            return GoogleError(
                ErrorKind.AUTH,
                f"The service-account key ({origin}) lacks client_email or private_key. Download the "
                "key from the Google Cloud console again.",
            )
        return None

    async def _fetch(self, scopes: list[str], force_refresh: bool) -> tuple[object, float]:
        if self._refusal is not None:
            raise self._refusal
        grant = await grants.request_grant(
            grants.assertion_form(self._info, scopes, origin=self._origin),
            credential="service_account",
            origin=self._origin,
            secrets=(self._info["private_key"],),
            transport=self._transport,
        )
        return grant.access_token, grant.lifetime


class OAuthSource(_Cached):
    """An OAuth client and refresh token (the GSC_CLIENT_* trio, or an authorized_user ADC file)."""

    kind = "oauth"

    def __init__(self, info: Mapping[str, str], origin: str, transport: httpx.AsyncBaseTransport | None) -> None:
        super().__init__()
        self._info = {k: info.get(k, "") for k in ("client_id", "client_secret", "refresh_token")}
        self._origin = origin
        self._transport = transport

    async def _fetch(self, scopes: list[str], force_refresh: bool) -> tuple[object, float]:
        client_id, secret, refresh = (self._info[k] for k in ("client_id", "client_secret", "refresh_token"))
        try:
            grant = await self._grant(grants.refresh_form(client_id, secret, refresh, scopes))
        except GoogleError as err:
            if err.kind is not ErrorKind.MISSING_SCOPE:
                raise
            # The refresh token was granted fewer scopes than the registered tools need. Take what it
            # has: the calls it covers work, the others say which permission is missing.
            grant = await self._grant(grants.refresh_form(client_id, secret, refresh))
        return grant.access_token, grant.lifetime

    async def _grant(self, form: Mapping[str, str]) -> grants.Grant:
        return await grants.request_grant(form, credential="oauth", origin=self._origin, transport=self._transport)


class DesktopSource:
    """Short-lived tokens from the SearchDesk app over its agent socket (the refresh token stays
    in the app's keyring), through the runtime's agent client (`Runtime.agent`). `account` is the
    Google account the app said the last token is for.

    Nothing is cached here: every Google call asks the app (a local round trip; the app keeps its own
    cache), so once the app has quit no call of this server reaches Google.
    """

    kind = "desktop"

    def __init__(self, agent: AgentClient, *, server_id: str | None = None) -> None:
        self._agent = agent
        self._server_id = server_id
        self.account: str | None = None

    async def token(self, scopes: Sequence[str], *, force_refresh: bool = False, account: str | None = None) -> str:
        from searchdesk_server.google.wire import usable_token

        raw, _lifetime = await self._fetch(sorted(set(scopes)), force_refresh, account)
        return usable_token(raw)

    async def _fetch(self, scopes: list[str], force_refresh: bool, account: str | None) -> tuple[object, float]:
        # After a 401 the app must mint a new token, not hand back its own cached one.
        from searchdesk_server.agent.protocol import AgentError, Requester, same_account

        # A demo app refuses a real server (DEMO_APP) instead of handing it the demo's stand-in token.
        requester = Requester(self._server_id, None, demo=False) if self._server_id else None
        try:
            if account is None:  # as before accounts: an older app would not understand the name
                answer = await self._agent.token(scopes, force_refresh=force_refresh, requester=requester)
            else:
                answer = await self._agent.token(
                    scopes, force_refresh=force_refresh, requester=requester, account=account
                )
        except AgentError as exc:
            raise agent_failure(exc, account) from None
        given = _field(answer, "account")
        given = given if isinstance(given, str) and given else None
        if account is not None and not same_account(given, account):
            # Never act for an account other than the one the call was routed (and a person asked) for.
            raise GoogleError(
                ErrorKind.AUTH,
                f"The SearchDesk app handed out access for another Google account than {account}; it was not "
                "used and nothing was sent to Google. Update SearchDesk, then try again.",
            )
        self.account = given
        return _field(answer, "access_token"), grants.lifetime(_field(answer, "expires_in"))


def agent_failure(exc: Exception, account: str | None = None) -> GoogleError:
    """Say what the app's refusal means for this call (naming the account when the app holds several);
    its own words follow, cleaned and short."""
    from searchdesk_server.agent import client as agent_client

    reason = _agent_reason(exc)
    whose = "sign-in" if account is None else f"sign-in of {account}"
    if isinstance(exc, agent_client.AppRefreshFailed):
        return GoogleError(
            ErrorKind.AUTH,
            f"Google refused to refresh the SearchDesk app's {whose}: the sign-in was revoked or expired; "
            "sign in again in the SearchDesk app" + ("." if account is None else " with that account."),
        )
    if isinstance(exc, agent_client.AppScopeNotGranted):
        return GoogleError(
            ErrorKind.MISSING_SCOPE,
            f"The SearchDesk app's {whose} lacks a permission this server needs. Sign in again in the "
            "SearchDesk app and allow every permission it asks for.",
        )
    if isinstance(exc, agent_client.AppUnknownAccount):
        return GoogleError(
            ErrorKind.NOT_CONFIGURED,
            f"The Google account {account or 'asked for'} is no longer one Claude may use in the SearchDesk app "
            "(it was removed, or the app's Settings keep it from Claude). Call again: SearchDesk then uses "
            "an account it still has.",
        )
    if isinstance(exc, agent_client.AppRunsDemo):
        return GoogleError(
            ErrorKind.NOT_CONFIGURED,
            "The SearchDesk app is running the demo, which never hands out access to a Google account. "
            "Quit it and start SearchDesk normally, then try again.",
        )
    if isinstance(exc, agent_client.AppSignedOut):
        return GoogleError(
            ErrorKind.NOT_CONFIGURED,
            "No Google account is signed in to the SearchDesk app. Open SearchDesk and sign in with "
            "Google, then try again.",
        )
    return GoogleError(
        ErrorKind.NOT_CONFIGURED,
        f"SearchDesk could not get an access token from the SearchDesk app: {reason} Open the "
        "SearchDesk app and sign in with Google, then try again.",
    )


def _field(answer: object, name: str) -> object:
    if isinstance(answer, Mapping):
        return answer.get(name)
    return getattr(answer, name, None)


def _agent_reason(exc: BaseException) -> str:
    """The agent client's message (its own sentences, or the app's when short and plain), cleaned."""
    from searchdesk_server.google.errors import clean_upstream

    text = clean_upstream(str(exc), 300)
    if not text:
        return "it did not answer."
    return text if text.endswith(".") else text + "."


class DemoSource:
    """The demo needs no credentials; its fake Google accepts this one token."""

    kind = "demo"

    async def token(self, scopes: Sequence[str], *, force_refresh: bool = False, account: str | None = None) -> str:
        return DEMO_TOKEN


SETUP_HELP = (
    "SearchDesk has no Google credentials. Either sign in with Google in the SearchDesk app (it "
    "hands this server short-lived tokens), or set GSC_SERVICE_ACCOUNT_KEY_FILE to a service-account "
    "key file, or set all three of GSC_CLIENT_ID, GSC_CLIENT_SECRET and GSC_REFRESH_TOKEN. "
    "Then restart the client (for example Claude Desktop)."
)


class NoSource:
    """No credentials: every call answers with how to set SearchDesk up."""

    kind = "none"

    async def token(self, scopes: Sequence[str], *, force_refresh: bool = False, account: str | None = None) -> str:
        raise GoogleError(ErrorKind.NOT_CONFIGURED, SETUP_HELP)


def token_source(
    cred: Credential,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    server_id: str | None = None,
    agent: AgentClient | None = None,
) -> TokenSource:
    """The token source for a configured credential (`agent`: the app's, for the app's sign-in). Never
    raises: a credential that cannot work fails on its first token() with a GoogleError, where the tool
    call can explain it."""
    if cred.kind == "service_account":
        return ServiceAccountSource(cred.info, cred.origin, transport)
    if cred.kind == "oauth":
        return OAuthSource(cred.info, cred.origin, transport)
    if cred.kind == "desktop":
        if agent is None:
            raise AssertionError("the app's sign-in needs the runtime's agent client")
        return DesktopSource(agent, server_id=server_id)
    if cred.kind == "demo":
        return DemoSource()
    return NoSource()
