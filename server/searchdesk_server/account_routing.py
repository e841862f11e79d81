"""Which Google account a call uses, when the SearchDesk app holds several.

The app stays a token vault: it lists the accounts Claude may use (`accounts/list`, asked on every
call like a token, so an account removed in the app is gone for the next call) and hands out a
token for the account named. Who sees which property is learned here, with each account's own token
through the same hardened client as every other call: each account's Search Console site list and,
for the verification tools, its verified sites. They are kept for the life of the process and read
again when a property is in none of them (added in Search Console since), or after Google refused a
call routed by them.

The rules (issue 18), per tool as the catalogue's `route` says:
- "property": the account that sees the property with the highest permission (owner > full user >
  restricted > unverified), then the default account, then the app's order;
- "verified": an account that verified the site (the default first);
- "url": an account that sees a property containing the URL, owner first;
- "named": the account Claude names in `account`, else the default;
- "every": each account (list_sites and list_verified_sites ask them all and merge).
Nobody sees the property: a refusal naming it and the accounts tried; never another account's token.

One account (credentials from the environment, an app that holds one, or an app from before
accounts): no site list is read and nothing is routed, exactly as before.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .google.errors import ErrorKind, GoogleError
from .result import ToolFailure
from .text.phrases import describe

if TYPE_CHECKING:
    from .agent.client import AgentClient
    from .config import Config
    from .google.http import GoogleClient
    from .tool_spec import ToolSpec


class Runtime(Protocol):
    """What the directory uses of its server process (`runtime.Runtime` is one). Declared here because the
    runtime makes the directory: this module never imports the runtime, so no import runs in a circle."""

    config: Config
    server_id: str

    def agent(self) -> AgentClient: ...

    async def client(self) -> GoogleClient: ...


class Call(Protocol):
    """What routing reads of a tool call (`runtime.Call` is one)."""

    spec: ToolSpec
    args: dict[str, Any]

    def url(self, value: str, key: str = "url") -> str: ...

    def site(self, key: str = "site") -> str: ...


#: Search Console's permission levels, best first.
RANK: Mapping[str, int] = {"siteOwner": 4, "siteFullUser": 3, "siteRestrictedUser": 2, "siteUnverifiedUser": 1}
OWNER_RANK = RANK["siteOwner"]
KIND_WORDS: Mapping[str, str] = {
    "oauth": "Google sign-in",
    "service_account": "service account",
    "demo": "the demo",
    "app": "the SearchDesk app's account",
    "none": "none",
}
Listing = Literal["sites", "verified"]


@dataclass(frozen=True)
class Account:
    """A Google account this server may act as. `name` is its e-mail address (None: an OAuth refresh
    token from the environment, or an app from before accounts, which does not say it); `named`: token
    requests name it (an app that serves accounts). `quota_project` is the Google Cloud project its
    calls are counted against ("" when unknown)."""

    name: str | None
    kind: str
    default: bool = True
    quota_project: str = ""
    named: bool = False

    @property
    def key(self) -> str:
        return (self.name or "").casefold()

    @property
    def token_name(self) -> str | None:
        """The name a token request carries: only to an app that serves accounts."""
        return self.name if self.named else None

    @property
    def label(self) -> str:
        return self.name or "the configured Google account"

    def describe(self) -> dict[str, Any]:
        """What describe_connection and list_sites say about it: never a token."""
        return {"account": self.name, "kind": self.kind, "default": self.default}


@dataclass
class Seen:
    """What one account sees: property (or verified site id) -> its entry; or why it could not be read."""

    account: Account
    entries: dict[str, Any]
    error: GoogleError | None = None


def choose(candidates: Sequence[tuple[int, Account]], order: Sequence[Account]) -> Account | None:
    """The best-ranked account; among equals the default, then the first in the app's order."""
    if not candidates:
        return None
    position = {a.key: i for i, a in enumerate(order)}
    return max(candidates, key=lambda c: (c[0], c[1].default, -position.get(c[1].key, 0)))[1]


def verified_key(kind: str, identifier: str) -> str:
    """A verified site by what it is (Google's ids come percent-encoded or not; its type and identifier do not)."""
    return f"{kind} {identifier}"


def names(accounts: Sequence[Account]) -> str:
    return ", ".join(a.label for a in accounts)


