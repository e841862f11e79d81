"""Where a property stands and the exact next steps.

States: ready (in Search Console with data access), needs-verification (added, not verified),
needs-property (verified through its domain, not added), needs-both. The state is reported even
when the token fetch fails or read-only mode leaves the verification scope out.
"""

from __future__ import annotations

from typing import Any

from ..google.errors import GoogleError
from ..properties import covers
from ..result import Output
from ..runtime import Call
from ..scopes import SCOPE_SV_VERIFY
from .sites import fetch_sites
from .verification import fetch_token, method_for, method_name, placement


def state_of(prop: str, sites: list[dict[str, str]]) -> str:
    mine = {s["site"]: s.get("permission", "") for s in sites}
    if prop in mine:
        return "needs-verification" if mine[prop] == "siteUnverifiedUser" else "ready"
    verified_parent = any(
        site.startswith("sc-domain:") and perm == "siteOwner" and covers(site, prop) for site, perm in mine.items()
    )
    return "needs-property" if verified_parent else "needs-both"


async def setup_site(call: Call) -> Output:
    prop = call.site()
    state = state_of(prop, await fetch_sites(call))
    data: dict[str, Any] = {"site": prop, "state": state}
    lines = [f"{prop}: {state}."]
    if state == "ready":
        lines.append("Nothing to do: the property is in Search Console and this account can read its data.")
        return Output("\n".join(lines), data, from_google=False)
    steps = []
    if state in ("needs-property", "needs-both"):
        steps.append(f"Add the property: call add_site with site {prop}{call.and_account()}.")
    if state in ("needs-verification", "needs-both"):
        method = method_for(prop, None)
        if SCOPE_SV_VERIFY not in call.config.scopes and not any(
            s.endswith("siteverification") for s in call.config.scopes
        ):
            steps.append(
                "Verify ownership: this server runs without the Site Verification scope (read-only), "
                "so get the token in Search Console's own settings."
            )
        else:
            try:
                got = await fetch_token(call, prop, method)
            except GoogleError as exc:
                steps.append(f"Verify ownership: fetching the token failed — {exc}")
                data["token_error"] = str(exc)
            else:
                data.update(method=got["method"], token=got["token"])
                steps.append("Verify ownership: " + placement(prop, got["method"], got["token"]))
                steps.append(
                    f"Then call verify_site with site {prop}, method {method_name(got['method'])}{call.and_account()}."
                )
    lines += [f"{i}. {s}" for i, s in enumerate(steps, 1)]
    data["steps"] = steps
    return Output("\n".join(lines), data)
