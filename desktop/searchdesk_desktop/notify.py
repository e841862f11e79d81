"""A system notification beside each approval dialog: a nudge, never the only way to answer.

On Linux we talk to ``org.freedesktop.Notifications`` over D-Bus (jeepney, which keyring's Secret
Service backend already brings) on a thread of its own, so a slow or absent notification server never
stalls the UI. Elsewhere, or when D-Bus fails, ``QSystemTrayIcon.showMessage`` (no buttons). Every
send is wrapped: no notification server is not an error, the dialog is always there.

Approve is offered in the notification only when the whole question fits in it; otherwise Review
(brings the dialog forward) and Deny. Every action is bound to the question's fingerprint, and the
first answer wins (the book refuses a second).
"""

from __future__ import annotations

import contextlib
import html
import logging
import queue
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from .approval_dialog import VALUES_HEADING as VALUES_HEADING
from .approval_dialog import describe_client
from .approvals import ApprovalBook, Entry, Origin, State, origin

log = logging.getLogger(__name__)

BUS_NAME = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"
#: The whole question must fit in this many characters and lines for Approve to be offered.
FIT_CHARS = 400
FIT_LINES = 8
APPROVE, DENY, REVIEW = "approve", "deny", "review"


@dataclass(frozen=True)
class Note:
    summary: str
    body: str
    actions: tuple[tuple[str, str], ...]  # (key, label)


def question_text(entry: Entry) -> str:
    """The question as the dialog words it: the server's sentences, the heading, the values, the client."""
    r = entry.request
    lines = [r.what, r.consequence, VALUES_HEADING]
    lines += [f"{v.label}: {v.value}" for v in r.values]
    lines.append(f"Asked by {describe_client(r.client.name, r.client.version)}.")
    return "\n".join(lines)


SUMMARIES = {
    Origin.REAL: "SearchDesk: approval needed",
    Origin.DEMO: "SearchDesk (Demo): approval needed",
    Origin.REAL_IN_DEMO_APP: "SearchDesk: approval needed for a real Google account (not the demo)",
}


def compose(entry: Entry, *, demo: bool = False) -> Note:
    summary = SUMMARIES[origin(entry.request, demo_app=demo)]
    whole = question_text(entry)
    if len(whole) <= FIT_CHARS and whole.count("\n") + 1 <= FIT_LINES:
        return Note(summary, whole, ((APPROVE, "Approve"), (DENY, "Deny")))
    r = entry.request
    target = f"{r.values[0].label}: {r.values[0].value}" if r.values else ""
    short = "\n".join(x for x in (r.what, target, "Open SearchDesk to review the whole question.") if x)
    return Note(summary, short, ((REVIEW, "Review"), (DENY, "Deny")))


class Backend(QObject):
    """Sends notes; reports ``sent(token, id)``, ``invoked(id, action)`` and ``closed(id)``."""

    sent = Signal(str, int)
    invoked = Signal(int, str)
    closed = Signal(int)

    def send(self, token: str, note: Note) -> None:
        raise NotImplementedError

    def withdraw(self, notification_id: int) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        pass


