"""The archive's fast write paths keep exactly what the row-by-row ones kept (issue 28).

`_encode_common` (a table's rows checked a column at a time) must give `_encode`'s very tuples or
step aside, and `write_rows` (a hundred rows to an INSERT) must leave the table as one INSERT per
row did, duplicates and a remainder included. `encode_sorted` (rows put in key order without a
tuple per row, issue 37) must give those tuples sorted, and the daily copy, which interns only the
words its process has no id for, must end as a fresh process's copy does.
"""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from searchdesk_server.archive import encode, store
from tests.server.textbudget.strategies import PROPERTY

_IDS = {"a": 1, "b": 2, "https://www.example.com/ü": 3}
_WORD = st.sampled_from(["a", "b", "https://www.example.com/ü", "unknown", ""])
_ODD = st.sampled_from([None, -1, "12", 1.5, True, math.nan, math.inf, 1e9, -0.0, 2, [1], 10**30])


@st.composite
def _table(draw: st.DrawFn) -> tuple[list[Any], int]:
    ndims = draw(st.integers(0, 2))
    odd = draw(st.integers(0, 2)) == 0
    rows: list[Any] = []
    for _ in range(draw(st.integers(0, 8))):
        row: dict[str, Any] = {
            "keys": draw(st.lists(_WORD, min_size=ndims, max_size=ndims + 1)),
            "clicks": draw(st.integers(0, 10**6)),
            "impressions": draw(st.integers(0, 10**6)),
            "ctr": 0.5,
            "position": draw(st.floats(0, 1e9, exclude_max=True)),
        }
        if odd and draw(st.booleans()):
            field = draw(st.sampled_from(["keys", "clicks", "impressions", "position"]))
            if draw(st.booleans()):
                del row[field]
            else:
                row[field] = draw(st.one_of(_ODD, st.lists(_ODD, max_size=2)))
        rows.append(row if not (odd and draw(st.integers(0, 6)) == 0) else draw(_ODD))
    return rows, ndims


@PROPERTY
@given(_table())
def test_common_tables_encode_as_row_by_row(case: tuple[list[Any], int]) -> None:
    rows, ndims = case
    try:
        reference = [t for t in (encode._encode_row(r, ndims, _IDS.get) for r in rows) if t is not None]
    except TypeError:  # a key that is a list: `_encode` raises the same, and so must the fast path's caller
        with pytest.raises(TypeError):
            encode._encode(rows, ndims, _IDS)
        return
    fast = encode._encode_common(rows, ndims, _IDS)
    if fast is not None:
        assert repr(fast) == repr(reference)
    assert repr(encode._encode(rows, ndims, _IDS)) == repr(reference)


def _day(n: int) -> dict[str, list[dict[str, Any]]]:
    def rows(ndims: int, count: int) -> list[dict[str, Any]]:
        return [
            {
                "keys": [f"q{i % (count - 3)}", f"p{i % 7}"][:ndims],  # a few keys twice: the later one is kept
                "clicks": i % 5,
                "impressions": 10 + i,
                "ctr": 0.1,
                "position": 1.0 + i / 7,
            }
            for i in range(count)
        ]

    return {name: rows(len(dims), n if dims else 1) if dims else [rows(0, 4)[0]] for name, dims in store.TABLES.items()}


