"""Import desktop-notifier's backend for this system, put our layer on it, and send one notification.

    python packaging/smoke_notifier.py        # in the venv; exit 0 when it was sent (or could not be, and says why)

Why: the notification layer's tests (tests/desktop/approval/test_notifier_additions.py) fake the systems at their
boundary, so only a run on the real system shows that desktop-notifier's backend imports there (rubicon's
Objective-C bridge, the winrt projections), that notifier_additions.install recognises it, and that a send
goes through. ci.yml runs this on macOS and Windows after the suites.

- Windows: WinRTDesktopNotifier from a plain interpreter (desktop-notifier registers the AppUserModelID
  itself); the send is real.
- macOS: the Notification Center serves only an app bundle, so from the venv desktop-notifier picks its
  dummy backend; the real backend module is imported and its Objective-C classes resolved here, and the
  send happens when this runs inside a bundle (the frozen, signed app).
- Linux: sent when a session bus is there (tests/desktop/approval/test_notice_channel.py covers it with a fake server).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from typing import Any

EXPECTED = {"win32": "WinRTDesktopNotifier", "darwin": "CocoaNotificationCenter", "linux": "DBusDesktopNotifier"}


def system() -> str:
    return "linux" if sys.platform.startswith("linux") else sys.platform


def check_macos_backend() -> None:
    """Outside a bundle: the backend module imports and the UserNotifications classes resolve."""
    module: Any = importlib.import_module("desktop_notifier.backends.macos")
    for name in ("UNUserNotificationCenter", "UNMutableNotificationContent", "UNNotificationAction"):
        if getattr(module, name, None) is None:
            raise SystemExit(f"smoke_notifier: desktop-notifier's macOS backend has no {name}")
    print("macOS: the Notification Center backend imports; sending needs a signed app bundle (not this venv)")


async def send() -> int:
    from desktop_notifier import DesktopNotifier, Icon

    from searchdesk_desktop.notices import notifier_additions
    from searchdesk_desktop.notices.channel import APP_NAME, RESOURCES

    notifier = DesktopNotifier(app_name=APP_NAME, app_icon=Icon(path=RESOURCES / "searchdesk-128.png"))
    notifier_additions.install(notifier)
    backend = type(notifier._backend).__name__
    print(f"backend: {type(notifier._backend).__module__}.{backend}")
    wanted = EXPECTED.get(system())
    if system() == "darwin" and backend == "DummyNotificationCenter":
        check_macos_backend()
        return 0
    if system() == "linux" and not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        print(
            "Linux: no session bus here; tests/desktop/approval/test_notice_channel.py sends to a fake "
            "notification server"
        )
        return 0
    if backend != wanted:
        print(f"smoke_notifier: expected {wanted} on {sys.platform}, got {backend}", file=sys.stderr)
        return 1
    with notifier_additions.subtitle("Smoke test"):
        sent = await notifier.send(title="SearchDesk", message="A test notification from SearchDesk's CI.")
    print(f"sent: notification {sent}")
    return 0


def main() -> int:
    return asyncio.run(send())


if __name__ == "__main__":
    raise SystemExit(main())
