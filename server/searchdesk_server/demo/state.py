"""The demo account's mutable records: properties, sitemaps, verified sites and Indexing notifications.

Writes change these (a deleted property is gone, an added one is unverified, a verification makes you an
owner), so tests and the demo can observe the effect of every write. Analytics facts are not here: they
are immutable and shared between instances (see facts.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .clock import DemoClock
from .scope import DOMAIN_PREFIX

DEMO_USER = "demo.owner@example.com"
OWNER = "siteOwner"
FULL = "siteFullUser"
RESTRICTED = "siteRestrictedUser"
UNVERIFIED = "siteUnverifiedUser"
CAN_READ = frozenset({OWNER, FULL, RESTRICTED})
CAN_WRITE_SITEMAPS = frozenset({OWNER, FULL})

INITIAL_SITES: tuple[tuple[str, str], ...] = (
    ("sc-domain:example.com", UNVERIFIED),  # owner through the dns://example.com verification
    ("https://www.example.com/", UNVERIFIED),  # owner through its own verification
    ("https://blog.example.com/", FULL),
    ("https://shop.example.org/", RESTRICTED),
    ("https://old.example.net/", UNVERIFIED),
)
# Hosts the demo user controls: verification succeeds for these and fails for everything else.
CONTROLLED_DOMAINS = ("example.com", "old.example.net")


@dataclass
class Sitemap:
    path: str
    submitted_days_ago: int
    submitted_second: int
    kind: str | None = "sitemap"
    downloaded_days_ago: int | None = 1
    warnings: int = 0
    errors: int = 0
    contents: tuple[tuple[str, int], ...] = ()
    children: tuple[str, ...] = ()
    pending: bool = False

    def to_json(self, clock: DemoClock) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "lastSubmitted": clock.stamp(self.submitted_days_ago, self.submitted_second),
            "isPending": self.pending,
            "isSitemapsIndex": bool(self.children),
        }
        if self.kind is not None:
            out["type"] = self.kind
        if self.downloaded_days_ago is not None:
            out["lastDownloaded"] = clock.stamp(self.downloaded_days_ago, self.submitted_second * 7 % 86_000)
        out["warnings"] = str(self.warnings)
        out["errors"] = str(self.errors)
        if self.contents:
            out["contents"] = [{"type": kind, "submitted": str(count), "indexed": "0"} for kind, count in self.contents]
        return out


@dataclass
class WebResource:
    id: str
    type: str  # "SITE" or "INET_DOMAIN"
    identifier: str
    owners: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "site": {"type": self.type, "identifier": self.identifier}, "owners": list(self.owners)}


@dataclass
class Notification:
    """The latest URL_UPDATED and URL_DELETED a URL received, as (notify time) strings."""

    url: str
    latest_update: str | None = None
    latest_remove: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"url": self.url}
        if self.latest_update:
            out["latestUpdate"] = {"url": self.url, "type": "URL_UPDATED", "notifyTime": self.latest_update}
        if self.latest_remove:
            out["latestRemove"] = {"url": self.url, "type": "URL_DELETED", "notifyTime": self.latest_remove}
        return out


def resource_id(site_url: str) -> str:
    """The Site Verification id of a Search Console property."""
    if site_url.startswith(DOMAIN_PREFIX):
        return "dns://" + site_url[len(DOMAIN_PREFIX) :]
    return site_url


@dataclass
class DemoState:
    clock: DemoClock
    user: str = DEMO_USER  # the Google account this Search Console belongs to
    sites: dict[str, str] = field(default_factory=dict)  # property -> permission when not verified
    sitemaps: dict[str, dict[str, Sitemap]] = field(default_factory=dict)  # property -> path -> sitemap
    resources: dict[str, WebResource] = field(default_factory=dict)
    notifications: dict[str, Notification] = field(default_factory=dict)
    published: int = 0

    def permission(self, site_url: str) -> str | None:
        base = self.sites.get(site_url)
        if base is None:
            return None
        resource = self.resources.get(resource_id(site_url))
        if resource is not None and self.user in resource.owners:
            return OWNER
        return base

    def owned_resources(self) -> list[WebResource]:
        return [r for r in self.resources.values() if self.user in r.owners]

    def notify_time(self) -> str:
        """Each publish is a second after the previous one, from the demo's now: stable, ordered."""
        self.published += 1
        return self.clock.stamp_seconds(self.published)


