"""Whole months summed once Google no longer has them, read as their days read (archive/months.py, issue 38).

Held here: a summed month answers every page exactly as its days did, to the byte and in the same
order (ties, rows without impressions, typed or as Google's rows); only months that end before the
day given are summed, once; writing a day of a summed month drops its sums, so the answer follows the
new day; deleting a property drops them; and a file from before the sums still answers.
"""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.archive import months
from searchdesk_server.archive.answers import Columns
from searchdesk_server.archive.grouped import KEPT
from searchdesk_server.archive.store import Archive

from .test_grouped_pages import day_tables

SITE = "sc-domain:months.example"
FIRST = dt.date(2024, 1, 20)  # a month begun part way, two whole ones, and one still running
LAST = dt.date(2024, 4, 10)
COPIED = dt.datetime(2024, 5, 1, 3, 0, tzinfo=dt.UTC)
JAN, FEB, MAR, APR = (dt.date(2024, m, 1) for m in (1, 2, 3, 4))


@pytest.fixture
def path(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "months.sqlite3"
    rnd = random.Random(1138)
    with Archive.open(path) as writer:
        day = FIRST
        while day <= LAST:
            writer.write_day(SITE, day, "web", day_tables(day, rnd), copied_at=COPIED)
            day += dt.timedelta(days=1)
    KEPT.forget()
    yield path
    KEPT.forget()


def every_page(path: Path, month: dt.date, size: int, *, typed: bool = False) -> list[Any]:
    """The month by page, page after page of `size` rows, as a server's reader reads it."""
    start, end = months.month_span(month)
    reader = Archive.open_readonly(path)
    assert reader is not None
    out: list[Any] = []
    with reader:
        at = 0
        while True:
            rows = reader.query(SITE, start, end, ["page"], "web", (), size, at, typed=typed).rows
            out.extend(rows.shaped() if isinstance(rows, Columns) else rows)
            if len(rows) < size:
                return out
            at += size


def rolled(path: Path) -> list[dt.date]:
    with sqlite3.connect(path) as db:
        return [dt.date.fromordinal(m) for (m,) in db.execute("SELECT month FROM rolled ORDER BY month")]


@pytest.mark.parametrize("size", [1, 7, 25_000])
def test_a_summed_month_answers_every_page_as_its_days_did(path: Path, size: int) -> None:
    before = {m: every_page(path, m, size) for m in (JAN, FEB, MAR)}
    with Archive.open(path) as writer:
        assert writer.roll_up(SITE, "web", APR) == 3  # January's 12 days, February and March; April runs on
    assert rolled(path) == [JAN, FEB, MAR]
    for month, want in before.items():
        got = every_page(path, month, size)
        assert repr(got) == repr(want), month  # every number to the bit, every tie in its place
        assert repr(every_page(path, month, size, typed=True)) == repr(want), month
        assert len(got) > 20


def test_a_read_of_a_summed_month_uses_its_sums(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Archive.open(path) as writer:
        writer.roll_up(SITE, "web", APR)
    monkeypatch.setattr("searchdesk_server.archive.store.answer_rows", None)  # any grouped pass would fail
    assert every_page(path, FEB, 7)
    start, end = months.month_span(FEB)
    reader = Archive.open_readonly(path)
    assert reader is not None
    with reader, pytest.raises(TypeError):  # a range that is not one whole month reads its days
        reader.query(SITE, start, end - dt.timedelta(days=1), ["page"], "web", (), 7, 0)


def test_only_months_that_end_before_the_day_are_summed_and_only_once(path: Path) -> None:
    with Archive.open(path) as writer:
        assert writer.roll_up(SITE, "web", dt.date(2024, 2, 29)) == 1  # February ends on the 29th: not yet
        assert rolled(path) == [JAN]
        assert writer.roll_up(SITE, "web", dt.date(2024, 3, 1)) == 1
        assert writer.roll_up(SITE, "web", dt.date(2024, 3, 1)) == 0
        assert writer.roll_up("sc-domain:nobody.example", "web", APR) == 0
    assert rolled(path) == [JAN, FEB]


def test_writing_a_day_of_a_summed_month_drops_its_sums(path: Path) -> None:
    with Archive.open(path) as writer:
        writer.roll_up(SITE, "web", APR)
        page = "https://months.example/only-on-one-day"
        tables = day_tables(dt.date(2024, 2, 10), random.Random(5))
        tables["page"] = [{"keys": [page], "clicks": 999, "impressions": 1000, "position": 1.5}]
        writer.write_day(SITE, dt.date(2024, 2, 10), "web", tables, copied_at=COPIED)
    assert rolled(path) == [JAN, MAR]
    first = every_page(path, FEB, 5)[0]
    assert first["keys"] == [page] and first["clicks"] >= 999  # the new day, not the sums made before it


def test_deleting_a_property_drops_its_sums(path: Path) -> None:
    with Archive.open(path) as writer:
        writer.roll_up(SITE, "web", APR)
        writer.delete_site(SITE)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM months").fetchone() == (0,)
    assert rolled(path) == []


def test_a_file_from_before_the_sums_still_answers(path: Path) -> None:
    want = every_page(path, FEB, 7)
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE months")
        db.execute("DROP TABLE rolled")
    KEPT.forget()
    assert repr(every_page(path, FEB, 7)) == repr(want)
