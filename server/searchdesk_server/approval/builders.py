"""The question each guarded tool asks a person, built from its arguments and Google's state now.

Each catalogue entry of a guarded tool names its builder here (`ToolSpec.question`); the approval
chain calls it before asking and again just before acting, so a question that would now read
differently is asked again. The words themselves are in `question`. A builder raises ToolFailure
(a refusal to explain) or GoogleError (Google could not be read).
"""

from __future__ import annotations

import ipaddress
from enum import Enum
from urllib.parse import urlsplit

from ..google.errors import ErrorKind, GoogleError
from ..properties import covers
from ..result import ToolFailure
from ..runtime import Call
from ..tools.verification import fetch_owners, owner_list
from . import question as q
from .question import Question


async def delete_site(call: Call) -> Question:
    site = call.site()
    account = await call.account_name()
    facts = await _owner_facts(call, site, account)
    if facts.ownership is q.Ownership.NOT_OWNER:
        facts = await _through_domain(call, site)
    return q.delete_site(site, account, facts)


async def delete_sitemap(call: Call) -> Question:
    site = call.site()
    account = await call.account_name()
    return q.delete_sitemap(site, call.url(call.args["feedpath"], "feedpath"), account)


async def unverify_site(call: Call) -> Question:
    site = call.site()
    account = await call.account_name()
    facts = await _owner_facts(call, site, account)
    if facts.ownership is q.Ownership.NOT_OWNER:
        raise ToolFailure(
            "unverify_site did nothing: Google does not list this account as a verified owner of that "
            "website, so there is no ownership to end."
        )
    return q.unverify_site(site, account, facts)


async def update_site_owners(call: Call) -> Question:
    site = call.site()
    account = await call.account_name()
    owners = owner_list(call.args["owners"])
    current = await fetch_owners(call, site)
    if current is None:
        raise ToolFailure(
            "update_site_owners did nothing: Google did not say who the owners are now, so the change "
            "could not be shown; nothing was changed."
        )
    return q.update_site_owners(site, current, owners, account)


async def _owner_facts(call: Call, site: str, account: str | None) -> q.OwnerFacts:
    """Which documented case applies, from the site's own owner list (the others named, apart from
    `account`)."""
    read = await _read_owners(call, site)
    if read is _Unread.UNKNOWN:
        return q.OwnerFacts(q.Ownership.UNKNOWN)
    if read is _Unread.REFUSED:
        return q.owner_facts(None, readable=False)
    return q.owner_facts(read, readable=True, account=account)


async def _through_domain(call: Call, site: str) -> q.OwnerFacts:
    """For a property Google does not list this account as a verified owner of: is it one through a
    domain the property is in? A property's list names only its direct owners ("Indirect owners—for
    example verified owners of the containing domain—are not included", Site Verification API), so a
    Domain property's owner reads as no owner of the URL prefixes in it. Each containing domain's own
    list tells: Google shows it only to that domain's verified owners. NOT_OWNER only when every one
    was refused; UNKNOWN when one could not be read, so the question never says that nobody else is
    affected on a guess."""
    for domain in _containing_domains(site):
        prop = f"sc-domain:{domain}"
        if call.config.allowed_sites and not any(covers(a, prop) for a in call.config.allowed_sites):
            # GSC_ALLOWED_SITES keeps this server off that domain: it is not read, so nothing is known.
            return q.OwnerFacts(q.Ownership.UNKNOWN)
        read = await _read_owners(call, prop)
        if read is _Unread.UNKNOWN:
            return q.OwnerFacts(q.Ownership.UNKNOWN)
        if read is not _Unread.REFUSED:
            return q.OwnerFacts(q.Ownership.THROUGH_DOMAIN, domain=domain)
    return q.OwnerFacts(q.Ownership.NOT_OWNER)


class _Unread(Enum):
    REFUSED = "refused"  # Google would not show the owners: this account is not a verified owner
    UNKNOWN = "unknown"  # Google could not say


async def _read_owners(call: Call, prop: str) -> list[str] | _Unread | None:
    """The owners Google lists for `prop` (None: an answer without a list), or why there are none.
    Google lists a site's owners only to its verified owners, so a refusal (403/404) means this account
    is not one; another failure leaves it unknown."""
    try:
        return await fetch_owners(call, prop)
    except GoogleError as exc:
        if exc.kind in (ErrorKind.PERMISSION, ErrorKind.NOT_FOUND):
            return _Unread.REFUSED
        if exc.kind in (ErrorKind.AUTH, ErrorKind.NOT_CONFIGURED, ErrorKind.NETWORK):
            raise  # the action itself could not reach Google either
        return _Unread.UNKNOWN


def _containing_domains(site: str) -> list[str]:
    """The domains a property is in, nearest first, in ASCII (an IDN as xn--): a URL prefix's host and
    each parent of it, a Domain property's parents; never a bare top-level label or an IP address."""
    if q.is_domain(site):
        host, start = q.website(site), 1
    else:
        host, start = (urlsplit(site).hostname or "").rstrip("."), 0
    try:
        ipaddress.ip_address(host)
        return []
    except ValueError:
        pass
    try:
        labels = host.encode("idna").decode("ascii").split(".") if host else []
    except UnicodeError:
        return []
    return [".".join(labels[i:]) for i in range(start, len(labels) - 1)]
