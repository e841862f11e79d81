"""A minimal Search Console, used only when the demo's DemoGoogle is not importable.

It answers the few endpoints the client's own tests touch; the real tests of the tools run on the
demo's DemoGoogle (see ``default_api``).
"""

from __future__ import annotations

import datetime
import inspect
import json
import urllib.parse
from collections.abc import Callable

import httpx

from tests.fakegoogle import bodies

SITES = [
    {"siteUrl": "https://www.example.com/", "permissionLevel": "siteOwner"},
    {"siteUrl": "sc-domain:example.org", "permissionLevel": "siteFullUser"},
]


def _json(status: int, doc: object) -> httpx.Response:
    return httpx.Response(status, content=json.dumps(doc).encode(), headers={"content-type": "application/json"})


def standin_google(request: httpx.Request) -> httpx.Response:
    path = request.url.raw_path.decode().split("?", 1)[0]
    host = request.url.host
    if host == "searchconsole.googleapis.com" and path == "/webmasters/v3/sites":
        return _json(200, {"siteEntry": SITES})
    prefix = "/webmasters/v3/sites/"
    if host == "searchconsole.googleapis.com" and path.startswith(prefix):
        site, _, rest = path[len(prefix) :].partition("/")
        site_url = urllib.parse.unquote(site)
        entry = next((s for s in SITES if s["siteUrl"] == site_url), None)
        if entry is None:
            return _json(403, bodies.no_permission(site_url))
        if not rest:
            return _json(200, entry) if request.method == "GET" else _json(204, {})
        if rest == "searchAnalytics/query" and request.method == "POST":
            return _json(200, {"rows": [{"keys": ["q"], "clicks": 1, "impressions": 2, "ctr": 0.5, "position": 3}]})
        if rest.startswith("sitemaps"):
            if request.method == "GET" and rest == "sitemaps":
                return _json(200, {"sitemap": []})
            return httpx.Response(204) if request.method in ("PUT", "DELETE") else _json(404, bodies.not_found())
    if host == "indexing.googleapis.com" and path == "/v3/urlNotifications:publish":
        return _json(200, {"urlNotificationMetadata": {"url": "https://www.example.com/"}})
    return _json(404, bodies.not_found())


def default_api(
    today: datetime.date | None, scopes_for_token: Callable[[str | None], frozenset[str] | None]
) -> Callable[[httpx.Request], httpx.Response]:
    """The demo's DemoGoogle when it exists (given the scope hook if it takes one), else the stand-in."""
    try:
        from searchdesk_server.demo import DemoGoogle
    except ImportError:
        return standin_google
    parameters = inspect.signature(DemoGoogle).parameters
    if "scopes_for_token" not in parameters:
        return DemoGoogle(today)

    def scopes(token: str) -> set[str]:
        return set(scopes_for_token(token) or ())

    return DemoGoogle(today, scopes_for_token=scopes)
