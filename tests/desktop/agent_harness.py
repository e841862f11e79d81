"""The desktop app's listener as a `tests.agentref.ListenerHarness`, for the conformance suite.

The listener (the real `AgentListener`, with the real `ApprovalBook`) runs on a QThread with its own
event loop, so the suite's synchronous tests and asyncio clients can drive it from the main thread.
Accounts and tokens come from the suite's `Script` (its `accounts`, or its `TokenScript`) through a
scripted account directory, as the Core serves them; the person's answer is
given exactly as the dialog gives it (`book.answer(fingerprint, approve, "dialog")`). The dialog
widgets themselves are tested with qtbot in tests/desktop (widgets live on the GUI thread only).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QThread, QTimer, Signal, Slot
from PySide6.QtWidgets import QApplication

from searchdesk_desktop.accounts.keystore import KeyringLocked
from searchdesk_desktop.accounts.signin import SignInRevoked
from searchdesk_desktop.accounts.tokens import AccessToken, ScopeNotGranted, TokenKind
from searchdesk_desktop.agent_socket.listener import AgentListener
from searchdesk_desktop.approval.book import ApprovalBook, Entry, State
from searchdesk_desktop.refusals import SignedOut
from searchdesk_server.agent.protocol import AccountInfo, ApprovalRequest
from tests.agentref import AccountScript, Recorded, Script


def _raise(error: str | None) -> None:
    """A scripted token error, as the app's own exception (the listener maps it to its code)."""
    if error == "signed_out":
        raise SignedOut()
    if error == "refresh_failed":
        raise SignInRevoked()
    if error == "keyring_locked":
        raise KeyringLocked()
    if error:
        raise RuntimeError("scripted failure")


class ScriptedAccounts:
    """The Core's part for the listener (an AccountDirectory), as the suite's Script says: its accounts
    (Script.accounts), or the one account of its TokenScript."""

    def __init__(self, holder: DesktopListener) -> None:
        self.holder = holder
        self.single = ScriptedTokens(holder)

    def usable(self) -> list[AccountInfo]:
        return self.holder.script.account_list()

    def provider(self, account: str | None) -> ScriptedTokens | AccountTokens:
        script = self.holder.script
        if script.accounts is None:
            return self.single
        found = script.account_for(account)
        if found is None:
            raise SignedOut()
        return AccountTokens(found)


class AccountTokens:
    """A TokenProvider for one scripted account of several."""

    def __init__(self, script: AccountScript) -> None:
        self.script = script
        self.kind: TokenKind = "service_account" if script.kind == "service_account" else "oauth"
        self.account = script.account

    def access_token(self, scopes: Sequence[str], *, force_refresh: bool = False) -> AccessToken:
        _raise(self.script.error)
        return AccessToken(self.script.access_token, time.time() + 3599, self.kind, self.account)


class ScriptedTokens:
    """A TokenProvider that answers as the reference agent's TokenScript says."""

    def __init__(self, holder: DesktopListener) -> None:
        self.holder = holder
        self.kind: TokenKind = "oauth"
        self.account = ""
        self._refreshes = 0
        self._current: str | None = None
        self._lock = threading.Lock()

    def access_token(self, scopes: Sequence[str], *, force_refresh: bool = False) -> AccessToken:
        t = self.holder.script.token
        _raise(t.refresh_error if force_refresh and t.refresh_error else t.error)
        if t.granted_scopes is not None:
            missing = [s for s in scopes if s not in t.granted_scopes]
            if missing:
                raise ScopeNotGranted(missing)
        with self._lock:
            if force_refresh:
                self._refreshes += 1
                self._current = t.refreshed_token + ("" if self._refreshes == 1 else f".{self._refreshes}")
            token = self._current or t.access_token
        kind: TokenKind = "service_account" if t.kind == "service_account" else "oauth"
        return AccessToken(token, time.time() + t.expires_in, kind, t.account)


class _Invoker(QObject):
    """Lives on the listener's thread; runs callables sent from any thread, returns through a Future."""

    call = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.call.connect(self._run)

    @Slot(object)
    def _run(self, item: tuple[Callable[[], Any], Future[Any]]) -> None:
        fn, future = item
        try:
            future.set_result(fn())
        except BaseException as exc:
            future.set_exception(exc)


