"""A fake org.freedesktop.Notifications server (run as a subprocess on a private session bus).

It prints one JSON line per call it receives and, on a stdin line {"do": "invoke", "id": N,
"action": "approve"}, emits ActionInvoked as a person's click on a notification button would.
"""

from __future__ import annotations

import json
import sys
import threading

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

PATH = "/org/freedesktop/Notifications"
IFACE = "org.freedesktop.Notifications"


def main() -> None:
    conn = open_dbus_connection(bus="SESSION")
    conn.send_and_get_reply(message_bus.RequestName(IFACE))
    lock = threading.Lock()
    emitter = DBusAddress(PATH, interface=IFACE)
    counter = [0]

    def out(obj: object) -> None:
        print(json.dumps(obj), flush=True)

    def commands() -> None:
        for line in sys.stdin:
            cmd = json.loads(line)
            if cmd["do"] == "invoke":
                with lock:
                    conn.send(new_signal(emitter, "ActionInvoked", "us", (cmd["id"], cmd["action"])))

    threading.Thread(target=commands, daemon=True).start()
    out({"ready": True})
    while True:
        msg = conn.receive()
        if msg.header.message_type != MessageType.method_call:
            continue
        member = msg.header.fields.get(HeaderFields.member)
        if member == "GetCapabilities":
            reply = new_method_return(msg, "as", (["actions", "body", "body-markup"],))
        elif member == "Notify":
            counter[0] += 1
            app, _replaces, _icon, summary, body, actions, _hints, _timeout = msg.body
            out({"notify": {"id": counter[0], "app": app, "summary": summary, "body": body, "actions": actions}})
            reply = new_method_return(msg, "u", (counter[0],))
        elif member == "CloseNotification":
            out({"close": msg.body[0]})
            reply = new_method_return(msg, "", ())
        else:
            continue
        with lock:
            conn.send(reply)


if __name__ == "__main__":
    main()
