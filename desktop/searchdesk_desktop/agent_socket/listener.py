"""The agent-socket listener: hands short-lived tokens to servers and asks the person their questions.

docs/architecture.md places it among the parts, and ``searchdesk_server.agent.protocol`` is the one
definition of the wire; ``searchdesk_server.agent.paths`` places the socket and runs the trust checks.

It answers every method of ``protocol.METHODS`` and no other: a handler is marked ``@_handles(SPEC)``
with the method's entry (``protocol.HELLO_METHOD``, …) and the dispatch finds it by the method's name
(``AgentListener.HANDLERS``); its params arrive checked as the method's params message, and it returns
the method's result message (or None when the answer comes later), both checked by mypy against the
entry. On import ``protocol.check_handlers`` fails when a method of the table has no handler. One
connection's bytes and lines are ``agent_connection``.

On Unix we bind the socket ourselves (``paths.listen_unix``) and accept on a ``QSocketNotifier``:
QLocalServer would remove whatever is at the path when it closes, ours or not. While the app runs,
``paths.Keeper`` checks every ``paths.KEEP_EVERY_S`` (a timer on this loop) that the path still names
our socket and listens there again when a cleaner removed it or its folder; connections already open
go on.

On Windows ``winpipe.PipeAcceptor`` creates the named pipe (first, so nobody can squat its name;
QLocalServer cannot ask for that) and hands each connected instance over a queued signal to a
QLocalSocket (``agent_connection.QtTransport``). A named pipe is no file anybody can delete, so it
needs no keeping. That branch is not run on the Linux CI.

Everything runs on the Qt thread except token minting, which may wait on Google or the keyring and
runs in a small thread pool; results come back through a queued signal. No message, from any client,
can block another: reads never wait, writes are buffered, every queue is bounded.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtNetwork import QLocalSocket

from searchdesk_server.agent import framing, paths, protocol, winpipe
from searchdesk_server.agent.framing import ErrorCode, ProtocolError
from searchdesk_server.agent.protocol import (
    AccountList,
    AccountsParams,
    AnsweredIn,
    ApprovalRequest,
    ApprovalResult,
    CancelParams,
    CancelResult,
    Hello,
    HelloParams,
    Message,
    MethodSpec,
    StatusParams,
    StatusResult,
    Token,
    TokenParams,
)

from .. import __version__
from ..approval.book import ApprovalBook, Entry, State
from ..approval.wholes import check_wholes
from ..refusals import Refusal
from .account_directory import AccountDirectory, OneAccount, ProviderGetter
from .connection import Connection, QtTransport, Transport, UnixDoor, UnixTransport

log = logging.getLogger(__name__)

APP_NAME = "SearchDesk"
MAX_CONNECTIONS = 128
MAX_IN_FLIGHT = 32  # requests of one connection still being answered
PARTIAL_LINE_TIMEOUT_MS = 30_000  # a line started and never finished


class _Reply(Exception):
    """Raised inside a handler to answer with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


@dataclass
class _Waiter:
    conn: Connection
    rpc_id: protocol.RequestId
    request: ApprovalRequest
    timer: QTimer
    key: str  # the book's key of the question it waits on: fingerprint, requester and words (Entry.key)


# --- the listener ------------------------------------------------------------------------------

_P = TypeVar("_P", bound=Message)
_R = TypeVar("_R", bound=Message)
#: A handler: (listener, connection, JSON-RPC id, the method's params) -> its result, or None for later.
_Handler: TypeAlias = Callable[[Any, Connection, Any, _P], _R | None]
_HANDLERS: dict[str, str] = {}


