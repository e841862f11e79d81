"""Google's failures, turned into errors a person can act on.

Everything Google (or whatever answered in its place) sends is hostile text: it is cleaned, cut,
stripped of anything shaped like a credential and labelled as someone else's words. The server's own
sentences are built only from values we derived (the status code, the API we called), never from the
upstream text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..text.cleaning import cut as cut_at
from ..text.cleaning import flatten
from ..text.redaction import redact

__all__ = [
    "ErrorKind",
    "GoogleError",
    "clean_upstream",
    "explain_response",
    "explain_token_error",
]

UPSTREAM_LIMIT = 2000  # characters of Google's own words we pass on
TITLE_LIMIT = 120  # characters of an HTML page's <title>


class ErrorKind(Enum):
    API_NOT_ENABLED = "api_not_enabled"
    MISSING_SCOPE = "missing_scope"
    PERMISSION = "permission"
    NOT_OWNER = "not_owner"
    NOT_FOUND = "not_found"
    QUOTA = "quota"
    BAD_REQUEST = "bad_request"
    AUTH = "auth"
    SERVER = "server"
    NETWORK = "network"
    TOO_LARGE = "too_large"
    REDIRECT = "redirect"
    NOT_CONFIGURED = "not_configured"


class GoogleError(Exception):
    """A failure talking to Google; ``str(err)`` is the whole person-readable text.

    ``summary`` holds only our own sentences; ``upstream`` the labelled, cleaned words of whoever
    answered (or None). Callers that mark untrusted text separately can use the two halves.
    """

    def __init__(
        self,
        kind: ErrorKind,
        summary: str,
        *,
        status: int | None = None,
        upstream: str | None = None,
        retry_after: float | None = None,
        attempts: int = 1,
        transient: bool = True,
        reason: str = "",
    ) -> None:
        self.kind = kind
        self.reason = reason  # Google's own error code, when its token endpoint gave one ("invalid_grant")
        self.transient = transient  # False: trying again cannot help (an untrusted certificate)
        self.summary = summary
        self.status = status
        self.upstream = upstream
        self.retry_after = retry_after
        self.attempts = attempts
        super().__init__(self._text())

    def _text(self) -> str:
        text = self.summary
        if self.attempts > 1:
            text += f" (SearchDesk tried {self.attempts} times.)"
        if self.upstream:
            text += "\n" + self.upstream
        return text

    def __str__(self) -> str:
        return self._text()

    def with_attempts(self, attempts: int) -> GoogleError:
        """The same error, saying how often we tried (errors are immutable in spirit)."""
        return GoogleError(
            self.kind,
            self.summary,
            status=self.status,
            upstream=self.upstream,
            retry_after=self.retry_after,
            attempts=attempts,
            transient=self.transient,
            reason=self.reason,
        )


# ---------------------------------------------------------------------------------------------------
# Cleaning and redaction (searchdesk_server.text's cleaning and redaction; this is how Google's words use them)


def clean_upstream(text: str, limit: int = UPSTREAM_LIMIT, known: Iterable[str] = ()) -> str:
    """One line of someone else's text: no controls, no credentials, at most ``limit`` characters.

    Redacted before it is cut, so a cut can never split a secret into a piece no pattern recognises.
    """
    return cut_at(redact(flatten(text, None), known), limit)


# ---------------------------------------------------------------------------------------------------
# Reading Google's error JSON


@dataclass(frozen=True)
class _Upstream:
    """What an error body said, reduced to the few fields we classify by."""

    google_shaped: bool
    message: str = ""
    reasons: frozenset[str] = frozenset()
    status_name: str = ""
    retry_delay: float | None = None
    html_title: str | None = None
    is_html: bool = False
    cut: bool = False


_DURATION = re.compile(r"^\s*(\d{1,9}(?:\.\d{1,9})?)s\s*$")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)


def _parse_duration(value: object) -> float | None:
    """google.protobuf.Duration in JSON ("1.5s"), as RetryInfo carries it."""
    if isinstance(value, str) and (match := _DURATION.match(value)):
        return float(match.group(1))
    return None


def _strings(items: object, key: str) -> list[str]:
    if not isinstance(items, list):
        return []
    return [item[key] for item in items if isinstance(item, dict) and isinstance(item.get(key), str)]


def _read_google_json(doc: Mapping[str, Any]) -> _Upstream | None:
    error = doc.get("error")
    if isinstance(error, str):  # the OAuth token endpoint's shape
        description = doc.get("error_description")
        message = error + (f": {description}" if isinstance(description, str) else "")
        return _Upstream(google_shaped=True, message=message, reasons=frozenset({error}))
    if not isinstance(error, dict):
        return None
    raw_message = error.get("message")
    message = raw_message if isinstance(raw_message, str) else ""
    reasons = set(_strings(error.get("errors"), "reason"))
    retry_delay = None
    details = error.get("details")
    for detail in details if isinstance(details, list) else []:
        if not isinstance(detail, dict):
            continue
        kind = detail.get("@type")
        if kind == "type.googleapis.com/google.rpc.ErrorInfo" and isinstance(detail.get("reason"), str):
            reasons.add(detail["reason"])
        elif kind == "type.googleapis.com/google.rpc.RetryInfo":
            retry_delay = _parse_duration(detail.get("retryDelay"))
    status_name = error.get("status") if isinstance(error.get("status"), str) else ""
    return _Upstream(
        google_shaped=True,
        message=message,
        reasons=frozenset(reasons),
        status_name=str(status_name),
        retry_delay=retry_delay,
    )


def _read_body(body: bytes, content_type: str, cut: bool) -> _Upstream:
    text = body.decode("utf-8", errors="replace")
    start = text.lstrip()[:15].lower()
    if "html" in content_type.lower() or start.startswith(("<!doctype", "<html")):
        match = _TITLE.search(text)
        title = match.group(1) if match else None
        return _Upstream(google_shaped=False, is_html=True, html_title=title, cut=cut)
    if not cut:
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict) and (parsed := _read_google_json(doc)) is not None:
            return parsed
    elif text.lstrip().startswith("{") and (partial := _read_cut_json(text)) is not None:
        return partial
    return _Upstream(google_shaped=False, message=text, cut=cut)


_JSON_MESSAGE = re.compile(r'"message"\s*:\s*"((?:[^"\\]|\\.){0,4000})"')
_JSON_REASON = re.compile(r'"reason"\s*:\s*"([A-Za-z_]{1,64})"')


def _read_cut_json(text: str) -> _Upstream | None:
    """A Google error document cut at our read limit (a 429 padded to a megabyte): salvage its first
    message and its reasons, so the error is still classified and explained."""
    match = _JSON_MESSAGE.search(text)
    if match is None:
        return None
    try:
        message = json.loads(f'"{match.group(1)}"')
    except ValueError:
        return None
    reasons = frozenset(_JSON_REASON.findall(text))
    return _Upstream(google_shaped=True, message=str(message), reasons=reasons, cut=True)


# ---------------------------------------------------------------------------------------------------
# Classification


@dataclass(frozen=True)
class Service:
    """The API we called, in our own words (never Google's)."""

    name: str  # "the Search Console API"
    library_id: str  # "searchconsole.googleapis.com"

    @property
    def console_link(self) -> str:
        return f"https://console.cloud.google.com/apis/library/{self.library_id}"


_NOT_ENABLED = {"accessNotConfigured", "SERVICE_DISABLED"}
_SCOPE = {"insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"}
_QUOTA = {
    "rateLimitExceeded",
    "userRateLimitExceeded",
    "quotaExceeded",
    "dailyLimitExceeded",
    "RATE_LIMIT_EXCEEDED",
    "RESOURCE_EXHAUSTED",
}


def _kind(status: int, up: _Upstream, indexing: bool) -> ErrorKind:
    reasons = up.reasons
    message = up.message.lower()
    if reasons & _NOT_ENABLED:
        return ErrorKind.API_NOT_ENABLED
    if reasons & _SCOPE or "insufficient authentication scopes" in message:
        return ErrorKind.MISSING_SCOPE
    if status == 401:
        return ErrorKind.AUTH
    if status == 429 or reasons & _QUOTA or up.status_name == "RESOURCE_EXHAUSTED":
        return ErrorKind.QUOTA
    if status == 403 and indexing and "failed to verify the url ownership" in message:
        return ErrorKind.NOT_OWNER
    if status == 403:
        return ErrorKind.PERMISSION
    if status == 404:
        return ErrorKind.NOT_FOUND
    if status >= 500:
        return ErrorKind.SERVER
    return ErrorKind.BAD_REQUEST


def _summary(kind: ErrorKind, status: int, service: Service) -> str:
    what = f"(HTTP {status})"
    if kind is ErrorKind.API_NOT_ENABLED:
        return (
            f"{service.name[:1].upper()}{service.name[1:]} is not enabled in the Google Cloud project "
            f"these credentials belong to {what}. "
            f"Enable it at {service.console_link}, wait a few minutes, then try again."
        )
    if kind is ErrorKind.MISSING_SCOPE:
        return (
            f"The access token lacks a permission (OAuth scope) this call needs {what}. Sign in again in "
            "the SearchDesk app and allow every permission it asks for, or make sure the configured "
            "credentials were granted the scopes SearchDesk requests."
        )
    if kind is ErrorKind.NOT_OWNER:
        return (
            f"Google's Indexing API accepts requests only from a verified Owner of the property {what}. "
            "Add the account (for a service account, its client_email) as an Owner in Search Console "
            "(Settings, Users and permissions), then try again."
        )
    if kind is ErrorKind.PERMISSION:
        return (
            f"The account has no access, or not enough, to this property {what}. Add it under Settings, "
            "Users and permissions in Search Console, or use a property the account can see "
            "(list_sites shows them)."
        )
    if kind is ErrorKind.NOT_FOUND:
        return (
            f"Google found nothing there {what}. Check the property, sitemap or URL; list_sites and "
            "list_sitemaps show what exists."
        )
    if kind is ErrorKind.QUOTA:
        return (
            f"Google's rate limit or quota for {service.name} was reached {what}. Wait a minute and try "
            "again; daily quotas reset at midnight Pacific time."
        )
    if kind is ErrorKind.AUTH:
        return (
            f"Google did not accept the credentials {what}. Sign in again in the SearchDesk app, or check "
            "the configured credentials."
        )
    if kind is ErrorKind.SERVER:
        return f"Google's servers had a problem {what}. Try again in a few minutes."
    return f"Google refused the request as invalid {what}. Check the arguments and try again."


def _label(up: _Upstream, status: int, known: Iterable[str]) -> str | None:
    if up.is_html:
        title = clean_upstream(up.html_title or "", TITLE_LIMIT, known)
        named = f", titled “{title}”" if title else ""
        return (
            f"The server that answered in Google's place sent an HTML page (HTTP {status}{named}); "
            "it is not quoted here."
        )
    text = clean_upstream(up.message, UPSTREAM_LIMIT, known)
    if not text:
        return None
    if up.google_shaped:
        return f"Google said{' (its answer was cut)' if up.cut else ''}: {text}"
    cut = ", cut" if up.cut else ""
    return f"The server that answered in Google's place said (not Google's error format{cut}): {text}"


def explain_response(
    status: int,
    body: bytes,
    content_type: str,
    service: Service,
    *,
    cut: bool = False,
    indexing: bool = False,
    known_secrets: Iterable[str] = (),
) -> GoogleError:
    """Turn an error response (status >= 400, body already bounded) into a GoogleError."""
    up = _read_body(body, content_type, cut)
    kind = _kind(status, up, indexing)
    known = tuple(known_secrets)
    return GoogleError(
        kind,
        _summary(kind, status, service),
        status=status,
        upstream=_label(up, status, known),
        retry_after=up.retry_delay,
    )


def describe_non_json(status: int, body: bytes, content_type: str, known_secrets: Iterable[str] = ()) -> str:
    """Label a 2xx answer that is not JSON (a captive portal's login page, a proxy's notice)."""
    up = _read_body(body, content_type, cut=False)
    if not up.is_html:
        up = _Upstream(google_shaped=False, message=up.message)
    return _label(up, status, tuple(known_secrets)) or "The answer was empty."


#: The token endpoint's own error codes (RFC 6749 5.2) that a GoogleError's `reason` may carry.
TOKEN_ERRORS = ("invalid_grant", "invalid_client", "unauthorized_client", "invalid_scope", "invalid_request")


def explain_token_error(
    status: int,
    body: bytes,
    content_type: str,
    *,
    credential: str,
    origin: str,
    cut: bool = False,
    known_secrets: Iterable[str] = (),
) -> GoogleError:
    """Turn a refusal from Google's token endpoint into what to do about it.

    ``credential`` is "oauth" or "service_account"; ``origin`` names where the credential came from
    (variables, never values).
    """
    up = _read_body(body, content_type, cut)
    reasons = up.reasons
    upstream = _label(up, status, tuple(known_secrets))
    where = f" ({origin})" if origin else ""
    if "invalid_grant" in reasons and credential == "oauth":
        kind, summary = (
            ErrorKind.AUTH,
            f"Google refused the saved sign-in{where}: the sign-in was revoked or expired; sign in "
            "again (in the SearchDesk app, or create a new GSC_REFRESH_TOKEN).",
        )
    elif "invalid_grant" in reasons:
        kind, summary = (
            ErrorKind.AUTH,
            f"Google refused the service account's signed request{where}: the key may have been "
            "deleted or disabled, or this computer's clock is wrong. Check the key in the Google Cloud "
            "console (IAM, Service accounts) or create a new one.",
        )
    elif reasons & {"invalid_client", "unauthorized_client"}:
        kind, summary = (
            ErrorKind.AUTH,
            f"Google did not accept the OAuth client or service account{where}. Check that the client "
            "ID and secret belong together, or that the service account still exists and is enabled.",
        )
    elif "invalid_scope" in reasons:
        kind, summary = (
            ErrorKind.MISSING_SCOPE,
            f"Google would not grant the permissions (OAuth scopes) SearchDesk needs{where}. Sign in "
            "again and allow every permission it asks for.",
        )
    elif status == 429:
        kind, summary = (
            ErrorKind.QUOTA,
            "Google's sign-in service is limiting requests (HTTP 429). Wait a minute and try again.",
        )
    elif status >= 500:
        kind, summary = (
            ErrorKind.SERVER,
            f"Google's sign-in service had a problem (HTTP {status}). Try again in a few minutes.",
        )
    else:
        kind, summary = (
            ErrorKind.AUTH,
            f"Google's sign-in service refused to issue an access token (HTTP {status}){where}. "
            "Check the configured credentials.",
        )
    reason = next((r for r in TOKEN_ERRORS if r in reasons), "")
    return GoogleError(kind, summary, status=status, upstream=upstream, retry_after=up.retry_delay, reason=reason)
