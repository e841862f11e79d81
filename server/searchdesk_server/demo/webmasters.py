"""Sites, sitemaps and search analytics: the webmasters/v3 resources of the Search Console API."""

from __future__ import annotations

from typing import Any

from . import search_analytics, wire
from .clock import NOW_HOUR
from .faults import bad_request, no_permission, not_found
from .request import DemoRequest
from .scope import covers, host_of, is_valid_site_url
from .state import CAN_READ, CAN_WRITE_SITEMAPS, UNVERIFIED, DemoState, Sitemap, is_child


def readable(state: DemoState, site_url: str) -> str:
    """The caller's permission on a property they may read, else Google's 403."""
    permission = state.permission(site_url)
    if permission not in CAN_READ:
        raise no_permission(site_url)
    return permission


def list_sites(state: DemoState, req: DemoRequest) -> object:
    entries = [{"siteUrl": url, "permissionLevel": state.permission(url)} for url in state.sites]
    return {"siteEntry": entries} if entries else {}


def get_site(state: DemoState, req: DemoRequest) -> object:
    site_url = req.param("siteUrl")
    permission = state.permission(site_url)
    if permission is None:
        raise no_permission(site_url)
    return {"siteUrl": site_url, "permissionLevel": permission}


def add_site(state: DemoState, req: DemoRequest) -> object:
    site_url = req.param("siteUrl")
    if not is_valid_site_url(site_url):
        raise bad_request(
            "The site URL is not valid. Use a URL prefix ending in a slash (https://www.example.com/) "
            "or a domain property (sc-domain:example.com)."
        )
    state.sites.setdefault(site_url, UNVERIFIED)
    return None


def delete_site(state: DemoState, req: DemoRequest) -> object:
    site_url = req.param("siteUrl")
    if site_url not in state.sites:
        raise no_permission(site_url)
    del state.sites[site_url]
    return None


def list_sitemaps(state: DemoState, req: DemoRequest) -> object:
    site_url = req.param("siteUrl")
    readable(state, site_url)
    sitemaps = state.sitemaps.get(site_url, {})
    index = req.query_value("sitemapIndex")
    if index is not None:
        parent = sitemaps.get(index)
        if parent is None:
            raise not_found()
        items = [sitemaps[path].to_json(state.clock) for path in parent.children if path in sitemaps]
    else:
        items = [s.to_json(state.clock) for path, s in sitemaps.items() if not is_child(sitemaps, path)]
    return {"sitemap": items} if items else {}


def get_sitemap(state: DemoState, req: DemoRequest) -> object:
    site_url = req.param("siteUrl")
    readable(state, site_url)
    sitemap = state.sitemaps.get(site_url, {}).get(req.param("feedpath"))
    if sitemap is None:
        raise not_found()
    return sitemap.to_json(state.clock)


def _writable(state: DemoState, site_url: str) -> dict[str, Sitemap]:
    if state.permission(site_url) not in CAN_WRITE_SITEMAPS:
        raise no_permission(site_url)
    return state.sitemaps.setdefault(site_url, {})


def submit_sitemap(state: DemoState, req: DemoRequest) -> object:
    site_url = req.param("siteUrl")
    feedpath = req.param("feedpath")
    sitemaps = _writable(state, site_url)
    if host_of(feedpath) is None:
        raise bad_request("The sitemap path must be a full http or https URL.")
    if not covers(site_url, feedpath):
        raise bad_request(f"The sitemap URL must be within the property '{site_url}'.")
    now = NOW_HOUR * 3600
    existing = sitemaps.get(feedpath)
    if existing is not None:
        existing.submitted_days_ago, existing.submitted_second = 0, now
    else:
        sitemaps[feedpath] = Sitemap(feedpath, 0, now, kind=None, downloaded_days_ago=None, pending=True)
    return None


def delete_sitemap(state: DemoState, req: DemoRequest) -> object:
    site_url = req.param("siteUrl")
    feedpath = req.param("feedpath")
    sitemaps = _writable(state, site_url)
    sitemap = sitemaps.get(feedpath)
    if sitemap is None or is_child(sitemaps, feedpath):
        raise not_found()
    del sitemaps[feedpath]
    for child in sitemap.children:
        sitemaps.pop(child, None)
    return None


def query_analytics(state: DemoState, req: DemoRequest) -> object:
    site_url = req.param("siteUrl")
    readable(state, site_url)
    query = search_analytics.parse(wire.read_object(req.body))
    result: dict[str, Any] = search_analytics.run(query, search_analytics.Source(site_url, state.clock))
    return result