class DBusBackend(Backend):
    """org.freedesktop.Notifications via jeepney, all calls on one worker thread."""

    def __init__(self, app_name: str = "SearchDesk") -> None:
        super().__init__()
        self.app_name = app_name
        self.available = True
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._router: Any = None
        self._markup = False
        self._actions = True
        self._thread = threading.Thread(target=self._run, name="searchdesk-notify", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            from jeepney import DBusAddress, MatchRule, new_method_call
            from jeepney.io.threading import open_dbus_router

            self._router_cm = open_dbus_router("SESSION")
            self._router = self._router_cm.__enter__()
            self._address = DBusAddress(OBJECT_PATH, bus_name=BUS_NAME, interface=BUS_NAME)
            self._call = new_method_call
            caps = self._call_sync("GetCapabilities", "", ())
            capabilities = set(caps[0]) if caps else set()
            self._markup = "body-markup" in capabilities
            self._actions = "actions" in capabilities
            rule = MatchRule(type="signal", interface=BUS_NAME, path=OBJECT_PATH)
            self._call_bus_match(rule)
            self._signals: queue.Queue[Any] = queue.Queue()
            self._filter = self._router.filter(rule, queue=self._signals, bufsize=64)
            threading.Thread(target=self._pump_signals, name="searchdesk-notify-signals", daemon=True).start()
        except Exception as exc:  # no bus, no server: not an error, the dialog is always shown
            log.info("no desktop notifications (%s: %s)", type(exc).__name__, exc)
            self.available = False
            return
        while True:
            job = self._jobs.get()
            if job is None:
                break
            try:
                job()
            except Exception as exc:
                log.info("a notification could not be sent (%s)", type(exc).__name__)

    def _call_sync(self, method: str, signature: str, body: tuple[Any, ...]) -> tuple[Any, ...]:
        from jeepney import MessageType

        msg = self._call(self._address, method, signature, body)
        reply = self._router.send_and_get_reply(msg, timeout=5)
        if reply.header.message_type == MessageType.error:
            raise RuntimeError("D-Bus error")
        return tuple(reply.body)

    def _call_bus_match(self, rule: Any) -> None:
        from jeepney.bus_messages import message_bus

        self._router.send_and_get_reply(message_bus.AddMatch(rule), timeout=5)

    def _pump_signals(self) -> None:
        while True:
            try:
                msg = self._signals.get()
            except Exception:
                return
            if msg is None:
                return
            member = msg.header.fields.get(3)  # HeaderFields.member
            with contextlib.suppress(Exception):
                if member == "ActionInvoked":
                    self.invoked.emit(int(msg.body[0]), str(msg.body[1]))
                elif member == "NotificationClosed":
                    self.closed.emit(int(msg.body[0]))

    def send(self, token: str, note: Note) -> None:
        def job() -> None:
            body = html.escape(note.body, quote=False) if self._markup else note.body
            actions: list[str] = []
            if self._actions:
                for key, label in note.actions:
                    actions += [key, label]
            hints = {"urgency": ("y", 2), "desktop-entry": ("s", "searchdesk")}
            (nid,) = self._call_sync(
                "Notify", "susssasa{sv}i", (self.app_name, 0, "dialog-warning", note.summary, body, actions, hints, 0)
            )
            self.sent.emit(token, int(nid))

        self._jobs.put(job)

    def withdraw(self, notification_id: int) -> None:
        def job() -> None:
            self._call_sync("CloseNotification", "u", (notification_id,))

        self._jobs.put(job)

    def stop(self) -> None:
        self._jobs.put(None)
        with contextlib.suppress(Exception):
            self._signals.put(None)
        with contextlib.suppress(Exception):
            if self._router is not None:
                self._router_cm.__exit__(None, None, None)


class TrayBackend(Backend):
    """QSystemTrayIcon balloons: no buttons; a click brings the dialog forward."""

    def __init__(self, tray: Any) -> None:
        super().__init__()
        self.tray = tray
        self._last = 0
        tray.messageClicked.connect(lambda: self.invoked.emit(self._last, REVIEW))

    def send(self, token: str, note: Note) -> None:
        from PySide6.QtWidgets import QSystemTrayIcon

        with contextlib.suppress(Exception):
            self._last += 1
            self.tray.showMessage(note.summary, note.body, QSystemTrayIcon.MessageIcon.Warning, 30_000)
            self.sent.emit(token, self._last)

    def withdraw(self, notification_id: int) -> None:
        pass


class ApprovalNotifications(QObject):
    """Keeps one notification per open question, and turns its buttons into answers."""

    def __init__(
        self,
        book: ApprovalBook,
        backend: Backend,
        *,
        review: Callable[[], None],
        demo: bool = False,
    ) -> None:
        super().__init__()
        self.book = book
        self.backend = backend
        self.review = review
        self.demo = demo
        self._by_id: dict[int, tuple[str, tuple[str, ...]]] = {}  # id -> (fingerprint, offered actions)
        self._by_fp: dict[str, int] = {}
        self._sending: dict[str, tuple[str, ...]] = {}
        self._early: dict[int, str] = {}  # clicks that arrived before the id of their notification
        backend.sent.connect(self._sent)
        backend.invoked.connect(self._invoked)
        backend.closed.connect(self._closed)
        book.on_change.append(self._changed)

    def close(self) -> None:
        if self._changed in self.book.on_change:
            self.book.on_change.remove(self._changed)
        for nid in list(self._by_id):
            self.backend.withdraw(nid)
        self.backend.stop()

    def _changed(self, entry: Entry) -> None:
        fp = entry.key
        if entry.state is State.PENDING:
            if fp not in self._by_fp and fp not in self._sending:
                note = compose(entry, demo=self.demo)
                self._sending[fp] = tuple(k for k, _ in note.actions)
                self.backend.send(fp, note)
        else:
            self._sending.pop(fp, None)
            nid = self._by_fp.pop(fp, None)
            if nid is not None:
                self._by_id.pop(nid, None)
                self.backend.withdraw(nid)

    @Slot(str, int)
    def _sent(self, fp: str, nid: int) -> None:
        offered = self._sending.pop(fp, None)
        early = self._early.pop(nid, None)
        if offered is None:  # answered while the notification was on its way
            self.backend.withdraw(nid)
            return
        self._by_fp[fp] = nid
        self._by_id[nid] = (fp, offered)
        if early is not None:  # the click overtook the reply to Notify (two threads): apply it now
            self._invoked(nid, early)

    @Slot(int, str)
    def _invoked(self, nid: int, action: str) -> None:
        known = self._by_id.get(nid)
        if known is None:
            if action == REVIEW:
                self.review()
            elif self._sending:  # a notification of ours is still on its way: this may be its click
                self._early[nid] = action
            return
        fp, offered = known
        if action == "default" or (action == REVIEW and REVIEW in offered):
            self.review()
        elif action == APPROVE and APPROVE in offered:
            self.book.answer(fp, True, "notification")
        elif action == DENY and DENY in offered:
            self.book.answer(fp, False, "notification")

    @Slot(int)
    def _closed(self, nid: int) -> None:
        known = self._by_id.pop(nid, None)
        if known is not None:
            self._by_fp.pop(known[0], None)


def make_backend(tray: Any | None) -> Backend | None:
    if sys.platform.startswith("linux"):
        return DBusBackend()
    if tray is not None:
        return TrayBackend(tray)
    return None
