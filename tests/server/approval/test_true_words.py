"""Issue 23: the questions say only what Google documents, and a refusal says something that can be done.

Through the real server subprocess and the fake Google (its request log is the judge), with the client's
dialog recording what it was shown (and declining, so nothing acts), or the app's real listener:

- (a) a Domain property's verification token is a DNS record, not something on the website;
- (b) a URL-prefix property is one property, not "Website (all its properties)";
- (c) leaving the account SearchDesk uses out of the owners says what Google documents of that change;
- (d) removing a URL-prefix property this account owns through its verified domain does not say that
  nobody else is affected (Google's owner list leaves such owners out, and its help says nothing of it);
- too many owner changes for one question: with 2,100 owners at Google the refusal names no number and
  points to Search Console's Users and permissions; where a smaller change fits, it names the largest
  change one call can make as a list the owners argument takes, and following it makes the change.

Sources: docs/asking-a-person.md cites Google's page for each sentence.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from searchdesk_server import catalogue
from searchdesk_server.approval import question as q
from searchdesk_server.demo.state import DEMO_USER
from tests.agentref import ApprovalScript, Script
from tests.desktop.agent_harness import DesktopListener
from tests.fakegoogle import SERVICE_ACCOUNT_EMAIL, FakeGoogle
from tests.server.stdio import text_of

from .conftest import Elicitor, acted, serve

pytestmark = pytest.mark.anyio

WWW = "https://www.example.com/"
DOMAIN = "sc-domain:example.com"
MAX_OWNERS = catalogue.BY_NAME["update_site_owners"].params["owners"]["maxItems"]


def google_owners(fake: FakeGoogle, owners: list[str], resource: str = WWW) -> None:
    """Set the verified owners the fake Google lists for `resource` (as if changed at Google)."""
    fake.backend.api.state.resources[resource].owners = list(owners)  # type: ignore[attr-defined]


def put_owners(fake: FakeGoogle) -> list[list[str]]:
    return [json.loads(r.body)["owners"] for r in fake.api_requests() if r.method == "PUT"]


async def shown(fake: FakeGoogle, socket: str, tool: str, args: dict[str, Any]) -> str:
    """The question the client's dialog showed for this call; the dialog declines, so nothing acts."""
    elicitor = Elicitor(action="decline")
    async with serve(fake, socket, "legacy", elicitor) as client:
        result = await client.call_tool(tool, args)
    assert result.is_error and result.structured_content["decision"] == "declined", text_of(result)
    assert len(elicitor.seen) == 1 and acted(fake, tool) == 0
    return elicitor.seen[0]


@contextlib.contextmanager
def app(socket: str, decision: str = "pending") -> Iterator[DesktopListener]:
    """The desktop app's real listener at the server's socket."""
    listener = DesktopListener()
    listener.start(socket, Script(approval=ApprovalScript(decision=decision)))
    try:
        yield listener
    finally:
        listener.stop()


def asked(listener: DesktopListener) -> list[dict[str, Any]]:
    return [r.params for r in listener.requests() if r.method == "approval/request"]


# --- (a) and (b): what a verification token is and what a Site Verification target holds ---------------


async def test_a_domains_token_is_a_dns_record_not_on_the_website(fake: FakeGoogle, agent_socket: str) -> None:
    text = await shown(fake, agent_socket, "unverify_site", {"site": DOMAIN})
    assert "2 other verified owners remain" in text  # dns://example.com: the account and two others
    assert "While this account's verification token stays in the domain's DNS records, Google may" in text
    assert "on the website" not in text
    assert "of the domain below" in text and "\nDomain (all its properties): example.com" in text


async def test_a_domains_removed_owner_keeps_a_dns_record_not_a_token_on_the_website(
    fake: FakeGoogle, agent_socket: str
) -> None:
    args = {"site": DOMAIN, "owners": [DEMO_USER, "seo-agency@agency.example"]}  # webmaster@ removed
    text = await shown(fake, agent_socket, "update_site_owners", args)
    assert "A removed owner whose verification token stays in the domain's DNS records may get" in text
    assert "on the website" not in text
    assert "verified owners of the domain below" in text


async def test_a_url_prefix_is_one_property_not_all_of_a_websites(fake: FakeGoogle, agent_socket: str) -> None:
    text = await shown(fake, agent_socket, "unverify_site", {"site": WWW})
    assert "all its properties" not in text
    assert "of the property below" in text and f"\nProperty: {WWW}" in text
    assert "the people who use the property in Search Console keep their access" in text


