"""One request to Google, under the rules that hold for every request.

Only Google's own API hosts, no redirect followed, the status decided before any body is read, byte
ceilings enforced while streaming (a compressed body inflated in steps, never past its ceiling), and a
network failure described by its kind in words a person can act on. The retries around it are in
`attempts.py`; the client the tools use, in `http.py`.

This module imports httpx at the top; nothing on the server's start-up path imports it.
"""

from __future__ import annotations

import email.utils
import re
import ssl
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import IntEnum
from typing import Any

import anyio
import httpx

from searchdesk_server import __version__
from searchdesk_server.google.errors import ErrorKind, GoogleError

__all__ = [
    "ALLOWED_HOSTS",
    "DEFAULT_POLICY",
    "ERROR_BODY_LIMIT",
    "Answer",
    "Limit",
    "RetryPolicy",
    "check_destination",
    "new_http_client",
    "send_once",
    "usable_token",
]


class Limit(IntEnum):
    """Ceilings for a successful answer's body, in bytes (after content decoding)."""

    RECORD = 1 << 20
    INSPECTION = 8 << 20
    ANALYTICS = 64 << 20


ALLOWED_HOSTS = frozenset(
    {
        "searchconsole.googleapis.com",
        "www.googleapis.com",
        "indexing.googleapis.com",
        "oauth2.googleapis.com",
    }
)
ERROR_BODY_LIMIT = 64 * 1024
MAX_TOKEN_LENGTH = 4096


@dataclass(frozen=True)
class RetryPolicy:
    """How hard we try. Tests may swap in a faster one; production uses the defaults."""

    attempts: int = 3
    base_delay: float = 0.5  # first back-off; doubles each time, with jitter
    max_wait: float = 10.0  # longest we sleep between attempts; a longer Retry-After is not waited out
    request_timeout: float = 30.0  # one attempt, start to last byte


DEFAULT_POLICY = RetryPolicy()


class _Borrowed(httpx.AsyncBaseTransport):
    """An injected transport, used but not closed: whoever made it (the demo, a test) owns it, and
    the same one serves the token exchange and every API client."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        pass


def new_http_client(transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """An httpx client under our rules: OS trust store (which honours SSL_CERT_FILE), proxies from
    the environment, no redirects, explicit limits. An injected transport (the demo, in-process
    tests) replaces the network; the rules above it stay the same."""
    import truststore

    context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return httpx.AsyncClient(
        transport=_Borrowed(transport) if transport is not None else None,
        verify=context,
        trust_env=True,
        follow_redirects=False,
        http2=False,
        timeout=httpx.Timeout(DEFAULT_POLICY.request_timeout, connect=15.0),
        limits=httpx.Limits(max_connections=8, max_keepalive_connections=4, keepalive_expiry=30.0),
        headers={
            # Google's APIs gzip an answer only for a client that asks twice, in Accept-Encoding and
            # with "gzip" in its User-Agent (their performance guide): a 25,000-row answer is then
            # 0.7 MB on the wire instead of 4.5 MB, and reading it costs less CPU than the TLS records
            # of the whole (issue 28).
            "user-agent": f"searchdesk/{__version__} (gzip)",
            "accept": "application/json",
            "accept-encoding": "gzip",  # the one encoding _Inflater decodes under a ceiling
        },
    )


# ---------------------------------------------------------------------------------------------------
# One attempt


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    content_type: str
    cut: bool
    retry_after: float | None


def check_destination(url: httpx.URL) -> None:
    """The last gate before a request leaves: https, default port, one of Google's four hosts."""
    if url.scheme != "https" or url.host not in ALLOWED_HOSTS or url.port not in (None, 443):
        raise GoogleError(
            ErrorKind.REDIRECT,
            "SearchDesk refused to send a request outside Google's API hosts.",
        )


