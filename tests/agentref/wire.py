"""A raw client for poking a listener byte by byte (the conformance suite's probe)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

READ_TIMEOUT = 5.0


class Raw:
    """One connection; sends whatever bytes a test wants, reads answers one line at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._next_id = 0

    @classmethod
    async def open(cls, path: str) -> Raw:
        reader, writer = await asyncio.open_unix_connection(path, limit=1 << 20)
        return cls(reader, writer)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def send_obj(self, obj: Any) -> None:
        """As real UTF-8 where it can be (as the server sends); a lone surrogate goes as its \\u escape."""
        try:
            data = json.dumps(obj, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            data = json.dumps(obj).encode()
        await self.send(data + b"\n")

    async def read(self, timeout: float = READ_TIMEOUT) -> dict[str, Any] | None:
        """The next message, or None at end of stream (a reset counts as the end)."""
        try:
            line = await asyncio.wait_for(self.reader.readline(), timeout)
        except (ConnectionError, OSError):
            return None
        if not line:
            return None
        message = json.loads(line)
        assert isinstance(message, dict), message
        return message

    async def read_until_eof(self, timeout: float = READ_TIMEOUT) -> list[dict[str, Any]]:
        """Every message until the listener closes; raises TimeoutError if it never does."""
        messages = []
        while (message := await self.read(timeout)) is not None:
            messages.append(message)
        return messages

    async def call(self, method: str, params: Any = None, *, timeout: float = READ_TIMEOUT) -> dict[str, Any]:
        """One request, its answer (the whole response object: check "result" or "error")."""
        self._next_id += 1
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            request["params"] = params
        await self.send_obj(request)
        answer = await self.read(timeout)
        assert answer is not None, f"the listener closed instead of answering {method}"
        assert answer.get("id") == self._next_id, answer
        return answer

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await self.writer.wait_closed()

    async def __aenter__(self) -> Raw:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def error_code(message: dict[str, Any] | None) -> int | None:
    if message is None or "error" not in message:
        return None
    code = message["error"].get("code")
    return code if isinstance(code, int) else None
