"""The one way SearchDesk talks to Google.

Every request goes through here so that the rules hold everywhere: only Google's own API hosts, no
redirect followed, the status decided before any body is read, byte ceilings enforced while
streaming, retries only where repeating a request is harmless, and errors a person can act on.

This module imports httpx at the top; nothing on the server's start-up path imports it.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import random
import re
import ssl
import time
import urllib.parse
import zlib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum, IntEnum
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from searchdesk_server import __version__
from searchdesk_server.gcpause import collection_paused
from searchdesk_server.google import jsonbody
from searchdesk_server.google.errors import (
    ErrorKind,
    GoogleError,
    Service,
    describe_non_json,
    explain_response,
)
from searchdesk_server.text.phrases import minutes

if TYPE_CHECKING:
    from searchdesk_server.google.credentials import TokenSource

__all__ = [
    "ALLOWED_HOSTS",
    "Answer",
    "Api",
    "GoogleClient",
    "Limit",
    "RetryPolicy",
    "build_url",
    "check_destination",
    "fetch",
    "new_http_client",
    "usable_token",
]


class Api(Enum):
    """The three API roots SearchDesk may call (discovery's rootUrl + servicePath)."""

    SEARCHCONSOLE = "https://searchconsole.googleapis.com/"
    SITEVERIFICATION = "https://www.googleapis.com/siteVerification/v1/"
    INDEXING = "https://indexing.googleapis.com/"


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
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})

_SERVICES = {
    Api.SEARCHCONSOLE: Service("the Search Console API", "searchconsole.googleapis.com"),
    Api.SITEVERIFICATION: Service("the Site Verification API", "siteverification.googleapis.com"),
    Api.INDEXING: Service("the Indexing API", "indexing.googleapis.com"),
}


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


async def _send_once(http: httpx.AsyncClient, request: httpx.Request, cap: int, seconds: float) -> Answer:
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


# ---------------------------------------------------------------------------------------------------
# Attempts


def _backoff(policy: RetryPolicy, attempt: int) -> float:
    return float(policy.base_delay * (2 ** (attempt - 1)) * (0.5 + random.random()))


async def fetch(
    http: httpx.AsyncClient,
    build: Callable[[bool], Awaitable[httpx.Request]],
    *,
    explain: Callable[[Answer], GoogleError],
    cap: int,
    retry: bool,
    deadline: float | None = None,
    refresh_on_401: bool = False,
    policy: RetryPolicy = DEFAULT_POLICY,
) -> Answer:
    """Run a request under the retry rules and return its successful (2xx) answer.

    ``build(force_refresh)`` makes the request (fetching a token if need be). A 401 rebuilds it once
    with force_refresh=True when ``refresh_on_401`` is set — whatever ``retry`` says, because Google
    acted on nothing it refused to authenticate. Other failures are retried only when ``retry`` is
    set: on 429/500/502/503/504 and on network errors, never on 403, at most ``policy.attempts``
    times, never longer than ``policy.max_wait`` between attempts, and never starting an attempt
    that could still be running (``policy.request_timeout``) at ``deadline`` (time.monotonic()).
    """
    attempt = 0
    refreshed = False
    force_refresh = False
    while True:
        request = await build(force_refresh)
        force_refresh = False
        attempt += 1
        try:
            answer = await _send_once(http, request, cap, policy.request_timeout)
        except GoogleError as err:
            if err.kind is not ErrorKind.NETWORK or not err.transient:
                raise
            failure, wait_hint = err, None
        else:
            if answer.status < 300:
                return answer
            if answer.status == 401 and refresh_on_401 and not refreshed:
                if deadline is not None and time.monotonic() + policy.request_timeout > deadline:
                    raise explain(answer).with_attempts(attempt)  # a resend could outlast the batch
                refreshed = True
                force_refresh = True
                attempt -= 1  # the refresh is its own single retry, not one of the budgeted ones
                continue
            if answer.status == 401 and not refresh_on_401:
                # Sent once by rule: refresh the token for the next call, resend nothing.
                with contextlib.suppress(GoogleError):
                    await build(True)
            failure = explain(answer)
            wait_hint = answer.retry_after if answer.retry_after is not None else failure.retry_after
            if answer.status not in RETRY_STATUSES:
                raise failure.with_attempts(attempt)
        if not retry or attempt >= policy.attempts:
            raise failure.with_attempts(attempt)
        wait = _backoff(policy, attempt)
        if wait_hint is not None:
            if wait_hint > policy.max_wait:
                raise _asked_to_wait(failure, wait_hint, attempt)
            wait = max(wait, wait_hint)
        wait = min(wait, policy.max_wait)
        if deadline is not None and time.monotonic() + wait + policy.request_timeout > deadline:
            raise failure.with_attempts(attempt)  # the next attempt might still be running at the deadline
        await anyio.sleep(wait)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{round(seconds)} seconds"
    if seconds < 2 * 3600:
        return minutes(seconds)
    return f"{round(seconds / 3600)} hours"


def _asked_to_wait(failure: GoogleError, seconds: float, attempt: int) -> GoogleError:
    summary = failure.summary + f" Google asked to wait about {_duration(seconds)} before trying again."
    return GoogleError(
        failure.kind,
        summary,
        status=failure.status,
        upstream=failure.upstream,
        retry_after=seconds,
        attempts=attempt,
    )


# ---------------------------------------------------------------------------------------------------
# The client the tools use

