"""SearchDesk's copy's rows read as typed columns (`rows.common_columns`) give exactly what Google's rows give.

A report reads a range wholly in the copy as columns rather than as Google's objects (issue 38): the
entries, the sums and each entry shown must be what `checked` and `summed` make of the same rows as
Google's objects (`Columns.shaped`), odd words cleaned alike; a page with a row the common path cannot
take (a word the file lost, a count that is not whole) is read as Google's rows instead.
"""

from __future__ import annotations

from typing import Any

import pytest

from searchdesk_server.archive.answers import Columns
from searchdesk_server.tools.analytics.metrics import summed
from searchdesk_server.tools.analytics.rows import checked, common_columns

ONE = Columns(
    1,
    ["https://example.com/", "bell\x07inside", "https://example.com/\u202eevil", "2024-02-01", "bad\ud800half"],
    [3, 0, 7, 1, 2],
    [10, 4, 70, 1, 9],
    [1.5, 30.25, 2.0, 9.0, 4.75],
)
TWO = Columns(
    2,
    [("q one", "https://example.com/a"), ("q\ttab", "https://example.com/b"), ("q three", "bell\x07")],
    [1, 2, 3],
    [5, 6, 7],
    [1.25, 2.5, 3.75],
)


@pytest.mark.parametrize("columns", [ONE, TWO], ids=["one dimension", "two dimensions"])
def test_the_copys_columns_read_as_googles_rows_would(columns: Columns) -> None:
    typed = common_columns(columns, columns.dims)
    assert typed is not None
    want = checked(columns.shaped(), columns.dims)
    assert repr(typed.entries.every()) == repr(want)
    assert repr(checked(typed.entries, columns.dims)) == repr(want)
    assert [typed.entries[i] for i in range(len(want))] == want
    assert typed.sums == summed(want)


@pytest.mark.parametrize(
    "odd",
    [
        {"keys": ["https://example.com/", None]},  # a word the file no longer has
        {"clicks": [1, 2.5]},  # a count that is not whole
        {"positions": [1.0, 0.0]},  # a position Google never gives
    ],
)
def test_a_page_with_an_odd_row_is_read_as_googles_rows(odd: dict[str, Any]) -> None:
    fields: dict[str, Any] = {
        "keys": ["https://example.com/", "https://example.com/b"],
        "clicks": [1, 2],
        "impressions": [3, 4],
        "positions": [1.0, 2.0],
        **odd,
    }
    columns = Columns(1, **fields)
    assert common_columns(columns, 1) is None
    kept = checked(columns.shaped(), 1)
    assert len(kept) <= 2  # the general path cleans or drops the odd row, as for Google's


def test_columns_of_another_width_are_not_read_as_typed() -> None:
    assert common_columns(TWO, 1) is None
    assert common_columns(ONE, 2) is None
