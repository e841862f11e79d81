"""A period's pages come from one grouped pass, and are the very pages LIMIT/OFFSET gave (issue 38).

The archive once summed the whole period again for every page of 25,000 rows (new queries' 588,000
pairs: 24 passes, 36.8 s). Now the pass is kept for the pages after it (`archive/grouped.py`). Held
here: paging through an answer runs one grouped statement, not one a page; every page is, to the
byte, what the old statement gave (ties in clicks and impressions, rows without impressions, days
as a dimension, filters); and a day copied again between two pages is read, never a stale pass.
"""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.archive import grouped
from searchdesk_server.archive.grouped import KEPT
from searchdesk_server.archive.store import TABLES, Archive

SITE = "sc-domain:pages.example"
FIRST = dt.date(2024, 3, 1)
DAYS = 6
COPIED = dt.datetime(2024, 4, 1, 3, 0, tzinfo=dt.UTC)


def day_tables(day: dt.date, rnd: random.Random) -> dict[str, list[dict[str, Any]]]:
    """Small counts from small pools of words, so many keys tie on clicks and impressions."""
    pages = [f"https://pages.example/{i}" for i in range(40)]
    queries = [f"query {i} (c++)" for i in range(60)]

    def row(keys: list[str] | None) -> dict[str, Any]:
        impressions = rnd.choice([0, 0, 1, 2, 3])
        clicks = min(impressions, rnd.randint(0, 2))
        out: dict[str, Any] = {"clicks": clicks, "impressions": impressions, "position": rnd.uniform(1, 30)}
        if keys is not None:
            out["keys"] = keys
        return out

    pairs = sorted({(rnd.choice(queries), rnd.choice(pages)) for _ in range(150)})
    return {
        "totals": [row(None)],
        "page": [row([p]) for p in rnd.sample(pages, 30)],
        "query": [row([q]) for q in rnd.sample(queries, 45)],
        "country": [row(["fra"]), row(["deu"])],
        "device": [row(["MOBILE"])],
        "query_page": [row([q, p]) for q, p in pairs],
    }


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Archive]:
    path = tmp_path / "pages.sqlite3"
    rnd = random.Random(38)
    with Archive.open(path) as writer:
        for n in range(DAYS):
            day = FIRST + dt.timedelta(days=n)
            writer.write_day(SITE, day, "web", day_tables(day, rnd), copied_at=COPIED)
    KEPT.forget()
    reader = Archive.open_readonly(path)
    assert reader is not None
    try:
        yield reader
    finally:
        reader.close()
        KEPT.forget()


def old_page(
    conn: sqlite3.Connection,
    part: int,
    start: dt.date,
    end: dt.date,
    dims: Sequence[str],
    dimensions: Sequence[str],
    filters: Sequence[Mapping[str, str]],
    limit: int,
    offset: int,
) -> list[dict[str, Any]]:
    """One page as the archive answered it before: the whole period grouped, then LIMIT ? OFFSET ?
    (the statement and the rows made from it, as store.py had them, ties now ordered by key as the
    pass orders them: two reads of the same rows must agree, a month's kept sums included)."""
    column = {d: f"k{i + 1}" for i, d in enumerate(dims)}
    where = ["r.part = ?", "r.day BETWEEN ? AND ?"]
    params: list[Any] = [part, start.toordinal(), end.toordinal()]
    for f in filters:
        assert f["operator"] == "contains"
        where.append(f"r.{column[f['dimension']]} IN (SELECT id FROM strings WHERE instr(lower(value), lower(?)) > 0)")
        params.append(f["expression"])
    group = [column[d] if d != "date" else "day" for d in dimensions]
    grouped = ", ".join(f"r.{g}" for g in group)
    keys = "".join("r.day, " if g == "day" else f"(SELECT value FROM strings WHERE id = r.{g}), " for g in group)
    sql = (
        f"SELECT {keys}sum(r.clicks) AS c, sum(r.impressions) AS i, sum(r.position * r.impressions), "
        "sum(CASE WHEN r.impressions = 0 THEN r.position ELSE 0 END), sum(r.impressions = 0) "
        f"FROM rows r WHERE {' AND '.join(where)} GROUP BY {grouped} ORDER BY c DESC, i DESC, {grouped} LIMIT ? OFFSET ?"
    )
    out = []
    n = len(group)
    for r in conn.execute(sql, [*params, limit, offset]).fetchall():
        clicks, impressions, weighted, bare, nbare = r[n:]
        if not impressions and not clicks and nbare == 0:
            continue
        words = list(r[:n])
        for i, g in enumerate(group):
            if g == "day":
                words[i] = dt.date.fromordinal(words[i]).isoformat()
        out.append(
            {
                "keys": words,
                "clicks": clicks,
                "impressions": impressions,
                "ctr": clicks / impressions if impressions else 0.0,
                "position": weighted / impressions if impressions else (bare / nbare if nbare else 0.0),
            }
        )
    return out


