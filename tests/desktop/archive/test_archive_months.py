"""The copier sums the months Google no longer has before it copies anything (archive/months.py, issue 38).

Those months never change again (the copier copies only days Google still has), and content decay reads
them whole: the app sums each once, in the file the server reads.
"""

from __future__ import annotations

import datetime as dt
import random
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from searchdesk_desktop.keeping.archive_copier import Copier, Scope, Stopped
from searchdesk_desktop.keeping.archive_keeper import Archives
from searchdesk_server.archive.store import Archive
from tests.server.archive.test_grouped_pages import day_tables

ACCOUNT = "owner@example.com"
SITE = "sc-domain:months.example"
TODAY = dt.date(2025, 6, 15)  # Google keeps from 2024-02-15: January 2024 has left, February not whole


async def _refused(method: str, path: str, *, account: str, site: str | None, body: object | None) -> Any:
    raise Stopped()  # nothing is asked of Google here: the sums come first


def test_a_copy_first_sums_the_months_google_no_longer_has(tmp_path: Path) -> None:
    archives = Archives(tmp_path / "archive")
    rnd = random.Random(7)
    with Archive.open(archives.path(ACCOUNT)) as writer:  # what earlier copies kept
        day = dt.date(2024, 1, 1)
        while day <= dt.date(2024, 2, 20):
            writer.write_day(SITE, day, "web", day_tables(day, rnd))
            day += dt.timedelta(days=1)
    scope = Scope(accounts=(ACCOUNT,), allowed_sites=(SITE,))
    copier = Copier(archives, _refused, lambda: scope, search_types=("web",), today=lambda: TODAY)

    async def copy() -> None:
        with pytest.raises(Stopped):
            await copier._copy_site(ACCOUNT, SITE, "web", dt.date(2024, 2, 15), TODAY)

    anyio.run(copy)
    archives.close()
    with sqlite3.connect(archives.path(ACCOUNT)) as db:
        summed = [dt.date.fromordinal(m) for (m,) in db.execute("SELECT month FROM rolled")]
    assert summed == [dt.date(2024, 1, 1)]
