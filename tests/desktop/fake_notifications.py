"""A fake org.freedesktop.Notifications server (run as a subprocess on a private session bus), and
``FakeServer``, the tests' handle on it.

It prints one JSON line per call it receives and, on a stdin line {"do": "invoke", "id": N,
"action": "approve.<nonce>"}, emits ActionInvoked as a person's click on a notification button would.
{"do": "hang"} (or starting it with ``--hang``) makes it stop answering anything: it keeps the name on
the bus, as a notification service that has locked up does. {"do": "hold"} keeps its answers to Notify
back until {"do": "release"}: a notification still on its way.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

if TYPE_CHECKING:
    from pytestqt.qtbot import QtBot

    from tests.desktop.conftest import PrivateBus

PATH = "/org/freedesktop/Notifications"
IFACE = "org.freedesktop.Notifications"
CAPABILITIES = ["actions", "body", "body-markup"]
# What a real server answers to Introspect (desktop-notifier reads the Notify signature from it).
INTROSPECTION = f"""<node>
 <interface name="{IFACE}">
  <method name="Notify">
   <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
   <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
   <arg type="a{{sv}}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/>
  </method>
  <method name="CloseNotification"><arg type="u" direction="in"/></method>
  <method name="GetCapabilities"><arg type="as" direction="out"/></method>
  <method name="GetServerInformation">
   <arg type="s" direction="out"/><arg type="s" direction="out"/><arg type="s" direction="out"/>
   <arg type="s" direction="out"/>
  </method>
  <signal name="NotificationClosed"><arg type="u"/><arg type="u"/></signal>
  <signal name="ActionInvoked"><arg type="u"/><arg type="s"/></signal>
 </interface>
</node>"""


class FakeServer:
    """The fake server as a child process; what it receives comes back as parsed lines."""

    def __init__(self, bus: PrivateBus, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.desktop.fake_notifications", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**bus.env, "PYTHONPATH": ":".join(sys.path)},
        )
        self.lines: queue.Queue[dict] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        assert self.next(10) == {"ready": True}

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def next(self, timeout: float = 5) -> dict:
        return self.lines.get(timeout=timeout)

    def poll(self, key: str) -> dict | None:
        """The next line's ``key`` part, or None (a line without it is dropped): one step of a wait."""
        try:
            item = self.lines.get_nowait()
        except queue.Empty:
            return None
        return item.get(key)

    def wait_for(self, qtbot: QtBot, key: str) -> dict:
        found: list[dict] = []

        def check() -> bool:
            item = self.poll(key)
            if item is not None:
                found.append(item)
            return item is not None

        qtbot.waitUntil(check, timeout=10_000)
        return found[0]

    def send(self, command: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def click(self, nid: int, action: str) -> None:
        self.send({"do": "invoke", "id": nid, "action": action})

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def key(note: dict, kind: str) -> str:
    """The action key of the notification's button of this kind (``kind.<nonce>``)."""
    keys = note["actions"][::2]
    return next(k for k in keys if k.startswith(kind + "."))


def main() -> None:
    conn = open_dbus_connection(bus="SESSION")
    conn.send_and_get_reply(message_bus.RequestName(IFACE))
    lock = threading.Lock()
    emitter = DBusAddress(PATH, interface=IFACE)
    counter = [0]
    hung = threading.Event()
    if "--hang" in sys.argv:
        hung.set()
    holding = threading.Event()
    held: list[object] = []

    def out(obj: object) -> None:
        print(json.dumps(obj), flush=True)

    def commands() -> None:
        for line in sys.stdin:
            cmd = json.loads(line)
            if cmd["do"] == "invoke":
                with lock:
                    conn.send(new_signal(emitter, "ActionInvoked", "us", (cmd["id"], cmd["action"])))
            elif cmd["do"] == "hang":
                hung.set()
                out({"hung": True})
            elif cmd["do"] == "hold":
                holding.set()
                out({"holding": True})
            elif cmd["do"] == "release":
                with lock:
                    holding.clear()
                    for reply in held:
                        conn.send(reply)
                    held.clear()

    threading.Thread(target=commands, daemon=True).start()
    out({"ready": True})
    while True:
        msg = conn.receive()
        if msg.header.message_type != MessageType.method_call:
            continue
        member = msg.header.fields.get(HeaderFields.member)
        if hung.is_set():
            out({"ignored": member})
            continue
        closed = None
        if member == "Introspect":
            reply = new_method_return(msg, "s", (INTROSPECTION,))
        elif member == "GetCapabilities":
            reply = new_method_return(msg, "as", (CAPABILITIES,))
        elif member == "GetServerInformation":
            reply = new_method_return(msg, "ssss", ("fake", "searchdesk-tests", "1", "1.2"))
        elif member == "Notify":
            counter[0] += 1
            app, _replaces, icon, summary, body, actions, hints, _timeout = msg.body
            urgency = hints.get("urgency", ("y", None))[1]
            note = {"id": counter[0], "app": app, "icon": icon, "summary": summary, "body": body}
            out({"notify": {**note, "actions": actions, "urgency": urgency}})
            reply = new_method_return(msg, "u", (counter[0],))
        elif member == "CloseNotification":
            out({"close": msg.body[0]})
            reply = new_method_return(msg, "", ())
            closed = msg.body[0]
        else:
            continue
        with lock:
            if member == "Notify" and holding.is_set():
                held.append(reply)
                continue
            conn.send(reply)
            if closed is not None:  # 3: closed by a call to CloseNotification (the spec's reason code)
                conn.send(new_signal(emitter, "NotificationClosed", "uu", (closed, 3)))


if __name__ == "__main__":
    main()
