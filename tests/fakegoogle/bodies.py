"""Error bodies shaped like Google's, for the fake and for tests that script failures."""

from __future__ import annotations

import gzip
import json
import urllib.parse
from collections.abc import Mapping
from typing import Any

_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def google_error(
    code: int,
    message: str,
    *,
    reason: str | None = None,
    domain: str = "global",
    details: list[dict[str, Any]] | None = None,
    status: str | None = None,
) -> dict[str, Any]:
    """The JSON Google's APIs send with an error status."""
    error: dict[str, Any] = {"code": code, "message": message, "status": status or _STATUS.get(code, "UNKNOWN")}
    if reason:
        error["errors"] = [{"message": message, "domain": domain, "reason": reason}]
    if details:
        error["details"] = details
    return {"error": error}


def encode(doc: object, *, pretty: bool = True) -> bytes:
    """A document as Google's APIs write it: indented by two spaces by default, with no whitespace
    at all when the request said ``prettyPrint=false`` (a standard parameter of every API)."""
    if pretty:
        return json.dumps(doc, indent=2).encode()
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()


def pretty_wanted(query: str) -> bool:
    """Whether a request's query string leaves Google's prettyPrint at its default (true); the last
    value given wins, and only "false" turns it off, as Google reads a boolean parameter."""
    values = urllib.parse.parse_qs(query, keep_blank_values=True).get("prettyPrint", ["true"])
    return values[-1].strip().lower() != "false"


def gzip_wanted(headers: Mapping[str, str]) -> bool:
    """Whether Google would gzip its answer: only when the request asks in both ways its performance
    guide names, ``Accept-Encoding: gzip`` and the string "gzip" in the User-Agent (headers by
    lower-case name)."""
    accepted = {part.split(";")[0].strip().lower() for part in headers.get("accept-encoding", "").split(",")}
    return "gzip" in accepted and "gzip" in headers.get("user-agent", "").lower()


def gzipped(body: bytes) -> bytes:
    return gzip.compress(body, compresslevel=6, mtime=0)


def reshaped(raw: bytes, *, pretty: bool) -> bytes:
    """A body written by the fake or the demo behind it (one of `encode`'s two forms, byte for byte)
    rewritten the way the request asked; any other body as is: a test's own bytes (hostile JSON,
    duplicate keys, odd number spellings, a nesting too deep to decode, not JSON) must reach the
    server exactly as scripted.

    A compact answer asked compact (every request of our client) is passed on unread; otherwise the
    compact form is checked first, with the standard library's C encoder: the indented one is written
    by its pure-Python encoder, half a second for a 25,000-row answer, so it is made only when the
    request wants it or the body may be in it."""
    if not pretty and not raw.startswith((b"{\n", b"[\n")):
        return raw  # not the indented form, so already as asked or a test's own bytes: as is, unread
    try:
        doc = json.loads(raw)
        if raw == encode(doc, pretty=False):
            return encode(doc, pretty=True) if pretty else raw
        if not pretty and raw == encode(doc, pretty=True):
            return encode(doc, pretty=False)
        return raw
    except (ValueError, RecursionError):
        return raw


def unauthenticated() -> dict[str, Any]:
    return google_error(
        401,
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
        "other valid authentication credential.",
        reason="authError",
    )


def scope_insufficient(service: str) -> dict[str, Any]:
    return google_error(
        403,
        "Request had insufficient authentication scopes.",
        reason="insufficientPermissions",
        details=[
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
                "domain": "googleapis.com",
                "metadata": {"service": service},
            }
        ],
    )


def api_not_enabled(service: str, project: str = "123456789012") -> dict[str, Any]:
    return google_error(
        403,
        f"{service.split('.')[0]} API has not been used in project {project} before or it is disabled. "
        f"Enable it by visiting https://console.developers.google.com/apis/api/{service}/overview?project="
        f"{project} then retry.",
        reason="accessNotConfigured",
        domain="usageLimits",
        details=[
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "SERVICE_DISABLED",
                "domain": "googleapis.com",
                "metadata": {"service": service, "consumer": f"projects/{project}"},
            }
        ],
    )


def quota(retry_delay: str | None = None) -> dict[str, Any]:
    details = []
    if retry_delay is not None:
        details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay})
    return google_error(429, "Quota exceeded for quota metric 'Queries'.", reason="rateLimitExceeded", details=details)


def analytics_quota(which: str) -> dict[str, Any]:
    """Search Analytics' 429s as Google words them: the per-minute quotas, and the short-term load."""
    if which == "load":
        message = "Search Analytics load quota exceeded. Please try again later."
    else:
        limit = "per site" if which == "site" else "per user"
        message = f"Quota exceeded for quota metric 'Queries' and limit 'Queries per minute {limit}'."
    return google_error(429, message, reason="rateLimitExceeded")


def not_owner() -> dict[str, Any]:
    return google_error(403, "Permission denied. Failed to verify the URL ownership.", reason="forbidden")


def no_permission(site: str) -> dict[str, Any]:
    return google_error(403, f"User does not have sufficient permission for site '{site}'.", reason="forbidden")


def not_found(what: str = "Requested entity was not found.") -> dict[str, Any]:
    return google_error(404, what, reason="notFound")


def unavailable() -> dict[str, Any]:
    return google_error(503, "The service is currently unavailable.", reason="backendError")


def token_error(error: str, description: str) -> dict[str, Any]:
    """The OAuth token endpoint's shape."""
    return {"error": error, "error_description": description}
