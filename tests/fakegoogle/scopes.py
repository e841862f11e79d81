"""Which OAuth scopes each Google endpoint accepts, copied from Google's discovery documents.

The fake checks every request's token against this table, so a test sees the same 403 Google
sends when a token lacks a scope (and scope derivation is tested for real).
"""

from __future__ import annotations

import re

WM = "https://www.googleapis.com/auth/webmasters"
WM_RO = "https://www.googleapis.com/auth/webmasters.readonly"
SV = "https://www.googleapis.com/auth/siteverification"
SV_VERIFY = "https://www.googleapis.com/auth/siteverification.verify_only"
INDEXING = "https://www.googleapis.com/auth/indexing"
ALL_SCOPES = frozenset({WM, WM_RO, SV, SV_VERIFY, INDEXING})

_SEG = r"[^/]+"
_READ = frozenset({WM, WM_RO})
_WRITE = frozenset({WM})

# (method, host, path regex, accepted scopes, service)
_TABLE: tuple[tuple[str, str, str, frozenset[str], str], ...] = (
    ("POST", "searchconsole", rf"/webmasters/v3/sites/{_SEG}/searchAnalytics/query", _READ, "searchconsole"),
    ("GET", "searchconsole", rf"/webmasters/v3/sites/{_SEG}/sitemaps(/{_SEG})?", _READ, "searchconsole"),
    ("PUT", "searchconsole", rf"/webmasters/v3/sites/{_SEG}/sitemaps/{_SEG}", _WRITE, "searchconsole"),
    ("DELETE", "searchconsole", rf"/webmasters/v3/sites/{_SEG}/sitemaps/{_SEG}", _WRITE, "searchconsole"),
    ("GET", "searchconsole", rf"/webmasters/v3/sites(/{_SEG})?", _READ, "searchconsole"),
    ("PUT", "searchconsole", rf"/webmasters/v3/sites/{_SEG}", _WRITE, "searchconsole"),
    ("DELETE", "searchconsole", rf"/webmasters/v3/sites/{_SEG}", _WRITE, "searchconsole"),
    ("POST", "searchconsole", r"/v1/urlInspection/index:inspect", _READ, "searchconsole"),
    ("GET", "indexing", r"/v3/urlNotifications/metadata", frozenset({INDEXING}), "indexing"),
    ("POST", "indexing", r"/v3/urlNotifications:publish", frozenset({INDEXING}), "indexing"),
    ("POST", "www", r"/siteVerification/v1/token", frozenset({SV, SV_VERIFY}), "siteverification"),
    ("POST", "www", r"/siteVerification/v1/webResource", frozenset({SV, SV_VERIFY}), "siteverification"),
    ("GET", "www", r"/siteVerification/v1/webResource", frozenset({SV}), "siteverification"),
    ("GET", "www", rf"/siteVerification/v1/webResource/{_SEG}", frozenset({SV}), "siteverification"),
    ("PUT", "www", rf"/siteVerification/v1/webResource/{_SEG}", frozenset({SV}), "siteverification"),
    ("PATCH", "www", rf"/siteVerification/v1/webResource/{_SEG}", frozenset({SV}), "siteverification"),
    ("DELETE", "www", rf"/siteVerification/v1/webResource/{_SEG}", frozenset({SV}), "siteverification"),
)
_COMPILED = tuple((m, h, re.compile(p), s, svc) for m, h, p, s, svc in _TABLE)


def required_scopes(method: str, host: str, path: str) -> tuple[frozenset[str], str] | None:
    """The scopes (any one suffices) and service for an endpoint; None when it is not an API we know."""
    prefix = host.split(".", 1)[0]
    for m, h, pattern, scopes, service in _COMPILED:
        if m == method and h == prefix and pattern.fullmatch(path):
            return scopes, f"{service}.googleapis.com"
    return None
