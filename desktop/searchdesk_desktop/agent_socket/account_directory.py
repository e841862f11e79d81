"""The Google accounts the agent listener hands tokens for, as the listener sees them.

The listener answers `accounts/list` and `credentials/token` from an `AccountDirectory`: the Core in
the app (several accounts, some withheld from Claude in Settings), or `OneAccount` around a single
token provider (the demo, the tests of one account). `SignedOut` (refusals.py) is the refusal when
there is no account to use yet.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from searchdesk_server.agent import protocol
from searchdesk_server.agent.protocol import AccountInfo

from ..accounts.tokens import TokenProvider
from ..refusals import SignedOut

ProviderGetter = Callable[[], TokenProvider]


@runtime_checkable
class AccountDirectory(Protocol):
    """Whoever holds the Google accounts (the Core): which ones Claude may use, and their tokens."""

    def usable(self) -> Sequence[AccountInfo]:
        """The accounts Claude may use, in order, at most one marked default (called on the Qt thread)."""
        ...

    def provider(self, account: str | None) -> TokenProvider:
        """Tokens for `account` (one of `usable`), or for the default when None (on a worker thread)."""
        ...


class OneAccount:
    """A single token provider as an account directory (the demo, the tests of one account)."""

    def __init__(self, get: ProviderGetter) -> None:
        self._get = get

    def usable(self) -> list[AccountInfo]:
        try:
            provider = self._get()
        except SignedOut:
            return []
        kind: protocol.TokenKind = "service_account" if provider.kind == "service_account" else "oauth"
        return [AccountInfo(provider.account, kind, default=True)] if provider.account else []

    def provider(self, account: str | None) -> TokenProvider:
        return self._get()