def _dump(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        strings = dict(conn.execute("SELECT id, value FROM strings"))
        return [
            (part, day, strings.get(k1), strings.get(k2), clicks, impressions, position.hex())
            for part, day, k1, k2, clicks, impressions, position in conn.execute(
                "SELECT * FROM rows ORDER BY part, day, k1, k2"
            )
        ]


def test_batched_inserts_leave_the_rows_of_single_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    day = dt.date(2026, 3, 1)
    tables = _day(257)  # two batches of a hundred and 57 rows one by one, per table
    with store.Archive.open(tmp_path / "batched.sqlite3") as archive:
        archive.write_day("https://www.example.com/", day, "web", tables)
        archive.write_day("https://www.example.com/", day, "web", tables)  # replaced, not doubled
    monkeypatch.setattr(encode, "_BATCH", 10**9)  # every row its own INSERT, as before
    with store.Archive.open(tmp_path / "single.sqlite3") as archive:
        archive.write_day("https://www.example.com/", day, "web", tables)
    batched, single = _dump(tmp_path / "batched.sqlite3"), _dump(tmp_path / "single.sqlite3")
    assert batched == single
    assert len(batched) > 3 * 200


_FEW = st.sampled_from(["a", "b", "https://www.example.com/ü", "unknown"])  # few words: keys often repeat


@st.composite
def _common(draw: st.DrawFn) -> tuple[list[Any], int]:
    """A table of common rows (the fast path's own), its keys drawn from a few words so two rows
    often share one and some have no id."""
    ndims = draw(st.integers(1, 2))
    rows = [
        {
            "keys": draw(st.lists(_FEW, min_size=ndims, max_size=ndims)),
            "clicks": draw(st.integers(0, 3)),
            "impressions": draw(st.integers(0, 3)),
            "ctr": 0.0,
            "position": draw(st.sampled_from([0.0, -0.0, 1.0, 2.5])),
        }
        for _ in range(draw(st.integers(0, 8)))
    ]
    return rows, ndims


@PROPERTY
@given(st.one_of(_table(), _common()))
def test_sorted_rows_are_the_row_by_row_tuples_sorted(case: tuple[list[Any], int]) -> None:
    """`encode_sorted` (row numbers sorted on one integer, columns laid end to end) gives the
    row-by-row tuples, sorted and laid end to end: duplicates and words without an id included."""
    rows, ndims = case
    try:
        reference = sorted(t for t in (encode._encode_row(r, ndims, _IDS.get) for r in rows) if t is not None)
    except TypeError:
        return
    assert repr(encode.encode_sorted(rows, ndims, _IDS)) == repr([v for t in reference for v in t])


def test_a_day_with_some_new_words_is_kept_as_a_fresh_copier_keeps_it(tmp_path: Path) -> None:
    """The daily copy looks keys up in the ids its process already has and interns only the words
    without one: a day after a day that shares most words ends exactly as in a process that
    interned all of them at once."""
    day = dt.date(2026, 3, 2)
    site = "https://www.example.com/"

    def tables(words: range) -> dict[str, list[dict[str, Any]]]:  # each key once, as Google sends them
        def rows(ndims: int) -> list[dict[str, Any]]:
            return [
                {"keys": [f"q{i}", f"p{i % 7}"][:ndims], "clicks": i % 5, "impressions": 9 + i, "position": i / 3}
                for i in words
            ]

        return {
            name: rows(len(dims)) if dims else [{"clicks": 1, "impressions": 2, "position": 3.0}]
            for name, dims in store.TABLES.items()
        }

    before, today = tables(range(0, 300)), tables(range(30, 330))  # today: most words again, thirty new
    today["query"][5]["keys"] = ["a word only today"]
    with store.Archive.open(tmp_path / "daily.sqlite3") as archive:
        archive.write_day(site, day - dt.timedelta(days=1), "web", before)
        archive.write_day(site, day, "web", today)
    with store.Archive.open(tmp_path / "fresh.sqlite3") as archive:
        archive.write_day(site, day - dt.timedelta(days=1), "web", before)
    with store.Archive.open(tmp_path / "fresh.sqlite3") as archive:  # a new process: no ids kept
        archive.write_day(site, day, "web", today)
    daily, fresh = _dump(tmp_path / "daily.sqlite3"), _dump(tmp_path / "fresh.sqlite3")
    assert daily == fresh
    assert ("a word only today" in {row[2] for row in daily}) and len(daily) > 1_500


def test_a_word_deleted_by_vacuum_is_interned_again(tmp_path: Path) -> None:
    """`vacuum` deletes the words no row uses, and SQLite may give a deleted word's id to the next
    new word: the writer must not keep writing the old id for the old word (it would read back as
    the other word)."""
    day = dt.date(2026, 3, 1)

    def tables(word: str) -> dict[str, list[dict[str, Any]]]:
        row = {"clicks": 1, "impressions": 2, "ctr": 0.5, "position": 3.0}
        return {name: [{**row, "keys": [word] * len(dims)} if dims else row] for name, dims in store.TABLES.items()}

    with store.Archive.open(tmp_path / "a.sqlite3") as archive:
        archive.write_day("sc-domain:gone.example", day, "web", tables("https://gone.example/old"))
        archive.delete_site("sc-domain:gone.example")
        archive.vacuum()
        archive.write_day("sc-domain:kept.example", day, "web", tables("https://kept.example/new"))
        archive.write_day("sc-domain:back.example", day, "web", tables("https://gone.example/old"))
        back = archive.query("sc-domain:back.example", day, day, ["page"], "web").rows
    assert [r["keys"] for r in back] == [["https://gone.example/old"]]