def _retry_after(value: str | None) -> float | None:
    """Retry-After as seconds (delta-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # isdigit() alone also says yes to "²", which int() refuses
        return float(min(int(value[:9]), 10**8))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _where(location: str | None, fallback: str) -> str:
    """The host a redirect pointed at, reduced to characters a hostname may hold."""
    if not location:
        return "an unnamed address"
    try:
        host = httpx.URL(location).host or fallback
    except (httpx.InvalidURL, ValueError, TypeError):
        return "an unreadable address"
    host = re.sub(r"[^A-Za-z0-9.\-:\[\]]", "", host)[:253]
    return host or "an unreadable address"


class _Inflater:
    """Content decoding under our control: zlib told how much output we still have room for, so a
    compressed bomb costs no more memory than the ceiling (httpx would inflate each chunk whole)."""

    def __init__(self, encoding: str) -> None:
        encoding = encoding.strip().lower()
        self._zlib: Any = None
        if encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._zlib = zlib.decompressobj()
        elif encoding not in ("", "identity"):
            raise GoogleError(
                ErrorKind.SERVER,
                "The answer came in an encoding SearchDesk did not ask for, so it was not read. Try again.",
            )

    def feed(self, data: bytes, room: int) -> bytes:
        """Up to ``room + 1`` decoded bytes (one more than fits tells the caller it overflowed)."""
        if self._zlib is None:
            return data[: room + 1]
        try:
            return bytes(self._zlib.decompress(self._zlib.unconsumed_tail + data, room + 1))
        except zlib.error:
            raise GoogleError(
                ErrorKind.SERVER, "The answer's compressed body was damaged, so it was not read. Try again."
            ) from None

    def finish(self, room: int) -> bytes:
        if self._zlib is None:
            return b""
        return self.feed(b"", room)


async def _read_capped(response: httpx.Response, cap: int) -> tuple[bytes, bool]:
    """Read at most ``cap`` decoded bytes; return them and whether more were coming."""
    inflater = _Inflater(response.headers.get("content-encoding", ""))
    buffer = bytearray()
    async for raw in response.aiter_raw():
        buffer += inflater.feed(raw, cap - len(buffer))
        if len(buffer) > cap:
            return bytes(buffer[:cap]), True
    buffer += inflater.finish(cap - len(buffer))
    if len(buffer) > cap:
        return bytes(buffer[:cap]), True
    return bytes(buffer), False


def _is_tls_trust_failure(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


def _network_error(exc: BaseException, host: str, timeout: float) -> GoogleError:
    """Describe a transport failure by its kind; exception text (which may hold addresses or
    anything a proxy said) is not quoted."""
    where = f"Could not complete the request to {host}"
    proxy_hint = "If you are behind a company proxy, check HTTPS_PROXY (and NO_PROXY)."
    what: str
    if isinstance(exc, TimeoutError):
        what = f"it took longer than {timeout:g} second{'' if timeout == 1 else 's'}."
    elif _is_tls_trust_failure(exc):
        return GoogleError(
            ErrorKind.NETWORK,
            f"{where}: the certificate it presented is not trusted. If a company proxy inspects HTTPS, "
            "add its certificate to the system's trust store or point SSL_CERT_FILE at it.",
            transient=False,
        )
    elif isinstance(exc, httpx.ProxyError):
        what = "the proxy refused or failed the connection."
    elif isinstance(exc, httpx.ConnectTimeout):
        what = "connecting timed out."
    elif isinstance(exc, httpx.ConnectError):
        what = "the connection could not be made."
    elif isinstance(exc, httpx.TimeoutException):
        what = "Google stopped answering mid-way (timed out)."
    elif isinstance(exc, ssl.SSLError):
        what = "the secure (TLS) connection failed."
    else:
        what = "the connection broke off."
    return GoogleError(ErrorKind.NETWORK, f"{where}: {what} Check the internet connection and try again. {proxy_hint}")


def _too_large(cap: int) -> GoogleError:
    size = f"{cap >> 20} MB"
    return GoogleError(
        ErrorKind.TOO_LARGE,
        f"Google's answer was larger than the {size} SearchDesk accepts for this kind of call, so it "
        "was not read to the end. Ask for less: fewer rows, a shorter date range, or a filter.",
    )


async def send_once(http: httpx.AsyncClient, request: httpx.Request, cap: int, seconds: float) -> Answer:
    """Send one request and read a bounded body. Errors for redirects, oversize answers and the
    network are raised here; HTTP error statuses are returned for the caller to judge."""
    check_destination(request.url)
    host = request.url.host
    try:
        with anyio.fail_after(seconds):
            response = await http.send(request, stream=True, follow_redirects=False)
            try:
                status = response.status_code
                content_type = response.headers.get("content-type", "")
                if 300 <= status < 400:
                    target = _where(response.headers.get("location"), host)
                    raise GoogleError(
                        ErrorKind.REDIRECT,
                        f"The server answering for {host} tried to send SearchDesk to {target} "
                        f"(HTTP {status}). SearchDesk talks only to Google's API hosts and did not "
                        "follow. A proxy or a network sign-in page may be intercepting the connection.",
                        status=status,
                    )
                limit = cap if status < 300 else ERROR_BODY_LIMIT
                body, more = await _read_capped(response, limit)
                if more and status < 300:
                    raise _too_large(cap)
                return Answer(
                    status=status,
                    body=body,
                    content_type=content_type,
                    cut=more,
                    retry_after=_retry_after(response.headers.get("retry-after")),
                )
            finally:
                await response.aclose()
    except GoogleError:
        raise
    except httpx.DecodingError:
        raise GoogleError(
            ErrorKind.SERVER,
            f"The answer from {host} could not be decoded (a damaged compressed body). Try again.",
        ) from None
    except (httpx.TransportError, TimeoutError, ssl.SSLError, OSError) as exc:
        raise _network_error(exc, host, seconds) from None


def usable_token(token: object) -> str:
    """A token goes into a header only when it is printable ASCII without spaces and bounded."""
    if isinstance(token, str) and 0 < len(token) <= MAX_TOKEN_LENGTH and all("!" <= ch <= "~" for ch in token):
        return token
    raise GoogleError(
        ErrorKind.AUTH,
        "The credentials produced no usable access token. Sign in again in the SearchDesk app, or "
        "check the configured credentials.",
    )
