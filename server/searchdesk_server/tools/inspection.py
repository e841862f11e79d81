"""URL Inspection: one URL in detail, or verdicts for up to 20.

Quota: 2,000 inspections a day per property (counted across restarts) and 600 a minute; a
batch runs a few at a time and stops at the first 429 rather than burning the rest.
"""

from __future__ import annotations

import re
from typing import Any

from ..coverage.records import INDEX_FIELDS
from ..deadlines import Deadline
from ..google import shapes as sh
from ..google.errors import ErrorKind, GoogleError
from ..google.http import Api, Limit
from ..result import Output, ToolFailure
from ..runtime import Call
from ._batch import NOT_STARTED, ending, run_batch

INSPECT = "v1/urlInspection/index:inspect"
BATCH_CONCURRENCY = 5
_LANG = re.compile(r"^[A-Za-z0-9-]{1,35}$")


def _language(call: Call) -> str | None:
    lang = call.args.get("language_code")
    if lang is not None and not _LANG.match(lang):
        raise ToolFailure("language_code must be a language tag such as en-US (letters, digits, hyphens; ≤ 35).")
    return lang


def rich_results(result: dict[str, Any]) -> dict[str, Any] | None:
    """Rich results with our own verdict: any item with an ERROR issue is a failure, whatever Google says."""
    rich = sh.record(result.get("richResultsResult"))
    if not rich:
        return None
    detected = []
    failed = False
    for d in sh.records(rich, "detectedItems"):
        issues = []
        for item in sh.records(d, "items"):
            for issue in sh.records(item, "issues"):
                severity = sh.text(issue.get("severity")) or ""
                failed = failed or severity.upper() == "ERROR"
                issues.append(
                    {
                        "item": sh.text(item.get("name")) or "",
                        "severity": severity,
                        "message": sh.text(issue.get("issueMessage")) or "",
                    }
                )
        detected.append({"type": sh.text(d.get("richResultType")) or "", "issues": issues})
    google_verdict = sh.text(rich.get("verdict")) or ""
    verdict = "FAIL" if failed else google_verdict
    return {"verdict": verdict, "google_verdict": google_verdict, "detected": detected}


def summarise(raw: object) -> dict[str, Any]:
    result = sh.record(sh.record(raw).get("inspectionResult"))
    index = sh.record(result.get("indexStatusResult"))
    out: dict[str, Any] = {"index": sh.pick(index, INDEX_FIELDS)}
    refs = sh.texts(index.get("referringUrls"))
    maps = sh.texts(index.get("sitemap"))
    if refs:
        out["index"]["referring_urls"] = refs[:20]
    if maps:
        out["index"]["sitemaps"] = maps[:20]
    mobile = sh.record(result.get("mobileUsabilityResult"))
    if mobile:
        out["mobile"] = {
            "verdict": sh.text(mobile.get("verdict")) or "",
            "issues": [
                sh.text(i.get("message")) or sh.text(i.get("issueType")) or "" for i in sh.records(mobile, "issues")
            ],
        }
    rich = rich_results(result)
    if rich:
        out["rich_results"] = rich
    amp = sh.record(result.get("ampResult"))
    if amp:
        out["amp"] = {
            "verdict": sh.text(amp.get("verdict")) or "",
            "state": sh.text(amp.get("indexingState")) or "",
        }
    link = sh.text(result.get("inspectionResultLink"))
    if link:
        out["link"] = link
    return out


async def _inspect(call: Call, site: str, url: str, lang: str | None, deadline: float | None = None) -> dict[str, Any]:
    quota = call.runtime.quota
    if not quota.try_spend(call.quota_kind, site):
        raise ToolFailure(
            f"The URL Inspection quota for {site} ({quota.limit(call.quota_kind):,} a day) is used up for today "
            "(Pacific time); try again tomorrow."
        )
    body: dict[str, Any] = {"inspectionUrl": url, "siteUrl": site}
    if lang:
        body["languageCode"] = lang
    raw = await call.google.call(
        Api.SEARCHCONSOLE, "POST", INSPECT, body=body, limit=Limit.INSPECTION, retry=True, deadline=deadline
    )
    return summarise(raw)