def part_of(archive: Archive, table: str) -> int:
    row = archive._conn.execute("SELECT id FROM parts WHERE site=? AND tbl=?", (SITE, table)).fetchone()
    return int(row[0])


CASES = [
    (["query", "page"], [], "query_page"),
    (["page"], [], "page"),
    (["query"], [{"dimension": "query", "operator": "contains", "expression": "C++"}], "query"),
    (["date", "page"], [], "page"),
    (["page", "date"], [], "page"),
    (["date"], [{"dimension": "query", "operator": "contains", "expression": "1"}], "query"),
]


@pytest.mark.parametrize("words_kept", [grouped.WORDS_KEPT, 3])
@pytest.mark.parametrize(("pass_rows", "paged"), [(grouped.PASS_ROWS, grouped.PAGED), (8, 1)])
@pytest.mark.parametrize(("dimensions", "filters", "table"), CASES)
def test_every_page_is_the_page_limit_and_offset_gave(
    archive: Archive,
    dimensions: list[str],
    filters: list[dict[str, str]],
    table: str,
    pass_rows: int,
    paged: int,
    words_kept: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Also when every first page is a paged read's (`PAGED`) and pages go past what one pass keeps
    (`PASS_ROWS`), both made small here: such a page is a pass of its own. And when a kept pass
    remembers so few words (`WORDS_KEPT`) that it forgets them page after page."""
    monkeypatch.setattr(grouped, "PASS_ROWS", pass_rows)
    monkeypatch.setattr(grouped, "PAGED", paged)
    monkeypatch.setattr(grouped, "WORDS_KEPT", words_kept)
    start, end = FIRST, FIRST + dt.timedelta(days=DAYS - 1)
    part = part_of(archive, table)
    whole = old_page(archive._conn, part, start, end, TABLES[table], dimensions, filters, -1, 0)
    assert len(whole) >= DAYS  # at least six pages of one row
    if len(whole) > DAYS:  # keys, not days: ties among them, whose order the pages must keep
        assert len({(r["clicks"], r["impressions"]) for r in whole}) < len(whole) * 0.8
    for size in (1, 7, 20):
        at = 0
        while True:
            got = archive.query(SITE, start, end, dimensions, "web", filters, size, at).rows
            want = old_page(archive._conn, part, start, end, TABLES[table], dimensions, filters, size, at)
            assert repr(got) == repr(want), (size, at)
            if len(got) < size:
                break
            at += size


def test_paging_through_a_period_sums_it_once(archive: Archive, monkeypatch: pytest.MonkeyPatch) -> None:
    """A paged read (pages of 25,000 rows, 50 here) sums the period once, whatever its pages."""
    monkeypatch.setattr(grouped, "PAGED", 50)
    statements: list[str] = []
    archive._conn.set_trace_callback(statements.append)
    start, end = FIRST, FIRST + dt.timedelta(days=DAYS - 1)
    pages = at = 0
    while True:
        got = archive.query(SITE, start, end, ["query", "page"], "web", (), 50, at).rows
        pages += 1
        if len(got) < 50:
            break
        at += 50
    assert pages > 5
    assert sum("FROM rows r" in s and "GROUP BY" in s for s in statements) == 1


def test_a_day_copied_again_between_two_pages_is_read_afresh(archive: Archive, tmp_path: Path) -> None:
    start, end = FIRST, FIRST + dt.timedelta(days=DAYS - 1)
    first = archive.query(SITE, start, end, ["page"], "web", (), 5, 0).rows
    assert len(first) == 5
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES} | {
        "totals": [{"clicks": 1, "impressions": 1, "position": 1.0}],
        "page": [{"keys": ["https://pages.example/new"], "clicks": 500, "impressions": 900, "position": 2.0}],
    }
    with Archive.open(archive.path) as writer:
        writer.write_day(SITE, end, "web", tables, copied_at=COPIED + dt.timedelta(days=1))
    everything = archive.query(SITE, start, end, ["page"], "web", (), 1000, 0).rows
    assert everything[0]["keys"] == ["https://pages.example/new"]
    assert archive.query(SITE, start, end, ["page"], "web", (), 5, 5).rows == everything[5:10]


def test_a_pass_kept_for_pages_nobody_asks_for_goes_after_its_time(
    archive: Archive, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read that stops before the end (the reader's cap) leaves its pass kept; an idle server drops it."""
    monkeypatch.setattr(grouped, "PAGED", 10)
    monkeypatch.setattr(grouped, "KEEP_S", 0.2)
    start, end = FIRST, FIRST + dt.timedelta(days=DAYS - 1)
    assert len(archive.query(SITE, start, end, ["query", "page"], "web", (), 10, 0).rows) == 10
    assert len(KEPT._passes) == 1
    deadline = time.monotonic() + 10
    while KEPT._passes and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not KEPT._passes
