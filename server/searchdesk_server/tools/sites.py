"""Properties: list, get, add and (guarded) delete."""

from __future__ import annotations

from ..google.http import Api
from ..result import Output, ToolFailure
from ..runtime import Call, plural
from . import _shape as sh
from ._listing import listing

SITES = "webmasters/v3/sites"
SITE = "webmasters/v3/sites/{siteUrl}"

PERMISSIONS = {
    "siteOwner": "owner",
    "siteFullUser": "full user",
    "siteRestrictedUser": "restricted user",
    "siteUnverifiedUser": "unverified (no data access)",
}
FIELDS = (("site", "siteUrl", sh.text), ("permission", "permissionLevel", sh.text))


async def fetch_sites(call: Call) -> list[dict[str, str]]:
    raw = await call.google(Api.SEARCHCONSOLE, "GET", SITES, retry=True)
    out = []
    for entry in sh.records(raw, "siteEntry"):
        picked = sh.pick(entry, FIELDS)
        if "site" in picked:
            out.append(picked)
    return out


async def list_sites(call: Call) -> Output:
    sites = await fetch_sites(call)
    allowed = call.config.allowed_sites
    if allowed:
        from ..properties import covers

        sites = [s for s in sites if any(covers(a, s["site"]) for a in allowed)]
    return listing(
        entries=sites,
        headers=["Property", "Permission"],
        row=lambda s: [
            sh.cell(s["site"]),
            sh.cell(PERMISSIONS.get(s.get("permission", ""), s.get("permission"))),
        ],
        intro=f"{plural(len(sites), 'property', 'properties')} this account can see:",
        key="sites",
        narrow="Use get_site for one property.",
        noun="properties",
    )


async def get_site(call: Call) -> Output:
    site = call.site()
    raw = sh.record(await call.google(Api.SEARCHCONSOLE, "GET", SITE, path_params={"siteUrl": site}, retry=True))
    picked = sh.pick(raw, FIELDS)
    if "site" not in picked:
        raise ToolFailure("Google answered without property data for that property; try list_sites.")
    perm = picked.get("permission", "")
    return Output(
        f"Property: {sh.cell(picked['site'])}\nPermission: {sh.cell(PERMISSIONS.get(perm, perm))}",
        {"site": picked["site"], "permission": perm},
    )


async def add_site(call: Call) -> Output:
    site = call.site()
    await call.google(Api.SEARCHCONSOLE, "PUT", SITE, path_params={"siteUrl": site}, retry=True)
    return Output(
        f"Added {site}. It stays unverified (no data) until verification succeeds: get_verification_token "
        "says what to place, then verify_site.",
        {"site": site, "added": True},
        from_google=False,
    )


async def delete_site(call: Call) -> Output:
    site = call.question.site
    await call.google(Api.SEARCHCONSOLE, "DELETE", SITE, path_params={"siteUrl": site}, retry=False)
    return Output(
        f"Removed the property {site} from this account's Search Console list.",
        {"site": site, "deleted": True},
        from_google=False,
    )
