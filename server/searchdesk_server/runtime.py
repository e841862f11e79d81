"""Per-process state shared by tool calls, created lazily on the first call.

The start-up path (initialize, tools/list) must not pay for httpx, google-auth or the demo
data, so everything here is built on first use.
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from .catalogue import QuotaKind, ToolSpec
from .config import Config
from .deadlines import BATCH_SECONDS
from .properties import PropertyError, check_allowed, check_allowed_url, check_url, normalise_property
from .result import ToolFailure
from .text import plural as plural  # the tools' one way to count, defined with the other words

if TYPE_CHECKING:
    import httpx

    from .accounts import Account, Directory
    from .agent.client import AgentClient
    from .agent.protocol import Requester
    from .approval.question import Question
    from .confirm_tokens import TokenBook
    from .google.credentials import TokenSource
    from .google.http import Api, GoogleClient, Limit
    from .journal.store import Approval, Journal
    from .quota import QuotaBook
    from .request_state import ShownBook, StateBook


class Runtime:
    """Everything a tool call may need beyond its arguments."""

    def __init__(
        self,
        config: Config,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        tokens: TokenBook | None = None,
        states: StateBook | None = None,
    ) -> None:
        self.config = config
        self._transport = transport
        self._client: GoogleClient | None = None
        self._agent: AgentClient | None = None
        self._approval_agent: AgentClient | None = None
        self._source: TokenSource | None = None
        self._given_tokens = tokens
        self._given_states = states
        self._lock = asyncio.Lock()
        #: This process, as the app knows it: an approve is handed back only to the server that asked.
        self.server_id = uuid.uuid4().hex
        #: The app has answered this process at some time, on either connection (a hello, a token, an
        #: answer). A fact of the process, never unset: once the app was there, its absence is a reason
        #: to try again, never a reason for the two-call token (approval/chain.py). Set by the agent
        #: clients (`_agent_client`); each call still tries the socket again.
        self.app_reached = False
        #: The server's own background tasks (`server.build_server`'s lifespan); None outside a run.
        self.background: anyio.abc.TaskGroup | None = None
        self._announced = False
        #: How long a batch tool may run (deadlines.py); in-process tests shorten it.
        self.batch_seconds: float = BATCH_SECONDS

    async def client(self) -> GoogleClient:
        async with self._lock:
            if self._client is None:
                self._client = self._make_client()
            return self._client

    def _make_client(self) -> GoogleClient:
        from .google.credentials import token_source
        from .google.http import GoogleClient

        transport = self._transport
        if transport is None and self.config.demo:
            from .demo import demo_transport

            transport = demo_transport(self.config.today)
        agent = self.agent() if self.config.credential.kind == "desktop" else None
        self._source = token_source(self.config.credential, transport=transport, server_id=self.server_id, agent=agent)
        return GoogleClient(self._source, self.config.scopes, transport=transport)

    # The books below are made on first use: the start-up path imports none of their modules.

    @functools.cached_property
    def quota(self) -> QuotaBook:
        from .quota import QuotaBook

        return QuotaBook()

    @functools.cached_property
    def tokens(self) -> TokenBook:
        from .confirm_tokens import TokenBook

        return self._given_tokens if self._given_tokens is not None else TokenBook()

    @functools.cached_property
    def shown(self) -> ShownBook:
        """What this server showed the app's dialog, per fingerprint (a yes counts for that question)."""
        from .request_state import ShownBook

        return ShownBook()

    @functools.cached_property
    def states(self) -> StateBook:
        from .request_state import StateBook

        return self._given_states if self._given_states is not None else StateBook()

    def agent(self) -> AgentClient:
        """The desktop app, for what every call may need: its access tokens, its accounts, who it is.
        A connection of its own, so a token is never refused because questions are waiting for the
        person (the app bounds the requests in flight on each connection). Connects on first use."""
        if self._agent is None:
            self._agent = self._agent_client()
        return self._agent

    def approval_agent(self) -> AgentClient:
        """The desktop app, for questions to the person: each may wait there as long as
        SEARCHDESK_APPROVAL_WAIT allows, on this connection only."""
        if self._approval_agent is None:
            self._approval_agent = self._agent_client()
        return self._approval_agent

    def _agent_client(self) -> AgentClient:
        from . import __version__
        from .agent.client import AgentClient

        # The socket as Config resolved it (None: the default place, found on first connect).
        return AgentClient(self.config.agent_socket, version=__version__, on_answer=self._app_answered)

    def announce_soon(self, ctx: Any) -> None:
        """Once the MCP client has said who it is, tell the app in the background (the additive `client`
        of `hello`): the app's "Claude Desktop started SearchDesk" is true only from this. Only servers the
        app configured (`Config.never_a_token`); never on the path of the request that triggers it."""
        if self._announced or self.background is None or not self.config.never_a_token:
            return
        self._announced = True
        self.background.start_soon(self._announce, ctx)

    async def _announce(self, ctx: Any) -> None:
        from .agent.protocol import AgentError, ClientInfo, ProtocolError
        from .mcp_client import client_info

        try:
            name, version = client_info(ctx)
            info = ClientInfo(name=name, version=version)
        except (AttributeError, ProtocolError, ValueError):
            return  # nothing usable to tell
        for agent in (self.agent(), self.approval_agent()):
            agent.client = info  # every later connection's hello carries it too
        with anyio.move_on_after(10):
            try:
                await self.agent().announce(info)
            except AgentError:
                pass  # the app is not there now: its next connection from this server says it

    def _app_answered(self) -> None:
        self.app_reached = True

    @property
    def token_possible(self) -> bool:
        """Whether the two-call token may stand in for the person (approval/chain.py, step 3): only on a
        server given its credentials directly and not told to ask in the app (`Config.never_a_token`)
        that has never reached the app in this process — once the app was there, its absence means
        "not now", never "nobody will ever be asked"."""
        return not self.config.never_a_token and not self.app_reached

    @functools.cached_property
    def journal(self) -> Journal:
        """The record of changes this process appends to (the demo's own file in the demo)."""
        from .journal.paths import journal_path
        from .journal.store import Journal

        return Journal(journal_path(demo=self.config.demo))

    @functools.cached_property
    def directory(self) -> Directory:
        """The Google accounts this server may act as, and which call goes to which (accounts.py)."""
        from .accounts import Directory

        return Directory(self)

    async def account(self) -> str | None:
        """The one Google account the server acts as; None when it cannot be known (an OAuth refresh
        token from the environment carries no e-mail address). With the app's sign-in, asking the app
        for a token tells it (and raises GoogleError when the app cannot hand one out)."""
        cred = self.config.credential
        if cred.kind == "service_account":
            return str(cred.info.get("client_email", "")) or None
        if cred.kind == "demo":
            from .demo import DEMO_ACCOUNT

            return DEMO_ACCOUNT
        if cred.kind == "desktop":
            await self.client()
            assert self._source is not None
            await self._source.token(self.config.scopes)
            return getattr(self._source, "account", None)
        return None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
        for agent in (self._agent, self._approval_agent):
            if agent is not None:
                await agent.aclose()


