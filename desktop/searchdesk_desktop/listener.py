"""The agent-socket listener: hands short-lived tokens to servers and asks the person their questions.

docs/architecture.md places it among the parts, and ``searchdesk_server.agent.protocol`` is the one
definition of the wire; ``searchdesk_server.agent.paths`` places the socket and runs the trust checks.

On Unix we bind the socket ourselves (``paths.listen_unix``), accept on a ``QSocketNotifier`` and drive
each connection with ``QSocketNotifier`` too: QLocalSocket treats a half-closed connection as gone and
drops answers still to be written, we need the raw descriptor for the peer's user id, and
QLocalServer would remove whatever is at the path when it closes, ours or not. While the app runs,
``paths.Keeper`` checks every ``paths.KEEP_EVERY_S`` (a timer on this loop) that the path still names
our socket and listens there again when a cleaner removed it or its folder; connections already open
go on.

On Windows ``winpipe.PipeAcceptor`` creates the named pipe (first, so nobody can squat its name;
QLocalServer cannot ask for that) and hands each connected instance over a queued signal to a
QLocalSocket, which does the reading and writing. A named pipe is no file anybody can delete, so it
needs no keeping. That branch is not run on the Linux CI.

Everything runs on the Qt thread except token minting, which may wait on Google or the keyring and
runs in a small thread pool; results come back through a queued signal. No message, from any client,
can block another: reads never wait, writes are buffered, every queue is bounded.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from PySide6.QtCore import QObject, QSocketNotifier, QTimer, Signal, Slot
from PySide6.QtNetwork import QLocalSocket

from searchdesk_server.agent import paths, protocol, winpipe
from searchdesk_server.agent.protocol import (
    AccountInfo,
    AccountList,
    AccountsParams,
    AnsweredIn,
    ApprovalRequest,
    ApprovalResult,
    CancelParams,
    CancelResult,
    ErrorCode,
    Hello,
    HelloParams,
    LineBuffer,
    ProtocolError,
    StatusParams,
    StatusResult,
    Token,
    TokenParams,
)

from . import __version__
from .approvals import ApprovalBook, Entry, QueueFull, RequestIdReused, State
from .refusals import Refusal
from .tokens import TokenProvider

log = logging.getLogger(__name__)

APP_NAME = "SearchDesk"
MAX_CONNECTIONS = 128
MAX_IN_FLIGHT = 32  # requests of one connection still being answered
MAX_WRITE_BUFFER = 1024 * 1024  # a client that does not read its answers is dropped
PARTIAL_LINE_TIMEOUT_MS = 30_000  # a line started and never finished


class SignedOut(Refusal):
    code = ErrorCode.SIGNED_OUT

    def __init__(self) -> None:
        super().__init__(
            "The SearchDesk app has no Google account to use yet: ask the person at this computer to sign in "
            "with Google in SearchDesk's window (step 1), then try again."
        )


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


class _Reply(Exception):
    """Raised inside a handler to answer with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


# --- transports --------------------------------------------------------------------------------


