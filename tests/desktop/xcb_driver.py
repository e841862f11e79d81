"""A process on a real X display for test_dialog_focus.py: the SearchDesk app, or "the other window".

    python xcb_driver.py app SOCKET_PATH   the whole app (demo, no tray) listening at SOCKET_PATH
    python xcb_driver.py editor            a text box: the window the person is typing in

Each reads one JSON command a line on stdin and answers one JSON line on stdout. The test drives
both with real X input (xdotool) through the window manager; these processes only report what their
windows see: which is active, what was typed, where the buttons are, how many clicks and keys reached
the dialog. The app's answers are judged on the agent socket, as a server would see them.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any

from PySide6.QtCore import QEvent, QObject, QRect, QSocketNotifier
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget


def centre(widget: QWidget) -> list[int]:
    point = widget.mapToGlobal(widget.rect().center())
    return [point.x(), point.y()]


def corner(widget: QWidget) -> list[int]:
    point = widget.mapToGlobal(widget.rect().topLeft())
    return [point.x() + 4, point.y() + 4]


def rect(r: QRect) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


class Counter(QObject):
    """Counts the mouse releases and key presses delivered to chosen widgets (their first receiver)."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: dict[str, QObject] = {}
        self.counts: dict[str, int] = {}

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = {QEvent.Type.MouseButtonRelease: "release", QEvent.Type.KeyPress: "key"}.get(event.type())
        if kind is not None:
            for name, target in self.targets.items():
                if watched is target:
                    self.counts[f"{kind}:{name}"] = self.counts.get(f"{kind}:{name}", 0) + 1
        return False


class Control(QObject):
    def __init__(self, handle: Any) -> None:
        super().__init__()
        self._handle = handle
        self._buffer = b""
        os.set_blocking(0, False)
        self._notifier = QSocketNotifier(0, QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._read)

    def _read(self) -> None:
        try:
            chunk = os.read(0, 65536)
        except BlockingIOError:
            return
        if not chunk:
            QApplication.quit()
            return
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            QApplication.sync()  # take in every X event already sent to us before answering
            try:
                answer = self._handle(json.loads(line))
            except Exception:  # said to the test at once, rather than no answer at all
                answer = {"driver_error": traceback.format_exc()}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()


def run_editor(qapp: QApplication) -> int:
    editor = QLineEdit()
    editor.setWindowTitle("editor")
    editor.resize(260, 40)
    editor.move(10, 700)

    def handle(command: dict[str, Any]) -> Any:
        if command["cmd"] == "quit":
            qapp.quit()
        return {"active": editor.isActiveWindow(), "text": editor.text(), "centre": centre(editor)}

    control = Control(handle)
    editor.show()
    editor.activateWindow()
    code = qapp.exec()
    del control
    return code


def run_app(qapp: QApplication, socket_path: str) -> int:
    from searchdesk_desktop.app import DesktopApp
    from searchdesk_desktop.core import Core

    core = Core(demo=True, socket_path=socket_path)
    app = DesktopApp(qapp, core, tray=False)
    counter = Counter()
    qapp.installEventFilter(counter)

    def handle(command: dict[str, Any]) -> Any:
        if command["cmd"] == "quit":
            app.quit()
            return {}
        if command["cmd"] == "arm_delay":  # for the dialogs shown from now on
            app.queue.arm_delay_ms = int(command["ms"])
        dialog = app.queue.dialog
        shown = None
        if dialog is not None:
            counter.targets.update(approve=dialog.approve_button, deny=dialog.deny_button, dialog=dialog)
            shown = {
                "fingerprint": dialog.fingerprint,
                "visible": dialog.isVisible(),
                # Mapped and drawn where the window manager put it: only then can a click reach it.
                "exposed": dialog.windowHandle() is not None and dialog.windowHandle().isExposed(),
                "active": dialog.isActiveWindow(),
                "armed": dialog.armed,
                "approve": centre(dialog.approve_button),
                "deny": centre(dialog.deny_button),
                # A point over the dialog and on no button: the start of its first line.
                "words": corner(dialog.what_label),
                "frame": rect(dialog.frameGeometry()),
            }
        window = app.window
        return {
            "dialog": shown,
            "counts": counter.counts,
            "main_active": window.isActiveWindow(),
            "review": centre(window.approvals.review_button) if window.approvals.review_button.isEnabled() else None,
            "change_my_mind": [centre(button) for _, _, button in window.asked_again_rows],
        }

    control = Control(handle)
    app.start()
    code = qapp.exec()
    app.dispose()
    del control
    return code


def main() -> int:
    qapp = QApplication(sys.argv[:1])
    if sys.argv[1] == "editor":
        return run_editor(qapp)
    return run_app(qapp, sys.argv[2])


if __name__ == "__main__":
    raise SystemExit(main())