# --- (c): the account SearchDesk uses left out of the owners ---------------------------------------


async def test_leaving_out_the_account_searchdesk_uses_says_what_google_documents(
    fake: FakeGoogle, agent_socket: str
) -> None:
    google_owners(fake, [DEMO_USER, SERVICE_ACCOUNT_EMAIL])  # the server acts as the service account
    text = await shown(fake, agent_socket, "update_site_owners", {"site": WWW, "owners": [DEMO_USER]})
    assert f"Removed (the account SearchDesk uses): {SERVICE_ACCOUNT_EMAIL}" in text
    # developers.google.com/site-verification/v1/webResource/update: "You cannot use this method to
    # unverify the authenticated user's ownership of a site."
    assert "Google says a change of owners cannot end the verified ownership of the account making it" in text


# --- (d): a property owned through its domain ----------------------------------------------------


async def test_a_property_owned_through_its_domain_never_reads_as_affecting_nobody(
    fake: FakeGoogle, agent_socket: str
) -> None:
    # blog.example.com has no verification of its own; the account is a verified owner of example.com.
    text = await shown(fake, agent_socket, "delete_site", {"site": "https://blog.example.com/"})
    assert "nobody else is affected" not in text and "not a verified owner" not in text
    assert "Google lists this account as a verified owner of the domain below, not of the property itself" in text
    assert "\nDomain this account owns: example.com" in text
    # what Google's help says of every removal (support.google.com/webmasters/answer/9357768)
    assert "no longer get notifications about the property; its message history is kept" in text


async def test_a_property_of_nobodys_domain_of_ours_still_affects_nobody_else(
    fake: FakeGoogle, agent_socket: str
) -> None:
    """The control: Google refuses the property's owners and every containing domain's."""
    text = await shown(fake, agent_socket, "delete_site", {"site": "https://shop.example.org/"})
    assert "This account is not a verified owner of the property, so only its own list of properties" in text
    looked = [r.path for r in fake.api_requests() if r.method == "GET" and "webResource" in r.path]
    assert any("dns%3A%2F%2Fshop.example.org" in p or "dns://shop.example.org" in p for p in looked), looked
    assert any("dns%3A%2F%2Fexample.org" in p or "dns://example.org" in p for p in looked), looked


async def test_a_domain_google_could_not_read_is_never_taken_for_nobody_else(
    fake: FakeGoogle, agent_socket: str
) -> None:
    fake.fail("dns", status=500, times=20, method="GET")
    text = await shown(fake, agent_socket, "delete_site", {"site": "https://blog.example.com/"})
    assert "nobody else is affected" not in text
    assert "SearchDesk could not read the property's verified owners from Google" in text


def test_the_domains_a_property_is_in() -> None:
    from searchdesk_server.approval.builders import _containing_domains

    assert _containing_domains("https://a.b.example.co.uk:8443/x/") == ["a.b.example.co.uk", "b.example.co.uk"] + [
        "example.co.uk",
        "co.uk",
    ]
    assert _containing_domains("sc-domain:shop.example.com") == ["example.com"]
    assert _containing_domains("sc-domain:example.com") == []
    assert _containing_domains("https://bücher.de/") == ["xn--bcher-kva.de"]
    assert _containing_domains("http://192.0.2.7/") == []


# --- refusals that can be followed ------------------------------------------------------------------


async def test_2100_owners_at_google_refuse_without_a_number_and_point_to_users_and_permissions(
    fake: FakeGoogle, agent_socket: str
) -> None:
    google_owners(fake, [DEMO_USER, *[f"owner.{i:04d}@example.com" for i in range(2_099)]])
    wanted = [DEMO_USER, "new.person@example.com"]  # at most 100 owners: the argument takes the whole list
    with app(agent_socket) as listener:
        async with serve(fake, agent_socket, "legacy") as client:
            result = await client.call_tool("update_site_owners", {"site": WWW, "owners": wanted})
        assert asked(listener) == []
    text = text_of(result)
    assert result.is_error and result.structured_content["decision"] == "refused", text
    assert re.search(r"\d", text) is None, text  # no "change at most 1244 at a time": no list can
    assert "Search Console instead: Settings › Users and permissions." in text
    assert put_owners(fake) == []


