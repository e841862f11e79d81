"""One app per user: a second launch asks the first to come forward, then exits.

A QLocalServer on its own name (not the agent socket): in the trusted runtime folder on Linux/macOS,
a per-user named pipe on Windows. It understands two one-line messages: ``show`` (a second launch)
and ``quit`` (``searchdesk --uninstall-cleanup``, before the files go).
"""

from __future__ import annotations

import getpass
import os
import re
import sys
import time

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

SHOW = b"show\n"
QUIT = b"quit\n"


def instance_name() -> str:
    if sys.platform == "win32":
        user = re.sub(r"[^A-Za-z0-9._-]", "_", getpass.getuser())[:64]
        return f"searchdesk-app-{user}"
    from searchdesk_server.agent import paths

    folder = paths.runtime_folder()
    paths.ensure_folder(folder)
    return os.path.join(folder, "app.sock")


class SingleInstance(QObject):
    """``claim()`` is True for the first instance; later launches make it emit ``activated``."""

    activated = Signal()
    quit_requested = Signal()

    def __init__(self, name: str | None = None) -> None:
        super().__init__()
        self.name = name or instance_name()
        self._server: QLocalServer | None = None

    def claim(self) -> bool:
        probe = QLocalSocket(self)
        probe.connectToServer(self.name)
        try:
            if probe.waitForConnected(500):
                probe.write(SHOW)
                probe.waitForBytesWritten(500)
                probe.disconnectFromServer()
                return False
        finally:
            probe.abort()
            probe.deleteLater()
        QLocalServer.removeServer(self.name)  # nobody answered: a leftover from a crash
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        server.newConnection.connect(self._incoming)
        if not server.listen(self.name):
            return True  # could not guard, but nobody else answers either: run
        self._server = server
        return True

    def _incoming(self) -> None:
        assert self._server is not None
        while self._server.hasPendingConnections():
            sock = self._server.nextPendingConnection()  # owned by the server: deleted with it
            arrived = sock.bytesAvailable() > 0 or sock.waitForReadyRead(200)
            message = bytes(sock.readAll().data()) if arrived else b""
            sock.abort()
            if message.startswith(SHOW.strip()):
                self.activated.emit()
            elif message.startswith(QUIT.strip()):
                self.quit_requested.emit()

    def release(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server.deleteLater()
            self._server = None


def ask_to_quit(name: str | None = None, timeout: float = 5.0) -> bool:
    """Ask a running app to quit; True once it has (its channel stops answering), False if none ran.

    Raises TimeoutError when it is still answering after ``timeout`` seconds.
    """
    name = name or instance_name()
    if not _send(name, QUIT):
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _answers(name):
            return True
        time.sleep(0.05)
    raise TimeoutError("the running SearchDesk did not quit")


def _send(name: str, message: bytes) -> bool:
    sock = QLocalSocket()
    try:
        sock.connectToServer(name)
        if not sock.waitForConnected(500):
            return False
        sock.write(message)
        sock.waitForBytesWritten(500)
        sock.disconnectFromServer()
        return True
    finally:
        sock.abort()
        sock.deleteLater()


def _answers(name: str) -> bool:
    sock = QLocalSocket()
    try:
        sock.connectToServer(name)
        return bool(sock.waitForConnected(200))
    finally:
        sock.abort()
        sock.deleteLater()
