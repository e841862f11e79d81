"""The same fake Google, in-process: an httpx transport onto the shared backend (no TLS, no proxy).

Misbehaviours carry over: slow bodies sleep between chunks, a reset raises httpx.ReadError mid-body,
and a lying Content-Length is sent as a header that the body does not match.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator

import anyio
import anyio.to_thread
import httpx

from tests.fakegoogle.backend import Backend, FakeRequest, FakeResponse


class _Body(httpx.AsyncByteStream):
    def __init__(self, response: FakeResponse, stop: threading.Event) -> None:
        self._response = response
        self._chunks: Iterator[bytes] = iter(response.chunks)
        self._stop = stop

    async def __aiter__(self) -> AsyncIterator[bytes]:
        sent = 0
        reset_after = self._response.reset_after
        for chunk in self._chunks:
            if self._stop.is_set():
                raise httpx.ReadError("the fake Google was shut down")
            if reset_after is not None and sent + len(chunk) >= reset_after:
                if reset_after > sent:
                    yield chunk[: reset_after - sent]
                raise httpx.ReadError("[Errno 104] Connection reset by peer")
            yield chunk
            sent += len(chunk)
            if self._response.delay:
                await anyio.sleep(self._response.delay)

    async def aclose(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()


class FakeTransport(httpx.AsyncBaseTransport):
    def __init__(self, backend: Backend, stop: threading.Event) -> None:
        self._backend = backend
        self._stop = stop

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        path, _, query = request.url.raw_path.decode("ascii").partition("?")
        fake = FakeRequest(
            method=request.method,
            host=request.url.host,
            path=path,
            query=query,
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
        )
        response = await anyio.to_thread.run_sync(self._backend.handle, fake, "transport")
        headers = list(response.headers)
        if response.framing == "length" and response.content_length is not None:
            headers.append(("content-length", str(response.content_length)))
        return httpx.Response(response.status, headers=headers, stream=_Body(response, self._stop), request=request)
