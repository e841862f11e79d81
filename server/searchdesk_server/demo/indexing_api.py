"""Indexing API v3: publish a URL notification, read a URL's notification metadata.

Only a verified owner may notify about a URL (checked against Site Verification, as Google does), so the
full-user, restricted and unverified properties answer 403 here.
"""

from __future__ import annotations

from . import wire
from .faults import GoogleFault, bad_request, not_found
from .request import DemoRequest
from .scope import MAX_URL, host_of
from .site_verification import owns_url
from .state import DemoState, Notification

NOT_OWNER = "Permission denied. Failed to verify the URL ownership."
TYPES = {"urlupdated": "URL_UPDATED", "urldeleted": "URL_DELETED"}
TYPES["urlnotificationtypeunspecified"] = "URL_NOTIFICATION_TYPE_UNSPECIFIED"


def _checked_url(url: str | None) -> str:
    if not url:
        raise bad_request("Missing required field: url.")
    if len(url) > MAX_URL or host_of(url) is None:
        raise bad_request("The url is not a valid absolute http or https URL.")
    return url


def publish(state: DemoState, req: DemoRequest) -> object:
    body = wire.fields(wire.read_object(req.body), ("url", "type", "notifyTime"))
    url = _checked_url(wire.text(body, "url"))
    kind = wire.enum(body, "type", TYPES, "URL_NOTIFICATION_TYPE_UNSPECIFIED", "type.googleapis.com/indexing.Type")
    if kind == "URL_NOTIFICATION_TYPE_UNSPECIFIED":
        raise bad_request("type must be URL_UPDATED or URL_DELETED.")
    if not owns_url(state, url):
        raise GoogleFault(403, NOT_OWNER)
    record = state.notifications.setdefault(url, Notification(url))
    if kind == "URL_UPDATED":
        record.latest_update = state.notify_time()
    else:
        record.latest_remove = state.notify_time()
    return {"urlNotificationMetadata": record.to_json()}


def metadata(state: DemoState, req: DemoRequest) -> object:
    url = _checked_url(req.query_value("url"))
    if not owns_url(state, url):
        raise GoogleFault(403, NOT_OWNER)
    record = state.notifications.get(url)
    if record is None:
        raise not_found()
    return record.to_json()
