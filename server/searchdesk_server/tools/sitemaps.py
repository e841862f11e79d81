"""Sitemaps: list, get, submit one or many, and (guarded) delete."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..deadlines import Deadline
from ..google import shapes as sh
from ..google.errors import GoogleError
from ..google.http import Api
from ..result import Output, ToolFailure
from ..runtime import Call, plural
from ._batch import NOT_STARTED, ending, run_batch
from ._listing import listing

LIST = "webmasters/v3/sites/{siteUrl}/sitemaps"
ONE = "webmasters/v3/sites/{siteUrl}/sitemaps/{feedpath}"
BATCH_CONCURRENCY = 4

FIELDS = (
    ("path", "path", sh.text),
    ("type", "type", sh.text),
    ("is_index", "isSitemapsIndex", sh.boolean),
    ("pending", "isPending", sh.boolean),
    ("last_submitted", "lastSubmitted", sh.text),
    ("last_downloaded", "lastDownloaded", sh.text),
    ("errors", "errors", sh.number),
    ("warnings", "warnings", sh.number),
)


def sitemap(entry: dict[str, Any]) -> dict[str, Any]:
    out = sh.pick(entry, FIELDS)
    contents = []
    for c in sh.records(entry, "contents"):
        item = sh.pick(
            c,
            (
                ("type", "type", sh.text),
                ("submitted", "submitted", sh.number),
                ("indexed", "indexed", sh.number),
            ),
        )
        if item:
            contents.append(item)
    if contents:
        out["contents"] = contents
        out["submitted"] = sum(c.get("submitted", 0) for c in contents)
    return out


def _row(s: Mapping[str, Any]) -> list[str]:
    kind = "index" if s.get("is_index") else s.get("type", "")
    return [
        sh.cell(s.get("path")),
        sh.cell(kind),
        sh.cell(s.get("last_submitted", "")[:10]),
        sh.cell(s.get("last_downloaded", "")[:10]),
        sh.cell(s.get("errors")),
        sh.cell(s.get("warnings")),
        sh.cell(s.get("submitted")),
        "yes" if s.get("pending") else "",
    ]


HEADERS = ["Sitemap", "Type", "Submitted", "Downloaded", "Errors", "Warnings", "URLs", "Pending"]


async def list_sitemaps(call: Call) -> Output:
    site = call.site()
    query: dict[str, str | list[str]] = {}
    if "sitemap_index" in call.args:
        query["sitemapIndex"] = call.url(call.args["sitemap_index"], "sitemap_index")
    raw = await call.google.call(Api.SEARCHCONSOLE, "GET", LIST, path_params={"siteUrl": site}, query=query, retry=True)
    maps = [m for m in (sitemap(e) for e in sh.records(raw, "sitemap")) if "path" in m]
    errors = sum(m.get("errors", 0) for m in maps)
    warnings = sum(m.get("warnings", 0) for m in maps)
    return listing(
        entries=maps,
        headers=HEADERS,
        row=_row,
        intro=f"{plural(len(maps), 'sitemap')} for {site} ({plural(int(errors), 'error')}, "
        f"{plural(int(warnings), 'warning')}):",
        key="sitemaps",
        narrow="Use get_sitemap for one sitemap, or sitemap_index for one index's children.",
        noun="sitemaps",
        extra={"site": site},
    )


async def get_sitemap(call: Call) -> Output:
    site = call.site()
    feed = call.url(call.args["feedpath"], "feedpath")
    raw = await call.google.call(
        Api.SEARCHCONSOLE, "GET", ONE, path_params={"siteUrl": site, "feedpath": feed}, retry=True
    )
    entry = sitemap(sh.record(raw))
    if "path" not in entry:
        raise ToolFailure("Google answered without sitemap data for that sitemap; try list_sitemaps.")
    lines = [sh.md_table(HEADERS, [_row(entry)])]
    for c in entry.get("contents", []):
        lines.append(f"- {sh.cell(c.get('type'))}: {sh.cell(c.get('submitted'))} submitted")
    return Output("\n".join(lines), {"site": site, "sitemap": entry})


async def _submit(call: Call, site: str, feed: str, deadline: float | None = None) -> None:
    await call.google.call(
        Api.SEARCHCONSOLE,
        "PUT",
        ONE,
        path_params={"siteUrl": site, "feedpath": feed},
        retry=True,
        deadline=deadline,
    )


async def submit_sitemap(call: Call) -> Output:
    site = call.site()
    feed = call.url(call.args["feedpath"], "feedpath")
    await _submit(call, site, feed)
    return Output(
        f"Submitted {feed} for {site}. Google fetches it later; list_sitemaps shows the outcome.",
        {"site": site, "feedpath": feed, "submitted": True},
        from_google=False,
    )


async def submit_sitemaps(call: Call) -> Output:
    site = call.site()
    feeds = [call.url(f, f"feedpaths[{i}]") for i, f in enumerate(call.args["feedpaths"])]
    feeds = list(dict.fromkeys(feeds))
    results: list[dict[str, Any]] = [{"feedpath": f, "status": NOT_STARTED} for f in feeds]

    async def one(i: int) -> bool:
        try:
            await _submit(call, site, feeds[i], deadline.at)
            results[i]["status"] = "submitted"
        except GoogleError as exc:
            results[i]["status"] = "failed"
            results[i]["error"] = str(exc)
        return True

    deadline = Deadline.after(call.runtime.batch_seconds)
    end = await run_batch(call, results, BATCH_CONCURRENCY, one, deadline)
    ok = sum(r["status"] == "submitted" for r in results)
    attempted = sum(r["status"] != NOT_STARTED for r in results)
    lines = [f"Submitted {ok} of {len(feeds)} sitemaps for {site}."]
    lines += ending(
        end, False, f"To continue, call submit_sitemaps again with just those sitemaps{call.and_account()}."
    )
    if end.cut_off:
        lines.append("list_sitemaps shows whether Google has them; the record of changes marks them unknown.")
    for r in results:
        lines.append(f"- {r['feedpath']}: {r['status']}" + (f" — {r['error']}" if "error" in r else ""))
    return Output(
        "\n".join(lines),
        {
            "site": site,
            "results": results,
            "submitted": ok,
            "attempted": attempted,
            "total": len(feeds),
            "not_started": [feeds[i] for i in end.not_started],
            **end.fields(),
        },
        from_google=any("error" in r for r in results),
    )


async def delete_sitemap(call: Call) -> Output:
    site, feed = call.question.site, call.question.feedpath
    await call.google.call(
        Api.SEARCHCONSOLE, "DELETE", ONE, path_params={"siteUrl": site, "feedpath": feed}, retry=False
    )
    return Output(
        f"Removed the sitemap {feed} from the Sitemaps report of {site}. Google may still crawl it; "
        "submit_sitemap adds it back.",
        {"site": site, "feedpath": feed, "deleted": True},
        from_google=False,
    )
