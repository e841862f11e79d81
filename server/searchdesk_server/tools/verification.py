"""Site Verification: who is a verified owner, the token to place, verifying, and the two
guarded changes (unverify, replace owners).

Search Console's properties map onto verification resources: `sc-domain:x` is an INET_DOMAIN
(id `dns://x`, DNS tokens only); a URL prefix is a SITE (META or FILE tokens).
"""

from __future__ import annotations

from ..account_routing import failures, merge, names
from ..google import shapes as sh
from ..google.http import Api
from ..google.listings import RESOURCES, resource, verified_entries
from ..properties import verification_id
from ..result import Output, ToolFailure
from ..runtime import Call, plural
from ._listing import listing

RESOURCE = "webResource/{id}"
TOKEN = "token"  # noqa: S105 (the getToken path)
METHODS = {"DNS": "DNS_TXT", "FILE": "FILE", "META": "META"}


def resource_id(prop: str) -> str:
    kind, ident = verification_id(prop)
    return f"dns://{ident}" if kind == "INET_DOMAIN" else ident


def method_for(prop: str, requested: str | None) -> str:
    kind, _ = verification_id(prop)
    if kind == "INET_DOMAIN":
        if requested not in (None, "DNS"):
            raise ToolFailure("A domain property (sc-domain:) can only be verified by DNS; use method DNS.")
        return METHODS["DNS"]
    return METHODS[requested or "META"]


async def list_verified_sites(call: Call) -> Output:
    if len(call.accounts) > 1:
        return await _every_account(call)
    items = verified_entries(await call.google.call(Api.SITEVERIFICATION, "GET", RESOURCES, retry=True))
    return listing(
        entries=items,
        headers=["Site", "Type", "Owners"],
        row=lambda r: [sh.cell(r["identifier"]), sh.cell(r["type"]), sh.cell(r["owners"], 400)],
        intro=f"{plural(len(items), 'verified site')}:",
        key="sites",
        narrow="Use get_verified_site for one site.",
        noun="sites",
    )


async def _every_account(call: Call) -> Output:
    """Every account's verified sites, merged: a site several accounts verified is listed once, with the
    account a call about it goes to (the default first). An account that cannot be read is named."""
    seen = await call.runtime.directory.seen(call.accounts, "verified", refresh=True)
    rows = [{**entry, "account": who.name or ""} for _, who, entry in merge(seen, call.accounts)]
    return listing(
        entries=rows,
        headers=["Site", "Type", "Owners", "Account"],
        row=lambda r: [
            sh.cell(r["identifier"]),
            sh.cell(r["type"]),
            sh.cell(r["owners"], 400),
            sh.cell(r["account"]),
        ],
        intro=f"{plural(len(rows), 'verified site')} of the Google accounts {names(call.accounts)}, each listed "
        "once with the account SearchDesk uses for it:",
        key="sites",
        narrow="Use get_verified_site for one site.",
        noun="sites",
        extra={"accounts": [{**s.account.describe(), **({"error": str(s.error)} if s.error else {})} for s in seen]},
        footer="\n".join(failures(seen)),
    )


async def fetch_owners(call: Call, prop: str) -> list[str] | None:
    """The site's verified owners as Google lists them now; None when Google's answer has no list."""
    raw = sh.record(
        await call.google.call(Api.SITEVERIFICATION, "GET", RESOURCE, path_params={"id": resource_id(prop)}, retry=True)
    )
    if not isinstance(raw.get("owners"), list):
        return None
    return list(resource(raw)["owners"])


async def get_verified_site(call: Call) -> Output:
    prop = call.site()
    raw = await call.google.call(
        Api.SITEVERIFICATION, "GET", RESOURCE, path_params={"id": resource_id(prop)}, retry=True
    )
    r = resource(sh.record(raw))
    lines = [
        f"{prop} has {plural(len(r['owners']), 'verified owner')}:",
        f"Identifier (Google's): {sh.cell(r['identifier'])}; type: {sh.cell(r['type'])}",
    ]
    lines += [f"- {sh.cell(o)}" for o in r["owners"]]
    return Output("\n".join(lines), {"site": prop, **r})


