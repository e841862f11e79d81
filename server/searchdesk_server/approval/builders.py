"""The question each guarded tool asks a person, built from its arguments and Google's state now.

Each catalogue entry of a guarded tool names its builder here (`ToolSpec.question`); the approval
chain calls it before asking and again just before acting, so a question that would now read
differently is asked again. The words themselves are in `question`. A builder raises ToolFailure
(a refusal to explain) or GoogleError (Google could not be read).
"""

from __future__ import annotations

from ..google.errors import ErrorKind, GoogleError
from ..result import ToolFailure
from ..runtime import Call
from ..tools.verification import fetch_owners, owner_list
from . import question as q
from .question import Question


async def delete_site(call: Call) -> Question:
    site = call.site()
    return q.delete_site(site, await call.account_name(), await _owner_facts(call, site))


async def delete_sitemap(call: Call) -> Question:
    site = call.site()
    account = await call.account_name()
    return q.delete_sitemap(site, call.url(call.args["feedpath"], "feedpath"), account)


async def unverify_site(call: Call) -> Question:
    site = call.site()
    account = await call.account_name()
    facts = await _owner_facts(call, site)
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


async def _owner_facts(call: Call, site: str) -> q.OwnerFacts:
    """Which documented case applies. Google lists a site's owners only to its verified owners, so
    a refusal (403/404) means this account is not one; another failure leaves the case unknown."""
    try:
        owners = await fetch_owners(call, site)
    except GoogleError as exc:
        if exc.kind in (ErrorKind.PERMISSION, ErrorKind.NOT_FOUND):
            return q.owner_facts(None, readable=False)
        if exc.kind in (ErrorKind.AUTH, ErrorKind.NOT_CONFIGURED, ErrorKind.NETWORK):
            raise  # the action itself could not reach Google either
        return q.OwnerFacts(q.Ownership.UNKNOWN)
    return q.owner_facts(owners, readable=True)
