"""Every change SearchDesk makes at Google, named as a site owner names it, and how to undo it.

The one place for both: the app's Activity shows a change's name and its "How to undo this" from here,
and docs/asking-a-person.md ("If you approved by mistake") carries the same words for the four guarded
actions (a test fails when the page and this table differ). The guarded actions keep the names the
question gives them (`question.ACTIONS`: the dialog, the notification and Activity name them one way);
the other write tools are named here.

The advice follows Google's documentation:

- a removed sitemap can be submitted again ("Manage your sitemaps using the Sitemaps report");
- a removed property can be added back with no new verification while it still has a verified owner
  (answer 7687465, "Removing a property"); a verified owner who kept their token can "regain access to the
  property by simply adding the same property in Search Console and clicking Verify" (answer 9357768,
  "Remove a property from your own list");
- a verified owner is one "who verified ownership of the property using a token", and "to add or remove a
  verified owner, you must add or remove a token on the site"; a delegated owner is granted ownership
  "without the use of a verification token" under Users and permissions (answer 7687615). So an owner
  removed, or your own ownership ended, is a verified owner again only by verifying, their token on the
  site; added back under Users and permissions they are delegated owners only. Google's API removes a
  verified owner only once their tokens are gone (Site Verification API, webResource.update and delete);
- a page reported as deleted is one Google removes from its index (Indexing API quickstart, "Remove a
  URL"); an update notice asks Google to crawl it again ("Update a URL").

No tool name, code or API name appears in these words.
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
    "delete_site": "Add it back. If no other verified owner remains, click Verify, your token on the site.",
    "unverify_site": "Put your token back on the site if it was removed, then click Verify in Search Console.",
    "update_site_owners": (
        "A removed verified owner must click Verify again, their token on the site; added back under Users "
        "and permissions, they are only delegated owners."
    ),
    "add_site": "Remove the property again (SearchDesk asks you first).",
    "submit_sitemap": "Remove the sitemap in Search Console's Sitemaps report.",
    "submit_sitemaps": "Remove the sitemaps in Search Console's Sitemaps report.",
    "request_indexing": (
        "A recrawl needs no undoing. If you asked Google to remove a page that still exists, ask it to "
        "recrawl the page."
    ),
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
