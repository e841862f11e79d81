"""The agent socket below the methods: where connections come in, and one connection's bytes and lines.

The listener (``listener.AgentListener``) answers the methods; this module holds the rest. On Unix
``UnixDoor`` accepts on the socket the listener bound, refuses a peer of another user and keeps the
socket at its path. A transport moves bytes: on Unix ``UnixTransport`` drives the raw
descriptor with ``QSocketNotifier`` (QLocalSocket treats a half-closed connection as gone and drops
answers still to be written, and the listener needs the descriptor for the peer's user id); on Windows
``QtTransport`` wraps the QLocalSocket a named-pipe instance was handed to (not run on the Linux CI).
A ``Connection`` cuts the bytes into lines (``framing.LineBuffer``), refuses a line over the limit or
one that never finishes, and counts the requests still being answered, so that a half-closed
connection is closed only once they are.

No read waits and every write is buffered, up to ``MAX_WRITE_BUFFER``: a client that does not read
its answers is dropped rather than allowed to hold the app's memory.
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier, QTimer
from PySide6.QtNetwork import QLocalSocket

from searchdesk_server.agent import paths
from searchdesk_server.agent.framing import ErrorCode, LineBuffer, ProtocolError, encode_error

log = logging.getLogger("searchdesk_desktop.agent_socket.listener")  # its lines read as the listener's, as before

MAX_WRITE_BUFFER = 1024 * 1024  # a client that does not read its answers is dropped


class UnixDoor:
    """Unix: where connections come in. It accepts on the bound socket, refuses a peer of another user
    (``paths.trusted_peer``) and hands each other one to `on_peer`; every ``paths.KEEP_EVERY_S`` it
    checks that the path still names our socket and listens there again when a cleaner removed it or
    its folder (``paths.Keeper``); connections already open go on."""

    def __init__(
        self, bound: paths.Bound, backlog: int, parent: QObject, on_peer: Callable[[socket.socket], None]
    ) -> None:
        self._parent = parent
        self._on_peer = on_peer
        self._keeper = paths.Keeper(bound, backlog)
        self._accepting: QSocketNotifier | None = None
        self._kept = paths.Kept.HELD
        self._serve(bound)
        self._keep_timer = QTimer(parent)
        self._keep_timer.timeout.connect(self._keep)
        self._keep_timer.start(int(paths.KEEP_EVERY_S * 1000))

    @property
    def holds(self) -> bool:
        """Whether the path still names our socket."""
        return paths.holds(self._keeper.bound)

    def close(self) -> None:
        """Stop accepting and keeping; the file goes only if the path still names ours."""
        self._keep_timer.stop()
        self._keep_timer.deleteLater()
        self._stop_accepting()
        paths.release(self._keeper.bound)

    def _serve(self, bound: paths.Bound) -> None:
        """Accept on `bound` from now on."""
        self._accepting = QSocketNotifier(bound.sock.fileno(), QSocketNotifier.Type.Read, self._parent)
        self._accepting.activated.connect(self._accept_ready)

    def _stop_accepting(self) -> None:
        if self._accepting is not None:
            self._accepting.setEnabled(False)  # before its descriptor closes
            self._accepting.deleteLater()
            self._accepting = None

    def _accept_ready(self) -> None:
        for _ in range(64):  # bounded: the notifier fires again while more are waiting
            try:
                sock, _address = self._keeper.bound.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError:  # out of descriptors, say: pause until the next check of the socket
                if self._accepting is not None:
                    self._accepting.setEnabled(False)
                return
            if not paths.trusted_peer(sock):
                log.warning("refused a connection from another user")
                sock.close()
                continue
            self._on_peer(sock)

    def _keep(self) -> None:
        """Every KEEP_EVERY_S: our socket still at its path, else listening there again (paths.Keeper)."""
        keeper = self._keeper
        old = keeper.bound
        kept = keeper.check()
        if kept is paths.Kept.RESTORED:
            self._stop_accepting()
            paths.release(old)  # the path names the new socket: only the old descriptor closes
            self._serve(keeper.bound)
            log.warning("the agent socket was removed while SearchDesk ran; listening again at the same place")
        elif self._accepting is not None:
            self._accepting.setEnabled(True)  # after a pause for want of descriptors
        if kept is not self._kept and kept is paths.Kept.TAKEN:
            log.warning("another program listens at the agent socket's place now; SearchDesk leaves it alone")
        elif kept is not self._kept and kept is paths.Kept.BLOCKED:
            log.warning(
                "the agent socket was removed, and its place now holds something SearchDesk did not make "
                "(or its folder fails the checks); SearchDesk listens there again once that is gone"
            )
        self._kept = kept


class Transport:
    """A connection's bytes: ``on_data(bytes)``, ``on_eof()``; ``send``, ``close``."""

    def __init__(self) -> None:
        self.on_data: Callable[[bytes], None] = lambda data: None
        self.on_eof: Callable[[], None] = lambda: None
        self.on_closed: Callable[[], None] = lambda: None
        self.closed = False

    def send(self, data: bytes) -> None:
        raise NotImplementedError

    def close_after_flush(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    @property
    def unsent(self) -> int:
        return 0


class UnixTransport(Transport):
    def __init__(self, sock: socket.socket, parent: QObject) -> None:
        super().__init__()
        self.sock = sock
        sock.setblocking(False)
        self._out = bytearray()
        self._closing = False
        # Parented: Qt owns them, so a garbage collection in another thread never deletes them.
        self._reader = QSocketNotifier(sock.fileno(), QSocketNotifier.Type.Read, parent)
        self._writer = QSocketNotifier(sock.fileno(), QSocketNotifier.Type.Write, parent)
        self._writer.setEnabled(False)
        self._reader.activated.connect(self._readable)
        self._writer.activated.connect(self._writable)

    @property
    def unsent(self) -> int:
        return len(self._out)

    def _readable(self) -> None:
        for _ in range(16):  # bounded: let other connections have their turn
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.close()
                return
            if not data:
                self._reader.setEnabled(False)
                self.on_eof()
                return
            self.on_data(data)
            if self.closed:
                return

    def send(self, data: bytes) -> None:
        if self.closed:
            return
        self._out += data
        if len(self._out) > MAX_WRITE_BUFFER:
            self.close()
            return
        self._writable()

    def _writable(self) -> None:
        while self._out and not self.closed:
            try:
                sent = self.sock.send(self._out)
            except (BlockingIOError, InterruptedError):
                self._writer.setEnabled(True)
                return
            except OSError:
                self.close()
                return
            del self._out[:sent]
        self._writer.setEnabled(False)
        if self._closing:
            self.close()

    def close_after_flush(self) -> None:
        self._closing = True
        self._reader.setEnabled(False)
        if not self._out:
            self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._reader.setEnabled(False)
        self._writer.setEnabled(False)
        self._reader.deleteLater()
        self._writer.deleteLater()
        with contextlib.suppress(OSError):
            self.sock.close()
        self.on_closed()


class QtTransport(Transport):
    """Windows named pipes (the pipe's owner and DACL are this user alone)."""

    def __init__(self, sock: QLocalSocket) -> None:
        super().__init__()
        self.sock = sock
        self._closing = False
        sock.readyRead.connect(self._readable)
        sock.disconnected.connect(self.close)
        sock.bytesWritten.connect(self._written)

    @property
    def unsent(self) -> int:
        return int(self.sock.bytesToWrite())

    def _readable(self) -> None:
        self.on_data(bytes(self.sock.readAll().data()))

    def send(self, data: bytes) -> None:
        if not self.closed:
            self.sock.write(data)
            if self.sock.bytesToWrite() > MAX_WRITE_BUFFER:
                self.close()

    def _written(self, _n: int) -> None:
        if self._closing and self.sock.bytesToWrite() == 0:
            self.close()

    def close_after_flush(self) -> None:
        self._closing = True
        if self.sock.bytesToWrite() == 0:
            self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.sock.abort()
        self.sock.deleteLater()
        self.on_closed()


class Connection:
    """One client: its lines go to `on_line`, and `on_gone` hears when its transport closed.

    `partial_line_ms` bounds how long a started line may take to arrive (a slow-loris client is
    answered INVALID_REQUEST and closed); its timer is parented to `parent`, on the Qt thread."""

    def __init__(
        self,
        transport: Transport,
        number: int,
        *,
        parent: QObject,
        partial_line_ms: int,
        on_line: Callable[[Connection, bytes], None],
        on_gone: Callable[[Connection], None],
    ) -> None:
        self.transport = transport
        self.number = number
        self.buffer = LineBuffer()
        self.in_flight = 0
        self.eof = False
        self._on_line = on_line
        self.partial_timer = QTimer(parent)
        self.partial_timer.setSingleShot(True)
        self.partial_timer.setInterval(partial_line_ms)
        self.partial_timer.timeout.connect(self.line_too_slow)
        transport.on_data = self.data
        transport.on_eof = self.end_of_input
        transport.on_closed = lambda: on_gone(self)

    @property
    def open(self) -> bool:
        return not self.transport.closed

    def data(self, chunk: bytes) -> None:
        try:
            lines = self.buffer.feed(chunk)
        except ProtocolError as err:
            log.info("connection %d: message over the size limit; closing", self.number)
            self.send(encode_error(None, err.code or ErrorCode.TOO_LARGE, str(err)))
            self.transport.close_after_flush()
            return
        for line in lines:
            if not self.open:
                return
            self._on_line(self, line)
        if self.buffer.pending:
            if not self.partial_timer.isActive():
                self.partial_timer.start()
        else:
            self.partial_timer.stop()

    def line_too_slow(self) -> None:
        self.send(encode_error(None, ErrorCode.INVALID_REQUEST, "The line took too long to arrive."))
        self.transport.close_after_flush()

    def end_of_input(self) -> None:
        """Half-closed (or closed) by the client: answer what is in flight, then close."""
        self.eof = True
        self.partial_timer.stop()
        self.maybe_finish()

    def maybe_finish(self) -> None:
        if self.eof and self.in_flight == 0 and self.open:
            self.transport.close_after_flush()

    def send(self, data: bytes) -> None:
        self.transport.send(data)