@dataclass
class Call:
    """One tools/call: validated arguments plus helpers for the common steps."""

    spec: ToolSpec
    args: dict[str, Any]
    runtime: Runtime
    progress_fn: Any = None  # async (progress, total, message) -> None, or None
    ctx: Any = None  # the SDK's request context, for what only the request knows (protocol, capabilities)
    #: A guarded call's question once a person said yes to it: the handler acts on its targets only.
    approved: Question | None = None
    #: The Google account this call acts as, once routed (None: the only one, or the app has none).
    account: Account | None = None
    #: The accounts Claude may use, as they were when this call was routed.
    accounts: tuple[Account, ...] = ()
    routed: bool = False
    #: A guarded call's question as it was asked, and how a person approved it (the journal's rows).
    asked: Question | None = None
    approved_by: Approval | None = None
    #: An outcome could not be recorded after a change was sent: the result says the record is incomplete.
    record_incomplete: bool = False
    #: Which days of its Search Analytics answers came from SearchDesk's copy and which from Google
    #: (`archive.reader.Sources`, set by `archive.reader.fetch`; None: no such request).
    sources: Any = None

    async def route(self) -> None:
        """Fix the account this call acts as (accounts.py); a call is routed once. Raises ToolFailure
        or GoogleError."""
        if not self.routed and self.spec.route != "none":
            directory = self.runtime.directory
            self.accounts = await directory.accounts()
            self.account = await directory.route(self, self.accounts)
            self.routed = True

    async def account_name(self) -> str | None:
        """The Google account this call acts as, as its question names it and its answer is bound to."""
        if self.account is not None and self.account.name:
            return self.account.name
        return await self.runtime.account()  # the one account, named by its token (as before accounts)

    def and_account(self) -> str:
        """ " and account X" for an instruction in a result that names a tool to call: followed literally, it
        acts as the account it was worked out for, not the default one ("" when the account has no name)."""
        if self.account is None or not self.account.name:
            return ""
        return f" and account {self.account.name}"

    async def requester(self) -> Requester:
        """Who asks the app: this server process, this call's Google account, whether it is the demo."""
        from .agent.protocol import Requester

        return Requester(server=self.runtime.server_id, account=await self.account_name(), demo=self.config.demo)

    @property
    def question(self) -> Question:
        """The approved question of a guarded call (its handler never runs without one)."""
        if self.approved is None:
            raise AssertionError(f"{self.spec.name} ran without an approved question")
        return self.approved

    @property
    def config(self) -> Config:
        return self.runtime.config

    @property
    def quota_kind(self) -> QuotaKind:
        """The daily quota this tool spends, as its catalogue entry says (`Runtime.quota` counts it)."""
        if self.spec.quota is None:
            raise AssertionError(f"{self.spec.name} spends no quota")
        return self.spec.quota

    def site(self, key: str = "site") -> str:
        """The property to use: the argument, else GSC_SITE_URL unless the tool requires it."""
        raw = self.args.get(key)
        if raw is None:
            if key in self.spec.required or self.config.default_site is None:
                raise ToolFailure(
                    f"Give {key}: a property such as https://example.com/ or sc-domain:example.com "
                    "(list_sites shows yours)."
                    + ("" if key in self.spec.required else " No default is set (GSC_SITE_URL).")
                )
            prop = self.config.default_site
        else:
            try:
                prop = normalise_property(raw)
            except PropertyError as exc:
                raise ToolFailure(f"{key}: {exc}") from None
        try:
            check_allowed(self.config.allowed_sites, prop)
        except PropertyError as exc:
            raise ToolFailure(str(exc)) from None
        return prop

    def url(self, value: str, key: str = "url") -> str:
        try:
            url = check_url(value)
            check_allowed_url(self.config.allowed_sites, url)
        except PropertyError as exc:
            raise ToolFailure(f"{key}: {exc}") from None
        return url

    async def google(
        self,
        api: Api,
        method: str,
        path: str,
        *,
        path_params: Mapping[str, str] | None = None,
        query: Mapping[str, str | list[str]] | None = None,
        body: object | None = None,
        limit: Limit | None = None,
        retry: bool = False,
        deadline: float | None = None,
        decode: Callable[[bytes], object | None] | None = None,
    ) -> Any:
        """Call Google as this call's account; a guarded tool's request is sent exactly once (no retry,
        no resend after a 401). A request that changes something is recorded in the journal before it
        is sent and its outcome after (journal/record.py); raises ToolFailure, sending nothing, when it
        cannot be recorded. ``decode``: as `GoogleClient.call`'s."""
        from .google.errors import GoogleError
        from .google.http import Limit
        from .journal import record
        from .journal.store import Row

        client = await self.runtime.client()
        change: Row | None = None

        async def before_send() -> None:
            nonlocal change
            change = await record.before_change(self, path_params, query, body)

        recorded = record.changes(api.value, method, path)
        try:
            answer = await client.call(
                api,
                method,
                path,
                path_params=path_params,
                query=query,
                body=body,
                limit=limit if limit is not None else Limit.RECORD,
                retry=retry and not self.spec.guarded,
                deadline=deadline,
                once=self.spec.guarded,
                account=self.account.token_name if self.account is not None else None,
                before_send=before_send if recorded else None,
                decode=decode,
            )
        except GoogleError as exc:
            if change is not None:
                await record.after_change(self, change, exc)
            raise
        except BaseException:
            if change is not None:  # cancelled (or a bug) after the request left: its outcome is unknown
                with anyio.CancelScope(shield=True):
                    await record.after_change(self, change, None, lost=True)
            raise
        if change is not None:
            await record.after_change(self, change, None)
        return answer

    async def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        if self.progress_fn is not None:
            await self.progress_fn(done, total, message)
