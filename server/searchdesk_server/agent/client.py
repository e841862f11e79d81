"""The server's side of the agent socket: short-lived Google tokens and a person's answer, from the app.

asyncio, no Qt. One connection, opened on demand, carries every call of this client at once (JSON-RPC
ids match answers to calls), so a token can be fetched while an approval waits for a person.

Before anything is sent the folder and the listener's user id are checked (see `paths`). A dropped
connection is re-opened once and the call sent again, except an `approval/request` that already left:
the person may be looking at that question, and asking twice is worse than failing.

Every method goes through one call, `request`, typed by the method's entry in `protocol.METHODS`: it
sends that method's params message and returns its result message, so a method added to the table
needs nothing here. What can go wrong is in `client_errors` (re-exported here); one connection's
plumbing is `connection`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from . import framing, paths, protocol
from .client_errors import AgentConnectionLost as AgentConnectionLost
from .client_errors import AgentNotAnswering as AgentNotAnswering
from .client_errors import AgentProtocolError as AgentProtocolError
from .client_errors import AgentRemoteError as AgentRemoteError
from .client_errors import AgentTimeout as AgentTimeout
from .client_errors import AgentUnavailable as AgentUnavailable
from .client_errors import AppBusy as AppBusy
from .client_errors import AppKeyringLocked as AppKeyringLocked
from .client_errors import AppProtocolMismatch as AppProtocolMismatch
from .client_errors import AppQueueFull as AppQueueFull
from .client_errors import AppRefreshFailed as AppRefreshFailed
from .client_errors import ApprovalCancelled as ApprovalCancelled
from .client_errors import AppRunsDemo as AppRunsDemo
from .client_errors import AppScopeNotGranted as AppScopeNotGranted
from .client_errors import AppSignedOut as AppSignedOut
from .client_errors import AppUnknownAccount as AppUnknownAccount
from .client_errors import remote_error as remote_error
from .connection import Connection, Lost, open_stream
from .framing import ErrorCode
from .protocol import (
    AccountInfo,
    AccountsParams,
    ApprovalRequest,
    ApprovalResult,
    CancelParams,
    ClientInfo,
    Decision,
    Hello,
    HelloParams,
    MethodSpec,
    Requester,
    StatusDecision,
    StatusParams,
    StatusResult,
    Token,
    TokenParams,
)

DEFAULT_TIMEOUT: Final = 10.0  # hello, status, cancel
TOKEN_TIMEOUT: Final = 30.0  # the app may have to refresh with Google first
APPROVAL_MARGIN: Final = 5.0  # on top of wait_s, for the listener to answer "pending"
CONNECT_TIMEOUT: Final = 2.0

T = TypeVar("T")
P = TypeVar("P", bound=protocol.Message)
R = TypeVar("R", bound=protocol.Message)


# --------------------------------------------------------------------------------------------------
# The client


class AgentClient:
    """The server's handle on the desktop app. Safe for concurrent calls from tasks of one event loop."""

    def __init__(
        self,
        path: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        token_timeout: float = TOKEN_TIMEOUT,
        approval_margin: float = APPROVAL_MARGIN,
        connect_timeout: float = CONNECT_TIMEOUT,
        app: str = "searchdesk-server",
        version: str | None = None,
        on_answer: Callable[[], None] | None = None,
    ) -> None:
        """`on_answer` is called whenever the app answered this client (its hello on connecting, and
        every answer after it, an error included): the runtime keeps from it that this process has
        reached the app (`Runtime.app_reached`). Nothing is cached the other way: a call after a
        failure connects again."""
        self._path = path
        self._timeout = timeout
        self._token_timeout = token_timeout
        self._approval_margin = approval_margin
        self._connect_timeout = connect_timeout
        self._app = app
        self._version = version
        self._on_answer = on_answer
        self._conn: Connection | None = None
        self._connect_lock = asyncio.Lock()
        self.connections_opened = 0  # for diagnostics and tests: how often a connection was (re)opened
        self.hello_result: Hello | None = None  # what the app said about itself on the last connect
        #: Who started this server, as it says, once `initialize` told it: every hello carries it.
        self.client: ClientInfo | None = None

    @property
    def path(self) -> str:
        """The socket path (or pipe name) this client uses; resolved on first use."""
        if self._path is None:
            self._path = paths.socket_path()
        return self._path

    async def __aenter__(self) -> AgentClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    # ---- the protocol's methods

    async def hello(self) -> Hello:
        """Ask the app who it is; raises AppProtocolMismatch for another protocol version."""
        return self._checked_hello(await self.request(protocol.HELLO_METHOD, self._hello_params(), resend=True))

    async def announce(self, client: ClientInfo) -> None:
        """Tell the app who started this server (the additive `client` of `hello`): on this connection now,
        and on every connection after it."""
        self.client = client
        await self.hello()

    async def token(
        self,
        scopes: Sequence[str],
        force_refresh: bool = False,
        requester: Requester | None = None,
        account: str | None = None,
    ) -> Token:
        """A short-lived access token for `scopes`; `force_refresh` after Google said 401. `account`
        names the Google account (only to an app that serves accounts); None: the default one."""
        params = TokenParams(scopes=tuple(scopes), force_refresh=force_refresh, requester=requester, account=account)
        return await self.request(protocol.TOKEN_METHOD, params, self._token_timeout, resend=True)

    async def accounts(self, requester: Requester | None = None) -> tuple[AccountInfo, ...]:
        """The Google accounts Claude may use, as the app lists them (e-mails and kinds, no tokens)."""
        params = AccountsParams(requester=requester)
        return (await self.request(protocol.ACCOUNTS_LIST_METHOD, params, resend=True)).accounts

    async def app_hello(self) -> Hello:
        """What the app said about itself in `hello` (connecting first if needed): its features."""
        await self._connection()
        assert self.hello_result is not None
        return self.hello_result

    async def ask(self, request: ApprovalRequest) -> Decision:
        """Show the person a validated question; the decision after at most `request.wait_s`."""
        return (await self.answer(request)).decision

    async def answer(self, request: ApprovalRequest) -> ApprovalResult:
        """Show the person a validated question; the answer (and where it was given, when the app says)
        after at most `request.wait_s`.

        A connection lost after the request left raises AgentConnectionLost(sent=True): it is never
        sent twice (the person may be looking at it).
        """
        timeout = request.wait_s + self._approval_margin
        answer = await self.request(protocol.APPROVAL_REQUEST_METHOD, request, timeout)
        if answer.fingerprint != request.fingerprint:
            raise AgentProtocolError(
                "The SearchDesk app answered another question than the one asked; the answer was not used."
            )
        return answer

    async def approval_status(
        self, fingerprint: str, requester: Requester | None = None, digest: str | None = None
    ) -> StatusDecision:
        """`status(...)`'s decision."""
        return (await self.status(fingerprint, requester, digest)).decision

    async def status(
        self, fingerprint: str, requester: Requester | None = None, digest: str | None = None
    ) -> StatusResult:
        """The answer to an earlier question of this requester; an `approve` returned here is spent.
        With `digest` (`protocol.words_digest` of the question this call built) the app answers only
        from a question with those words; an app that ignores it is still checked by the chain."""
        params = StatusParams(fingerprint=fingerprint, requester=requester, digest=digest)
        StatusParams.from_json(params.to_json())  # a bad fingerprint or requester fails here, before anything is sent
        return await self.request(protocol.APPROVAL_STATUS_METHOD, params, resend=True)

    async def approval_cancel(self, request_id: str) -> bool:
        """Close the question asked under `request_id`; True when one was still there."""
        params = CancelParams.from_json({"request_id": request_id})
        return (await self.request(protocol.APPROVAL_CANCEL_METHOD, params, resend=True)).cancelled

    # ---- connection management

    def _hello_params(self) -> HelloParams:
        if self._version is None:
            from .. import __version__

            self._version = __version__
        return HelloParams(protocol=protocol.PROTOCOL_VERSION, app=self._app, version=self._version, client=self.client)

    def _checked_hello(self, hello: Hello) -> Hello:
        if hello.protocol != protocol.PROTOCOL_VERSION:
            raise AppProtocolMismatch(
                f"The SearchDesk app speaks agent protocol {hello.protocol}; this server speaks "
                f"{protocol.PROTOCOL_VERSION}. Update both to the same release.",
                code=ErrorCode.PROTOCOL_MISMATCH,
            )
        return hello

    def _unavailable(self) -> AgentUnavailable:
        return AgentUnavailable(
            f"The SearchDesk app is not running (nothing answers at {self.path}). Start SearchDesk, then try again."
        )

    def _not_answering(self, detail: str) -> AgentNotAnswering:
        return AgentNotAnswering(f"The SearchDesk app at {self.path} did not talk to this server ({detail}).")

    async def request(
        self, method: MethodSpec[P, R], params: P, limit_s: float | None = None, *, resend: bool = False
    ) -> R:
        """Call one method of `protocol.METHODS` (`protocol.TOKEN_METHOD`, …): `params` is its params message,
        and the answer is checked as its result message before anything in it is used, and returned as
        that message (typed: mypy knows a token call returns a `Token`). `limit_s` defaults to this
        client's timeout. `resend`: send the call again on a new connection when the first was lost
        after it left; only for a call that asking twice cannot harm (never a question to the person)."""
        if not isinstance(params, method.params):
            raise TypeError(f"{method.name} takes {method.params.__name__}, not {type(params).__name__}")
        limit = self._timeout if limit_s is None else limit_s
        answer = await self._call(method.name, params.to_json(), limit, resend=resend)
        return _parse(method.result.from_json, answer)

    async def _call(self, method: str, params: Mapping[str, Any], limit_s: float, *, resend: bool) -> object:
        for attempt in (1, 2):
            conn = await self._connection()
            try:
                response = await conn.call(method, params, limit_s)
            except Lost as lost:
                await self._forget(conn)
                if attempt == 2 or (lost.sent and not resend):
                    raise AgentConnectionLost(
                        f"The connection to the SearchDesk app was lost during {method}.", sent=lost.sent
                    ) from None
                continue
            self._answered()
            if response.error is not None:
                raise remote_error(response.error)
            return response.result
        raise AssertionError("unreachable")

    def _answered(self) -> None:
        if self._on_answer is not None:
            self._on_answer()

    async def _forget(self, conn: Connection) -> None:
        if self._conn is conn:
            self._conn = None
        await conn.close()

    async def _connection(self) -> Connection:
        async with self._connect_lock:
            if self._conn is not None and not self._conn.closed:
                return self._conn
            if self._conn is not None:
                await self._forget(self._conn)
            self._conn = await self._connect()
            self.connections_opened += 1
            return self._conn

    async def _connect(self) -> Connection:
        path = self.path
        if sys.platform != "win32":
            try:
                paths.check_folder(os.path.dirname(path))
            except FileNotFoundError:
                raise self._unavailable() from None
        try:
            reader, writer = await asyncio.wait_for(open_stream(path), self._connect_timeout)
        except (FileNotFoundError, ConnectionRefusedError):
            raise self._unavailable() from None
        except TimeoutError:
            raise self._not_answering("it did not accept the connection in time") from None
        except OSError as err:
            raise self._not_answering(err.strerror or type(err).__name__) from None
        if sys.platform == "win32":
            from . import winpipe

            # The pipe's owner and the user serving it must be ours (winpipe; not run on the Linux CI).
            pipe = writer.get_extra_info("pipe")  # asyncio's PipeHandle
            if pipe is None or not winpipe.owner_trusted(pipe.handle):
                writer.close()
                raise paths.UntrustedPeer(
                    f"The program serving {path} runs as another user (or Windows could not say who runs it); "
                    "SearchDesk sent it nothing. Quit it, then start SearchDesk again."
                )
        else:
            sock = writer.get_extra_info("socket")
            if sock is None or not paths.trusted_peer(sock):
                writer.close()
                raise paths.UntrustedPeer(
                    f"The program listening at {path} runs as another user; SearchDesk sent it nothing. "
                    "Quit it (or remove the socket), then start SearchDesk again."
                )
        conn = Connection(reader, writer)
        try:
            response = await conn.call(protocol.HELLO_METHOD.name, self._hello_params().to_json(), self._timeout)
            self._answered()
            if response.error is not None:
                raise remote_error(response.error)
            self.hello_result = self._checked_hello(_parse(protocol.HELLO_METHOD.result.from_json, response.result))
        except Lost:
            await conn.close()
            raise self._not_answering("it closed the connection") from None
        except BaseException:
            await conn.close()
            raise
        return conn


def _parse(reader: Callable[[object, type[framing.InvalidParams]], T], result: object) -> T:
    try:
        return reader(result, framing.InvalidParams)
    except framing.InvalidParams as err:
        raise AgentProtocolError(f"The SearchDesk app sent an invalid answer: {err}") from None