class _Transport:
    """A connection's bytes: ``on_data(bytes)``, ``on_eof()``; ``send``, ``close``."""

    def __init__(self) -> None:
        self.on_data: Callable[[bytes], None] = lambda data: None
        self.on_eof: Callable[[], None] = lambda: None
        self.on_closed: Callable[[], None] = lambda: None
        self.closed = False

    def send(self, data: bytes) -> None:
        raise NotImplementedError

    def close_after_flush(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    @property
    def unsent(self) -> int:
        return 0


class _UnixTransport(_Transport):
    def __init__(self, sock: socket.socket, parent: QObject) -> None:
        super().__init__()
        self.sock = sock
        sock.setblocking(False)
        self._out = bytearray()
        self._closing = False
        # Parented: Qt owns them, so a garbage collection in another thread never deletes them.
        self._reader = QSocketNotifier(sock.fileno(), QSocketNotifier.Type.Read, parent)
        self._writer = QSocketNotifier(sock.fileno(), QSocketNotifier.Type.Write, parent)
        self._writer.setEnabled(False)
        self._reader.activated.connect(self._readable)
        self._writer.activated.connect(self._writable)

    @property
    def unsent(self) -> int:
        return len(self._out)

    def _readable(self) -> None:
        for _ in range(16):  # bounded: let other connections have their turn
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.close()
                return
            if not data:
                self._reader.setEnabled(False)
                self.on_eof()
                return
            self.on_data(data)
            if self.closed:
                return

    def send(self, data: bytes) -> None:
        if self.closed:
            return
        self._out += data
        if len(self._out) > MAX_WRITE_BUFFER:
            self.close()
            return
        self._writable()

    def _writable(self) -> None:
        while self._out and not self.closed:
            try:
                sent = self.sock.send(self._out)
            except (BlockingIOError, InterruptedError):
                self._writer.setEnabled(True)
                return
            except OSError:
                self.close()
                return
            del self._out[:sent]
        self._writer.setEnabled(False)
        if self._closing:
            self.close()

    def close_after_flush(self) -> None:
        self._closing = True
        self._reader.setEnabled(False)
        if not self._out:
            self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._reader.setEnabled(False)
        self._writer.setEnabled(False)
        self._reader.deleteLater()
        self._writer.deleteLater()
        with contextlib.suppress(OSError):
            self.sock.close()
        self.on_closed()


class _QtTransport(_Transport):
    """Windows named pipes (the pipe's owner and DACL are this user alone)."""

    def __init__(self, sock: QLocalSocket) -> None:
        super().__init__()
        self.sock = sock
        self._closing = False
        sock.readyRead.connect(self._readable)
        sock.disconnected.connect(self.close)
        sock.bytesWritten.connect(self._written)

    @property
    def unsent(self) -> int:
        return int(self.sock.bytesToWrite())

    def _readable(self) -> None:
        self.on_data(bytes(self.sock.readAll().data()))

    def send(self, data: bytes) -> None:
        if not self.closed:
            self.sock.write(data)
            if self.sock.bytesToWrite() > MAX_WRITE_BUFFER:
                self.close()

    def _written(self, _n: int) -> None:
        if self._closing and self.sock.bytesToWrite() == 0:
            self.close()

    def close_after_flush(self) -> None:
        self._closing = True
        if self.sock.bytesToWrite() == 0:
            self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.sock.abort()
        self.sock.deleteLater()
        self.on_closed()


# --- one client --------------------------------------------------------------------------------


class _Connection:
    def __init__(self, listener: AgentListener, transport: _Transport, number: int) -> None:
        self.listener = listener
        self.transport = transport
        self.number = number
        self.buffer = LineBuffer()
        self.in_flight = 0
        self.eof = False
        self.partial_timer = QTimer(listener)
        self.partial_timer.setSingleShot(True)
        self.partial_timer.setInterval(PARTIAL_LINE_TIMEOUT_MS)
        self.partial_timer.timeout.connect(self.line_too_slow)
        transport.on_data = self.data
        transport.on_eof = self.end_of_input
        transport.on_closed = lambda: listener._forget(self)

    @property
    def open(self) -> bool:
        return not self.transport.closed

    def data(self, chunk: bytes) -> None:
        try:
            lines = self.buffer.feed(chunk)
        except ProtocolError as err:
            log.info("connection %d: message over the size limit; closing", self.number)
            self.send(protocol.encode_error(None, err.code or ErrorCode.TOO_LARGE, str(err)))
            self.transport.close_after_flush()
            return
        for line in lines:
            if not self.open:
                return
            self.listener._handle_line(self, line)
        if self.buffer.pending:
            if not self.partial_timer.isActive():
                self.partial_timer.start()
        else:
            self.partial_timer.stop()

    def line_too_slow(self) -> None:
        self.send(protocol.encode_error(None, ErrorCode.INVALID_REQUEST, "The line took too long to arrive."))
        self.transport.close_after_flush()

    def end_of_input(self) -> None:
        """Half-closed (or closed) by the client: answer what is in flight, then close."""
        self.eof = True
        self.partial_timer.stop()
        self.maybe_finish()

    def maybe_finish(self) -> None:
        if self.eof and self.in_flight == 0 and self.open:
            self.transport.close_after_flush()

    def send(self, data: bytes) -> None:
        self.transport.send(data)


@dataclass
class _Waiter:
    conn: _Connection
    rpc_id: protocol.RequestId
    request: ApprovalRequest
    timer: QTimer
    key: str  # the book's key of the question it waits on: fingerprint, requester and words (Entry.key)


# --- the listener ------------------------------------------------------------------------------


class AgentListener(QObject):
    """Listen at ``path`` (default: ``paths.socket_path()``) until ``close()``."""

    token_done = Signal(object)
    activity = Signal()  # something worth showing changed (a token was handed out, say)
    connections_changed = Signal()  # a server connected or went away ("connected now" in the window)
    #: A token request failed: its ErrorCode (REFRESH_FAILED: Google refused the sign-in itself) and
    #: for which account ("": the default).
    token_error = Signal(object, str)
    #: A server said who started it (the additive `client` of `hello`): its name and version, as it says.
    #: The main window's "Claude Desktop started SearchDesk" is true only from this.
    started_by = Signal(str, str)
    _pipe_connected = Signal(object)  # Windows: a connected pipe handle, from the acceptor's thread

    def __init__(
        self,
        book: ApprovalBook,
        accounts: AccountDirectory | ProviderGetter,
        *,
        demo: bool = False,
        path: str | None = None,
        max_connections: int = MAX_CONNECTIONS,
        max_in_flight: int = MAX_IN_FLIGHT,
        recorder: Callable[[str, object, int], None] | None = None,
    ) -> None:
        super().__init__()
        self._recorder = recorder
        self.book = book
        self.accounts = accounts if isinstance(accounts, AccountDirectory) else OneAccount(accounts)
        self.demo = demo  # a demo app refuses real servers: it holds no real account to approve for
        self.path = path
        self.max_connections = max_connections
        self.max_in_flight = max_in_flight
        self._keeper: paths.Keeper | None = None  # Unix: the listening socket, kept at its path
        self._accepting: QSocketNotifier | None = None
        self._keep_timer: QTimer | None = None
        self._kept = paths.Kept.HELD
        self._pipes: winpipe.PipeAcceptor | None = None
        self._connections: set[_Connection] = set()
        self._waiters: list[_Waiter] = []
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="searchdesk-token")
        self._count = 0
        self.tokens_handed_out = 0
        self.last_token_at: float | None = None
        self._closing = False
        self.token_done.connect(self._token_finished)
        self._pipe_connected.connect(self._adopt_pipe)
        book.on_change.append(self._entry_changed)

    # --- lifetime ---
    def start(self) -> str:
        """Listen; raises paths.UntrustedFolder / paths.AlreadyListening / OSError with a clear message."""
        path = self.path or paths.socket_path()
        if sys.platform == "win32":
            pipes = winpipe.PipeAcceptor(path, self._pipe_connected.emit)
            pipes.start()  # paths.AlreadyListening when the name exists, whoever made it
            self._pipes = pipes
            self.path = path
            log.info("agent pipe listening")
            return path
        # Trusted folder; a stale socket from a crash is removed. A burst of clients beyond the backlog
        # would see refused or half-made connections.
        try:
            bound = paths.listen_unix(path, 2 * self.max_connections)
        except OSError as err:  # not AgentError: the checks' own messages say what to do
            raise OSError(f"SearchDesk could not listen at {path}: {err.strerror or err}") from None
        self._keeper = paths.Keeper(bound, 2 * self.max_connections)
        self._serve(bound)
        self._keep_timer = QTimer(self)
        self._keep_timer.timeout.connect(self._keep)
        self._keep_timer.start(int(paths.KEEP_EVERY_S * 1000))
        self.path = path
        log.info("agent socket listening")
        return path

    def close(self) -> None:
        if self._pipes is not None:
            self._pipes.stop()
            self._pipes = None
        if self._keep_timer is not None:
            self._keep_timer.stop()
            self._keep_timer.deleteLater()
            self._keep_timer = None
        if self._keeper is not None:
            self._stop_accepting()
            paths.release(self._keeper.bound)  # the file goes only if the path still names ours
            self._keeper = None
        self._closing = True  # the app is going: nobody is told about each connection that ends
        for conn in list(self._connections):
            conn.transport.close()
        for waiter in self._waiters:
            waiter.timer.stop()
            waiter.timer.deleteLater()
        self._waiters.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)
        with contextlib.suppress(ValueError):
            self.book.on_change.remove(self._entry_changed)

    @property
    def listening(self) -> bool:
        if self._pipes is not None:
            return self._pipes.running
        return self._keeper is not None and paths.holds(self._keeper.bound)

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    # --- accepting ---
    def _serve(self, bound: paths.Bound) -> None:
        """Unix: accept on `bound` from now on."""
        self._accepting = QSocketNotifier(bound.sock.fileno(), QSocketNotifier.Type.Read, self)
        self._accepting.activated.connect(self._accept_ready)

    def _stop_accepting(self) -> None:
        if self._accepting is not None:
            self._accepting.setEnabled(False)  # before its descriptor closes
            self._accepting.deleteLater()
            self._accepting = None

    def _accept_ready(self) -> None:
        assert self._keeper is not None
        for _ in range(64):  # bounded: the notifier fires again while more are waiting
            try:
                sock, _address = self._keeper.bound.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError:  # out of descriptors, say: pause until the next check of the socket
                if self._accepting is not None:
                    self._accepting.setEnabled(False)
                return
            self._accept(sock)

    def _keep(self) -> None:
        """Every KEEP_EVERY_S: our socket still at its path, else listening there again (paths.Keeper)."""
        keeper = self._keeper
        if keeper is None:
            return
        old = keeper.bound
        kept = keeper.check()
        if kept is paths.Kept.RESTORED:
            self._stop_accepting()
            paths.release(old)  # the path names the new socket: only the old descriptor closes
            self._serve(keeper.bound)
            log.warning("the agent socket was removed while SearchDesk ran; listening again at the same place")
        elif self._accepting is not None:
            self._accepting.setEnabled(True)  # after a pause for want of descriptors
        if kept is not self._kept and kept is paths.Kept.TAKEN:
            log.warning("another program listens at the agent socket's place now; SearchDesk leaves it alone")
        elif kept is not self._kept and kept is paths.Kept.BLOCKED:
            log.warning(
                "the agent socket was removed, and its place now holds something SearchDesk did not make "
                "(or its folder fails the checks); SearchDesk listens there again once that is gone"
            )
        self._kept = kept

    def _accept(self, sock: socket.socket) -> None:
        if not paths.trusted_peer(sock):
            log.warning("refused a connection from another user")
            sock.close()
            return
        self._adopt(_UnixTransport(sock, self))

    @Slot(object)
    def _adopt_pipe(self, handle: int) -> None:
        """Windows: a connected pipe instance, as QLocalServer would hand it over (Qt reads and writes)."""
        qsock = QLocalSocket(self)
        if self._pipes is None or not qsock.setSocketDescriptor(handle):
            qsock.deleteLater()
            winpipe.system_calls().close(handle)  # closing down, or Qt refused it: nobody else will
            return
        self._adopt(_QtTransport(qsock))

    def _adopt(self, transport: _Transport) -> None:
        self._count += 1
        conn = _Connection(self, transport, self._count)
        if len(self._connections) >= self.max_connections:
            conn.send(protocol.encode_error(None, ErrorCode.BUSY, "Too many connections; try again shortly."))
            transport.close_after_flush()
            return
        self._connections.add(conn)
        self.connections_changed.emit()

    def _forget(self, conn: _Connection) -> None:
        known = conn in self._connections
        self._connections.discard(conn)
        conn.partial_timer.stop()
        conn.partial_timer.deleteLater()  # Qt objects die on the Qt thread, never in a GC elsewhere
        # Its questions stay open (a later identical call picks the answer up); only its waits end.
        for waiter in [w for w in self._waiters if w.conn is conn]:
            waiter.timer.stop()
            self._waiters.remove(waiter)
            if not self._closing:
                self._maybe_stopped_waiting(waiter.key)
        if known and not self._closing:
            self.connections_changed.emit()

    def _maybe_stopped_waiting(self, key: str) -> None:
        """No call waits for this question (its book key) any more: the book marks it."""
        if not any(w.key == key for w in self._waiters):
            self.book.stopped_waiting(key)

    # --- dispatch ---
    def _handle_line(self, conn: _Connection, line: bytes) -> None:
        try:
            request = protocol.parse_request(line)
        except ProtocolError as err:
            conn.send(protocol.encode_error(err.request_id, err.code or ErrorCode.INVALID_REQUEST, str(err)))
            return
        if request.is_notification:
            return  # JSON-RPC: a notification is never answered, and none of ours has an effect
        if self._recorder is not None:
            self._recorder(request.method, request.params, conn.number)
        rpc_id = request.id
        assert rpc_id is not None
        if conn.in_flight >= self.max_in_flight:
            conn.send(protocol.encode_error(rpc_id, ErrorCode.BUSY, "Too many requests in flight on this connection."))
            return
        try:
            params = protocol.parse_params(request)
            handlers: dict[str, Callable[..., dict[str, Any] | None]] = {
                protocol.HELLO: self._hello,
                protocol.TOKEN: self._token,
                protocol.APPROVAL_REQUEST: self._approval_request,
                protocol.APPROVAL_STATUS: self._approval_status,
                protocol.APPROVAL_CANCEL: self._approval_cancel,
                protocol.ACCOUNTS_LIST: self._accounts_list,
            }
            handler = handlers[request.method]
            result = handler(conn, rpc_id, params)
        except ProtocolError as err:
            conn.send(protocol.encode_error(rpc_id, err.code or ErrorCode.INVALID_PARAMS, str(err)))
            return
        except _Reply as reply:
            conn.send(protocol.encode_error(rpc_id, reply.code, str(reply), reply.data))
            return
        except Exception:
            log.exception("agent request failed")
            conn.send(
                protocol.encode_error(
                    rpc_id, ErrorCode.INTERNAL_ERROR, "The SearchDesk app failed; nothing was approved."
                )
            )
            return
        if result is not None:
            conn.send(protocol.encode_result(rpc_id, result))

    def _hello(self, conn: _Connection, rpc_id: Any, params: HelloParams) -> dict[str, Any]:
        if params.protocol != protocol.PROTOCOL_VERSION:
            raise _Reply(
                ErrorCode.PROTOCOL_MISMATCH,
                f"This SearchDesk app speaks agent protocol {protocol.PROTOCOL_VERSION}; update both programs.",
                {"supported": [protocol.PROTOCOL_VERSION]},
            )
        if params.client is not None:
            self.started_by.emit(params.client.name, params.client.version)
        return Hello(app=APP_NAME, version=__version__, features=protocol.FEATURES).to_json()

    def _refuse_real_server_in_demo(self, requester: protocol.Requester | None) -> None:
        """A demo app answers only demo servers; an older server (no requester) is served as before."""
        if self.demo and requester is not None and not requester.demo:
            raise _Reply(
                ErrorCode.DEMO_APP,
                "This SearchDesk app is running the demo; start SearchDesk normally to use a Google account.",
            )

    # accounts and tokens
    def _accounts_list(self, conn: _Connection, rpc_id: Any, params: AccountsParams) -> dict[str, Any]:
        self._refuse_real_server_in_demo(params.requester)
        return AccountList(tuple(self.accounts.usable())).to_json()

    def _token(self, conn: _Connection, rpc_id: Any, params: TokenParams) -> None:
        self._refuse_real_server_in_demo(params.requester)
        usable = self.accounts.usable()
        if params.account is None:  # an older server, or one with a single account: the default
            account = next((a.account for a in usable if a.default), None)
        else:  # only an account Claude may use, by its own spelling
            account = next((a.account for a in usable if protocol.same_account(a.account, params.account)), None)
            if account is None:
                raise _Reply(
                    ErrorCode.UNKNOWN_ACCOUNT,
                    "That Google account is not one Claude may use in SearchDesk: it was removed, or SearchDesk's "
                    "Settings keep it from Claude.",
                )
        conn.in_flight += 1
        future = self._pool.submit(self._mint, params, account)
        future.add_done_callback(lambda f: self.token_done.emit((conn, rpc_id, account, f)))
        return None

    def _mint(self, params: TokenParams, account: str | None) -> Token:
        provider = self.accounts.provider(account)
        token = provider.access_token(params.scopes, force_refresh=params.force_refresh)
        kind: protocol.TokenKind = "service_account" if token.kind == "service_account" else "oauth"
        return Token(access_token=token.token, expires_in=token.expires_in(), kind=kind, account=token.account)

    @Slot(object)
    def _token_finished(self, item: tuple[_Connection, Any, str | None, Future[Token]]) -> None:
        conn, rpc_id, account, future = item
        conn.in_flight -= 1
        if conn.open:
            conn.send(self._token_answer(rpc_id, account, future))
        conn.maybe_finish()

    def _token_answer(self, rpc_id: Any, account: str | None, future: Future[Token]) -> bytes:
        failure = future.exception()
        if isinstance(failure, Refusal):  # the app's own errors: the class names the code, the text is a person's
            self.token_error.emit(failure.code, account or "")
            return protocol.encode_error(rpc_id, failure.code, str(failure), failure.data)
        if failure is not None:
            self.token_error.emit(ErrorCode.INTERNAL_ERROR, account or "")
            log.error("token minting failed", exc_info=failure)
            return protocol.encode_error(rpc_id, ErrorCode.INTERNAL_ERROR, "The SearchDesk app could not get a token.")
        token = future.result()
        self.tokens_handed_out += 1
        self.last_token_at = time.time()
        self.activity.emit()
        return protocol.encode_result(rpc_id, token.to_json())

    # approvals
    def _approval_request(self, conn: _Connection, rpc_id: Any, request: ApprovalRequest) -> dict[str, Any] | None:
        self._refuse_real_server_in_demo(request.requester)
        try:
            entry = self.book.ask(request)
        except QueueFull as err:
            raise _Reply(err.code, str(err), err.data) from None
        except RequestIdReused as err:
            raise _Reply(err.code, str(err)) from None
        log.info("approval asked: tool=%s fingerprint=%s", request.tool, request.fingerprint[:12])
        fp = request.fingerprint
        if entry.state is State.APPROVED:  # an unspent yes for this very question: spent by this call
            where = _answered_in(entry)
            decision = self.book.take(entry.key, served=request.request_id)
            return ApprovalResult(decision=_decision(decision), fingerprint=fp, answered_in=where).to_json()
        if request.wait_s <= 0:
            self._maybe_stopped_waiting(entry.key)
            return ApprovalResult(decision="pending", fingerprint=fp).to_json()
        timer = QTimer(self)
        timer.setSingleShot(True)
        waiter = _Waiter(conn, rpc_id, request, timer, entry.key)
        timer.timeout.connect(lambda: self._wait_over(waiter))
        timer.start(int(request.wait_s * 1000))
        self._waiters.append(waiter)
        conn.in_flight += 1
        return None

    def _finish(self, waiter: _Waiter, data: bytes) -> None:
        waiter.timer.stop()
        waiter.timer.deleteLater()
        if waiter in self._waiters:
            self._waiters.remove(waiter)
        waiter.conn.in_flight -= 1
        waiter.conn.send(data)
        waiter.conn.maybe_finish()

    def _wait_over(self, waiter: _Waiter) -> None:
        if waiter in self._waiters:
            fp = waiter.request.fingerprint
            self._finish(waiter, protocol.encode_result(waiter.rpc_id, ApprovalResult("pending", fp).to_json()))
            self._maybe_stopped_waiting(waiter.key)

    def _entry_changed(self, entry: Entry) -> None:
        """An answer (or a withdrawal, or other words in its place) arrived: tell whoever is waiting on
        this question (on these words: a call waiting on other words is another question's)."""
        if entry.state not in (State.APPROVED, State.DENIED, State.CANCELLED, State.REPLACED):
            return
        fp = entry.fingerprint
        key = entry.key
        waiting = [w for w in self._waiters if w.key == key and w.conn.open]
        if not waiting:
            return  # kept for approval/status
        if entry.state is State.REPLACED:
            # The same call asked again with other words, which the person sees instead: these calls
            # never get that yes. "pending" keeps the answer's shape, and reads to any server as "not
            # approved; ask again later" (the server knows it sent other words since: chain._asked_again).
            for w in waiting:
                self._finish(w, protocol.encode_result(w.rpc_id, ApprovalResult("pending", fp).to_json()))
        elif entry.state is State.CANCELLED:
            for w in waiting:
                self._finish(w, _cancelled(w.rpc_id))
        elif entry.state is State.DENIED:
            denied = ApprovalResult("deny", fp, answered_in=_answered_in(entry)).to_json()
            for w in waiting:
                self._finish(w, protocol.encode_result(w.rpc_id, denied))
        else:
            # One yes, one action: the first waiting call gets it; the others need their own yes.
            first = waiting[0]
            where = _answered_in(entry)
            decision = self.book.take(key, served=first.request.request_id, reopen=len(waiting) > 1)
            answer = ApprovalResult(_decision(decision), fp, answered_in=where).to_json()
            self._finish(first, protocol.encode_result(first.rpc_id, answer))

    def _approval_status(self, conn: _Connection, rpc_id: Any, params: StatusParams) -> dict[str, Any]:
        # An approve goes back only to the server and account that asked (an older server: by fingerprint),
        # and, with the words' digest, only from a question with those words ("none" for other words: the
        # server then asks with its own). Without a digest (an older server) the one question of that
        # fingerprint and requester answers, whatever its words, as before.
        key = protocol.answer_key(params.fingerprint, params.requester, params.digest)
        entry = self.book.get(key)
        where = _answered_in(entry) if entry is not None else None
        decision = self.book.take(key)
        if decision == "deny":  # refused again without a dialog: the app tells the person it happened
            self.book.note_asked_again(key)
        return StatusResult(decision=decision, answered_in=where if decision in ("approve", "deny") else None).to_json()

    def _approval_cancel(self, conn: _Connection, rpc_id: Any, params: CancelParams) -> dict[str, Any]:
        # Every call waiting on the question ends with CANCELLED (through _entry_changed).
        return CancelResult(cancelled=self.book.cancel(params.request_id)).to_json()


def _answered_in(entry: Entry) -> AnsweredIn | None:
    """Where the person answered this question (the additive `answered_in`), when it was answered."""
    places: dict[str, AnsweredIn] = {"dialog": "dialog", "notification": "notification"}
    return places.get(entry.activity.answered_by)


def _cancelled(rpc_id: Any) -> bytes:
    return protocol.encode_error(rpc_id, ErrorCode.CANCELLED, "The question was withdrawn; nothing was approved.")


def _decision(decision: str) -> Any:
    return decision if decision in ("approve", "deny") else "pending"
