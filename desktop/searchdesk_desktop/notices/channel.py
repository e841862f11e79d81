"""The app's notification channel: how a notice reaches the system's notifications, whatever it is about.

One layer for the three systems, on desktop-notifier: Linux ``org.freedesktop.Notifications`` over
dbus-fast, macOS ``UNUserNotificationCenter``, Windows toasts. Its API is asyncio, run inside the Qt
event loop by qasync (started once, in ``app.run``); the rest of the app only sees Qt signals. Every
call to the notification service has a time limit, so a service that never answers holds up nothing.
Where desktop-notifier finds no notification service, ``QSystemTrayIcon.showMessage`` stands in (no
buttons; a click is reported as ``CLICK``); with no tray either, nothing is shown.

A channel sends a ``Note`` under a nonce of the sender's choosing, as the notification's identifier and
inside each button's key (``<kind>.<nonce>``), and reports ``shown(nonce)`` and ``pressed(nonce, key)``;
what a press means is the sender's business (the approval notifications: ``approval.notification_question``).
``notifier_additions`` adds what desktop-notifier does not expose (an Approve button's protection, a subtitle).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import sys
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from ..icons import RESOURCES

log = logging.getLogger(__name__)

#: The name the notification service shows: the Linux .desktop file's Name, and on Windows the
#: AppUserModelID desktop-notifier registers (HKCU\Software\Classes\AppUserModelId\SearchDesk).
APP_NAME = "SearchDesk"
CLICK = "default"  # the notification itself was clicked, not a button
#: Seconds any one call to the notification service may take before we stop waiting for it.
TIMEOUT_S = 5.0
#: Seconds a quitting app gives the service to take its notifications back.
QUIT_WAIT_S = 2.0
#: desktop-notifier 6.2.0 on macOS registers one notification category per set of button titles,
#: with the button keys of the first notification that used them; later notifications with the same
#: titles report those keys. There the notification's own identifier (the nonce) is the binding.
BUTTON_KEYS_REUSED = sys.platform == "darwin"


@dataclass(frozen=True)
class Note:
    """One notification as a channel sends it."""

    summary: str  # the title as shown
    body: str
    actions: tuple[str, ...]  # each button's kind, in the order shown (its key: ``<kind>.<nonce>``)
    subtitle: str = ""  # a subtitle line of its own (macOS); elsewhere the sender puts it in the body
    labels: tuple[str, ...] = ()  # the words on each button, in the order of ``actions``

    def buttons(self) -> tuple[tuple[str, str], ...]:
        """(kind, words) for each button, in the order shown."""
        return tuple(zip(self.actions, self.labels, strict=True))


def refused_text(platform: str = sys.platform) -> str:
    """One line for the main window when the person has turned SearchDesk's notifications off."""
    where = "System Settings > Notifications" if platform == "darwin" else "Settings > System > Notifications"
    return f"Notifications are off for SearchDesk (questions still open in a window); to turn them on: {where}."


class Channel(QObject):
    """Where notes go. ``shown(nonce)`` once one is on screen; ``pressed(nonce, key)`` for a press."""

    shown = Signal(str)
    pressed = Signal(str, str)

    def send(self, nonce: str, note: Note) -> None:
        raise NotImplementedError

    def withdraw(self, nonce: str) -> None:
        raise NotImplementedError

    async def finish(self) -> None:
        """Withdraw what is still on screen and stop (the app is quitting)."""


class TrayBalloons(Channel):
    """QSystemTrayIcon.showMessage: no buttons; a click is reported as ``CLICK``."""

    def __init__(self, tray: Any) -> None:
        super().__init__()
        self.tray = tray
        self._last = ""
        tray.messageClicked.connect(lambda: self.pressed.emit(self._last, CLICK))

    def send(self, nonce: str, note: Note) -> None:
        from PySide6.QtWidgets import QSystemTrayIcon

        self._last = nonce
        self.tray.showMessage(note.summary, note.body, QSystemTrayIcon.MessageIcon.Warning, 30_000)
        self.shown.emit(nonce)

    def withdraw(self, nonce: str) -> None:
        pass  # a balloon cannot be taken back; a click on a stale one only brings the dialog forward


