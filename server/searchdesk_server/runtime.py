"""Per-process state shared by tool calls, created lazily on the first call.

The start-up path (initialize, tools/list) must not pay for httpx, google-auth or the demo
data, so everything here is built on first use.
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.abc

from .config import Config
from .deadlines import BATCH_SECONDS
from .properties import PropertyError, check_allowed, check_allowed_url, check_url, normalise_property
from .result import ToolFailure
from .text.phrases import plural as plural  # the tools' one way to count, defined with the other words
from .tool_spec import QuotaKind, ToolSpec

if TYPE_CHECKING:
    import httpx

    from .account_routing import Account, Directory
    from .agent.client import AgentClient
    from .agent.protocol import Requester
    from .confirm_tokens import TokenBook
    from .google.credentials import TokenSource
    from .google.http import GoogleClient
    from .journal.record import CallRecord
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

    def google(self) -> GoogleClient:
        """The one client to Google of this process (its connections, its token source), made on first use;
        each tool call uses it through a client made for that call (`Call.google`)."""
        if self._client is None:
            self._client = self._make_client()
        return self._client

    async def client(self) -> GoogleClient:
        """`google()`, for callers that already await."""
        return self.google()

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
        """The Google accounts this server may act as, and which call goes to which (account_routing.py)."""
        from .account_routing import Directory

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


@dataclass(frozen=True)
class Consent:
    """What a person's yes allows a guarded call to act on, and how it was given: the approved question's
    targets (its fingerprint's), property, sitemap and owners, and the values it showed (what the journal's
    rows record). The approval chain makes it from the `Question` (approval/chain.py `_act`)."""

    targets: tuple[object, ...]
    site: str
    values: tuple[tuple[str, str], ...]
    by: Approval
    feedpath: str = ""
    owners: tuple[str, ...] = ()


Gathered = TypeVar("Gathered")


@dataclass
class Call:
    """One tools/call: validated arguments plus helpers for the common steps."""

    spec: ToolSpec
    args: dict[str, Any]
    runtime: Runtime
    progress_fn: Any = None  # async (progress, total, message) -> None, or None
    ctx: Any = None  # the SDK's request context, for what only the request knows (protocol, capabilities)
    #: A guarded call's yes, given when the approval chain makes the call that acts on it
    #: (`dataclasses.replace`, never written later): the handler acts on its targets only.
    consent: Consent | None = None
    #: The Google account this call acts as, once routed (None: the only one, or the app has none).
    account: Account | None = None
    #: The accounts Claude may use, as they were when this call was routed.
    accounts: tuple[Account, ...] = ()
    routed: bool = False
    #: What this call's requests gather for its result, one of each kind (`gathered`).
    _gathered: dict[type, object] = field(default_factory=dict, init=False, repr=False)

    async def route(self) -> None:
        """Fix the account this call acts as (account_routing.py); a call is routed once. Raises ToolFailure
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
    def question(self) -> Consent:
        """What a guarded call was approved to act on (its handler never runs without it)."""
        if self.consent is None:
            raise AssertionError(f"{self.spec.name} ran without an approved question")
        return self.consent

    def gathered(self, kind: type[Gathered]) -> Gathered:
        """This call's one `kind` of what its requests gather for its result, made on first use: which
        days of its Search Analytics answers came from SearchDesk's copy and which from Google
        (`archive.reader.Sources`, said by `handlers.run_tool`). Kinds live with what gathers them, so
        the call imports none of them."""
        found = self._gathered.get(kind)
        if not isinstance(found, kind):
            found = self._gathered[kind] = kind()
        return found

    def gathered_so_far(self, kind: type[Gathered]) -> Gathered | None:
        """This call's `kind` if a request gathered one, else None."""
        found = self._gathered.get(kind)
        return found if isinstance(found, kind) else None

    @functools.cached_property
    def record(self) -> CallRecord:
        """This call's rows in the journal: the hook on its Google client (`google`), and the answer row
        of a guarded call that sent nothing (approval/chain.py). It says whether the record is complete."""
        from .journal.record import Caller, CallRecord, asked_by, shown

        consent = self.consent
        caller = Caller(
            tool=self.spec.name,
            args=self.args,
            account=self.account_name,
            asked_by=asked_by(self.ctx),
            shown=None if consent is None else shown(consent.values),
            site="" if consent is None else consent.site,
            approval=self._approval(),
        )
        return CallRecord(self.runtime.journal, caller)

    def _approval(self) -> Approval:
        """How this call's change was approved; not asked for the other writes."""
        from .journal.store import Approval

        return Approval.NOT_ASKED if self.consent is None else self.consent.by

    @property
    def google(self) -> GoogleClient:
        """Google, as this call's account. A guarded tool's request is sent exactly once (no retry, no resend
        after a 401); a request that changes something is recorded in the journal before it is sent and its
        outcome after (this call's `record`, a hook on the client); raises ToolFailure, sending nothing, when
        it cannot be recorded."""
        account = self.account.token_name if self.account is not None else None
        return self.runtime.google().for_call(account=account, once=self.spec.guarded, hooks=(self.record,))

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

    async def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        if self.progress_fn is not None:
            await self.progress_fn(done, total, message)
