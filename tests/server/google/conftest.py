"""Fixtures for the Google client's tests: a client wired to the fake Google by either route."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest

from searchdesk_server.credential_setting import Credential
from searchdesk_server.google.credentials import TokenSource, token_source
from searchdesk_server.google.http import GoogleClient, RetryPolicy
from tests.fakegoogle import FakeGoogle
from tests.fakegoogle.plugin import fake_google, fake_google_env  # noqa: F401 (until tests/conftest.py registers the plugin)
from tests.fakegoogle.scopes import ALL_SCOPES, WM_RO

FAST = RetryPolicy(attempts=3, base_delay=0.01, max_wait=2.0, request_timeout=20.0)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["proxy", "transport"])
def route(request: pytest.FixtureRequest, fake_google_env: FakeGoogle) -> str:  # noqa: F811
    """Both ways the tests reach the fake: loopback TLS through the CONNECT proxy, and in-process."""
    return str(request.param)


class Clients:
    """Builds clients for one test and closes them afterwards."""

    def __init__(self, fake: FakeGoogle, route: str) -> None:
        self.fake = fake
        self.route = route
        self.made: list[GoogleClient] = []

    def transport(self) -> Any:
        return self.fake.transport() if self.route == "transport" else None

    def tokens(self, kind: str = "service_account", **overrides: str) -> TokenSource:
        info: dict[str, str] = {}
        if kind == "service_account":
            info = {**self.fake.service_account_info, **overrides}
        elif kind == "oauth":
            info = {**self.fake.oauth_info, **overrides}
        return token_source(Credential(kind, f"test {kind}", info), transport=self.transport())  # type: ignore[arg-type]

    def client(
        self,
        tokens: TokenSource | None = None,
        scopes: Sequence[str] = (WM_RO,),
        policy: RetryPolicy = FAST,
    ) -> GoogleClient:
        client = GoogleClient(tokens or self.tokens(), scopes, transport=self.transport())
        client.policy = policy
        self.made.append(client)
        return client


@pytest.fixture
async def clients(fake_google_env: FakeGoogle, route: str) -> AsyncIterator[Clients]:  # noqa: F811
    made = Clients(fake_google_env, route)
    yield made
    for client in made.made:
        await client.aclose()


class StaticTokens:
    """A token source that hands out a fixed token (and counts how often it was asked)."""

    kind = "static"

    def __init__(self, token: str | Callable[[bool], str]) -> None:
        self._token = token
        self.calls: list[bool] = []

    async def token(self, scopes: Sequence[str], *, force_refresh: bool = False, account: str | None = None) -> str:
        self.calls.append(force_refresh)
        return self._token(force_refresh) if callable(self._token) else self._token


__all__ = ["ALL_SCOPES", "FAST", "Clients", "StaticTokens"]
