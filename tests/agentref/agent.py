"""The reference test agent: an asyncio listener that speaks the agent protocol and can be scripted.

It stands in for the desktop app wherever a test needs the other end of the socket: it hands out a
scripted token, approves / denies / leaves a question pending / answers late, keeps answers for
`approval/status`, and records every request. It runs the same trust checks the app must run (folder,
peer user id) and the same bounds (message size, connections, requests in flight, pending questions).

Semantics the desktop app must share (the conformance suite checks them):
- Answers are bound to `protocol.answer_key`: the fingerprint and the requester (server, account); a
  request without requester (an older server) is bound to the fingerprint alone. Below, "question"
  means one such key. Each question is bound to its words too (`ApprovalRequest.digest`,
  `protocol.words_digest`): a request with the same key but other words never joins the open
  dialog; it replaces it (the calls waiting on the old words get "pending", never its yes; an unspent
  approve of the old words is dropped). `approval/status` with a `digest` answers only from a
  question with those words ("none" otherwise); without one (an older server), from the question of
  that key whatever its words.
- `approval/request` for a question with an open dialog joins that dialog (no second dialog).
  An approve goes to exactly one waiting call; if others wait on the same fingerprint, the dialog
  stays open for them. A deny answers every waiting call.
- An answer nobody collected is kept `keep_s` (5 minutes) for `approval/status`; an approve returned
  there is consumed, a deny is not. An unanswered dialog closes itself after `keep_s`.
- `approval/request` for a fingerprint whose unspent answer is an approve returns it (and spends
  it); after a deny it opens a new dialog.
- `approval/cancel` closes the dialog of that request_id (open or answered): every call waiting on
  it gets CANCELLED; nothing is approved. An unknown request_id answers `{"cancelled": false}`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from searchdesk_server.agent import paths, protocol
from searchdesk_server.agent.protocol import ErrorCode

from .connection import Connection, Refusal
from .script import Script

APP_NAME = "searchdesk-agentref"
APP_VERSION = "1.0"

_TOKEN_ERRORS = {
    "signed_out": (ErrorCode.SIGNED_OUT, "No Google account is signed in to SearchDesk."),
    "refresh_failed": (ErrorCode.REFRESH_FAILED, "Google refused to refresh the sign-in; sign in again."),
    "keyring_locked": (ErrorCode.KEYRING_LOCKED, "The keyring is locked; unlock it and try again."),
    "internal": (ErrorCode.INTERNAL_ERROR, "The agent failed."),
}


@dataclass(frozen=True)
class Recorded:
    """One request as the agent received it (params unvalidated, as sent)."""

    method: str
    params: Any
    connection: int


class _Cancelled(Exception):
    pass


# --------------------------------------------------------------------------------------------------
# Dialogs


@dataclass(eq=False)
class _Dialog:
    request: protocol.ApprovalRequest
    opened: float
    state: str = "pending"  # pending | approve | deny
    answered: float = 0.0
    request_ids: set[str] = field(default_factory=set)
    waiters: dict[asyncio.Future[str], str] = field(default_factory=dict)  # future -> its request_id
    timer: asyncio.TimerHandle | None = None

    @property
    def key(self) -> str:
        """The fingerprint, the requester and the words."""
        return protocol.answer_key(self.request.fingerprint, self.request.requester, self.request.digest)

    @property
    def slot(self) -> str:
        """The fingerprint and the requester: one dialog at a time under it."""
        return protocol.answer_key(self.request.fingerprint, self.request.requester)


# --------------------------------------------------------------------------------------------------
# The agent

_F = TypeVar("_F", bound=Callable[..., Any])
_HANDLERS: dict[str, str] = {}


def _answers(spec: protocol.MethodSpec[Any, Any]) -> Callable[[_F], _F]:
    """Mark the reference agent's handler of the method `spec` names (an entry of protocol.METHODS, once),
    as the app's listener marks its own: both are checked against the same table on import."""

    def mark(handler: _F) -> _F:
        if protocol.METHODS.get(spec.name) is not spec or spec.name in _HANDLERS:
            raise LookupError(f"{spec.name} is not a method of protocol.METHODS, or has a handler already")
        _HANDLERS[spec.name] = handler.__name__
        return handler

    return mark