class SystemNotifications(Channel):
    """desktop-notifier in the running asyncio loop. ``state``: starting, ready, refused or none.

    Sends wait until the service has said what it can do; if there is none (no bus, no server, no
    answer in time, no asyncio loop), they go to ``fallback``.
    """

    state_changed = Signal()

    def __init__(self, fallback: Channel | None = None, *, timeout_s: float = TIMEOUT_S) -> None:
        super().__init__()
        self.fallback = fallback
        self.timeout_s = timeout_s
        self.state = "starting"
        self._notifier: Any = None
        self._buttons = False
        self._markup = False
        self._ready: asyncio.Future[bool] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._on_screen: set[str] = set()
        if fallback is not None:
            fallback.shown.connect(self.shown)
            fallback.pressed.connect(self.pressed)
        QTimer.singleShot(0, self, self._begin)  # once the loop runs

    def _begin(self) -> None:
        if self._ready is not None or self.state != "starting":
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._set_state("none", "no asyncio loop runs in the Qt thread")
            return
        self._ready = loop.create_task(self._start())

    async def _start(self) -> bool:
        try:
            async with asyncio.timeout(self.timeout_s):
                return await self._connect()
        except Exception as exc:  # no bus, no server, no answer: not an error, the dialog is always shown
            self._set_state("none", f"{type(exc).__name__}: {exc}")
            return False

    async def _connect(self) -> bool:
        from desktop_notifier import Capability, DesktopNotifier, Icon

        from . import notifier_additions

        notifier = DesktopNotifier(app_name=APP_NAME, app_icon=Icon(path=RESOURCES / "searchdesk-128.png"))
        notifier_additions.install(notifier)  # macOS: Approve unlocked-only and destructive; Windows: critical
        notifier.on_dispatched = self.shown.emit
        notifier.on_clicked = lambda nonce: self.pressed.emit(nonce, CLICK)
        notifier.on_button_pressed = self.pressed.emit
        capabilities = await notifier.get_capabilities()
        if not capabilities:  # desktop-notifier's stand-in: an unsigned macOS build, an old Windows
            self._set_state("none", "desktop-notifier found no notification service")
            return False
        allowed = await notifier.request_authorisation()  # macOS asks the person the first time
        self._notifier = notifier
        self._buttons = Capability.BUTTONS in capabilities
        self._markup = sys.platform.startswith("linux") and await _server_does_markup()
        self._set_state("ready" if allowed else "refused", "")
        return True

    def _set_state(self, state: str, why: str) -> None:
        self.state = state
        if state == "none":
            log.info("no system notifications (%s)%s", why, "; tray balloons instead" if self.fallback else "")
        elif state == "refused":
            log.info("system notifications are turned off for SearchDesk")
        else:
            log.info("system notifications ready")
        self.state_changed.emit()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        try:
            task = asyncio.get_running_loop().create_task(coro)
        except RuntimeError:  # no loop: nothing can be sent (the fallback is synchronous)
            coro.close()
            return
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _available(self) -> bool:
        self._begin()  # a question that came before the first turn of the loop
        return self._ready is not None and await asyncio.shield(self._ready)

    def send(self, nonce: str, note: Note) -> None:
        if self.state == "none":
            if self.fallback is not None:
                self.fallback.send(nonce, note)
            return
        self._on_screen.add(nonce)  # from now on: withdrawing it must reach the service
        self._spawn(self._send(nonce, note))

    async def _send(self, nonce: str, note: Note) -> None:
        if not await self._available():
            self._on_screen.discard(nonce)
            if self.fallback is not None:
                self.fallback.send(nonce, note)
            return
        if nonce not in self._on_screen:
            return  # withdrawn while the service was still starting
        from desktop_notifier import Button, Notification, Urgency

        from . import notifier_additions

        buttons = (
            tuple(Button(words, identifier=f"{k}.{nonce}") for k, words in note.buttons()) if self._buttons else ()
        )
        body = html.escape(note.body, quote=False) if self._markup else note.body
        urgency = Urgency.Critical if sys.platform.startswith("linux") else Urgency.Normal
        notification = Notification(note.summary, body, urgency=urgency, buttons=buttons, identifier=nonce)
        try:
            async with asyncio.timeout(self.timeout_s):
                with notifier_additions.subtitle(note.subtitle):  # macOS: a line of its own (notifier_additions)
                    await self._notifier.send_notification(notification)  # logs, never raises, when it fails
        except TimeoutError:
            log.info("the notification service did not answer in %.0f s", self.timeout_s)
            return
        if nonce not in self._on_screen:
            await self._clear(nonce)  # withdrawn while it was on its way

    def withdraw(self, nonce: str) -> None:
        if nonce in self._on_screen:
            self._on_screen.discard(nonce)
            self._spawn(self._clear(nonce))
        elif self.fallback is not None:
            self.fallback.withdraw(nonce)

    async def _clear(self, nonce: str) -> None:
        with contextlib.suppress(Exception):  # already gone (pressed, closed, expired), or no answer in time
            async with asyncio.timeout(self.timeout_s):
                await self._notifier.clear(nonce)

    async def finish(self) -> None:
        if self._ready is not None and not self._ready.done():
            self._ready.cancel()  # the service never answered: nothing of ours is on screen
        for nonce in list(self._on_screen):
            self.withdraw(nonce)
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=QUIT_WAIT_S)
        for task in self._tasks:
            task.cancel()


async def _server_does_markup() -> bool:
    """Whether the Linux notification server reads the body as markup (then values are escaped)."""
    from dbus_fast import Message, MessageType
    from dbus_fast.aio import MessageBus

    bus = await MessageBus().connect()
    try:
        iface = "org.freedesktop.Notifications"
        call = Message(
            destination=iface, path="/org/freedesktop/Notifications", interface=iface, member="GetCapabilities"
        )
        reply = await bus.call(call)
        return reply is not None and reply.message_type is MessageType.METHOD_RETURN and "body-markup" in reply.body[0]
    finally:
        bus.disconnect()
