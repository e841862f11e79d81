"""A fake logind (org.freedesktop.login1) and a fake org.freedesktop.ScreenSaver, each run as a
subprocess on a private bus, and ``FakeLock``, the tests' handle on them.

``python -m tests.desktop.fake_logind logind`` exports a Session object at logind's ``auto`` session
path whose ``LockedHint`` the test flips with a stdin line ``{"locked": true}``; ``screensaver`` exports
``GetActive`` the same way. ``DBUS_SYSTEM_BUS_ADDRESS`` (logind) or ``DBUS_SESSION_BUS_ADDRESS``
(the screensaver) in its environment says which bus it serves. It prints ``{"ready": true}`` once its
name is on the bus and ``{"locked": <bool>}`` after each flip.
"""

import asyncio
import json
import queue
import subprocess
import sys
import threading
from typing import Any

from dbus_fast import BusType, PropertyAccess
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, dbus_property, method

from searchdesk_desktop.approval.screen_lock import LOGIND, SCREENSAVER, SESSION_IFACE, SESSION_PATH


class Session(ServiceInterface):
    def __init__(self) -> None:
        super().__init__(SESSION_IFACE)
        self.locked = False

    @dbus_property(access=PropertyAccess.READ)
    def LockedHint(self) -> "b":  # type: ignore[name-defined]  # noqa: F821 - a D-Bus signature, as dbus-fast reads it
        return self.locked


class ScreenSaver(ServiceInterface):
    def __init__(self) -> None:
        super().__init__(SCREENSAVER)
        self.locked = False

    @method()
    def GetActive(self) -> "b":  # type: ignore[name-defined]  # noqa: F821
        return self.locked


async def serve(kind: str) -> None:
    if kind == "logind":
        bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
        obj: Session | ScreenSaver = Session()
        bus.export(SESSION_PATH, obj)
        await bus.request_name(LOGIND)
    else:
        bus = await MessageBus(bus_type=BusType.SESSION).connect()
        obj = ScreenSaver()
        bus.export("/org/freedesktop/ScreenSaver", obj)
        await bus.request_name(SCREENSAVER)
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str] = asyncio.Queue()

    def read() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line)

    threading.Thread(target=read, daemon=True).start()
    print(json.dumps({"ready": True}), flush=True)
    while True:
        obj.locked = bool(json.loads(await lines.get())["locked"])
        print(json.dumps({"locked": obj.locked}), flush=True)


class FakeLock:
    """The fake service as a child process on the bus ``env`` names."""

    def __init__(self, env: dict[str, str], kind: str = "logind") -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.desktop.fake_logind", kind],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**env, "PYTHONPATH": ":".join(sys.path)},
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        assert self.lines.get(timeout=10) == {"ready": True}

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def set_locked(self, locked: bool) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"locked": locked}) + "\n")
        self.proc.stdin.flush()
        assert self.lines.get(timeout=5) == {"locked": locked}

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1]))
