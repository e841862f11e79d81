"""The coverage watch of an account the person withholds in the app is never opened (issue 37).

A real stdio server signed in through the app's real listener holding two accounts, as in
test_accounts.py; each account has a watch store of its own on disk. The server's file opens are
traced (tests/server/coverage/trace.py): after the agency's account is withheld, its store is not
opened at all — not merely left out of the answer."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from searchdesk_server.archive.store import account_file
from searchdesk_server.coverage.records import PageResult, WatchState, Why
from searchdesk_server.coverage.store import CoverageStore
from tests.fakegoogle import FakeGoogle
from tests.security.agent_socket.test_accounts import AGENCY, CLIENT, DEMO, WWW, accounts, running, server, two  # noqa: F401
from tests.security.conftest import Witness
from tests.server.coverage.trace import opened, traced
from tests.server.stdio import text_of

pytestmark = pytest.mark.anyio
WHEN = dt.datetime(2026, 11, 10, tzinfo=dt.UTC)


def watch(home: Path, account: str, site: str, coverage: str) -> Path:
    path = home / "data" / "searchdesk" / "coverage" / account_file(account)
    with CoverageStore.open(path) as store:
        store.set_watch(site, WatchState(True))
        store.add_pages(site, [site + "page"], Why.SITEMAP, now=WHEN)
        store.record(site, site + "page", PageResult("NEUTRAL", coverage), inspected_at=WHEN)
    return path


async def test_a_withheld_accounts_watch_is_never_opened(
    two: FakeGoogle,  # noqa: F811 (the fixture imported above)
    witness: Witness,
    folder: Path,
    tmp_path: Path,
) -> None:
    home = folder / "home"
    agency = watch(home, AGENCY, CLIENT, "Crawled - currently not indexed")
    mine = watch(home, DEMO, WWW, "Discovered - currently not indexed")
    env, log = traced(tmp_path)
    with running("desktop", folder, accounts(two)) as agent:
        async with server(two, witness, folder, **env) as served:
            both = await served.client.call_tool("index_coverage", {"site": CLIENT})
            opened_before = len(opened(log, agency))
            agent.set_script(accounts(two, without=AGENCY))  # the person withholds the agency's account
            withheld = await served.client.call_tool("index_coverage", {"site": CLIENT})
            still = await served.client.call_tool("index_coverage", {"site": WWW})
    assert not both.is_error and "Crawled - currently not indexed" in text_of(both), text_of(both)
    assert opened_before >= 1, "the trace sees the agency's store opened while Claude may use it"
    assert withheld.is_error and "Crawled" not in text_of(withheld), text_of(withheld)
    assert len(opened(log, agency)) == opened_before, "the withheld account's store was opened"
    assert not still.is_error and "Discovered - currently not indexed" in text_of(still), text_of(still)
    assert opened(log, mine)
