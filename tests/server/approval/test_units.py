"""The approval chain's parts in-process: sealed state, tokens, the question, and the expiry
cases on the 2026-07-28 wire with a shortened clock."""

from __future__ import annotations

import hashlib
import json

import pytest
from mcp import Client
from mcp_types import ElicitResult

from searchdesk_server.approval import question as q
from searchdesk_server.config import load
from searchdesk_server.confirm_tokens import MAX_PENDING, Redeemed, TokenBook
from searchdesk_server.request_state import ShownBook, StateBook
from searchdesk_server.runtime import Runtime
from searchdesk_server.server import build_server
from tests.clock import Clock
from tests.fakegoogle import FakeGoogle

from .conftest import GUARDED, TARGETS, acted

FP = "a" * 64


D1, D2 = "1" * 64, "2" * 64  # two question digests (the words shown)


def test_every_guarded_tool_has_example_arguments() -> None:
    """The matrix runs for every guarded tool of the catalogue: a new one needs its example here."""
    assert GUARDED and set(TARGETS) == set(GUARDED)


def test_state_opens_once_for_its_own_target_only() -> None:
    clock = Clock(1_000_000.0)
    book = StateBook(ttl=60, clock=clock)
    state = book.seal("delete_sitemap", FP, D1)
    assert not book.open(state, "delete_site", FP, D1)
    assert not book.open(state, "delete_sitemap", "b" * 64, D1)
    assert not book.open(state, "delete_sitemap", FP, D2)  # the question reads differently now
    assert book.open(state, "delete_sitemap", FP, D1)
    assert not book.open(state, "delete_sitemap", FP, D1)  # one-shot nonce
    late = book.seal("delete_sitemap", FP, D1)
    clock.now += 61
    assert not book.open(late, "delete_sitemap", FP, D1)
    assert not StateBook().open(book.seal("delete_sitemap", FP, D1), "delete_sitemap", FP, D1)  # a restart
    for junk in (None, "", "sd1.", "sd1.a.b", "sd1." + "A" * 2000, "x" + state):
        assert not book.open(junk, "delete_sitemap", FP, D1)


def test_tokens_are_single_use_bound_and_expire() -> None:
    clock = Clock(1_000_000.0)
    book = TokenBook(ttl=300, clock=clock)
    token = book.issue(FP, D1)
    assert len(token) >= 22 + 4  # ≥ 128 bits of randomness after the prefix
    assert book.redeem("b" * 64, D1, token) is Redeemed.UNKNOWN  # other arguments: refused, and spent
    assert book.redeem(FP, D1, token) is Redeemed.UNKNOWN
    fresh = book.issue(FP, D1)
    assert book.redeem(FP, D1, fresh) is Redeemed.OK
    assert book.redeem(FP, D1, fresh) is Redeemed.UNKNOWN
    changed = book.issue(FP, D1)
    assert book.redeem(FP, D2, changed) is Redeemed.CHANGED  # same arguments, other words: no action
    assert book.redeem(FP, D1, changed) is Redeemed.UNKNOWN
    stale = book.issue(FP, D1)
    clock.now += 301
    assert book.redeem(FP, D1, stale) is Redeemed.UNKNOWN
    first = book.issue(FP, D1)
    for _ in range(MAX_PENDING):
        book.issue(FP, D1)
    assert book.redeem(FP, D1, first) is Redeemed.UNKNOWN  # the oldest was dropped past 100 pending


def test_shown_book_binds_a_yes_to_the_words_shown() -> None:
    clock = Clock(1_000_000.0)
    shown = ShownBook(ttl=60, clock=clock)
    assert not shown.matches(FP, D1)
    shown.remember(FP, D1)
    assert shown.matches(FP, D1) and not shown.matches(FP, D2) and not shown.matches("b" * 64, D1)
    clock.now += 61
    assert not shown.matches(FP, D1)


OWNERS = q.OwnerFacts(q.Ownership.OTHERS_REMAIN, 1)


def test_fingerprints_bind_the_exact_targets() -> None:
    a = q.delete_sitemap("https://a.example/", "https://a.example/s.xml", None)
    swapped = q.delete_sitemap("https://a.example/s.xml", "https://a.example/", None)
    assert a.fingerprint != swapped.fingerprint
    expected = hashlib.sha256(
        json.dumps(
            ["delete_sitemap", ["https://a.example/", "https://a.example/s.xml"]], separators=(",", ":")
        ).encode()
    ).hexdigest()
    assert a.fingerprint == expected
    one = q.update_site_owners("https://a.example/", ["x@a.example"], ["b@a.example"], None)
    two = q.update_site_owners("https://a.example/", ["x@a.example"], ["b@a.example", "c@a.example"], None)
    same = q.update_site_owners("https://a.example/", [], ["b@a.example"], None)
    assert one.fingerprint != two.fingerprint
    assert one.fingerprint == same.fingerprint  # the target is the list asked for, not the current state
    assert one.digest != same.digest  # but the words differ: a yes to one is not a yes to the other
    assert q.unverify_site("sc-domain:a.example", None, OWNERS).targets == ("dns://a.example",)


