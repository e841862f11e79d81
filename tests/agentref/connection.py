"""One connection of the reference agent: reads lines, answers each request in its own task.

The agent's side of the framing (message size, a line that never ends, requests in flight) is here;
what each method answers is the agent's (`Answerer`, which `ReferenceAgent` is).
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from searchdesk_server.agent import protocol
from searchdesk_server.agent.protocol import ErrorCode


class Refusal(Exception):
    """An application-level JSON-RPC error."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data


class Answerer(Protocol):
    """What a connection needs of its agent."""

    line_timeout: float
    max_in_flight: int

    def record(self, method: str, params: Any, conn_id: int) -> None: ...

    def should_drop(self, method: str) -> bool: ...

    async def handle(self, method: str, params: Any) -> dict[str, Any]: ...


class Connection:
    """Reads lines, answers each request in its own task (a pending approval never blocks a token)."""

    def __init__(
        self, agent: Answerer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, conn_id: int
    ) -> None:
        self.agent = agent
        self.reader = reader
        self.writer = writer
        self.id = conn_id
        self.tasks: set[asyncio.Task[None]] = set()
        self.lock = asyncio.Lock()
        self.aborted = False

    def abort(self) -> None:
        self.aborted = True
        self.writer.transport.abort()
        for task in self.tasks:
            task.cancel()

    async def send(self, data: bytes) -> None:
        if self.aborted:
            return
        async with self.lock:
            try:
                self.writer.write(data)
                await self.writer.drain()
            except (ConnectionError, OSError):
                self.aborted = True

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        buffer = protocol.LineBuffer()
        line_started: float | None = None
        try:
            while not self.aborted:
                timeout = (
                    None if line_started is None else max(0.0, line_started + self.agent.line_timeout - loop.time())
                )
                try:
                    data = await asyncio.wait_for(self.reader.read(64 * 1024), timeout)
                except TimeoutError:
                    await self.send(protocol.encode_error(None, ErrorCode.INVALID_REQUEST, "The line took too long."))
                    break
                except (ConnectionError, OSError):
                    break
                if not data:
                    if self.tasks:  # half-closed: finish what was asked, then close
                        await asyncio.wait(self.tasks)
                    break
                try:
                    lines = buffer.feed(data)
                except protocol.ProtocolError as err:
                    await self.send(protocol.encode_error(None, err.code or ErrorCode.TOO_LARGE, str(err)))
                    break
                if not buffer.pending:
                    line_started = None
                elif lines or line_started is None:
                    line_started = loop.time()
                for line in lines:
                    await self._take(line)
        finally:
            for task in self.tasks:
                task.cancel()
            self.writer.close()

    async def _take(self, line: bytes) -> None:
        try:
            request = protocol.parse_request(line)
        except protocol.ProtocolError as err:
            await self.send(protocol.encode_error(err.request_id, err.code or ErrorCode.INVALID_REQUEST, str(err)))
            return
        if request.is_notification:
            return  # JSON-RPC: never answer a notification; none of ours is one, so nothing happens
        self.agent.record(request.method, request.params, self.id)
        if len(self.tasks) >= self.agent.max_in_flight:
            await self.send(protocol.encode_error(request.id, ErrorCode.BUSY, "Too many requests in flight."))
            return
        task = asyncio.get_running_loop().create_task(self._dispatch(request))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _dispatch(self, request: protocol.Request) -> None:
        try:
            params = protocol.parse_params(request)
            if self.agent.should_drop(request.method):
                self.abort()
                return
            result = await self.agent.handle(request.method, params)
            await self.send(protocol.encode_result(request.id, result))
        except protocol.ProtocolError as err:
            await self.send(protocol.encode_error(request.id, err.code or ErrorCode.INTERNAL_ERROR, str(err)))
        except Refusal as err:
            await self.send(protocol.encode_error(request.id, err.code, str(err), err.data))
        except asyncio.CancelledError:
            raise
        except Exception:
            await self.send(protocol.encode_error(request.id, ErrorCode.INTERNAL_ERROR, "The agent failed."))