async def test_2100_owners_with_nobody_to_ask_point_to_users_and_permissions_too(
    fake: FakeGoogle, agent_socket: str
) -> None:
    """The token's 4 KiB text (key-file credentials, nobody listening): the same rule."""
    google_owners(fake, [DEMO_USER, *[f"owner.{i:04d}@example.com" for i in range(2_099)]])
    async with serve(fake, agent_socket, "legacy") as client:
        result = await client.call_tool("update_site_owners", {"site": WWW, "owners": [DEMO_USER]})
    text = text_of(result)
    assert result.is_error and "confirm_token" not in (result.structured_content or {}), text
    assert "Settings › Users and permissions" in text and re.search(r"at most \d", text) is None, text
    assert put_owners(fake) == []


def _count(text: str, word: str, doing: str, of: int) -> int:
    """How many of the owners being removed (or added) the refusal says to change now: all, the first n
    of them, or (not named) none."""
    every = re.search(rf"\b{word} all ([\d,]+) owners you are {doing}", text)
    first = re.search(rf"\b{word} the first ([\d,]+) of the ([\d,]+) owners you are {doing}", text)
    if every:
        assert int(every.group(1).replace(",", "")) == of, text
        return of
    if first:
        assert int(first.group(2).replace(",", "")) == of, text
        return int(first.group(1).replace(",", ""))
    return 0


def _step(text: str, current: list[str], wanted: list[str]) -> list[str]:
    """The list the refusal says to give next, built the way it says."""
    match = re.search(r"the largest change one call can make here is ([\d,]+) owners", text)
    assert match, text
    removing = sorted(set(current) - set(wanted))
    adding = sorted(set(wanted) - set(current))
    take_out = _count(text, "without", "removing", len(removing))
    put_in = _count(text, "with", "adding", len(adding))
    assert take_out + put_in == int(match.group(1).replace(",", ""))
    step = sorted((set(current) - set(removing[:take_out])) | set(adding[:put_in]))
    size = re.search(r"a list of ([\d,]+) \(owners takes at most ([\d,]+)\)", text)
    assert size and int(size.group(1).replace(",", "")) == len(step), text
    assert int(size.group(2).replace(",", "")) == MAX_OWNERS and 1 <= len(step) <= MAX_OWNERS
    return step


async def test_a_change_too_large_for_one_question_says_the_largest_step_and_following_it_works(
    fake: FakeGoogle, agent_socket: str
) -> None:
    long = "x" * 200  # each address shown shortened: about 300 change lines need more than 64 KiB
    current = [DEMO_USER, *[f"{long}.old{i:03d}@example.com" for i in range(199)]]
    wanted = [DEMO_USER, *[f"{long}.new{i:03d}@example.com" for i in range(99)]]
    google_owners(fake, current)
    refusals: list[str] = []
    with app(agent_socket, "approve") as listener:
        async with serve(fake, agent_socket, "legacy") as client:
            for _ in range(6):
                result = await client.call_tool("update_site_owners", {"site": WWW, "owners": wanted})
                if not result.is_error:
                    break
                text = text_of(result)
                assert result.structured_content["decision"] == "refused", text
                refusals.append(text)
                step = _step(text, current, wanted)
                done = await client.call_tool("update_site_owners", {"site": WWW, "owners": step})
                assert not done.is_error, text_of(done)  # the step the refusal named is asked and made
                current = step
        questions = asked(listener)
    assert refusals, "the whole change fitted one question: the test no longer tests a refusal"
    assert not result.is_error, text_of(result)
    assert put_owners(fake)[-1] == sorted(wanted)
    assert len(questions) == len(put_owners(fake)) == len(refusals) + 1


def test_the_largest_step_never_leaves_an_empty_or_too_long_list() -> None:
    from searchdesk_server.approval.owner_steps import owner_step

    def question(now: int, wanted: int, keep: int) -> q.Question:
        current = [f"c{i:03d}@a.example" for i in range(now)]
        new = current[:keep] + [f"n{i:03d}@a.example" for i in range(wanted - keep)]
        return q.update_site_owners("https://a.example/", current, new, None)

    assert owner_step(question(150, 100, 0), most=120, ceiling=100) == (120, 0)  # removals first
    assert owner_step(question(300, 100, 0), most=150, ceiling=100) is None  # 150 would be left
    assert owner_step(question(150, 100, 0), most=200, ceiling=100) == (150, 50)
    assert owner_step(question(60, 60, 0), most=60, ceiling=100) == (59, 1)  # never an empty list
    assert owner_step(question(2_100, 1, 0), most=1_244, ceiling=100) is None
    assert owner_step(question(10, 10, 0), most=0, ceiling=100) is None
    assert owner_step(question(1, 100, 1), most=40, ceiling=100) == (0, 40)
