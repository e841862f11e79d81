"""New queries sums the read by page only for the queries it lists (`new_queries.ListedPages`), and
each listed query's page is exactly what summing every pair gave (issue 38's speed target).

Held here, on random pages: Google's rows, as objects and as typed rows, and the typed rows of
SearchDesk's copy; words a person cannot see among them (cleaned before they are compared); pages
that come before the reads by query have ended and pages after. Each test fails on the broken code
its docstring names.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from searchdesk_server.archive.answers import Columns
from searchdesk_server.tools.analytics.metrics import Sums, tally
from searchdesk_server.tools.analytics.rows import checked, common_columns, common_entries
from searchdesk_server.tools.reports.new_queries import ListedPages, top_pages

# A bell and a right-to-left override: cleaned, so "a\x07" is listed as "a".
words = st.sampled_from(["a", "b", "a\x07", "c d", "\u202eb", "é"])
pages = st.sampled_from(["https://x.example/1", "https://x.example/2", "https://x.example/\x073"])


@st.composite
def a_page(draw: st.DrawFn) -> list[dict[str, Any]]:
    rows = []
    for _ in range(draw(st.integers(min_value=1, max_value=12))):
        impressions = draw(st.integers(min_value=0, max_value=50))
        rows.append(
            {
                "keys": [draw(words), draw(pages)],
                "clicks": draw(st.integers(min_value=0, max_value=impressions)),
                "impressions": impressions,
                "ctr": 0.0,
                "position": draw(st.floats(min_value=1, max_value=40, allow_nan=False)),
            }
        )
    return rows


def as_google_typed(rows: list[dict[str, Any]]) -> Any:
    """The page as the reader hands on Google's answer read as typed rows (keys as Google's lists)."""
    found = common_entries(rows, 2)
    assert found is not None
    return found[0]


def typed(rows: list[dict[str, Any]]) -> Any:
    """The page as the reader hands on SearchDesk's copy's columns (`common_columns`)."""
    columns = Columns(
        2,
        [tuple(r["keys"]) for r in rows],
        [r["clicks"] for r in rows],
        [r["impressions"] for r in rows],
        [r["position"] for r in rows],
    )
    found = common_columns(columns, 2)
    assert found is not None
    return found.entries


@settings(max_examples=60, deadline=None)
@given(
    st.lists(a_page(), min_size=1, max_size=5),
    st.lists(st.sampled_from(["google", "google typed", "copy"]), min_size=5, max_size=5),
    st.sets(st.sampled_from(["a", "b", "c d", "é", "none of them"])),
    st.integers(min_value=0, max_value=5),
)
def test_each_listed_query_keeps_the_page_summing_every_pair_gave(
    read: list[list[dict[str, Any]]], forms: list[str], listed: set[str], known_after: int
) -> None:
    """Against `tally` and `top_pages` over every pair, as the report summed them before. Fails when
    the pages held before `want` are dropped, or when a word is compared before it is cleaned."""
    every: dict[Any, Sums] = {}
    everything = tally(4, 2, 0, every)
    by_pair = ListedPages()
    for n, rows in enumerate(read):
        if n == known_after:
            by_pair.want(listed)
        asyncio.run(everything(rows))
        by_pair.add({"google": lambda r: r, "google typed": as_google_typed, "copy": typed}[forms[n]](rows))
    if known_after >= len(read):
        by_pair.want(listed)

    assert {query for query, _ in by_pair.pairs} <= listed
    assert top_pages(by_pair.pairs) == {q: p for q, p in top_pages(every).items() if q in listed}


@settings(max_examples=60, deadline=None)
@given(a_page(), st.sets(st.sampled_from(["a", "b", "c d", "é"])))
def test_typed_entries_of_listed_first_words_are_those_of_every_entry(
    rows: list[dict[str, Any]], first_in: set[str]
) -> None:
    """`CommonEntries.every(first_in)` is `every()` with the others left out, in order. Fails when the
    first word is compared as Google wrote it rather than cleaned."""
    for entries in (typed(rows), as_google_typed(rows)):
        assert entries.every(first_in) == [e for e in entries.every() if e[0][0] in first_in]
        assert entries.every() == checked(rows, 2)