_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
#: Sent with every API call. Google's APIs indent their JSON by default ("prettyPrint", a standard
#: parameter of every discovery document, defaults to true): the compact form is the same document in
#: fewer bytes, so less to carry, decrypt and decode (a 25,000-row answer is most of a call's CPU).
STANDARD_QUERY: Mapping[str, str] = {"prettyPrint": "false"}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _encode_segment(value: str) -> str:
    """Percent-encode a path parameter as one segment; '.' and '..' are encoded too, so a value can
    never climb out of its place in the path."""
    encoded = urllib.parse.quote(value, safe="")
    if encoded in (".", ".."):
        encoded = encoded.replace(".", "%2E")
    return encoded


def build_url(api: Api, path: str, path_params: Mapping[str, str] | None = None) -> httpx.URL:
    """Fill a discovery path template relative to the API's root."""
    if path.startswith("/") or "://" in path or any(seg in (".", "..") for seg in path.split("/")):
        raise ValueError("the path must be a discovery template relative to the API root")
    params = path_params or {}

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if not params.get(name):
            raise ValueError(f"path parameter {name!r} was not given")
        return _encode_segment(params[name])

    url = httpx.URL(api.value + _PLACEHOLDER.sub(fill, path))
    check_destination(url)
    return url


def usable_token(token: object) -> str:
    """A token goes into a header only when it is printable ASCII without spaces and bounded."""
    if isinstance(token, str) and 0 < len(token) <= MAX_TOKEN_LENGTH and all("!" <= ch <= "~" for ch in token):
        return token
    raise GoogleError(
        ErrorKind.AUTH,
        "The credentials produced no usable access token. Sign in again in the SearchDesk app, or "
        "check the configured credentials.",
    )


def _decode_json(answer: Answer, known: Iterable[str]) -> Any:
    body = answer.body
    if not body or body.isspace():
        return {}
    try:
        with collection_paused():  # a 25,000-row answer is 50,000 containers, all kept (gcpause.py)
            return jsonbody.loads(body)
    except (ValueError, RecursionError):
        pass
    raise GoogleError(
        ErrorKind.SERVER,
        f"The answer (HTTP {answer.status}) was not the JSON Google's API sends. Try again; if it "
        "persists, something between you and Google may be answering in its place.",
        status=answer.status,
        upstream=describe_non_json(answer.status, answer.body[:ERROR_BODY_LIMIT], answer.content_type, known),
    )


class GoogleClient:
    """Calls Google's APIs for the tools, one request at a time under the rules above."""

    def __init__(
        self,
        tokens: TokenSource,
        scopes: Sequence[str],
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._tokens = tokens
        self._scopes = tuple(scopes)
        self._http = new_http_client(transport)
        self.policy = DEFAULT_POLICY

    async def call(
        self,
        api: Api,
        method: str,
        path: str,
        *,
        path_params: Mapping[str, str] | None = None,
        query: Mapping[str, str | list[str]] | None = None,
        body: object | None = None,
        limit: Limit = Limit.RECORD,
        retry: bool = False,
        deadline: float | None = None,
        once: bool = False,
        account: str | None = None,
        before_send: Callable[[], Awaitable[None]] | None = None,
        decode: Callable[[bytes], object | None] | None = None,
    ) -> Any:
        """One API call; returns the decoded JSON (an empty 2xx body is {}), raises GoogleError.

        ``retry`` must be False for anything that is not safe to repeat. ``once`` (every guarded
        call) sends the request exactly once: not even a 401 is answered by a refresh and a resend,
        since a person's yes is spent by one request reaching Google. ``account`` is the Google
        account whose token is used (the app holds several); None: the only or default one.
        ``before_send`` runs once, after the access token is in hand and before the request first leaves
        (the journal's row); whatever it raises stops the call with nothing sent. ``decode`` reads a
        successful answer's body first (tools/analytics/rows.py common_answer: typed rows, no dict per
        row); when it returns None the body is decoded as every other answer is."""
        if method.upper() not in _METHODS:
            raise ValueError(f"unsupported HTTP method {method!r}")
        url = build_url(api, path, path_params)
        used: list[str] = []  # this call's tokens, redacted from anything Google echoes back
        content = None
        headers = {}
        if body is not None:
            content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
            headers["content-type"] = "application/json; charset=utf-8"

        announced = before_send is None

        async def build(force_refresh: bool) -> httpx.Request:
            nonlocal announced
            token = usable_token(await self._tokens.token(self._scopes, force_refresh=force_refresh, account=account))
            used.append(token)
            if not announced:
                assert before_send is not None
                await before_send()
                announced = True
            return self._http.build_request(
                method.upper(),
                url,
                params={**STANDARD_QUERY, **query} if query else STANDARD_QUERY,
                content=content,
                headers={**headers, "authorization": f"Bearer {token}"},
            )

        service = _SERVICES[api]

        def explain(answer: Answer) -> GoogleError:
            return explain_response(
                answer.status,
                answer.body,
                answer.content_type,
                service,
                cut=answer.cut,
                indexing=api is Api.INDEXING,
                known_secrets=used,
            )

        answer = await fetch(
            self._http,
            build,
            explain=explain,
            cap=int(limit),
            retry=retry,
            deadline=deadline,
            refresh_on_401=not once,
            policy=self.policy,
        )
        if decode is not None and answer.body:
            with collection_paused():  # everything decoded is kept (gcpause.py)
                typed = decode(answer.body)
            if typed is not None:
                return typed
        return _decode_json(answer, used)

    async def aclose(self) -> None:
        """Close the connections (the desktop app's socket is the runtime's, closed there)."""
        await self._http.aclose()
