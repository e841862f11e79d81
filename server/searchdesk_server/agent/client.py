"""The server's side of the agent socket: short-lived Google tokens and a person's answer, from the app.

asyncio, no Qt. One connection, opened on demand, carries every call of this client at once (JSON-RPC
ids match answers to calls), so a token can be fetched while an approval waits for a person.

Before anything is sent the folder and the listener's user id are checked (see `paths`). A dropped
connection is re-opened once and the call sent again, except an `approval/request` that already left:
the person may be looking at that question, and asking twice is worse than failing.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from . import framing, paths, protocol
from .framing import AgentError, ErrorCode, RpcError
from .protocol import (
    AccountInfo,
    AccountList,
    AccountsParams,
    ApprovalRequest,
    ApprovalResult,
    CancelParams,
    CancelResult,
    ClientInfo,
    Decision,
    Hello,
    HelloParams,
    Message,
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
_READ_CHUNK: Final = 64 * 1024
_MAX_REMOTE_MESSAGE: Final = 300

T = TypeVar("T")


# --------------------------------------------------------------------------------------------------
# Errors


class AgentUnavailable(AgentError):
    """Nobody is there: no socket (or folder) at the path, or nothing listening on it."""


class AgentNotAnswering(AgentError):
    """Something listens at the path but would not talk: it did not accept in time, closed the
    connection before answering hello, or failed in another way. The app may be running."""


class AgentConnectionLost(AgentUnavailable):
    """The connection dropped during a call. `sent`: the request may have reached the app."""

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent


class AgentTimeout(AgentError):
    """The app did not answer in time."""


class AgentProtocolError(AgentError):
    """The listener said something outside the agent protocol; nothing it said is used."""


# What the app answered, named from this side of the socket (App...): the desktop app's own exceptions
# are named for what happened inside it, and both map to the same ErrorCode.


class AgentRemoteError(AgentError):
    """The app answered with a JSON-RPC error; `code` is an ErrorCode (or another listener's code)."""

    code: int

    def __init__(self, message: str, *, code: int, data: object = None) -> None:
        super().__init__(message, code=code)
        self.data = data


class AppSignedOut(AgentRemoteError):
    """No Google account is signed in to the app."""


class AppScopeNotGranted(AgentRemoteError):
    """The sign-in lacks a scope the call needs."""


class AppRefreshFailed(AgentRemoteError):
    """Google refused to refresh the app's sign-in (revoked or expired)."""


class AppKeyringLocked(AgentRemoteError):
    """The OS keyring is locked or unusable."""


class AppUnknownAccount(AgentRemoteError):
    """The named account is not one Claude may use in the app (removed, or withheld in Settings)."""


class AppProtocolMismatch(AgentRemoteError):
    """The app speaks another major version of the agent protocol."""


class AppBusy(AgentRemoteError):
    """The app has too many connections or requests in flight."""


class AppQueueFull(AgentRemoteError):
    """Too many approvals are already waiting for the person."""


class ApprovalCancelled(AgentRemoteError):
    """The question was closed by approval/cancel before anybody answered."""


class AppRunsDemo(AgentRemoteError):
    """The app runs the demo and refuses a real server's questions and token requests."""


_REMOTE_ERRORS: Final[Mapping[int, type[AgentRemoteError]]] = {
    ErrorCode.SIGNED_OUT: AppSignedOut,
    ErrorCode.SCOPE_NOT_GRANTED: AppScopeNotGranted,
    ErrorCode.REFRESH_FAILED: AppRefreshFailed,
    ErrorCode.KEYRING_LOCKED: AppKeyringLocked,
    ErrorCode.UNKNOWN_ACCOUNT: AppUnknownAccount,
    ErrorCode.PROTOCOL_MISMATCH: AppProtocolMismatch,
    ErrorCode.BUSY: AppBusy,
    ErrorCode.QUEUE_FULL: AppQueueFull,
    ErrorCode.CANCELLED: ApprovalCancelled,
    ErrorCode.DEMO_APP: AppRunsDemo,
}


def remote_error(error: RpcError) -> AgentRemoteError:
    """The typed exception for a JSON-RPC error from the app, its message kept only if short and plain."""
    message = error.message
    if not message or len(message) > _MAX_REMOTE_MESSAGE or not protocol.is_plain_text(message):
        try:
            message = protocol.ERROR_MEANINGS[ErrorCode(error.code)]
        except ValueError:
            message = f"The SearchDesk app answered with error {error.code}."
    return _REMOTE_ERRORS.get(error.code, AgentRemoteError)(message, code=error.code, data=error.data)


class _Lost(Exception):
    """Internal: the connection is gone; `sent` says whether our request may have left."""

    def __init__(self, *, sent: bool) -> None:
        super().__init__("connection lost")
        self.sent = sent


# --------------------------------------------------------------------------------------------------
# One connection


async def _open(path: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    if sys.platform == "win32":  # a named pipe, checked by _connect before use; not run on the Linux CI
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2 * framing.MAX_MESSAGE_BYTES)
        stream_protocol = asyncio.StreamReaderProtocol(reader)
        transport, _ = await loop.create_pipe_connection(  # type: ignore[attr-defined]
            lambda: stream_protocol, path
        )
        return reader, asyncio.StreamWriter(transport, stream_protocol, reader, loop)
    return await asyncio.open_unix_connection(path, limit=2 * framing.MAX_MESSAGE_BYTES)


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a future's exception as seen, so an abandoned call does not log 'never retrieved'."""
    if not future.cancelled():
        future.exception()


class _Connection:
    """Multiplexes calls over one stream: a lock for writing, a reader task that routes answers by id."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[framing.Response]] = {}
        self._write_lock = asyncio.Lock()
        self._closed = False
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    @property
    def closed(self) -> bool:
        return self._closed

    async def _read_loop(self) -> None:
        failure: AgentError | None = None  # None: the stream simply ended
        buffer = framing.LineBuffer()
        try:
            while not self._closed:
                data = await self._reader.read(_READ_CHUNK)
                if not data:
                    break
                stop = False
                for line in buffer.feed(data):
                    response = framing.parse_response(line)
                    if response.id is None:
                        # Said to the whole connection (BUSY, TOO_LARGE): every waiting call hears it.
                        if response.error is not None:
                            failure = remote_error(response.error)
                        stop = True
                        break
                    future = self._pending.pop(response.id, None) if isinstance(response.id, int) else None
                    if future is not None and not future.done():
                        future.set_result(response)
                if stop:
                    break
        except framing.ProtocolError:
            failure = AgentProtocolError(
                "The SearchDesk app sent something that is not the agent protocol; nothing it sent was used. "
                "Update SearchDesk and the server to the same version."
            )
        except OSError:
            pass
        finally:
            self._closed = True
            for future in self._pending.values():
                if not future.done():
                    future.add_done_callback(_retrieve)
                    future.set_exception(failure if failure is not None else _Lost(sent=True))
            self._pending.clear()
            self._writer.close()

    async def call(self, method: str, params: Mapping[str, Any], limit_s: float) -> framing.Response:
        """Send one request and wait for its answer. Raises _Lost, AgentTimeout or a listener's failure."""
        if self._closed:
            raise _Lost(sent=False)
        request_id = next(self._ids)
        data = framing.encode_request(request_id, method, params)
        future: asyncio.Future[framing.Response] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            async with self._write_lock:
                if self._closed or self._writer.is_closing():
                    raise _Lost(sent=False)
                self._writer.write(data)  # from here on the app may have seen it
                try:
                    await self._writer.drain()
                except OSError:
                    raise _Lost(sent=True) from None
            try:
                return await asyncio.wait_for(future, limit_s)
            except TimeoutError:
                raise AgentTimeout(f"The SearchDesk app did not answer {method} within {limit_s:g} seconds.") from None
        finally:
            self._pending.pop(request_id, None)

    async def close(self) -> None:
        self._closed = True
        self._task.cancel()
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()
        await asyncio.gather(self._task, return_exceptions=True)


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
        self._conn: _Connection | None = None
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
        hello: Hello = await self._request(protocol.HELLO, self._hello_params(), self._timeout, resend=True)
        return self._checked_hello(hello)

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
        token: Token = await self._request(protocol.TOKEN, params, self._token_timeout, resend=True)
        return token

    async def accounts(self, requester: Requester | None = None) -> tuple[AccountInfo, ...]:
        """The Google accounts Claude may use, as the app lists them (e-mails and kinds, no tokens)."""
        params = AccountsParams(requester=requester)
        listed: AccountList = await self._request(protocol.ACCOUNTS_LIST, params, self._timeout, resend=True)
        return listed.accounts

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
        answer: ApprovalResult = await self._request(protocol.APPROVAL_REQUEST, request, timeout, resend=False)
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
        status: StatusResult = await self._request(protocol.APPROVAL_STATUS, params, self._timeout, resend=True)
        return status

    async def approval_cancel(self, request_id: str) -> bool:
        """Close the question asked under `request_id`; True when one was still there."""
        params = CancelParams.from_json({"request_id": request_id})
        done: CancelResult = await self._request(protocol.APPROVAL_CANCEL, params, self._timeout, resend=True)
        return done.cancelled

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

    async def _request(self, method: str, params: Message, limit_s: float, *, resend: bool) -> Any:
        """One method of `protocol.METHODS`: `params` is its params message, and the answer is checked as
        its result message before anything in it is used (the caller names the type it expects)."""
        spec = protocol.METHODS[method]
        if not isinstance(params, spec.params_type):
            raise TypeError(f"{method} takes {spec.params}, not {type(params).__name__}")
        return _parse(spec.result_type.from_json, await self._call(method, params.to_json(), limit_s, resend=resend))

    async def _call(self, method: str, params: Mapping[str, Any], limit_s: float, *, resend: bool) -> object:
        for attempt in (1, 2):
            conn = await self._connection()
            try:
                response = await conn.call(method, params, limit_s)
            except _Lost as lost:
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

    async def _forget(self, conn: _Connection) -> None:
        if self._conn is conn:
            self._conn = None
        await conn.close()

    async def _connection(self) -> _Connection:
        async with self._connect_lock:
            if self._conn is not None and not self._conn.closed:
                return self._conn
            if self._conn is not None:
                await self._forget(self._conn)
            self._conn = await self._connect()
            self.connections_opened += 1
            return self._conn

    async def _connect(self) -> _Connection:
        path = self.path
        if sys.platform != "win32":
            try:
                paths.check_folder(os.path.dirname(path))
            except FileNotFoundError:
                raise self._unavailable() from None
        try:
            reader, writer = await asyncio.wait_for(_open(path), self._connect_timeout)
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
        conn = _Connection(reader, writer)
        try:
            response = await conn.call(protocol.HELLO, self._hello_params().to_json(), self._timeout)
            self._answered()
            if response.error is not None:
                raise remote_error(response.error)
            self.hello_result = self._checked_hello(_parse(Hello.from_json, response.result))
        except _Lost:
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
