"""Google's two listings an account is known by: the properties it sees in Search Console and the
sites it verified, as rows.

Below both the account directory (which routes a call by what each account sees) and the tools that
show the listings, so neither imports the other.
"""

from __future__ import annotations

from typing import Any

from . import shapes as sh

SITES = "webmasters/v3/sites"
RESOURCES = "webResource"

SITE_FIELDS = (("site", "siteUrl", sh.text), ("permission", "permissionLevel", sh.text))


def site_entries(raw: object) -> list[dict[str, str]]:
    """Google's site list as {site, permission} rows (an entry without a site is left out)."""
    out = []
    for entry in sh.records(raw, "siteEntry"):
        picked = sh.pick(entry, SITE_FIELDS)
        if "site" in picked:
            out.append(picked)
    return out


def resource(entry: dict[str, Any]) -> dict[str, Any]:
    """One verified site (a webResource) as {id, type, identifier, owners}."""
    site = sh.record(entry.get("site"))
    out: dict[str, Any] = {"id": sh.text(entry.get("id")) or "", "type": sh.text(site.get("type")) or ""}
    out["identifier"] = sh.text(site.get("identifier")) or ""
    out["owners"] = sh.texts(entry.get("owners"))
    return out


def verified_entries(raw: object) -> list[dict[str, Any]]:
    """Google's verified sites (webResource.list) as resources."""
    return [resource(e) for e in sh.records(raw, "items")]