class ReferenceAgent:
    """Listens on `path`; call `start()` and `stop()` from the loop that should run it."""

    def __init__(
        self,
        path: str,
        script: Script | None = None,
        *,
        max_connections: int = 256,
        max_pending: int = 32,
        max_in_flight: int = 32,
        line_timeout: float = 30.0,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.path = path
        self.script = script or Script()
        self.max_connections = max_connections
        self.max_pending = max_pending
        self.max_in_flight = max_in_flight
        self.line_timeout = line_timeout
        self.requests: list[Recorded] = []
        self.refused_peers = 0
        self.connections_accepted = 0
        self._on_event = on_event
        self._server: asyncio.Server | None = None
        self._conns: set[Connection] = set()
        self._ids = itertools.count(1)
        self._dialogs: dict[str, _Dialog] = {}
        self._by_request: dict[str, str] = {}
        self._refreshes = 0
        self._current_token: str | None = None

    # ---- lifecycle

    async def start(self) -> None:
        paths.prepare_listener(self.path)
        self._server = await asyncio.start_unix_server(self._accept, path=self.path)
        os.chmod(self.path, 0o600)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for conn in list(self._conns):
            conn.abort()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        for dialog in list(self._dialogs.values()):
            self._remove(dialog, error=_Cancelled())
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def _emit(self, event: dict[str, Any]) -> None:
        if self._on_event is not None:
            self._on_event(event)

    # ---- connections

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn_id = next(self._ids)
        sock = writer.get_extra_info("socket")
        if sock is None or not paths.trusted_peer(sock):
            self.refused_peers += 1
            self._emit({"event": "refused_peer", "connection": conn_id})
            writer.transport.abort()  # say nothing to another user
            return
        if len(self._conns) >= self.max_connections:
            with contextlib.suppress(Exception):
                writer.write(protocol.encode_error(None, ErrorCode.BUSY, "Too many connections; try again later."))
                await writer.drain()
            writer.close()
            return
        self.connections_accepted += 1
        conn = Connection(self, reader, writer, conn_id)
        self._conns.add(conn)
        try:
            await conn.run()
        finally:
            self._conns.discard(conn)

    def record(self, method: str, params: Any, conn_id: int) -> None:
        self.requests.append(Recorded(method=method, params=params, connection=conn_id))
        self._emit({"event": "request", "method": method, "params": params, "connection": conn_id})

    def should_drop(self, method: str) -> bool:
        left = self.script.drop.get(method, 0)
        if left > 0:
            self.script.drop[method] = left - 1
            return True
        return False

    # ---- methods

    async def handle(self, method: str, params: Any) -> dict[str, Any]:
        """Answer one request whose params are checked (`protocol.parse_params`): its method's handler."""
        name = self.HANDLERS.get(method)
        if name is None:
            raise Refusal(ErrorCode.METHOD_NOT_FOUND, "No such method.")
        answer = getattr(self, name)(params)
        return await answer if inspect.isawaitable(answer) else answer

    @_answers(protocol.ACCOUNTS_LIST_METHOD)
    def _accounts_list(self, params: protocol.AccountsParams) -> dict[str, Any]:
        self._refuse_real_in_demo(params.requester)
        return protocol.AccountList(tuple(self.script.account_list())).to_json()

    @_answers(protocol.HELLO_METHOD)
    def _hello(self, params: protocol.HelloParams) -> dict[str, Any]:
        if params.protocol != protocol.PROTOCOL_VERSION:
            raise Refusal(
                ErrorCode.PROTOCOL_MISMATCH,
                f"This app speaks agent protocol {protocol.PROTOCOL_VERSION}.",
                {"supported": [protocol.PROTOCOL_VERSION]},
            )
        return protocol.Hello(
            app=APP_NAME, version=APP_VERSION, protocol=self.script.hello_protocol, features=tuple(self.script.features)
        ).to_json()

    def _refuse_real_in_demo(self, requester: protocol.Requester | None) -> None:
        if self.script.demo and requester is not None and not requester.demo:
            raise Refusal(ErrorCode.DEMO_APP, "This app runs the demo.")

    @_answers(protocol.TOKEN_METHOD)
    def _token(self, params: protocol.TokenParams) -> dict[str, Any]:
        self._refuse_real_in_demo(params.requester)
        if self.script.accounts is not None:
            return self._account_token(params)
        t = self.script.token
        if params.account is not None and not protocol.same_account(params.account, t.account):
            raise Refusal(ErrorCode.UNKNOWN_ACCOUNT, "That account is not one Claude may use.")
        error = t.refresh_error if params.force_refresh and t.refresh_error else t.error
        if error:
            code, message = _TOKEN_ERRORS[error]
            raise Refusal(code, message)
        if t.granted_scopes is not None:
            missing = [s for s in params.scopes if s not in t.granted_scopes]
            if missing:
                raise Refusal(
                    ErrorCode.SCOPE_NOT_GRANTED,
                    "The sign-in does not grant every scope asked.",
                    {"missing": missing},
                )
        if params.force_refresh:
            self._refreshes += 1
            suffix = "" if self._refreshes == 1 else f".{self._refreshes}"
            self._current_token = t.refreshed_token + suffix
        token = self._current_token or t.access_token
        return protocol.Token(access_token=token, expires_in=t.expires_in, kind=t.kind, account=t.account).to_json()  # type: ignore[arg-type]

    def _account_token(self, params: protocol.TokenParams) -> dict[str, Any]:
        account = self.script.account_for(params.account)
        if account is None:
            if params.account is None:
                code, message = _TOKEN_ERRORS["signed_out"]
                raise Refusal(code, message)
            raise Refusal(ErrorCode.UNKNOWN_ACCOUNT, "That account is not one Claude may use.")
        if account.error:
            code, message = _TOKEN_ERRORS[account.error]
            raise Refusal(code, message)
        return protocol.Token(
            access_token=account.access_token,
            expires_in=3599,
            kind=account.kind,
            account=account.account,  # type: ignore[arg-type]
        ).to_json()

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def _purge(self) -> None:
        now = self._now()
        for dialog in list(self._dialogs.values()):
            since = dialog.opened if dialog.state == "pending" else dialog.answered
            if now - since > self.script.keep_s:
                self._remove(dialog, result="pending")

    def _remove(self, dialog: _Dialog, *, result: str | None = None, error: Exception | None = None) -> None:
        if self._dialogs.get(dialog.slot) is dialog:
            del self._dialogs[dialog.slot]
        for rid in dialog.request_ids:
            self._by_request.pop(rid, None)
        if dialog.timer is not None:
            dialog.timer.cancel()
        for waiter in dialog.waiters:
            if not waiter.done():
                if error is not None:
                    waiter.set_exception(error)
                else:
                    waiter.set_result(result or "pending")
        dialog.waiters.clear()

    def _schedule(self, dialog: _Dialog) -> None:
        decision, delay = self.script.approval.decision, self.script.approval.delay
        if decision in ("approve", "deny"):
            loop = asyncio.get_running_loop()
            dialog.timer = loop.call_later(delay, self.answer, dialog.key, decision)

    def pending_count(self) -> int:
        return sum(1 for d in self._dialogs.values() if d.state == "pending")

    @_answers(protocol.APPROVAL_REQUEST_METHOD)
    async def _approval_request(self, params: protocol.ApprovalRequest) -> dict[str, Any]:
        self._refuse_real_in_demo(params.requester)
        self._purge()
        fp = params.fingerprint
        key = protocol.answer_key(fp, params.requester, params.digest)
        known = self._by_request.get(params.request_id)
        if known is not None and known != key:
            raise Refusal(ErrorCode.INVALID_PARAMS, "This request_id was already used for another question.")
        dialog = self._dialogs.get(protocol.answer_key(fp, params.requester))
        if dialog is not None and dialog.key != key:
            self._remove(dialog, result="pending")  # other words: they replace it, and never get its yes
            replaced, dialog = True, None
        else:
            replaced = False
        if dialog is not None and dialog.state == "approve":
            self._remove(dialog)
            return protocol.ApprovalResult(decision="approve", fingerprint=fp).to_json()
        if dialog is None or dialog.state == "deny":
            if dialog is not None:
                self._remove(dialog)
            waiting = self.pending_count()
            if waiting >= self.max_pending:
                raise Refusal(
                    ErrorCode.QUEUE_FULL, "Too many questions are waiting; answer some first.", {"waiting": waiting}
                )
            dialog = _Dialog(request=params, opened=self._now())
            self._dialogs[dialog.slot] = dialog
            event = {"event": "dialog", "fingerprint": fp, "key": key, "request_id": params.request_id}
            self._emit({**event, "replaced": replaced})
            self._schedule(dialog)
        dialog.request_ids.add(params.request_id)
        self._by_request[params.request_id] = key
        waiter: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        dialog.waiters[waiter] = params.request_id
        try:
            decision = await asyncio.wait_for(waiter, params.wait_s)
        except TimeoutError:
            decision = "pending"
        except _Cancelled:
            raise Refusal(ErrorCode.CANCELLED, "The question was cancelled; nothing was approved.") from None
        finally:
            dialog.waiters.pop(waiter, None)
        return protocol.ApprovalResult(decision=decision, fingerprint=fp).to_json()  # type: ignore[arg-type]

    def _find(self, key: str) -> _Dialog | None:
        """The dialog of an answer key (with a digest: only while it shows those words), or the only open
        dialog with that fingerprint (tests name it so)."""
        slot, digest = protocol.question_of(key)
        dialog = self._dialogs.get(slot)
        if dialog is not None:
            return dialog if digest is None or dialog.key == key else None
        matches = [d for d in self._dialogs.values() if d.request.fingerprint == key and d.state == "pending"]
        return matches[0] if len(matches) == 1 else None

    def answer(self, key: str, decision: str) -> bool:
        """The person's answer to the open dialog for `key` (an answer key, or a fingerprint with one
        open dialog); False when none is open."""
        dialog = self._find(key)
        if dialog is None or dialog.state != "pending":
            return False
        dialog.timer = None
        self._emit({"event": "answer", "fingerprint": dialog.request.fingerprint, "decision": decision})
        waiting = [w for w in dialog.waiters if not w.done()]
        if decision == "approve":
            if not waiting:
                dialog.state, dialog.answered = "approve", self._now()
                return True
            waiting[0].set_result("approve")  # one yes, one action
            served = dialog.waiters.pop(waiting[0])
            dialog.request_ids.discard(served)  # its call is answered: cancelling it closes nothing
            self._by_request.pop(served, None)
            if len(waiting) == 1:
                self._remove(dialog)
            else:
                self._schedule(dialog)  # the others still need their own yes
            return True
        dialog.state, dialog.answered = "deny", self._now()
        for waiter in waiting:
            waiter.set_result("deny")
        dialog.waiters.clear()
        return True

    @_answers(protocol.APPROVAL_STATUS_METHOD)
    def _approval_status(self, params: protocol.StatusParams) -> dict[str, Any]:
        self._purge()
        dialog = self._find(protocol.answer_key(params.fingerprint, params.requester, params.digest))
        if dialog is None:
            return protocol.StatusResult(decision="none").to_json()
        if dialog.state == "approve":
            self._remove(dialog)
            return protocol.StatusResult(decision="approve").to_json()
        return protocol.StatusResult(decision=dialog.state).to_json()  # type: ignore[arg-type]

    @_answers(protocol.APPROVAL_CANCEL_METHOD)
    def _approval_cancel(self, params: protocol.CancelParams) -> dict[str, Any]:
        self._purge()
        key = self._by_request.get(params.request_id)
        dialog = self._find(key) if key is not None else None
        if dialog is None:
            return protocol.CancelResult(cancelled=False).to_json()
        self._emit({"event": "cancel", "fingerprint": dialog.request.fingerprint, "request_id": params.request_id})
        self._remove(dialog, error=_Cancelled())
        return protocol.CancelResult(cancelled=True).to_json()

    #: Each method's handler, by name: exactly the methods of protocol.METHODS (checked below, on import).
    HANDLERS: ClassVar[Mapping[str, str]] = _HANDLERS


protocol.check_handlers("The reference agent", ReferenceAgent.HANDLERS)
