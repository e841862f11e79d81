"""Properties: list, get, add and (guarded) delete."""

from __future__ import annotations

from ..account_routing import failures, merge, names
from ..google import shapes as sh
from ..google.http import Api
from ..google.listings import SITE_FIELDS, SITES, site_entries
from ..result import Output, ToolFailure
from ..runtime import Call, plural
from ._listing import listing

SITE = "webmasters/v3/sites/{siteUrl}"

PERMISSIONS = {
    "siteOwner": "owner",
    "siteFullUser": "full user",
    "siteRestrictedUser": "restricted user",
    "siteUnverifiedUser": "unverified (no data access)",
}


async def fetch_sites(call: Call) -> list[dict[str, str]]:
    return site_entries(await call.google.call(Api.SEARCHCONSOLE, "GET", SITES, retry=True))


def _permission(code: str) -> str:
    return PERMISSIONS.get(code, code)


async def list_sites(call: Call) -> Output:
    if len(call.accounts) > 1:
        return await _every_account(call)
    sites = _allowed(call, await fetch_sites(call))
    account = call.account
    return listing(
        entries=sites,
        headers=["Property", "Permission"],
        row=lambda s: [sh.cell(s["site"]), sh.cell(_permission(s.get("permission", "")))],
        intro=f"{plural(len(sites), 'property', 'properties')} this account can see:",
        key="sites",
        narrow="Use get_site for one property.",
        noun="properties",
        extra={}
        if account is None or account.name is None
        else {"accounts": [{**account.describe(), "properties": len(sites)}]},
    )


def _allowed(call: Call, sites: list[dict[str, str]]) -> list[dict[str, str]]:
    allowed = call.config.allowed_sites
    if not allowed:
        return sites
    from ..properties import covers

    return [s for s in sites if any(covers(a, s["site"]) for a in allowed)]


async def _every_account(call: Call) -> Output:
    """Every account's list, merged: a property several accounts see is listed once, with the account
    a call about it goes to. An account that cannot be read is named; the others are listed anyway."""
    seen = await call.runtime.directory.seen(call.accounts, "sites", refresh=True)
    merged = merge(seen, call.accounts)
    rows = _allowed(call, [{"site": site, "permission": perm, "account": who.name or ""} for site, who, perm in merged])
    accounts = [
        {**s.account.describe(), "properties": len(s.entries), **({"error": str(s.error)} if s.error else {})}
        for s in seen
    ]
    return listing(
        entries=rows,
        headers=["Property", "Permission", "Account"],
        row=lambda s: [sh.cell(s["site"]), sh.cell(_permission(s["permission"])), sh.cell(s["account"])],
        intro=f"{plural(len(rows), 'property', 'properties')} the Google accounts {names(call.accounts)} can see, "
        "each listed once with the account SearchDesk uses for it:",
        key="sites",
        narrow="Use get_site for one property.",
        noun="properties",
        extra={"accounts": accounts},
        footer="\n".join(failures(seen)),
    )


async def get_site(call: Call) -> Output:
    site = call.site()
    raw = sh.record(await call.google.call(Api.SEARCHCONSOLE, "GET", SITE, path_params={"siteUrl": site}, retry=True))
    picked = sh.pick(raw, SITE_FIELDS)
    if "site" not in picked:
        raise ToolFailure("Google answered without property data for that property; try list_sites.")
    perm = picked.get("permission", "")
    return Output(
        f"Property: {sh.cell(picked['site'])}\nPermission: {sh.cell(PERMISSIONS.get(perm, perm))}",
        {"site": picked["site"], "permission": perm},
    )


async def add_site(call: Call) -> Output:
    site = call.site()
    await call.google.call(Api.SEARCHCONSOLE, "PUT", SITE, path_params={"siteUrl": site}, retry=True)
    return Output(
        f"Added {site}. It stays unverified (no data) until verification succeeds: get_verification_token "
        "says what to place, then verify_site.",
        {"site": site, "added": True},
        from_google=False,
    )


async def delete_site(call: Call) -> Output:
    site = call.question.site
    await call.google.call(Api.SEARCHCONSOLE, "DELETE", SITE, path_params={"siteUrl": site}, retry=False)
    return Output(
        f"Removed the property {site} from this account's Search Console list.",
        {"site": site, "deleted": True},
        from_google=False,
    )