class _Worker(QThread):
    def __init__(self, owner: DesktopListener, socket_path: str) -> None:
        super().__init__()
        self.owner = owner
        self.socket_path = socket_path
        self.ready: Future[_Invoker] = Future()

    def run(self) -> None:
        owner = self.owner
        book = ApprovalBook(keep=owner.script.keep_s)
        listener = AgentListener(
            book, ScriptedAccounts(owner), demo=owner.script.demo, path=self.socket_path, recorder=owner._record
        )
        try:
            listener.start()
        except BaseException as exc:
            listener.close()
            listener.deleteLater()
            self.ready.set_exception(exc)
            return
        invoker = _Invoker()
        owner.book, owner.listener = book, listener
        book.on_change.append(owner._scripted_answer)
        self.ready.set_result(invoker)
        self.exec()
        listener.close()
        # Delete the thread's objects on this thread, now: left to the main thread's garbage collector,
        # a QObject of this (finished) thread would be deleted from another thread, which crashes Qt
        # now and then while the main thread processes its events.
        owner.listener = None
        listener.deleteLater()
        invoker.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


class DesktopListener:
    """The app's AgentListener behind the conformance suite's ListenerHarness interface."""

    name = "desktop"

    def __init__(self) -> None:
        self.script = Script()
        self.book: ApprovalBook | None = None
        self.listener: AgentListener | None = None
        self._worker: _Worker | None = None
        self._invoker: _Invoker | None = None
        self._requests: list[Recorded] = []
        self._changed = threading.Condition()

    # --- ListenerHarness ---
    def start(self, socket_path: str, script: Script) -> None:
        if QApplication.instance() is None:  # one per process; pytest-qt reuses it
            QApplication([])
        self.script = script
        self._worker = _Worker(self, socket_path)
        self._worker.start()
        try:
            self._invoker = self._worker.ready.result(10)
        except BaseException:
            self._worker.wait(5000)
            self._worker = None
            raise

    def stop(self) -> None:
        worker, self._worker = self._worker, None
        if worker is None:
            return
        worker.quit()
        worker.wait(10_000)

    def set_script(self, script: Script) -> None:
        """Changed on the listener's thread, after what it is doing now: a question it is taking in
        is answered by the script it arrived under (the reference agent's order)."""
        if self.book is None or self.listener is None:
            self.script = script
            return
        book, listener = self.book, self.listener

        def change() -> None:
            self.script = script
            book.keep, listener.demo = script.keep_s, script.demo

        self._on_thread(change)

    def answer(self, key: str, decision: str) -> bool:
        """As the person answers the dialog of `key` (an answer key, or a fingerprint with one open question)."""
        book = self.book
        assert book is not None

        def answer() -> bool:
            entry = book.get(key)
            if entry is None:
                matches = [e for e in book.open_entries() if e.fingerprint == key]
                entry = matches[0] if len(matches) == 1 else None
            return entry is not None and book.answer(entry.key, decision == "approve", "dialog")

        return bool(self._on_thread(answer))

    def open_questions(self) -> list[tuple[str, ApprovalRequest]]:
        """What the dialog shows, and in which order: the book's open questions, the oldest first, each
        with its key (the fingerprint, who asked and the words) for `answer`."""
        book = self.book
        assert book is not None
        found: list[tuple[str, ApprovalRequest]] = self._on_thread(
            lambda: [(e.key, e.request) for e in book.open_entries()]
        )
        return found

    def hold(self) -> Callable[[], None]:
        """Keep the app's thread busy (a stalled desktop) until the returned function is called: what
        servers send meanwhile waits in the socket, and is then read and answered in the order it came."""
        assert self._invoker is not None
        started, release = threading.Event(), threading.Event()

        def busy() -> None:
            started.set()
            release.wait(30)

        self._invoker.call.emit((busy, Future()))
        assert started.wait(5), "the app's thread did not take the hold"
        return release.set

    def requests(self) -> list[Recorded]:
        with self._changed:
            return list(self._requests)

    def wait_for_requests(self, method: str, count: int = 1, timeout: float = 5.0) -> list[Recorded]:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = [r for r in self._requests if r.method == method]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{count} {method} request(s) expected, {len(found)} arrived")
                self._changed.wait(min(left, 0.05))

    # --- on the listener's thread ---
    def _record(self, method: str, params: object, connection: int) -> None:
        with self._changed:
            self._requests.append(Recorded(method=method, params=params, connection=connection))
            self._changed.notify_all()

    def _scripted_answer(self, entry: Entry) -> None:
        decision, delay = self.script.approval.decision, self.script.approval.delay
        if entry.state is not State.PENDING or decision not in ("approve", "deny") or self.book is None:
            return
        book, key = self.book, entry.key
        QTimer.singleShot(int(delay * 1000), lambda: book.answer(key, decision == "approve", "dialog"))

    def _on_thread(self, fn: Callable[[], Any]) -> Any:
        assert self._invoker is not None
        future: Future[Any] = Future()
        self._invoker.call.emit((fn, future))
        return future.result(5)
