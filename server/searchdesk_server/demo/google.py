"""DemoGoogle: Google's three API hosts in one synchronous callable, for httpx.MockTransport.

The order of checks is Google's: an unknown host or path is 404 before anything else; then the bearer
token (401), then its scopes (403 insufficient scopes), then query parameters and the method's own rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from urllib.parse import parse_qs

import httpx

from . import wire
from .clock import DemoClock, resolve_today
from .faults import GoogleFault, bad_request
from .request import DemoRequest
from .routes import HOSTS, STANDARD_PARAMETERS, Route, find
from .state import DemoState, initial_state

_BEARER = re.compile(r"Bearer[ \t]+([\x21-\x7e]+)", re.IGNORECASE)
_MISSING = (
    "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or "
    "other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
)
_INVALID = (
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other "
    "valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
)
_REALM = 'Bearer realm="https://accounts.google.com/"'


class DemoGoogle:
    """An in-memory Search Console account, deterministic for a given today.

    `scopes_for_token`, when given, says which OAuth scopes a bearer token carries; a request whose token
    lacks every scope its method accepts gets Google's 403 "insufficient authentication scopes". Without
    it any non-empty token is accepted. `log` records (method, URL without query) of every request.
    """

    def __init__(
        self,
        today: date | None = None,
        *,
        scopes_for_token: Callable[[str], set[str]] | None = None,
    ) -> None:
        self.clock = DemoClock(resolve_today(today))
        self.today = self.clock.today
        self.state: DemoState = initial_state(self.clock)
        self.scopes_for_token = scopes_for_token
        self.log: list[tuple[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        raw_path = url.raw_path.split(b"?", 1)[0].decode("ascii", errors="replace")
        self.log.append((request.method, f"{url.scheme}://{url.netloc.decode('ascii', 'replace')}{raw_path}"))
        try:
            route, params = self._route(url.host, request.method, raw_path)
            self._authorize(route, request)
            query = self._query(route, url.query.decode("ascii", errors="replace"))
            payload = route.handler(self.state, DemoRequest(request.method, params, query, request.content))
        except GoogleFault as fault:
            return wire.fault_response(fault)
        if payload is None:
            return wire.empty_response()
        return wire.json_response(200, payload)

    @staticmethod
    def _route(host: str, method: str, raw_path: str) -> tuple[Route, dict[str, str]]:
        found = find(host, method, raw_path.lstrip("/").split("/")) if host in HOSTS else None
        if found is None:
            raise GoogleFault(404, f"The requested URL {raw_path[:200]} was not found on this server.")
        return found

    def _authorize(self, route: Route, request: httpx.Request) -> None:
        header = request.headers.get("authorization")
        if header is None:
            raise GoogleFault(401, _MISSING, reason="required", headers={"www-authenticate": _REALM})
        match = _BEARER.fullmatch(header.strip())
        if match is None:
            raise GoogleFault(401, _INVALID, headers={"www-authenticate": _REALM + ', error="invalid_token"'})
        if self.scopes_for_token is None:
            return
        if route.scopes.isdisjoint(self.scopes_for_token(match.group(1))):
            service = route.host
            raise GoogleFault(
                403,
                "Request had insufficient authentication scopes.",
                reason="insufficientPermissions",
                extra={
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
                            "domain": "googleapis.com",
                            "metadata": {"service": service, "method": route.id},
                        }
                    ]
                },
                headers={
                    "www-authenticate": _REALM
                    + f', error="insufficient_scope", scope="{" ".join(sorted(route.scopes))}"'
                },
            )

    @staticmethod
    def _query(route: Route, raw: str) -> dict[str, list[str]]:
        query = parse_qs(raw, keep_blank_values=True)
        for name in query:
            if name not in route.query and name not in STANDARD_PARAMETERS:
                raise bad_request(
                    f'Invalid JSON payload received. Unknown name "{name[:100]}": Cannot bind query parameter. '
                    f"Field '{name[:100]}' could not be found in request message."
                )
        return query


def demo_transport(today: date | None = None) -> httpx.AsyncBaseTransport:
    """An httpx transport that answers Google's API hosts from a fresh DemoGoogle."""
    return httpx.MockTransport(DemoGoogle(today))
