"""What a change does and how to undo it, said as Google documents it (issue 26).

- Owners: a verified owner's ownership rests on their token on the site; removed, they are an owner again
  only by verifying (the token back, then Verify), while adding them under Users and permissions makes them a
  delegated owner only (Search Console Help, "Managing owners, users, and permissions"; "Remove a property").
- request_indexing's URL_DELETED asks Google to remove the page from its index (Indexing API quickstart:
  "notify Google so that we can remove the page from our index"), so no page may say it removes nothing.
"""

from __future__ import annotations

from pathlib import Path

from searchdesk_server.catalogue import TOOLS
from searchdesk_server.journal.undo import how_to_undo
from tests.server.foundation.test_docs_site_owner import site_owner_text

REPO = Path(__file__).resolve().parents[3]


def test_undoing_a_lost_verified_ownership_means_verifying_again_with_the_token() -> None:
    for tool in ("delete_site", "unverify_site", "update_site_owners"):
        advice = how_to_undo(tool)
        assert "token" in advice and "Verify" in advice, (tool, advice)
    assert "delegated owner" in how_to_undo("update_site_owners")


def test_undoing_a_removal_request_says_to_ask_for_a_recrawl() -> None:
    advice = how_to_undo("request_indexing")
    assert "Nothing to undo" not in advice
    assert "recrawl" in advice and "remov" in advice


def _request_indexing_text() -> str:
    spec = next(s for s in TOOLS if s.name == "request_indexing")
    return spec.description


def test_request_indexing_says_a_deletion_removes_the_page_from_google() -> None:
    assert "remove the page from Google's results" in _request_indexing_text()
    tools_md = (REPO / "docs/tools.md").read_text(encoding="utf-8")
    assert "remove the page from Google's results" in tools_md


def test_no_page_says_asking_google_about_a_page_removes_nothing() -> None:
    security = (REPO / "docs/security.md").read_text(encoding="utf-8")
    assert "they cannot destroy anything" not in security
    asking = site_owner_text("docs/asking-a-person.md")
    assert "and remove nothing" not in asking
