"""Whether the screen is locked, read when a notification's button press arrives (issue 24).

A notification's Approve must not count while the screen is locked: on some systems a notification's
buttons stay on the lock screen, where anyone at the keyboard can press them. So the press itself asks
the system, at the moment it arrives, and a press while locked is ignored (the question stays open in
the dialog). Asking then, not when the notification is sent, is the point: the lock can start at any
time in between.

- Linux: logind's ``LockedHint`` of this session on the system bus (the ``auto`` session object: the
  caller's session, else the user's display session), else ``org.freedesktop.ScreenSaver.GetActive``
  on the session bus. Each call has a short time limit. Where neither answers, the state is UNKNOWN
  and the press counts: a screen locker holds the keyboard and the pointer, so a press that reaches us
  came from the unlocked desktop; the main window notes once that SearchDesk cannot tell
  (docs/security.md).
- macOS: the system itself delivers an Approve only from an unlocked device (the action is registered
  with ``UNNotificationActionOptionAuthenticationRequired`` in ``notices.notifier_additions``): SYSTEM_CHECKS.
- Windows: the workstation is locked when the input desktop is not ours (``OpenInputDesktop`` fails or
  ``SwitchDesktop`` to it fails, as it does on the Winlogon desktop); unreadable reads as locked there,
  since the check itself never fails on an unlocked desktop.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable
from enum import Enum
from typing import Any

log = logging.getLogger(__name__)

#: Seconds each question to the system may take; a press waits at most about twice this.
TIMEOUT_S = 1.0

LOGIND = "org.freedesktop.login1"
#: logind resolves "auto" to the caller's session, or the user's display session (org.freedesktop.login1(5)).
SESSION_PATH = "/org/freedesktop/login1/session/auto"
SESSION_IFACE = "org.freedesktop.login1.Session"
SCREENSAVER = "org.freedesktop.ScreenSaver"
SCREENSAVER_PATHS = ("/org/freedesktop/ScreenSaver", "/ScreenSaver")  # the spec's path, and KDE's older one


class LockState(Enum):
    LOCKED = "locked"
    UNLOCKED = "unlocked"
    UNKNOWN = "unknown"  # nothing answered: the press counts, and the window says SearchDesk cannot tell
    SYSTEM_CHECKS = "system checks"  # the system delivers the press only from an unlocked device (macOS)


#: The main window's line, once, when a press counted without knowing (no tool or API names: a person reads it).
UNKNOWN_TEXT = (
    "SearchDesk cannot tell whether this screen is locked, so a notification's Approve counts either way; "
    "lock the screen only with a screen locker that hides notifications."
)

#: What reads the state; ``ApprovalNotifications`` takes one (the tests give it a fake system).
LockReader = Callable[[], Awaitable[LockState]]


async def read_lock_state(platform: str = sys.platform, timeout_s: float = TIMEOUT_S) -> LockState:
    """This session's lock state now. Never raises: a system that does not answer is UNKNOWN."""
    try:
        if platform.startswith("linux") or platform.startswith("freebsd"):
            return await _linux(timeout_s)
        if platform == "darwin":
            return LockState.SYSTEM_CHECKS
        if platform == "win32":
            return windows_lock_state()
    except Exception as exc:  # whatever the system did, the answer is "cannot tell"
        log.info("could not read whether the screen is locked (%s)", type(exc).__name__)
    return LockState.UNKNOWN


async def _linux(timeout_s: float) -> LockState:
    from dbus_fast import BusType

    hint = await _ask(
        BusType.SYSTEM,
        LOGIND,
        SESSION_PATH,
        "org.freedesktop.DBus.Properties",
        "Get",
        "ss",
        [SESSION_IFACE, "LockedHint"],
        timeout_s,
    )
    if hint is not None:
        value = getattr(hint, "value", hint)  # a Variant
        if isinstance(value, bool):
            return LockState.LOCKED if value else LockState.UNLOCKED
    for path in SCREENSAVER_PATHS:
        active = await _ask(BusType.SESSION, SCREENSAVER, path, SCREENSAVER, "GetActive", "", [], timeout_s)
        if isinstance(active, bool):
            return LockState.LOCKED if active else LockState.UNLOCKED
    return LockState.UNKNOWN


async def _ask(
    bus_type: Any,
    destination: str,
    path: str,
    interface: str,
    member: str,
    signature: str,
    body: list[Any],
    timeout_s: float,
) -> Any:
    """One method call's first return value, or None (no bus, no such service, an error, no answer)."""
    from dbus_fast import Message, MessageType
    from dbus_fast.aio import MessageBus

    bus: Any = None
    try:
        async with asyncio.timeout(timeout_s):
            bus = await MessageBus(bus_type=bus_type).connect()
            reply = await bus.call(
                Message(
                    destination=destination,
                    path=path,
                    interface=interface,
                    member=member,
                    signature=signature,
                    body=body,
                )
            )
    except Exception as exc:  # each failure only means this source cannot tell
        log.debug("%s %s: %s", destination, member, type(exc).__name__)
        return None
    finally:
        if bus is not None:
            bus.disconnect()
    if reply is None or reply.message_type is not MessageType.METHOD_RETURN or not reply.body:
        return None
    return reply.body[0]


#: OpenInputDesktop's access right that SwitchDesktop needs (WinUser.h).
DESKTOP_SWITCHDESKTOP = 0x0100


def windows_lock_state(user32: Any = None) -> LockState:
    """Windows: locked when the desktop that receives input is not one we may switch to (Winlogon's).

    ``user32`` is the library (``ctypes.WinDLL("user32")``); the tests give a fake.
    """
    if user32 is None:
        import ctypes

        user32 = ctypes.WinDLL("user32", use_last_error=True)  # type: ignore[attr-defined,unused-ignore]
    desktop = user32.OpenInputDesktop(0, False, DESKTOP_SWITCHDESKTOP)
    if not desktop:
        return LockState.LOCKED  # the secure desktop (locked, or a UAC prompt): no press counts then
    try:
        return LockState.UNLOCKED if user32.SwitchDesktop(desktop) else LockState.LOCKED
    finally:
        user32.CloseDesktop(desktop)
