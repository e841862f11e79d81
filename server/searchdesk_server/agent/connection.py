"""One connection of the server's agent client: calls multiplexed over one stream, answers routed by id.

`client.AgentClient` opens it (after the trust checks of `paths`) and re-opens it when it is lost;
`Lost` tells the client whether its request may have left, so a question already shown is never
asked twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
from collections.abc import Mapping
from typing import Any, Final

from . import framing
from .client_errors import AgentProtocolError, AgentTimeout, remote_error
from .framing import AgentError

_READ_CHUNK: Final = 64 * 1024


class Lost(Exception):
    """The connection is gone; `sent` says whether our request may have left."""

    def __init__(self, *, sent: bool) -> None:
        super().__init__("connection lost")
        self.sent = sent


async def open_stream(path: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    if sys.platform == "win32":  # a named pipe, checked by _connect before use; not run on the Linux CI
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2 * framing.MAX_MESSAGE_BYTES)
        stream_protocol = asyncio.StreamReaderProtocol(reader)
        transport, _ = await loop.create_pipe_connection(  # type: ignore[attr-defined]
            lambda: stream_protocol, path
        )
        return reader, asyncio.StreamWriter(transport, stream_protocol, reader, loop)
    return await asyncio.open_unix_connection(path, limit=2 * framing.MAX_MESSAGE_BYTES)


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a future's exception as seen, so an abandoned call does not log 'never retrieved'."""
    if not future.cancelled():
        future.exception()


class Connection:
    """Multiplexes calls over one stream: a lock for writing, a reader task that routes answers by id."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[framing.Response]] = {}
        self._write_lock = asyncio.Lock()
        self._closed = False
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    @property
    def closed(self) -> bool:
        return self._closed

    async def _read_loop(self) -> None:
        failure: AgentError | None = None  # None: the stream simply ended
        buffer = framing.LineBuffer()
        try:
            while not self._closed:
                data = await self._reader.read(_READ_CHUNK)
                if not data:
                    break
                stop = False
                for line in buffer.feed(data):
                    response = framing.parse_response(line)
                    if response.id is None:
                        # Said to the whole connection (BUSY, TOO_LARGE): every waiting call hears it.
                        if response.error is not None:
                            failure = remote_error(response.error)
                        stop = True
                        break
                    future = self._pending.pop(response.id, None) if isinstance(response.id, int) else None
                    if future is not None and not future.done():
                        future.set_result(response)
                if stop:
                    break
        except framing.ProtocolError:
            failure = AgentProtocolError(
                "The SearchDesk app sent something that is not the agent protocol; nothing it sent was used. "
                "Update SearchDesk and the server to the same version."
            )
        except OSError:
            pass
        finally:
            self._closed = True
            for future in self._pending.values():
                if not future.done():
                    future.add_done_callback(_retrieve)
                    future.set_exception(failure if failure is not None else Lost(sent=True))
            self._pending.clear()
            self._writer.close()

    async def call(self, method: str, params: Mapping[str, Any], limit_s: float) -> framing.Response:
        """Send one request and wait for its answer. Raises Lost, AgentTimeout or a listener's failure."""
        if self._closed:
            raise Lost(sent=False)
        request_id = next(self._ids)
        data = framing.encode_request(request_id, method, params)
        future: asyncio.Future[framing.Response] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            async with self._write_lock:
                if self._closed or self._writer.is_closing():
                    raise Lost(sent=False)
                self._writer.write(data)  # from here on the app may have seen it
                try:
                    await self._writer.drain()
                except OSError:
                    raise Lost(sent=True) from None
            try:
                return await asyncio.wait_for(future, limit_s)
            except TimeoutError:
                raise AgentTimeout(f"The SearchDesk app did not answer {method} within {limit_s:g} seconds.") from None
        finally:
            self._pending.pop(request_id, None)

    async def close(self) -> None:
        self._closed = True
        self._task.cancel()
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()
        await asyncio.gather(self._task, return_exceptions=True)