def initial_state(clock: DemoClock) -> DemoState:
    state = DemoState(clock=clock, sites=dict(INITIAL_SITES))
    state.resources = {
        r.id: r
        for r in (
            WebResource(
                "dns://example.com",
                "INET_DOMAIN",
                "example.com",
                [DEMO_USER, "webmaster@example.com", "seo-agency@agency.example"],
            ),
            WebResource(
                "https://www.example.com/",
                "SITE",
                "https://www.example.com/",
                [DEMO_USER, "deploy-bot@example-prod.iam.gserviceaccount.com"],
            ),
            WebResource("https://docs.example.com/", "SITE", "https://docs.example.com/", [DEMO_USER]),
            WebResource("https://shop.example.org/", "SITE", "https://shop.example.org/", ["owner@example.org"]),
        )
    }
    state.sitemaps = _initial_sitemaps()
    state.notifications = {
        n.url: n
        for n in (
            Notification(
                "https://www.example.com/jobs/seasonal-garden-assistant",
                latest_update=clock.stamp(2, 33_015.25),
            ),
            Notification(
                "https://www.example.com/jobs/store-manager-portland",
                latest_update=clock.stamp(30, 51_842.5),
                latest_remove=clock.stamp(5, 29_410.75),
            ),
            Notification(
                "https://www.example.com/live/spring-pruning-workshop",
                latest_update=clock.stamp(1, 64_201.0),
            ),
        )
    }
    return state


W = "https://www.example.com/"


def _initial_sitemaps() -> dict[str, dict[str, Sitemap]]:
    index_children = (W + "sitemaps/pages.xml", W + "sitemaps/products.xml", W + "sitemaps/videos.xml")
    www = [
        Sitemap(
            W + "sitemap_index.xml",
            40,
            31_250,
            warnings=2,
            errors=1,
            contents=(("web", 1205), ("image", 1630), ("video", 48)),
            children=index_children,
        ),
        Sitemap(W + "sitemaps/pages.xml", 40, 31_251, contents=(("web", 312),)),
        Sitemap(W + "sitemaps/products.xml", 40, 31_252, warnings=2, contents=(("web", 845), ("image", 1630))),
        Sitemap(W + "sitemaps/videos.xml", 40, 31_253, errors=1, contents=(("web", 48), ("video", 48))),
        Sitemap(W + "news-sitemap.xml", 3, 12_700, contents=(("web", 36), ("news", 36))),
        Sitemap(W + "feed.atom", 120, 45_000, kind="atomFeed", warnings=1, contents=(("web", 25),)),
        Sitemap(W + "old/sitemap.xml", 400, 20_000, downloaded_days_ago=90, errors=14, contents=(("web", 410),)),
        Sitemap(W + "urls.txt", 200, 60_500, kind="urlList", contents=(("web", 57),)),
        Sitemap(W + "sitemap-new-products.xml", 1, 70_123, kind=None, downloaded_days_ago=None, pending=True),
    ]
    blog = [
        Sitemap("https://blog.example.com/sitemap.xml", 75, 40_321, warnings=3, contents=(("web", 420),)),
        Sitemap("https://blog.example.com/rss.xml", 75, 40_400, kind="rssFeed", contents=(("web", 20),)),
    ]
    shop = [
        Sitemap(
            "https://shop.example.org/sitemap.xml",
            12,
            18_000,
            warnings=12,
            errors=3,
            contents=(("web", 96), ("image", 240)),
        )
    ]
    return {
        "sc-domain:example.com": {s.path: s for s in www + blog},
        "https://www.example.com/": {s.path: s for s in www},
        "https://blog.example.com/": {s.path: s for s in blog},
        "https://shop.example.org/": {s.path: s for s in shop},
        "https://old.example.net/": {},
    }


def is_child(sitemaps: dict[str, Sitemap], path: str) -> bool:
    """Whether a sitemap is listed only as a child of an index (not submitted on its own)."""
    return any(path in s.children for s in sitemaps.values())
