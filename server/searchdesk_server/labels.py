"""The labels values are shown under, and each guarded action's name: in every question a person is asked
and in the record of changes.

Below everything (the questions in `approval/` and the journal both import it, and neither imports the
other's package), so a change shown in Activity is labelled exactly as it was in its question.
"""

from __future__ import annotations

PROPERTY = "Property"
SITEMAP = "Sitemap"
SITE = "Site"
PAGE = "Page"
NOTICE = "Google is told the page was"
METHOD = "Verification method"


#: Each guarded action as a site owner names it: the one wording the dialog, the notification's title and
#: Activity all use (a test fails when one of them names an action another way).
ACTIONS = {
    "delete_site": "Remove a property",
    "delete_sitemap": "Remove a sitemap",
    "unverify_site": "End verified ownership",
    "update_site_owners": "Replace verified owners",
}


def action_name(tool: str) -> str:
    """The action a guarded tool takes, in the words of ``ACTIONS``."""
    return ACTIONS.get(tool, "A change")
