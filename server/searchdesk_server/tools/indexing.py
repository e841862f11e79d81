"""Indexing API: notify Google of an updated or deleted URL, and read back what it recorded.

Google acts on these notifications only for job-posting and livestream pages; the quota is
200 a day, counted here across restarts. The caller must be an Owner of the property.
"""

from __future__ import annotations

from ..google import shapes as sh
from ..google.errors import ErrorKind, GoogleError
from ..google.http import Api
from ..result import Output, ToolFailure
from ..runtime import Call

PUBLISH = "v3/urlNotifications:publish"
METADATA = "v3/urlNotifications/metadata"
NOTE = "Google acts on Indexing API notifications only for job-posting and livestream pages."
#: What each notice asks of Google, said plainly (Indexing API quickstart: "Update a URL" asks Google to crawl
#: it; "Remove a URL" is for a page deleted from the server, so that Google removes it from its index).
RECORDED = {
    "URL_UPDATED": "Google's Indexing API recorded {url} as updated: Google is asked to crawl it again.",
    "URL_DELETED": (
        "Google's Indexing API recorded {url} as deleted: Google is asked to remove the page from its results. "
        "If the page still exists, ask again with URL_UPDATED so Google crawls it."
    ),
}
NOTIFY_FIELDS = (("type", "type", sh.text), ("time", "notifyTime", sh.text), ("url", "url", sh.text))


def _notifications(raw: object) -> dict[str, object]:
    meta = sh.record(raw)
    meta = sh.record(meta.get("urlNotificationMetadata")) or meta
    out: dict[str, object] = {}
    url = sh.text(meta.get("url"))
    if url:
        out["url"] = url
    for ours, theirs in (("latest_update", "latestUpdate"), ("latest_remove", "latestRemove")):
        picked = sh.pick(sh.record(meta.get(theirs)), NOTIFY_FIELDS)
        if picked:
            out[ours] = picked
    return out


async def quota_key(call: Call) -> str:
    """Google counts Indexing API requests per Google Cloud project: the OAuth client's (for a sign-in)
    or the service account's; the account's name only when the project is not known."""
    account = call.account
    if account is not None and account.quota_project:
        return f"project:{account.quota_project}"
    return await call.account_name() or "default"


async def request_indexing(call: Call) -> Output:
    url = call.url(call.args["url"])
    kind = call.args.get("type", "URL_UPDATED")
    quota, spends = call.runtime.quota, call.quota_kind
    who = await quota_key(call)
    if not quota.try_spend(spends, who):
        raise ToolFailure(
            f"The Indexing API quota ({quota.limit(spends)} a day) is used up for today (Pacific time). Google "
            "counts it per Google Cloud project, so it is shared by every account and everyone using the same "
            "OAuth client or service-account project."
        )
    try:
        raw = await call.google.call(Api.INDEXING, "POST", PUBLISH, body={"url": url, "type": kind})
    except GoogleError:
        quota.refund(spends, who)
        raise
    left = quota.remaining(spends, who)
    data = _notifications(raw)
    text = f"{RECORDED[kind].format(url=url)} {NOTE} Quota left today: {left} of {quota.limit(spends)}."
    return Output(text, {"url": url, "type": kind, "notification": data, "quota_left": left})


async def get_indexing_status(call: Call) -> Output:
    url = call.url(call.args["url"])
    try:
        raw = await call.google.call(Api.INDEXING, "GET", METADATA, query={"url": url}, retry=True)
    except GoogleError as exc:
        if exc.kind is ErrorKind.NOT_FOUND:
            return Output(
                f"The Indexing API has no notifications recorded for {url}.",
                {"url": url, "found": False},
                from_google=False,
            )
        raise
    data = _notifications(raw)
    lines = [f"Indexing API notifications for {url}:"]
    for key, label in (("latest_update", "Last update"), ("latest_remove", "Last removal")):
        entry = data.get(key)
        if isinstance(entry, dict):
            lines.append(f"- {label}: {sh.cell(entry.get('time', ''))} ({sh.cell(entry.get('type', ''))})")
    if len(lines) == 1:
        lines.append("- none recorded")
    lines.append(NOTE)
    return Output("\n".join(lines), {"url": url, "found": True, **data})