def _lines(url: str, s: dict[str, Any]) -> list[str]:
    idx = s["index"]
    lines = [
        f"URL: {sh.cell(url, 300)}",
        f"Verdict: {sh.cell(idx.get('verdict', 'unknown'))} — {sh.cell(idx.get('coverage', ''))}",
    ]
    labels = (
        ("indexing_state", "Indexing allowed"),
        ("robots_txt", "robots.txt"),
        ("page_fetch", "Page fetch"),
        ("last_crawl", "Last crawl"),
        ("crawled_as", "Crawled as"),
        ("google_canonical", "Google's canonical"),
        ("user_canonical", "Declared canonical"),
    )
    lines += [f"{label}: {sh.cell(idx[key], 300)}" for key, label in labels if key in idx]
    if "mobile" in s:
        lines.append(
            f"Mobile usability: {sh.cell(s['mobile']['verdict'])}"
            + "".join(f"; {sh.cell(i)}" for i in s["mobile"]["issues"])
        )
    if "rich_results" in s:
        rich = s["rich_results"]
        lines.append(
            f"Rich results: {sh.cell(rich['verdict'])}"
            + (" (Google says PASS, but an item has an error)" if rich["verdict"] != rich["google_verdict"] else "")
        )
        for d in rich["detected"]:
            for issue in d["issues"]:
                where = f"{sh.cell(d['type'])} / {sh.cell(issue['item'])}"
                lines.append(f"  - {where}: {sh.cell(issue['severity'])} {sh.cell(issue['message'])}")
    if "amp" in s:
        lines.append(f"AMP: {sh.cell(s['amp']['verdict'])}")
    return lines


async def inspect_url(call: Call) -> Output:
    site = call.site()
    url = call.url(call.args["url"])
    lang = _language(call)
    summary = await _inspect(call, site, url, lang)
    quota = call.runtime.quota
    left = quota.remaining(call.quota_kind, site)
    lines = _lines(url, summary)
    lines.append(f"(URL Inspection quota left today for this property: {left:,} of {quota.limit(call.quota_kind):,}.)")
    data: dict[str, Any] = {"site": site, "url": url, **summary, "quota_left": left}
    from .coverage import older_result

    older = await older_result(call, site, url)
    if older is not None:
        lines.append(
            f"SearchDesk's watch last inspected this page on {sh.cell(older['inspected_at'][:10])}: "
            f"{sh.cell(older['verdict'])} — {sh.cell(older['coverage'])}."
        )
        data["watch"] = older
    return Output("\n".join(lines), data)


async def inspect_urls(call: Call) -> Output:
    site = call.site()
    urls = list(dict.fromkeys(call.url(u, f"urls[{i}]") for i, u in enumerate(call.args["urls"])))
    lang = _language(call)
    results: list[dict[str, Any]] = [{"url": u, "status": NOT_STARTED} for u in urls]
    stop: list[str] = []

    async def one(i: int) -> bool:
        try:
            summary = await _inspect(call, site, urls[i], lang, deadline.at)
        except GoogleError as exc:
            results[i].update(status="failed", error=str(exc))
            if exc.kind is ErrorKind.QUOTA:
                stop.append("Google answered 429 (quota or rate limit); the rest were not attempted.")
                return False
            return True
        except ToolFailure as exc:
            results[i].update(status="failed", error=str(exc))
            stop.append(str(exc))
            return False
        idx = summary["index"]
        results[i].update(status="inspected", verdict=idx.get("verdict", ""), coverage=idx.get("coverage", ""))
        for key in ("mobile", "rich_results", "amp"):
            if key in summary:
                results[i][key] = summary[key]["verdict"]
        return True

    deadline = Deadline.after(call.runtime.batch_seconds)
    end = await run_batch(call, results, BATCH_CONCURRENCY, one, deadline)
    attempted = sum(r["status"] != NOT_STARTED for r in results)
    lines = [f"Inspected {sum(r['status'] == 'inspected' for r in results)} of {len(urls)} URLs for {site}."]
    if stop:
        lines.append(stop[0])
    lines += ending(end, bool(stop), f"To continue, call inspect_urls again with just those URLs{call.and_account()}.")
    table = [
        [
            sh.cell(r["url"], 300),
            sh.cell(r.get("verdict", r["status"])),
            sh.cell(r.get("coverage", r.get("error", ""))),
            sh.cell(r.get("mobile", "")),
            sh.cell(r.get("rich_results", "")),
        ]
        for r in results
    ]
    lines.append(sh.md_table(["URL", "Verdict", "Coverage", "Mobile", "Rich results"], table))
    data = {"site": site, "results": results, "attempted": attempted, "total": len(urls)}
    return Output("\n".join(lines), {**data, "not_started": [urls[i] for i in end.not_started], **end.fields()})