def _handles(spec: MethodSpec[_P, _R]) -> Callable[[_Handler[_P, _R]], _Handler[_P, _R]]:
    """Mark a listener method as the handler of the method `spec` names (an entry of protocol.METHODS,
    once): it takes that method's params message and answers with its result message (mypy checks both)."""

    def mark(handler: _Handler[_P, _R]) -> _Handler[_P, _R]:
        if protocol.METHODS.get(spec.name) is not spec or spec.name in _HANDLERS:
            raise LookupError(f"{spec.name} is not a method of protocol.METHODS, or has a handler already")
        _HANDLERS[spec.name] = getattr(handler, "__name__")  # noqa: B009  (a callable's name, as the dispatch finds it)
        return handler

    return mark


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
        self._door: UnixDoor | None = None  # Unix: the listening socket, kept at its path
        self._pipes: winpipe.PipeAcceptor | None = None
        self._connections: set[Connection] = set()
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
        self._door = UnixDoor(
            bound, 2 * self.max_connections, self, lambda sock: self._adopt(UnixTransport(sock, self))
        )
        self.path = path
        log.info("agent socket listening")
        return path

    def close(self) -> None:
        if self._pipes is not None:
            self._pipes.stop()
            self._pipes = None
        if self._door is not None:
            self._door.close()  # the file goes only if the path still names ours
            self._door = None
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
        return self._door is not None and self._door.holds

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    # --- accepting ---
    @Slot(object)
    def _adopt_pipe(self, handle: int) -> None:
        """Windows: a connected pipe instance, as QLocalServer would hand it over (Qt reads and writes)."""
        qsock = QLocalSocket(self)
        if self._pipes is None or not qsock.setSocketDescriptor(handle):
            qsock.deleteLater()
            winpipe.system_calls().close(handle)  # closing down, or Qt refused it: nobody else will
            return
        self._adopt(QtTransport(qsock))

    def _adopt(self, transport: Transport) -> None:
        self._count += 1
        conn = Connection(
            transport,
            self._count,
            parent=self,
            partial_line_ms=PARTIAL_LINE_TIMEOUT_MS,
            on_line=self._handle_line,
            on_gone=self._forget,
        )
        if len(self._connections) >= self.max_connections:
            conn.send(framing.encode_error(None, ErrorCode.BUSY, "Too many connections; try again shortly."))
            transport.close_after_flush()
            return
        self._connections.add(conn)
        self.connections_changed.emit()

    def _forget(self, conn: Connection) -> None:
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
    def _handle_line(self, conn: Connection, line: bytes) -> None:
        try:
            request = framing.parse_request(line)
        except ProtocolError as err:
            conn.send(framing.encode_error(err.request_id, err.code or ErrorCode.INVALID_REQUEST, str(err)))
            return
        if request.is_notification:
            return  # JSON-RPC: a notification is never answered, and none of ours has an effect
        if self._recorder is not None:
            self._recorder(request.method, request.params, conn.number)
        rpc_id = request.id
        assert rpc_id is not None
        if conn.in_flight >= self.max_in_flight:
            conn.send(framing.encode_error(rpc_id, ErrorCode.BUSY, "Too many requests in flight on this connection."))
            return
        try:
            params = protocol.parse_params(request)  # METHOD_NOT_FOUND for a method not in protocol.METHODS
            result = getattr(self, self.HANDLERS[request.method])(conn, rpc_id, params)
        except ProtocolError as err:
            conn.send(framing.encode_error(rpc_id, err.code or ErrorCode.INVALID_PARAMS, str(err)))
            return
        except _Reply as reply:
            conn.send(framing.encode_error(rpc_id, reply.code, str(reply), reply.data))
            return
        except Exception:
            log.exception("agent request failed")
            conn.send(
                framing.encode_error(
                    rpc_id, ErrorCode.INTERNAL_ERROR, "The SearchDesk app failed; nothing was approved."
                )
            )
            return
        if result is not None:
            conn.send(framing.encode_result(rpc_id, result.to_json()))

    @_handles(protocol.HELLO_METHOD)
    def _hello(self, conn: Connection, rpc_id: Any, params: HelloParams) -> Hello:
        if params.protocol != protocol.PROTOCOL_VERSION:
            raise _Reply(
                ErrorCode.PROTOCOL_MISMATCH,
                f"This SearchDesk app speaks agent protocol {protocol.PROTOCOL_VERSION}; update both programs.",
                {"supported": [protocol.PROTOCOL_VERSION]},
            )
        if params.client is not None:
            self.started_by.emit(params.client.name, params.client.version)
        return Hello(app=APP_NAME, version=__version__, features=protocol.FEATURES)

    def _refuse_real_server_in_demo(self, requester: protocol.Requester | None) -> None:
        """A demo app answers only demo servers; an older server (no requester) is served as before."""
        if self.demo and requester is not None and not requester.demo:
            raise _Reply(
                ErrorCode.DEMO_APP,
                "This SearchDesk app is running the demo; start SearchDesk normally to use a Google account.",
            )

    # accounts and tokens
    @_handles(protocol.ACCOUNTS_LIST_METHOD)
    def _accounts_list(self, conn: Connection, rpc_id: Any, params: AccountsParams) -> AccountList:
        self._refuse_real_server_in_demo(params.requester)
        return AccountList(tuple(self.accounts.usable()))

    @_handles(protocol.TOKEN_METHOD)
    def _token(self, conn: Connection, rpc_id: Any, params: TokenParams) -> None:
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
    def _token_finished(self, item: tuple[Connection, Any, str | None, Future[Token]]) -> None:
        conn, rpc_id, account, future = item
        conn.in_flight -= 1
        if conn.open:
            conn.send(self._token_answer(rpc_id, account, future))
        conn.maybe_finish()

    def _token_answer(self, rpc_id: Any, account: str | None, future: Future[Token]) -> bytes:
        failure = future.exception()
        if isinstance(failure, Refusal):  # the app's own errors: the class names the code, the text is a person's
            self.token_error.emit(failure.code, account or "")
            return framing.encode_error(rpc_id, failure.code, str(failure), failure.data)
        if failure is not None:
            self.token_error.emit(ErrorCode.INTERNAL_ERROR, account or "")
            log.error("token minting failed", exc_info=failure)
            return framing.encode_error(rpc_id, ErrorCode.INTERNAL_ERROR, "The SearchDesk app could not get a token.")
        token = future.result()
        self.tokens_handed_out += 1
        self.last_token_at = time.time()
        self.activity.emit()
        return framing.encode_result(rpc_id, token.to_json())

    # approvals
    @_handles(protocol.APPROVAL_REQUEST_METHOD)
    def _approval_request(self, conn: Connection, rpc_id: Any, request: ApprovalRequest) -> ApprovalResult | None:
        self._refuse_real_server_in_demo(request.requester)
        try:
            check_wholes(request)  # what the dialog shows whole is what the words bind, or nothing is shown
            entry = self.book.ask(request)
        except Refusal as err:  # the class names the code; the text says what was wrong
            raise _Reply(err.code, str(err), err.data) from None
        log.info("approval asked: tool=%s fingerprint=%s", request.tool, request.fingerprint[:12])
        fp = request.fingerprint
        if entry.state is State.APPROVED:  # an unspent yes for this very question: spent by this call
            where = _answered_in(entry)
            decision = self.book.take(entry.key, served=request.request_id)
            return ApprovalResult(decision=_decision(decision), fingerprint=fp, answered_in=where)
        if request.wait_s <= 0:
            self._maybe_stopped_waiting(entry.key)
            return ApprovalResult(decision="pending", fingerprint=fp)
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
            self._finish(waiter, framing.encode_result(waiter.rpc_id, ApprovalResult("pending", fp).to_json()))
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
            # approved; ask again later" (the server knows it sent other words since: ask_app.asked_again).
            for w in waiting:
                self._finish(w, framing.encode_result(w.rpc_id, ApprovalResult("pending", fp).to_json()))
        elif entry.state is State.CANCELLED:
            for w in waiting:
                self._finish(w, _cancelled(w.rpc_id))
        elif entry.state is State.DENIED:
            denied = ApprovalResult("deny", fp, answered_in=_answered_in(entry)).to_json()
            for w in waiting:
                self._finish(w, framing.encode_result(w.rpc_id, denied))
        else:
            # One yes, one action: the first waiting call gets it; the others need their own yes.
            first = waiting[0]
            where = _answered_in(entry)
            decision = self.book.take(key, served=first.request.request_id, reopen=len(waiting) > 1)
            answer = ApprovalResult(_decision(decision), fp, answered_in=where).to_json()
            self._finish(first, framing.encode_result(first.rpc_id, answer))

    @_handles(protocol.APPROVAL_STATUS_METHOD)
    def _approval_status(self, conn: Connection, rpc_id: Any, params: StatusParams) -> StatusResult:
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
        return StatusResult(decision=decision, answered_in=where if decision in ("approve", "deny") else None)

    @_handles(protocol.APPROVAL_CANCEL_METHOD)
    def _approval_cancel(self, conn: Connection, rpc_id: Any, params: CancelParams) -> CancelResult:
        # Every call waiting on the question ends with CANCELLED (through _entry_changed).
        return CancelResult(cancelled=self.book.cancel(params.request_id))

    #: Each method's handler, by name: exactly the methods of protocol.METHODS (checked below, on import).
    HANDLERS: ClassVar[Mapping[str, str]] = _HANDLERS


protocol.check_handlers("The app's listener", AgentListener.HANDLERS)


def _answered_in(entry: Entry) -> AnsweredIn | None:
    """Where the person answered this question (the additive `answered_in`), when it was answered."""
    places: dict[str, AnsweredIn] = {"dialog": "dialog", "notification": "notification"}
    return places.get(entry.activity.answered_by)


def _cancelled(rpc_id: Any) -> bytes:
    return framing.encode_error(rpc_id, ErrorCode.CANCELLED, "The question was withdrawn; nothing was approved.")


def _decision(decision: str) -> Any:
    return decision if decision in ("approve", "deny") else "pending"