def test_self_removal_is_said_in_the_servers_own_words() -> None:
    question = q.update_site_owners(
        "sc-domain:a.example", ["me@a.example", "x@a.example"], ["x@a.example"], "me@a.example"
    )
    assert (
        "This includes the Google account me@a.example, which SearchDesk uses, but Google says a change of owners "
        "cannot end the verified ownership of the account making it" in question.consequence
    )
    assert ("Removed (the account SearchDesk uses)", "me@a.example") in question.values
    assert "1 removed, 0 added, 1 in total" in question.what


def test_long_owner_lists_are_shown_whole_with_exact_counts() -> None:
    owners = [f"{'o' * 190}{i}@example.com" for i in range(100)]
    question = q.update_site_owners("https://a.example/", [], owners, None)
    assert "0 removed, 100 added, 100 in total afterwards" in question.what
    assert question.counted_lines == 100 and not question.fits_elicitation
    assert question.first_changes(3).counted_lines == 3


def test_the_account_is_named_or_said_to_be_unknown() -> None:
    named = q.delete_sitemap("https://a.example/", "https://a.example/s.xml", "ow\u0430ner@a.example")
    assert "the Google account ow\\u0430ner@a.example" in named.what  # shown like an owner address
    unknown = q.delete_site("https://a.example/", None, OWNERS)
    assert "the Google account set in this server's settings" in unknown.what


@pytest.mark.parametrize("account", ["agency@a.example", None])
def test_every_question_says_which_account_acts(account: str | None) -> None:
    """With several accounts the account is part of what the person approves: every guarded tool's
    first sentence names it (owners unchanged by the call included), or says it is the server's own."""
    words = q.account_words(account)
    questions = [
        q.delete_site("https://a.example/", account, OWNERS),
        q.delete_sitemap("https://a.example/", "https://a.example/s.xml", account),
        q.unverify_site("https://a.example/", account, OWNERS),
        q.update_site_owners("https://a.example/", ["agency@a.example", "x@a.example"], ["agency@a.example"], account),
    ]
    assert len(questions) == len(GUARDED)
    for question in questions:
        assert words in question.what, question.what


def in_process(fake: FakeGoogle, tokens: TokenBook | None = None, states: StateBook | None = None):  # type: ignore[no-untyped-def]
    config = load(
        {
            "GSC_SERVICE_ACCOUNT_KEY": json.dumps(fake.service_account_info),
            "SEARCHDESK_AGENT_SOCKET": "/nonexistent/x.sock",
        }
    )
    runtime = Runtime(config, transport=fake.transport(), tokens=tokens, states=states)
    return build_server(config, runtime=runtime)


@pytest.mark.anyio
async def test_expired_state_gets_a_fresh_question_and_no_action(fake: FakeGoogle) -> None:
    clock = Clock(1_000_000.0)
    server = in_process(fake, states=StateBook(ttl=60, clock=clock))
    args = TARGETS["delete_sitemap"]
    yes = {"searchdesk_confirm": ElicitResult(action="accept", content={"confirm": True})}

    async def never(ctx, params):  # type: ignore[no-untyped-def]
        raise AssertionError("driven by hand")

    async with Client(server, mode="2026-07-28", elicitation_callback=never) as client:
        first = await client.session.call_tool("delete_sitemap", args, allow_input_required=True)
        assert first.result_type == "input_required"
        clock.now += 61
        late = await client.session.call_tool(
            "delete_sitemap", args, input_responses=yes, request_state=first.request_state, allow_input_required=True
        )
        assert late.result_type == "input_required"
        assert (
            late.input_requests["searchdesk_confirm"].params.message
            == first.input_requests["searchdesk_confirm"].params.message
        )
        assert acted(fake, "delete_sitemap") == 0
        fresh = await client.session.call_tool(
            "delete_sitemap", args, input_responses=yes, request_state=late.request_state
        )
        assert not fresh.is_error
    assert acted(fake, "delete_sitemap") == 1


@pytest.mark.anyio
async def test_expired_token_is_refused(fake: FakeGoogle) -> None:
    clock = Clock(1_000_000.0)
    server = in_process(fake, tokens=TokenBook(ttl=300, clock=clock))
    args = TARGETS["delete_sitemap"]
    async with Client(server, mode="legacy") as client:
        token = (await client.call_tool("delete_sitemap", args)).structured_content["confirm_token"]
        clock.now += 301
        late = await client.call_tool("delete_sitemap", {**args, "confirm_token": token})
        assert late.is_error
        assert "invalid, expired, or issued for different arguments" in late.content[0].text
    assert acted(fake, "delete_sitemap") == 0
