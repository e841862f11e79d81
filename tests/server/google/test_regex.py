"""Google's filter patterns by RE2 (google/regex.py, issue 36): what is refused, in which words, and how
a pattern matches. The words are RE2's messages of the pinned google-re2 turned into a person's; a test
per kind keeps a new RE2 from silently falling back to its own message."""

from __future__ import annotations

import time

import pytest

from searchdesk_server.google import regex

LEAD = "Google reads filter patterns as RE2 regular expressions, and RE2 cannot use this one: it "


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("shoes(?= for)", "looks ahead with (?=…). Match the text itself instead."),
        ("shoes(?!s)", "looks ahead with (?!…). To leave rows out, use excludingRegex or notContains."),
        ("(?<=best )shoes", "looks behind with (?<=…). Match the text before it as part of the pattern."),
        ("(?<!best )shoes", "looks behind with (?<!…). To leave rows out, use excludingRegex or notContains."),
        (r"(shoe)s \1", "refers back to an earlier group with \\1. Write the repeated text out."),
        ("(?P<w>shoe)(?P=w)", "refers back to an earlier group with (?P=…). Write the repeated text out."),
        (r"(?<w>shoe)\k<w>", "refers back to an earlier group with \\k. Write the repeated text out."),
        ("(?>shoes)", "uses an atomic group (?>…). Write it as a plain group (…)."),
        ("shoes++", "uses a possessive repeat ++. Use a plain + instead."),
        (r"shoes\Z", "uses \\Z. Use \\z for the end of the text."),
        (
            "(shoes",
            "is not a pattern RE2 can read (missing ): (shoes). Google's Search Console help lists what it can.",
        ),
    ],
)
def test_what_google_refuses_is_refused_in_words_that_say_what_to_write(pattern: str, why: str) -> None:
    with pytest.raises(regex.RegexRefused) as refused:
        regex.check(pattern)
    assert str(refused.value) == LEAD + why
    assert not regex.searches(pattern, "best shoes for running")  # never matches, never raises


def test_patterns_match_as_google_matches_them() -> None:
    assert regex.searches("(?i)^BEST", "best shoes")  # case off inside the pattern, as at Google
    assert not regex.searches("^BEST", "best shoes")  # case-sensitive otherwise
    assert regex.searches(r"(?<w>shoe)s", "shoes")  # a named group RE2 reads
    assert not regex.searches(r"^\d+$", "١٢٣")  # \d is ASCII digits in RE2 (Python's re: any digit)
    assert regex.searches("é$", "café") and regex.searches("^.{4}$", "café")  # characters, not bytes
    assert regex.searches(regex.escape("a+b? (c)"), "x a+b? (c) y")
    assert not regex.searches(regex.escape("a+b"), "aab")


def test_a_pattern_that_backtracks_in_pythons_re_answers_at_once() -> None:
    """`^(\\w+\\s?)*$` over a 51-character query takes Python's re about 25 minutes; RE2 is linear."""
    query = "best running shoes for flat feet and heavy runners?"
    started = time.monotonic()
    for _ in range(1000):
        assert not regex.searches(r"^(\w+\s?)*$", query)
    assert time.monotonic() - started < 5  # about 2 ms here; a bound no backtracking engine meets
