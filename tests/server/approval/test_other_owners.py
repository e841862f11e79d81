"""Other verified owners are named in the values, never in the server's sentences (issue 24): the first
three, sorted, ASCII-escaped like every owner address, then how many more; and the heading over a question
where people lose access is read from the server's own words."""

from __future__ import annotations

import random

import pytest

from searchdesk_server.approval import question as q

ME = "me@example.com"
SITE = "https://www.example.com/"


def owners(n: int) -> list[str]:
    return [f"owner{i:03d}@example.com" for i in range(n)]


@pytest.mark.parametrize("build", [q.delete_site, q.unverify_site], ids=["delete_site", "unverify_site"])
@pytest.mark.parametrize("n", [1, 3, 10, 200])
def test_other_owners_are_named_in_the_values_first_three_then_a_count(build: object, n: int) -> None:
    listed = [ME, *owners(n)]
    random.Random(n).shuffle(listed)  # Google's order: the words must not depend on it
    facts = q.owner_facts(listed, readable=True, account=ME.upper())
    question = build(SITE, ME, facts)  # type: ignore[operator]
    named = [value for label, value in question.values if label == q.OTHER_OWNER]
    assert named == owners(n)[: q.NAMED_OWNERS]
    more = [value for label, value in question.values if label == f"{q.OTHER_OWNER}s"]
    assert more == ([f"and {n - 3:,} more"] if n > 3 else [])
    assert not any(a in question.what or a in question.consequence for a in owners(n))
    assert question == build(SITE, ME, q.owner_facts(sorted(listed), readable=True, account=ME))  # type: ignore[operator]


def test_an_owner_address_is_shown_in_ascii() -> None:
    facts = q.owner_facts([ME, "jos\u00e9@example.com"], readable=True, account=ME)
    (_, value) = next(v for v in q.delete_site(SITE, ME, facts).values if v[0] == q.OTHER_OWNER)
    assert value.isascii() and value != "jos\u00e9@example.com"


def test_no_names_when_this_account_is_not_found_in_the_list() -> None:
    facts = q.owner_facts(owners(3), readable=True, account=ME)
    assert facts.others == 2 and facts.names == ()
    assert not any(label.startswith(q.OTHER_OWNER) for label, _ in q.delete_site(SITE, ME, facts).values)


def test_the_loss_heading_is_read_from_the_words() -> None:
    last = q.OwnerFacts(q.Ownership.LAST_OWNER)
    others = q.owner_facts([ME, *owners(2)], readable=True, account=ME)
    cases = [
        (q.delete_site(SITE, ME, last), q.LOSES_ACCESS),
        (q.unverify_site(SITE, ME, last), q.LOSES_ACCESS),
        (q.unverify_site("sc-domain:example.com", ME, last), q.LOSES_ACCESS),
        (q.unverify_site(SITE, ME, others), q.ENDS_OWNERSHIP),
        (q.delete_site(SITE, ME, others), ""),
        (q.delete_sitemap(SITE, SITE + "sitemap.xml", ME), ""),
        (q.update_site_owners(SITE, [ME, "a@example.com"], [ME], ME), q.OWNERS_LOSE),
        (q.update_site_owners(SITE, [ME], [ME, "a@example.com"], ME), ""),
    ]
    for question, heading in cases:
        assert q.loss_heading(question.tool, question.consequence, [label for label, _ in question.values]) == heading
