"""The client the tools use to call Google's APIs, and what may run around each of its requests.

Every request goes through here so that the rules hold everywhere: one request under the rules of
`wire.py` (Google's own API hosts only, no redirect followed, status before body, byte ceilings),
the attempts of `attempts.py` (retries only where repeating a request is harmless), and errors a
person can act on. What else must happen around a request — the journal's rows around a change — is
set once on the client made for a tool call (`GoogleClient.for_call`, as httpx's event hooks), never
by a wrapper that repeats the call's signature.

This module imports httpx at the top; nothing on the server's start-up path imports it.
"""

from __future__ import annotations

import copy
import json
import re
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio
import httpx

from searchdesk_server.gcpause import collection_paused
from searchdesk_server.google import jsonbody
from searchdesk_server.google.attempts import fetch
from searchdesk_server.google.errors import ErrorKind, GoogleError, Service, describe_non_json, explain_response
from searchdesk_server.google.wire import (
    ALLOWED_HOSTS,
    DEFAULT_POLICY,
    ERROR_BODY_LIMIT,
    Answer,
    Limit,
    RetryPolicy,
    check_destination,
    new_http_client,
    usable_token,
)

if TYPE_CHECKING:
    from searchdesk_server.google.credentials import TokenSource

__all__ = [
    "ALLOWED_HOSTS",
    "Answer",
    "Api",
    "GoogleClient",
    "Limit",
    "Outgoing",
    "RequestHook",
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


_SERVICES = {
    Api.SEARCHCONSOLE: Service("the Search Console API", "searchconsole.googleapis.com"),
    Api.SITEVERIFICATION: Service("the Site Verification API", "siteverification.googleapis.com"),
    Api.INDEXING: Service("the Indexing API", "indexing.googleapis.com"),
}


# ---------------------------------------------------------------------------------------------------
# Addresses and answers

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


# ---------------------------------------------------------------------------------------------------
# What may run around each request


@dataclass(frozen=True)
class Outgoing:
    """A request as its caller described it, before it leaves: what a hook sees of it (never its token)."""

    api: Api
    method: str
    path: str
    path_params: Mapping[str, str] | None
    query: Mapping[str, str | list[str]] | None
    body: object | None


Note = TypeVar("Note")


class RequestHook(Protocol[Note]):
    """Behaviour around every request of a client made for a tool call, as httpx's event hooks (the
    journal's `change` row before a change leaves, its `outcome` row after: journal/record.py)."""

    async def before_send(self, request: Outgoing) -> Note:
        """Runs once, after the access token is in hand and before the request first leaves; whatever it
        raises stops the call with nothing sent. What it returns is handed back to `after_answer`."""
        ...

    async def after_answer(self, request: Outgoing, note: Note, failure: GoogleError | None, *, lost: bool) -> None:
        """Runs once the call ends, for a hook whose `before_send` ran: ``failure`` None (Google did it),
        the GoogleError the call raises (with no HTTP status when no answer came), or ``lost`` (the call
        was cancelled, or failed inside SearchDesk, after the request left: this runs shielded)."""
        ...


@dataclass
class _Shared:
    """What every client made from one shares: the token source, the connections, the retry rules."""

    tokens: TokenSource
    scopes: tuple[str, ...]
    http: httpx.AsyncClient
    policy: RetryPolicy


# ---------------------------------------------------------------------------------------------------
# The client the tools use


class GoogleClient:
    """Calls Google's APIs for the tools, one request at a time under the rules above.

    A client made for a tool call (`for_call`) shares its maker's connections and rules, and adds that
    call's settings: its Google account, whether each request is sent exactly once, and its hooks."""

    def __init__(
        self,
        tokens: TokenSource,
        scopes: Sequence[str],
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._shared = _Shared(tokens, tuple(scopes), new_http_client(transport), DEFAULT_POLICY)
        self._account: str | None = None
        self._once = False
        self._hooks: tuple[RequestHook[Any], ...] = ()

    @property
    def policy(self) -> RetryPolicy:
        """How hard every client made from this one tries (tests swap in a faster one)."""
        return self._shared.policy

    @policy.setter
    def policy(self, policy: RetryPolicy) -> None:
        self._shared.policy = policy

    def for_call(
        self, *, account: str | None = None, once: bool = False, hooks: Sequence[RequestHook[Any]] = ()
    ) -> GoogleClient:
        """This client for one tool call. ``account``: the Google account whose token is used (the app
        holds several); None: the only or default one. ``once`` (every guarded call): each request is sent
        exactly once — no retry, and not even a 401 answered by a refresh and a resend, since a person's yes
        is spent by one request reaching Google. ``hooks`` run around each request (`RequestHook`)."""
        made = copy.copy(self)
        made._account, made._once, made._hooks = account, once, tuple(hooks)
        return made

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
        account: str | None = None,
        decode: Callable[[bytes], object | None] | None = None,
    ) -> Any:
        """One API call; returns the decoded JSON (an empty 2xx body is {}), raises GoogleError.

        ``retry`` must be False for anything that is not safe to repeat (a client made for a call sent
        once never retries). ``account``: this request's Google account, else the client's (`for_call`).
        ``decode`` reads a successful answer's body first (tools/analytics/rows.py common_answer: typed
        rows, no dict per row); when it returns None the body is decoded as every other answer is."""
        if method.upper() not in _METHODS:
            raise ValueError(f"unsupported HTTP method {method!r}")
        request = Outgoing(api, method.upper(), path, path_params, query, body)
        notes: list[tuple[RequestHook[Any], Any]] = []  # each hook whose before_send ran, and what it said
        try:
            answer = await self._send(request, limit, retry, deadline, account or self._account, notes)
            result = _decoded(answer, decode)
        except GoogleError as exc:
            await _after(notes, request, exc)
            raise
        except BaseException:
            with anyio.CancelScope(shield=True):  # after the request left, its outcome is unknown
                await _after(notes, request, None, lost=True)
            raise
        await _after(notes, request, None)
        return result

    async def _send(
        self,
        request: Outgoing,
        limit: Limit,
        retry: bool,
        deadline: float | None,
        account: str | None,
        notes: list[tuple[RequestHook[Any], Any]],
    ) -> _Sent:
        """The request under the attempts' rules, the hooks' `before_send` run once before it first leaves."""
        shared = self._shared
        url = build_url(request.api, request.path, request.path_params)
        used: list[str] = []  # this call's tokens, redacted from anything Google echoes back
        content = None
        headers = {}
        if request.body is not None:
            content = json.dumps(request.body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
            headers["content-type"] = "application/json; charset=utf-8"
        query = request.query
        announced = False

        async def build(force_refresh: bool) -> httpx.Request:
            nonlocal announced
            token = usable_token(await shared.tokens.token(shared.scopes, force_refresh=force_refresh, account=account))
            used.append(token)
            if not announced:
                for hook in self._hooks:
                    notes.append((hook, await hook.before_send(request)))
                announced = True
            return shared.http.build_request(
                request.method,
                url,
                params={**STANDARD_QUERY, **query} if query else STANDARD_QUERY,
                content=content,
                headers={**headers, "authorization": f"Bearer {token}"},
            )

        service = _SERVICES[request.api]

        def explain(answer: Answer) -> GoogleError:
            return explain_response(
                answer.status,
                answer.body,
                answer.content_type,
                service,
                cut=answer.cut,
                indexing=request.api is Api.INDEXING,
                known_secrets=used,
            )

        answer = await fetch(
            shared.http,
            build,
            explain=explain,
            cap=int(limit),
            retry=retry and not self._once,
            deadline=deadline,
            refresh_on_401=not self._once,
            policy=shared.policy,
        )
        return _Sent(answer, tuple(used))

    async def aclose(self) -> None:
        """Close the connections, for every client made from this one (the desktop app's socket is the
        runtime's, closed there)."""
        await self._shared.http.aclose()


@dataclass(frozen=True)
class _Sent:
    """A successful answer and the tokens its request used (redacted from a body that is not JSON)."""

    answer: Answer
    used: tuple[str, ...]


def _decoded(sent: _Sent, decode: Callable[[bytes], object | None] | None) -> Any:
    if decode is not None and sent.answer.body:
        with collection_paused():  # everything decoded is kept (gcpause.py)
            typed = decode(sent.answer.body)
        if typed is not None:
            return typed
    return _decode_json(sent.answer, sent.used)


async def _after(
    notes: list[tuple[RequestHook[Any], Any]], request: Outgoing, failure: GoogleError | None, *, lost: bool = False
) -> None:
    for hook, note in notes:
        await hook.after_answer(request, note, failure, lost=lost)
