"""Every change SearchDesk makes at Google, named as a site owner names it, and how to undo it.

The one place for both: the app's Activity shows a change's name and its "How to undo this" from here,
and docs/asking-a-person.md ("If you approved by mistake") carries the same words for the four guarded
actions (a test fails when the page and this table differ). The guarded actions keep the names the
question gives them (`question.ACTIONS`: the dialog, the notification and Activity name them one way);
the other write tools are named here.

The advice follows Google's Search Console Help: a removed sitemap can be submitted again ("Manage your
sitemaps using the Sitemaps report"); a removed property can be added back, and needs no new
verification while another verified owner remains ("Add a website property", "Manage owners, users,
and permissions"); a verified owner's ownership rests on a verification token on the site, so an owner
removed, or your own ownership ended, comes back only by verifying with a token again — adding someone
back under Users and permissions makes them a delegated owner, not a verified one ("Manage owners,
users, and permissions": "Delegated owners"). No tool name, code or API name appears in these words.
"""

from __future__ import annotations

from ..labels import ACTIONS

#: Every write tool's change, as a site owner names it (the guarded four as the question names them).
NAMES: dict[str, str] = {
    **ACTIONS,
    "add_site": "Add a property",
    "submit_sitemap": "Submit a sitemap",
    "submit_sitemaps": "Submit sitemaps",
    "request_indexing": "Ask Google to recrawl or drop a page",
    "verify_site": "Verify ownership",
}

#: How to undo each change, true per Google's documentation (the module's docstring names the pages).
#: The guarded four are also the list in docs/asking-a-person.md, word for word.
UNDO: dict[str, str] = {
    "delete_sitemap": "Submit it again.",
    "delete_site": "Add it back (verify again if no other verified owner remains).",
    "unverify_site": "Verify again with a token on the site.",
    "update_site_owners": (
        "Removed verified owners must verify again with a token on the site; re-added under Users and "
        "permissions, they are delegated owners only."
    ),
    "add_site": "Remove the property again (SearchDesk asks you first).",
    "submit_sitemap": "Remove the sitemap in Search Console's Sitemaps report.",
    "submit_sitemaps": "Remove the sitemaps in Search Console's Sitemaps report.",
    "request_indexing": "Nothing to undo: it asked Google to recrawl the page, or to drop it.",
    "verify_site": "End verified ownership again (SearchDesk asks you first).",
}

#: What a change no entry above names is called, and what is said about undoing it.
UNKNOWN_CHANGE = "A change"
UNKNOWN_UNDO = "Check it in Search Console."
#: The order the page lists the guarded actions in (the order a site owner meets them, mildest first).
PAGE_ORDER = ("delete_sitemap", "delete_site", "unverify_site", "update_site_owners")


def change_name(tool: str) -> str:
    """A change as a site owner names it ("Remove a sitemap"), never the tool's name."""
    return NAMES.get(tool, UNKNOWN_CHANGE)


def how_to_undo(tool: str) -> str:
    """How to undo this change, in the words the docs use."""
    return UNDO.get(tool, UNKNOWN_UNDO)


def page_lines() -> list[str]:
    """The list docs/asking-a-person.md shows under "If you approved by mistake", line for line."""
    return [f"- **{change_name(tool)}:** {how_to_undo(tool)}" for tool in PAGE_ORDER]