async def fetch_token(call: Call, prop: str, method: str) -> dict[str, str]:
    kind, ident = verification_id(prop)
    body = {"site": {"type": kind, "identifier": ident}, "verificationMethod": method}
    raw = sh.record(await call.google.call(Api.SITEVERIFICATION, "POST", TOKEN, body=body, retry=True))
    token = sh.text(raw.get("token"))
    if not token:
        raise ToolFailure("Google answered without a verification token; try again later.")
    # The method is the one asked for: Google's echo of it is its text, and would land in our own next step.
    return {"method": method, "token": token}


def method_name(method: str) -> str:
    """verify_site's own name for a Site Verification method ("DNS_TXT" is "DNS"): a next step must be
    callable exactly as written."""
    return next(name for name, value in METHODS.items() if value == method)


def placement(prop: str, method: str, token: str) -> str:
    """Where the token goes, in plain steps (token is Google's text, shown as data)."""
    _, ident = verification_id(prop)
    if method.startswith("DNS"):
        return f"Add a DNS TXT record on {ident} (the apex, host '@') with this value:\n{sh.cell(token, 500)}"
    if method == "FILE":
        return f"Upload a file named {sh.cell(token, 200)} to the root of {ident} (it must stay there)."
    return f"Put this tag in the <head> of {ident}'s home page:\n{sh.cell(token, 500)}"


async def get_verification_token(call: Call) -> Output:
    prop = call.site()
    method = method_for(prop, call.args.get("method"))
    got = await fetch_token(call, prop, method)
    text = (
        placement(prop, got["method"], got["token"])
        + f"\nThen call verify_site with site {prop}, method {method_name(got['method'])}{call.and_account()}."
    )
    return Output(text, {"site": prop, **got})


async def verify_site(call: Call) -> Output:
    prop = call.site()
    method = method_for(prop, call.args.get("method"))
    kind, ident = verification_id(prop)
    raw = await call.google.call(
        Api.SITEVERIFICATION,
        "POST",
        RESOURCES,
        query={"verificationMethod": method},
        body={"site": {"type": kind, "identifier": ident}},
    )
    r = resource(sh.record(raw))
    return Output(
        f"Verified {prop} by {method}; verified owners now: {len(r['owners'])}. Keep the token in place: "
        "removing it can end the verification.",
        {"site": prop, "verified": True, **r},
    )


async def unverify_site(call: Call) -> Output:
    prop = call.question.site
    await call.google.call(Api.SITEVERIFICATION, "DELETE", RESOURCE, path_params={"id": resource_id(prop)}, retry=False)
    return Output(
        f"This account is no longer a verified owner of {prop}.",
        {"site": prop, "unverified": True},
        from_google=False,
    )


def owner_list(owners: list[str]) -> list[str]:
    cleaned = sorted({o.strip() for o in owners if o.strip()})
    if not cleaned:
        raise ToolFailure("owners is empty; it must be the complete list of owners afterwards.")
    short = [i for i, o in enumerate(cleaned) if len(o) < 3]
    if short:
        raise ToolFailure("owners has an entry shorter than 3 characters once spaces are removed; give full addresses.")
    return cleaned


async def update_site_owners(call: Call) -> Output:
    prop = call.question.site
    owners = list(call.question.owners)
    kind, ident = verification_id(prop)
    raw = await call.google.call(
        Api.SITEVERIFICATION,
        "PUT",
        RESOURCE,
        path_params={"id": resource_id(prop)},
        body={"site": {"type": kind, "identifier": ident}, "owners": owners},
        retry=False,
    )
    r = resource(sh.record(raw))
    return Output(
        f"The verified owners of {prop} are now {plural(len(r['owners']) or len(owners), 'account')}.",
        {"site": prop, **r},
    )
