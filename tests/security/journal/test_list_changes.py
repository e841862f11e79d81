"""`list_changes` shows Claude only the record of accounts it may use now (issue 25).

Real stdio server subprocesses against the fake Google over HTTPS, signed in through the app's real
listener (`DesktopListener`) holding two accounts, as in test_accounts.py. The changes are made through
the server itself (the journal rows are the server's own); then the person withholds an account in the
app, and the next `list_changes` must not carry a trace of that account's rows — only their number.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.journal.paths import journal_path
from searchdesk_server.journal.store import Journal
from tests.agentref import Script
from tests.fakegoogle import SERVICE_ACCOUNT_EMAIL, FakeGoogle
from tests.security.agent_socket.test_accounts import (  # noqa: F401 (`two` is a fixture)
    AGENCY,
    CLIENT,
    DEMO,
    NOBODY,
    WWW,
    accounts,
    running,
    server,
    two,
)
from tests.security.conftest import Planted, Witness, serve
from tests.server.stdio import text_of
from tests.server.tools.test_list_changes import change

pytestmark = pytest.mark.anyio


def whole(result: Any) -> str:
    return text_of(result) + json.dumps(result.structured_content, ensure_ascii=False)


def listed(result: Any) -> list[tuple[str, str]]:
    assert not result.is_error, text_of(result)
    return [(e["property"], e["account"]) for e in result.structured_content["changes"]]


async def test_a_withheld_accounts_changes_are_left_out(
    two: FakeGoogle,  # noqa: F811 (the fixture imported above)
    witness: Witness,
    folder: Path,
) -> None:
    agency_feed, demo_feed = f"{CLIENT}agency-only.xml", f"{WWW}demo-owned.xml"
    with running("desktop", folder, accounts(two)) as agent:
        async with server(two, witness, folder) as served:
            for site, feed in ((CLIENT, agency_feed), (WWW, demo_feed)):
                done = await served.client.call_tool("submit_sitemap", {"site": site, "feedpath": feed})
                assert not done.is_error, text_of(done)
            asked_google = len(two.api_requests())
            both = await served.client.call_tool("list_changes", {})
            agent.set_script(accounts(two, without=AGENCY))  # the person withholds the agency's account
            withheld = await served.client.call_tool("list_changes", {})
            agent.set_script(Script(accounts=[]))  # and then the other one
            none = await served.client.call_tool("list_changes", {})
    assert listed(both) == [(WWW, DEMO), (CLIENT, AGENCY)]
    assert listed(withheld) == [(WWW, DEMO)] and withheld.structured_content["left_out"] == 1
    for trace in (AGENCY, CLIENT, agency_feed, "agency-only"):
        assert trace not in whole(withheld), trace
    assert "1 entry left out" in text_of(withheld)
    assert listed(none) == [] and none.structured_content["left_out"] == 2
    assert DEMO not in whole(none) and AGENCY not in whole(none)
    assert len(two.api_requests()) == asked_google  # reading the record asks Google nothing


async def test_rows_without_an_account_only_for_a_server_whose_account_has_no_address(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))  # where `serve` points the server
    journal = Journal(journal_path())
    change(journal, WWW, account="")  # written by a server whose account's address was not known
    change(journal, WWW, account=SERVICE_ACCOUNT_EMAIL)
    change(journal, WWW, account="someone.else@example.com")
    async with serve(fake, witness, home, planted.oauth_env()) as served:
        unnamed = await served.client.call_tool("list_changes", {})
    async with serve(fake, witness, home, planted.service_account_env(fake)) as served:
        named = await served.client.call_tool("list_changes", {})
    assert listed(unnamed) == [(WWW, "")] and unnamed.structured_content["left_out"] == 2
    assert SERVICE_ACCOUNT_EMAIL not in whole(unnamed) and "someone.else" not in whole(unnamed)
    assert listed(named) == [(WWW, SERVICE_ACCOUNT_EMAIL)] and named.structured_content["left_out"] == 2
    assert "someone.else" not in whole(named)
    assert not fake.api_requests()  # neither server asked Google anything


async def test_the_count_left_out_is_the_same_whatever_site_or_dates_claude_asks_about(
    two: FakeGoogle,  # noqa: F811 (the fixture imported above)
    witness: Witness,
    folder: Path,
) -> None:
    """Issue 36, 1: counted among the rows a question matched, "N entries left out" told whether a
    withheld account has a guessed property (1 for it, 0 for one nobody has) and, with dates, the day
    it changed. Counted over the whole record, the answer is the same for every site and every range."""
    today = dt.datetime.now(dt.UTC).date()
    days = [{}, {"start_date": today.isoformat(), "end_date": today.isoformat()}]
    days += [{"start_date": "2020-01-01", "end_date": "2020-01-31"}, {"end_date": "2021-06-30"}]
    with running("desktop", folder, accounts(two)) as agent:
        async with server(two, witness, folder) as served:
            for feed in (f"{CLIENT}agency-a.xml", f"{CLIENT}agency-b.xml"):
                done = await served.client.call_tool("submit_sitemap", {"site": CLIENT, "feedpath": feed})
                assert not done.is_error, text_of(done)
            agent.set_script(accounts(two, without=AGENCY))  # the person withholds the agency's account
            answers: dict[str, Any] = {}
            for guess in (CLIENT, NOBODY, None):
                for span in days:
                    args = {**span, **({"site": guess} if guess else {})}
                    result = await served.client.call_tool("list_changes", args)
                    assert not result.is_error, text_of(result)
                    answers[json.dumps(args)] = result
    for asked, result in answers.items():
        assert result.structured_content["left_out"] == 2, asked
        assert listed(result) == [], asked
        footer = text_of(result).splitlines()[-1]
        assert footer.startswith("2 entries left out:"), (asked, footer)
        assert AGENCY not in whole(result) and "agency-" not in whole(result), asked
    footers = {text_of(r).splitlines()[-1] for r in answers.values()}
    assert len(footers) == 1, footers  # the same words for every site and range
