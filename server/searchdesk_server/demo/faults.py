"""Google-shaped faults raised by the demo's handlers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_STATUS = {
    400: ("INVALID_ARGUMENT", "badRequest"),
    401: ("UNAUTHENTICATED", "authError"),
    403: ("PERMISSION_DENIED", "forbidden"),
    404: ("NOT_FOUND", "notFound"),
    405: ("METHOD_NOT_ALLOWED", "methodNotAllowed"),
    409: ("ALREADY_EXISTS", "duplicate"),
    429: ("RESOURCE_EXHAUSTED", "rateLimitExceeded"),
    500: ("INTERNAL", "backendError"),
}


class GoogleFault(Exception):
    """An error Google would answer with; DemoGoogle turns it into Google's JSON error body."""

    def __init__(
        self,
        code: int,
        message: str,
        *,
        reason: str | None = None,
        status: str | None = None,
        extra: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        default_status, default_reason = _STATUS.get(code, ("UNKNOWN", "unknown"))
        self.code = code
        self.message = message
        self.reason = reason or default_reason
        self.status = status or default_status
        self.extra = dict(extra or {})
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {
            "code": self.code,
            "message": self.message,
            "errors": [{"message": self.message, "domain": "global", "reason": self.reason}],
            "status": self.status,
        }
        error.update(self.extra)
        return {"error": error}


def bad_request(message: str) -> GoogleFault:
    return GoogleFault(400, message)


def not_found(message: str = "Requested entity was not found.") -> GoogleFault:
    return GoogleFault(404, message)


def no_permission(site_url: str) -> GoogleFault:
    """What Search Console answers for a property the caller cannot see."""
    return GoogleFault(
        403,
        f"User does not have sufficient permission for site '{site_url}'. "
        "See also: https://support.google.com/webmasters/answer/2451999.",
    )
