"""urlInspection.index.inspect: a result of every kind, chosen by the URL alone.

Well-known pages have a fixed outcome (listed in FIXED, so tests and docs can rely on them); other known
pages get one by hash; a URL the demo has never heard of is "URL is unknown to Google", as in Search
Console. Verdicts: PASS (indexed), PARTIAL (indexed with a warning, or rich results with warnings), FAIL
(an error: 404, 5xx, soft 404, or a rich result item with an error) and NEUTRAL (excluded on purpose).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import quote, urlsplit

from . import wire
from .facts import lexicon_for
from .faults import GoogleFault, bad_request
from .prng import token, unit
from .request import DemoRequest
from .scope import covers, host_of
from .state import CAN_READ, DemoState
from .vocab import families

NOT_YOURS = "You do not own this site, or the inspected URL is not part of this property."
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*")
W = "https://www.example.com/"


@dataclass(frozen=True)
class Outcome:
    verdict: str
    coverage: str
    robots: str = "ALLOWED"
    indexing: str = "INDEXING_ALLOWED"
    fetch: str = "SUCCESSFUL"
    crawled: bool = True
    canonical: str = "self"  # "self", "none", "other" or "google" (Google chose one; the page declares none)
    in_sitemap: bool = True
    mobile: str = "PASS"
    rich: str = ""  # "", "PASS", "PARTIAL" or "FAIL"
    amp: str = ""  # "", "PASS" or "FAIL"


OUTCOMES: dict[str, Outcome] = {
    "indexed": Outcome("PASS", "Submitted and indexed"),
    "indexed_rich": Outcome("PASS", "Submitted and indexed", rich="PASS"),
    "indexed_not_submitted": Outcome("PASS", "Indexed, not submitted in sitemap", in_sitemap=False),
    "rich_fail": Outcome("PASS", "Submitted and indexed", rich="FAIL"),
    "rich_warning": Outcome("PASS", "Submitted and indexed", rich="PARTIAL"),
    "mobile_fail": Outcome("PASS", "Submitted and indexed", mobile="FAIL"),
    "amp_pass": Outcome("PASS", "Indexed, not submitted in sitemap", canonical="other", in_sitemap=False, amp="PASS"),
    "amp_fail": Outcome("PASS", "Indexed, not submitted in sitemap", canonical="other", in_sitemap=False, amp="FAIL"),
    "blocked_indexed": Outcome(
        "PARTIAL", "Indexed, though blocked by robots.txt", robots="DISALLOWED", fetch="BLOCKED_ROBOTS_TXT", mobile=""
    ),
    "not_found": Outcome("FAIL", "Not found (404)", fetch="NOT_FOUND", canonical="none", mobile=""),
    "server_error": Outcome("FAIL", "Server error (5xx)", fetch="SERVER_ERROR", canonical="none", mobile=""),
    "soft_404": Outcome("FAIL", "Soft 404", fetch="SOFT_404", canonical="none", mobile=""),
    "noindex": Outcome(
        "NEUTRAL", "Excluded by ‘noindex’ tag", indexing="BLOCKED_BY_META_TAG", canonical="none", mobile=""
    ),
    "crawled_not_indexed": Outcome("NEUTRAL", "Crawled - currently not indexed", canonical="none", mobile=""),
    "discovered": Outcome(
        "NEUTRAL",
        "Discovered - currently not indexed",
        robots="ROBOTS_TXT_STATE_UNSPECIFIED",
        indexing="INDEXING_STATE_UNSPECIFIED",
        fetch="PAGE_FETCH_STATE_UNSPECIFIED",
        crawled=False,
        canonical="none",
        mobile="",
    ),
    "duplicate": Outcome(
        "NEUTRAL", "Duplicate, Google chose different canonical than user", canonical="other", mobile=""
    ),
    "duplicate_no_canonical": Outcome(
        "NEUTRAL", "Duplicate without user-selected canonical", canonical="google", in_sitemap=False, mobile=""
    ),
    "blocked": Outcome(
        "NEUTRAL",
        "Blocked by robots.txt",
        robots="DISALLOWED",
        fetch="BLOCKED_ROBOTS_TXT",
        crawled=False,
        canonical="none",
        in_sitemap=False,
        mobile="",
    ),
    "alternate": Outcome(
        "NEUTRAL", "Alternate page with proper canonical tag", canonical="other", in_sitemap=False, mobile=""
    ),
    "redirect": Outcome("NEUTRAL", "Page with redirect", canonical="none", in_sitemap=False, mobile=""),
    "unknown": Outcome(
        "NEUTRAL",
        "URL is unknown to Google",
        robots="ROBOTS_TXT_STATE_UNSPECIFIED",
        indexing="INDEXING_STATE_UNSPECIFIED",
        fetch="PAGE_FETCH_STATE_UNSPECIFIED",
        crawled=False,
        canonical="none",
        in_sitemap=False,
        mobile="",
    ),
}
FIXED: dict[str, str] = {
    W: "indexed",
    "https://example.com/": "redirect",
    "http://www.example.com/": "redirect",
    W + "products/garden-hose": "rich_fail",
    W + "products/hedge-trimmer": "rich_warning",
    W + "products/pruning-shears": "indexed_rich",
    W + "about/": "mobile_fail",
    W + "sale/": "blocked_indexed",
    W + "stores/": "server_error",
    W + "contact/": "crawled_not_indexed",
    W + "old/spring-catalog": "not_found",
    W + "deals/\x1b[31mflash-sale": "soft_404",
    W + "amp/guides/how-to-prune-roses": "amp_pass",
    W + "amp/guides/when-to-plant-tomatoes": "amp_fail",
    W + "guides/how-to-prune-roses": "indexed_not_submitted",
    W + "es/productos/tijeras-de-podar": "alternate",
    "https://blog.example.com/posts/no-dig-gardening": "duplicate",
    "https://blog.example.com/posts/kids-garden-projects": "discovered",
    "https://shop.example.org/products/plant-stand": "noindex",
    W + "products/garden-hose?colour=green": "duplicate_no_canonical",
    W + "cart/": "blocked",
}
_BY_HASH = (
    "indexed",
    "indexed",
    "indexed",
    "indexed_rich",
    "indexed_not_submitted",
    "crawled_not_indexed",
    "discovered",
    "duplicate",
    "rich_warning",
    "noindex",
)


@lru_cache(maxsize=1)
def known_pages() -> frozenset[str]:
    return frozenset(url for family in families() for url in lexicon_for(family.name).pages)


def outcome_for(url: str) -> str:
    """The name of the outcome the demo gives a URL."""
    if url in FIXED:
        return FIXED[url]
    if url.startswith("http://"):
        return "redirect"
    if url not in known_pages():
        return "unknown"
    if "/search?" in url:
        return "noindex"
    if "/amp/" in url:
        return "amp_pass"
    return _BY_HASH[int(unit("inspect", url) * len(_BY_HASH))]


def inspect(state: DemoState, req: DemoRequest) -> object:
    body = wire.fields(wire.read_object(req.body), ("inspectionUrl", "siteUrl", "languageCode"))
    url = wire.text(body, "inspectionUrl")
    site_url = wire.text(body, "siteUrl")
    language = wire.text(body, "languageCode")
    if not url:
        raise bad_request("inspectionUrl is required.")
    if not site_url:
        raise bad_request("siteUrl is required.")
    if language is not None and (len(language) > 35 or not _LANGUAGE.fullmatch(language)):
        raise bad_request("languageCode must be an IETF BCP-47 language tag such as en-US.")
    if host_of(url) is None:
        raise bad_request("inspectionUrl must be an absolute http or https URL.")
    if state.permission(site_url) not in CAN_READ or not covers(site_url, url):
        raise GoogleFault(403, NOT_YOURS)
    return {"inspectionResult": result(url, site_url, state)}


def result(url: str, site_url: str, state: DemoState) -> dict[str, Any]:
    outcome = OUTCOMES[outcome_for(url)]
    link = (
        "https://search.google.com/search-console/inspect?resource_id="
        + quote(site_url, safe="")
        + "&id="
        + token("inspect-id", url)
        + "&utm_medium=link&utm_source=api"
    )
    out: dict[str, Any] = {"inspectionResultLink": link, "indexStatusResult": _index_status(url, outcome, state)}
    if outcome.amp:
        out["ampResult"] = _amp(url, outcome, state)
    if outcome.mobile:
        out["mobileUsabilityResult"] = _mobile(outcome)
    if outcome.rich:
        out["richResultsResult"] = _rich(url, outcome.rich)
    return out


def _crawl_time(url: str, state: DemoState) -> str:
    days = 1 + int(unit("crawl-day", url) * 20)
    return state.clock.stamp(days, int(unit("crawl-second", url) * 86_000)).split(".")[0] + "Z"


def _index_status(url: str, outcome: Outcome, state: DemoState) -> dict[str, Any]:
    out: dict[str, Any] = {"verdict": outcome.verdict, "coverageState": outcome.coverage}
    out["robotsTxtState"] = outcome.robots
    out["indexingState"] = outcome.indexing
    if outcome.crawled:
        out["lastCrawlTime"] = _crawl_time(url, state)
    out["pageFetchState"] = outcome.fetch
    if outcome.canonical == "self":
        out["googleCanonical"] = url
        out["userCanonical"] = url
    elif outcome.canonical == "google":
        out["googleCanonical"] = url.split("?", 1)[0]
    elif outcome.canonical == "other":
        out["googleCanonical"] = _canonical_of(url)
        out["userCanonical"] = url if outcome.coverage.startswith("Duplicate") else _canonical_of(url)
    if outcome.in_sitemap:
        out["sitemap"] = [_sitemap_of(url)]
    if outcome.crawled or outcome.coverage.startswith("Discovered"):
        out["referringUrls"] = _referrers(url)
    if outcome.crawled:
        out["crawledAs"] = "MOBILE"
    return out


def _canonical_of(url: str) -> str:
    if "/amp/" in url:
        return url.replace("/amp/", "/", 1)
    if "/es/productos/" in url:
        return W + "products/pruning-shears"
    return url.rsplit("/", 1)[0] + "/"


def _sitemap_of(url: str) -> str:
    host = urlsplit(url).netloc
    if host == "www.example.com":
        section = "products" if "/products/" in url else "pages"
        return f"{W}sitemaps/{section}.xml"
    return f"https://{host}/sitemap.xml"


def _referrers(url: str) -> list[str]:
    host = urlsplit(url).netloc
    home = f"https://{host}/"
    referrers = [home] if url != home else []
    if "/products/" in url:
        referrers.append(W + "category/tools/")
    referrers.append("https://blog.example.com/posts/garden-tool-maintenance")
    return [r for r in referrers if r != url]


def _mobile(outcome: Outcome) -> dict[str, Any]:
    if outcome.mobile != "FAIL":
        return {"verdict": outcome.mobile}
    return {
        "verdict": "FAIL",
        "issues": [
            {
                "issueType": "TAP_TARGETS_TOO_CLOSE",
                "severity": "ERROR",
                "message": "Clickable elements too close together",
            },
            {"issueType": "USE_LEGIBLE_FONT_SIZES", "severity": "ERROR", "message": "Text too small to read"},
        ],
    }


def _rich(url: str, verdict: str) -> dict[str, Any]:
    name = url.rstrip("/").rsplit("/", 1)[-1].replace("-", " ").title()
    breadcrumbs = {"richResultType": "Breadcrumbs", "items": [{"name": "Unnamed item"}]}
    if verdict == "FAIL":
        product = {
            "richResultType": "Product snippets",
            "items": [
                {
                    "name": f"{name} 50 ft",
                    "issues": [
                        {
                            "issueMessage": 'Either "offers", "review", or "aggregateRating" should be specified',
                            "severity": "ERROR",
                        }
                    ],
                },
                {"name": f"{name} 75 ft"},
            ],
        }
        merchant = {
            "richResultType": "Merchant listings",
            "items": [
                {
                    "name": f"{name} 75 ft",
                    "issues": [{"issueMessage": 'Missing field "hasMerchantReturnPolicy"', "severity": "WARNING"}],
                }
            ],
        }
        return {"verdict": "FAIL", "detectedItems": [product, merchant, breadcrumbs]}
    if verdict == "PARTIAL":
        product = {
            "richResultType": "Product snippets",
            "items": [
                {
                    "name": name,
                    "issues": [
                        {"issueMessage": 'Missing field "brand"', "severity": "WARNING"},
                        {"issueMessage": 'Missing field "review"', "severity": "WARNING"},
                    ],
                }
            ],
        }
        return {"verdict": "PARTIAL", "detectedItems": [product, breadcrumbs]}
    kind = "FAQ" if "/guides/" in url else "Product snippets"
    return {"verdict": "PASS", "detectedItems": [{"richResultType": kind, "items": [{"name": name}]}, breadcrumbs]}


def _amp(url: str, outcome: Outcome, state: DemoState) -> dict[str, Any]:
    out: dict[str, Any] = {
        "verdict": outcome.amp,
        "ampUrl": url,
        "robotsTxtState": "ALLOWED",
        "indexingState": "AMP_INDEXING_ALLOWED",
        "ampIndexStatusVerdict": "PASS",
        "lastCrawlTime": _crawl_time(url + "#amp", state),
        "pageFetchState": "SUCCESSFUL",
    }
    if outcome.amp == "FAIL":
        out["issues"] = [
            {
                "issueMessage": "The attribute 'onclick' may not appear in tag 'button'.",
                "severity": "ERROR",
            },
            {"issueMessage": "Custom JavaScript is not allowed.", "severity": "ERROR"},
        ]
        out["ampIndexStatusVerdict"] = "FAIL"
    return out