class Directory:
    """The accounts of this server and what each sees, for one server process."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        self._cache: dict[tuple[Listing, str], dict[str, Any]] = {}

    # --- the accounts -------------------------------------------------------------------------

    async def accounts(self) -> tuple[Account, ...]:
        """The accounts Claude may use now, in the app's order (or the environment's one account)."""
        cred = self._rt.config.credential
        if cred.kind != "desktop":
            return (self._environment_account(),)
        accounts = await self._app_accounts()
        alive = {a.key for a in accounts}
        for slot in [s for s in self._cache if s[1] not in alive]:
            del self._cache[slot]  # removed in the app: what it saw goes with it
        return accounts

    def _environment_account(self) -> Account:
        cred = self._rt.config.credential
        if cred.kind == "service_account":
            return Account(
                cred.info.get("client_email") or None, "service_account", quota_project=cred.info.get("project_id", "")
            )
        if cred.kind == "oauth":
            from .agent.protocol import client_project

            return Account(None, "oauth", quota_project=client_project(cred.info.get("client_id", "")))
        if cred.kind == "demo":
            from .demo import DEMO_ACCOUNT

            return Account(DEMO_ACCOUNT, "demo", quota_project="demo")
        return Account(None, cred.kind)

    async def _app_accounts(self) -> tuple[Account, ...]:
        from .agent.protocol import AgentError, Requester
        from .google.credentials import agent_failure

        agent = self._rt.agent()
        try:
            hello = await agent.app_hello()
            if not hello.serves_accounts:
                return (Account(None, "app"),)  # an app from before accounts: its one account, not named
            listed = await agent.accounts(Requester(self._rt.server_id, None, demo=False))
        except AgentError as exc:
            raise agent_failure(exc) from None
        has_default = any(a.default for a in listed)
        return tuple(
            Account(a.account, a.kind, a.default or (not has_default and i == 0), a.quota_project, named=True)
            for i, a in enumerate(listed)
        )

    # --- routing --------------------------------------------------------------------------------

    async def route(self, call: Call, accounts: Sequence[Account]) -> Account | None:
        """The account among `accounts` for this call (None: the app has none Claude may use; the token
        request then says so). Raises ToolFailure (nobody sees the property; an unknown account named)
        or GoogleError."""
        if not accounts:
            return None
        default = next((a for a in accounts if a.default), accounts[0])
        how = call.spec.route
        if how == "named":
            return self._named(call.args.get("account"), accounts, default)
        if len(accounts) == 1 or how in ("every", "none"):
            return default
        if how == "url":
            url = call.url(call.args["url"])
            return await self._best(accounts, "sites", url=url, what=f"a property that contains {url}")
        prop = call.site()
        if how == "verified":
            from .properties import verification_id

            key = verified_key(*verification_id(prop))
            return await self._best(accounts, "verified", key=key, what=f"the verified site {prop}")
        return await self._best(accounts, "sites", key=prop, what=f"the property {prop}")

    @staticmethod
    def _named(name: str | None, accounts: Sequence[Account], default: Account) -> Account:
        if name is None:
            return default
        for account in accounts:
            if account.name is not None and account.key == name.strip().casefold():
                return account
        if len(accounts) == 1 and accounts[0].name is None:
            raise ToolFailure(
                "account: this server acts as the one Google account its settings give it, and that account's "
                "e-mail address is not known here; leave account out."
            )
        raise ToolFailure(
            f"account: {describe(name)} is not a Google account Claude may use in SearchDesk; use one of "
            f"{names(accounts)} (or leave account out for the default, {default.label})."
        )

    async def _best(
        self, accounts: Sequence[Account], listing: Listing, *, what: str, key: str = "", url: str = ""
    ) -> Account:
        seen: list[Seen] = []
        for refresh in (False, True):
            seen, fetched_all = await self._read(accounts, listing, refresh=refresh)
            found = choose([c for s in seen for c in _candidates(s, listing, key, url)], accounts)
            if found is not None:
                return found
            if fetched_all:
                break  # everything was just read from Google: reading it again says the same
        unread = [f"{s.account.label} could not be read ({s.error.summary.rstrip('.')})" for s in seen if s.error]
        raise ToolFailure(
            f"No Google account Claude may use in SearchDesk sees {what}; tried {names(accounts)}"
            + (f" ({'; '.join(unread)})" if unread else "")
            + ". Check the address (list_sites shows every property with its account), or add the Google "
            "account that manages it in the SearchDesk app."
        )

    # --- what each account sees -------------------------------------------------------------

    async def seen(self, accounts: Sequence[Account], listing: Listing, *, refresh: bool = False) -> list[Seen]:
        """What each account sees (each read from Google when `refresh` or not known yet), in order."""
        return (await self._read(accounts, listing, refresh=refresh))[0]

    async def _read(self, accounts: Sequence[Account], listing: Listing, *, refresh: bool) -> tuple[list[Seen], bool]:
        """(what each sees, whether every one was read from Google just now)."""
        todo = [a for a in accounts if refresh or (listing, a.key) not in self._cache]
        fetched = await asyncio.gather(*(self._fetch(a, listing) for a in todo))
        got = {a.key: s for a, s in zip(todo, fetched, strict=True)}
        out = [got.get(a.key) or Seen(a, self._cache[(listing, a.key)]) for a in accounts]
        return out, len(todo) == len(accounts)

    async def _fetch(self, account: Account, listing: Listing) -> Seen:
        from .google.http import Api
        from .google.listings import RESOURCES, SITES, site_entries, verified_entries

        client = await self._rt.client()
        try:
            if listing == "sites":
                raw = await client.call(Api.SEARCHCONSOLE, "GET", SITES, retry=True, account=account.token_name)
                entries: dict[str, Any] = {e["site"]: e.get("permission", "") for e in site_entries(raw)}
            else:
                raw = await client.call(Api.SITEVERIFICATION, "GET", RESOURCES, retry=True, account=account.token_name)
                entries = {verified_key(e["type"], e["identifier"]): e for e in verified_entries(raw)}
        except GoogleError as exc:  # this account cannot be read now: the others still can
            self._cache.pop((listing, account.key), None)
            return Seen(account, {}, exc)
        self._cache[(listing, account.key)] = entries
        return Seen(account, entries)

    def forget(self, account: Account | None) -> None:
        """Google refused a call routed by what this account seemed to see: read it again next time."""
        if account is not None:
            for slot in [s for s in self._cache if s[1] == account.key]:
                del self._cache[slot]


def merge(seen: Sequence[Seen], order: Sequence[Account]) -> list[tuple[str, Account, Any]]:
    """Every account's entries (properties, or verified sites) merged: each once, as (its key, the account
    a call about it goes to, that account's entry). Raises the first error when no account could be read."""
    readable = [s for s in seen if s.error is None]
    if not readable:
        raise next(s.error for s in seen if s.error is not None)
    merged = []
    for key in dict.fromkeys(k for s in readable for k in s.entries):
        holders = [s for s in readable if key in s.entries]
        best = choose([(_rank(s.entries[key]), s.account) for s in holders], order)
        winner = next(s for s in holders if best is not None and s.account.key == best.key)
        merged.append((key, winner.account, winner.entries[key]))
    return merged


def failures(seen: Sequence[Seen]) -> list[str]:
    """A line for each account that could not be read, naming it."""
    return [f"{s.account.label} could not be read: {s.error}" for s in seen if s.error is not None]


def _rank(entry: Any) -> int:
    """A site list's entry is its permission; a verified site's is its resource (its owner's rank)."""
    return RANK.get(entry, 0) if isinstance(entry, str) else OWNER_RANK


def _candidates(seen: Seen, listing: Listing, key: str, url: str) -> list[tuple[int, Account]]:
    if listing == "verified":
        return [(OWNER_RANK, seen.account)] if key in seen.entries else []
    if url:
        from .properties import covers_url

        ranks = [RANK.get(perm, 0) for site, perm in seen.entries.items() if covers_url(site, url)]
        return [(max(ranks), seen.account)] if ranks else []
    return [(RANK.get(seen.entries[key], 0), seen.account)] if key in seen.entries else []


def not_found(exc: GoogleError) -> bool:
    """Google's refusal that means the routed account does not see the property (any more)."""
    return exc.kind in (ErrorKind.PERMISSION, ErrorKind.NOT_FOUND)
