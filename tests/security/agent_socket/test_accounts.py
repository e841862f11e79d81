"""Several Google accounts in one app (issue 18): each call goes to the account that can see its property,
and never gets another account's token.

Real stdio server subprocesses, signed in through the app: the app's real listener (`DesktopListener`:
the real `AgentListener` and `ApprovalBook`, accounts scripted as the Core serves them) or the reference
agent, and the fake Google with two accounts whose properties overlap. The fake's request log is the
judge: which account's token each request to Google carried.

The accounts: the demo's own account (DEMO, an owner of https://www.example.com/ and sc-domain:example.com,
a full user of the blog) and an agency's (AGENCY, the app's default: a restricted user of
https://www.example.com/ and the owner of https://client.example.org/, which only it sees).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from searchdesk_server.agent import protocol
from searchdesk_server.demo import DEMO_ACCOUNT
from searchdesk_server.quota import google_day
from tests.agentref import AccountScript, AgentThread, ApprovalScript, Script, TokenScript
from tests.desktop.agent_harness import DesktopListener
from tests.fakegoogle import FakeGoogle, LoggedRequest
from tests.security.conftest import Witness, base_env, serve
from tests.server.stdio import REPO, text_of

pytestmark = pytest.mark.anyio

DEMO = DEMO_ACCOUNT
AGENCY = "agency@example.net"
WWW = "https://www.example.com/"
CLIENT = "https://client.example.org/"
BLOG = "https://blog.example.com/"
NOBODY = "https://nobody.example.com/"
FEED = f"{WWW}old/sitemap.xml"

Agent = AgentThread | DesktopListener


# --------------------------------------------------------------------------------------------------
# Set-up


@pytest.fixture
def two(fake: FakeGoogle) -> FakeGoogle:
    """The fake Google with the agency's account beside the demo's own."""
    fake.add_account(AGENCY, {WWW: "siteRestrictedUser", CLIENT: "siteOwner"}, verified=[CLIENT])
    return fake


def accounts(fake: FakeGoogle, *, without: str = "", error: dict[str, str] | None = None, **kw: Any) -> Script:
    """The app holding both accounts (the agency's the default), each with a token the fake knows."""
    listed = [
        AccountScript(AGENCY, fake.mint_token(account=AGENCY), default=True, quota_project="42"),
        AccountScript(DEMO, fake.mint_token(), kind="service_account", quota_project="42"),
    ]
    for a in listed:
        a.error = (error or {}).get(a.account)
    return Script(accounts=[a for a in listed if a.account != without], **kw)


@contextlib.contextmanager
def running(kind: str, folder: Path, script: Script) -> Iterator[Agent]:
    agent: Agent = DesktopListener() if kind == "desktop" else AgentThread()
    agent.start(str(folder / "agent.sock"), script)
    try:
        yield agent
    finally:
        agent.stop()


def server(fake: FakeGoogle, witness: Witness, folder: Path, **env: str) -> Any:
    return serve(
        fake, witness, folder / "home", {"SEARCHDESK_APPROVAL_WAIT": "10", **env}, socket=str(folder / "agent.sock")
    )


def to_google(fake: FakeGoogle, method: str, path_part: str) -> list[str]:
    """Whose token each request matching `method` and `path_part` carried."""
    return [fake.account_of(r.token) for r in fake.api_requests() if r.method == method and path_part in r.path]


def lists_read(fake: FakeGoogle) -> list[str]:
    """Whose site list was read, in order."""
    return [fake.account_of(r.token) for r in fake.api_requests() if r.path == "/webmasters/v3/sites"]


def site_path(site: str) -> str:
    from urllib.parse import quote

    return "/webmasters/v3/sites/" + quote(site, safe="")


def structured(result: Any) -> dict[str, Any]:
    return result.structured_content or {}


def asked(agent: Agent) -> list[dict[str, Any]]:
    return [r.params for r in agent.requests() if r.method == "approval/request"]


def destructive(fake: FakeGoogle) -> list[LoggedRequest]:
    return [r for r in fake.api_requests() if r.method in ("DELETE", "PUT")]


LISTENERS = pytest.mark.parametrize("kind", ["desktop", "reference"])


# --------------------------------------------------------------------------------------------------
# Routing


@LISTENERS
async def test_each_call_goes_to_the_account_that_sees_its_property_best(
    two: FakeGoogle, witness: Witness, folder: Path, kind: str
) -> None:
    with running(kind, folder, accounts(two)):
        async with server(two, witness, folder) as served:
            www = await served.client.call_tool("get_site", {"site": WWW})
            client = await served.client.call_tool("get_site", {"site": CLIENT})
            blog = await served.client.call_tool("list_sitemaps", {"site": BLOG})
    assert not www.is_error and structured(www)["permission"] == "siteOwner", text_of(www)
    assert not client.is_error and structured(client)["permission"] == "siteOwner", text_of(client)
    assert not blog.is_error, text_of(blog)
    # The default account (the agency) is a restricted user of www: the owner's account acts.
    assert to_google(two, "GET", site_path(WWW)) == [DEMO]
    assert to_google(two, "GET", site_path(CLIENT)) == [AGENCY]  # only the agency sees it
    assert to_google(two, "GET", site_path(BLOG) + "/sitemaps") == [DEMO]
    # Who sees what was read once per account, each with its own token, and kept.
    assert sorted(lists_read(two)) == [AGENCY, DEMO]


@LISTENERS
async def test_a_property_nobody_sees_names_it_and_both_accounts_and_reaches_nobody(
    two: FakeGoogle, witness: Witness, folder: Path, kind: str
) -> None:
    with running(kind, folder, accounts(two)):
        async with server(two, witness, folder) as served:
            await served.client.call_tool("get_site", {"site": WWW})  # the lists are read, and kept
            result = await served.client.call_tool("get_site", {"site": NOBODY})
    text = text_of(result)
    assert result.is_error and NOBODY in text and AGENCY in text and DEMO in text, text
    assert to_google(two, "GET", site_path(NOBODY)) == []
    # Not in the kept lists: each is read once more (the property may have been added since), no more.
    assert sorted(lists_read(two)) == [AGENCY, AGENCY, DEMO, DEMO]


async def test_the_indexing_and_verification_tools_go_to_the_owner_of_the_url_or_site(
    two: FakeGoogle, witness: Witness, folder: Path
) -> None:
    with running("reference", folder, accounts(two)):
        async with server(two, witness, folder) as served:
            status = await served.client.call_tool("get_indexing_status", {"url": f"{WWW}jobs/store-manager-portland"})
            mine = await served.client.call_tool("get_verified_site", {"site": CLIENT})
            # Verified by the demo account, yet no Search Console property of anyone's: found all the same.
            theirs = await served.client.call_tool("get_verified_site", {"site": "https://docs.example.com/"})
    assert not status.is_error and not mine.is_error and not theirs.is_error, [text_of(status), text_of(theirs)]
    assert to_google(two, "GET", "/v3/urlNotifications/metadata") == [DEMO]  # owner of www, not the default
    assert to_google(two, "GET", "/siteVerification/v1/webResource/https") == [AGENCY, DEMO]


@LISTENERS
async def test_add_site_uses_the_account_claude_names_else_the_default(
    two: FakeGoogle, witness: Witness, folder: Path, kind: str
) -> None:
    with running(kind, folder, accounts(two)):
        async with server(two, witness, folder) as served:
            named = await served.client.call_tool(
                "add_site", {"site": "https://new-one.example.com/", "account": DEMO.upper()}
            )
            default = await served.client.call_tool("add_site", {"site": "https://new-two.example.com/"})
            stranger = await served.client.call_tool(
                "add_site", {"site": "https://new-three.example.com/", "account": "stranger@example.org"}
            )
    assert not named.is_error and not default.is_error, [text_of(named), text_of(default)]
    assert to_google(two, "PUT", site_path("https://new-one.example.com/")) == [DEMO]
    assert to_google(two, "PUT", site_path("https://new-two.example.com/")) == [AGENCY]
    assert stranger.is_error and AGENCY in text_of(stranger) and DEMO in text_of(stranger)
    assert "stranger@example.org" in text_of(stranger)
    assert to_google(two, "PUT", site_path("https://new-three.example.com/")) == []


@LISTENERS
async def test_list_sites_asks_every_account_and_lists_each_property_once_with_its_account(
    two: FakeGoogle, witness: Witness, folder: Path, kind: str
) -> None:
    with running(kind, folder, accounts(two)):
        async with server(two, witness, folder) as served:
            result = await served.client.call_tool("list_sites", {})
    data = structured(result)
    rows = {r["site"]: (r["permission"], r["account"]) for r in data["sites"]}
    assert len(rows) == len(data["sites"]) == 6  # the demo's five and the agency's own one, www once
    assert rows[WWW] == ("siteOwner", DEMO)
    assert rows[CLIENT] == ("siteOwner", AGENCY)
    assert rows[BLOG] == ("siteFullUser", DEMO)
    assert [(a["account"], a["properties"]) for a in data["accounts"]] == [(AGENCY, 2), (DEMO, 5)]
    text = text_of(result)
    assert "| Account |" in text and f"| {CLIENT} | owner | {AGENCY} |" in text
    assert "ya29" not in text and "ya29" not in json.dumps(data)
    assert sorted(lists_read(two)) == [AGENCY, DEMO]


# --------------------------------------------------------------------------------------------------
# Accounts that change or fail while the app runs


@LISTENERS
async def test_removing_an_account_while_the_app_runs_routes_the_next_call_elsewhere_or_fails_clearly(
    two: FakeGoogle, witness: Witness, folder: Path, kind: str
) -> None:
    with running(kind, folder, accounts(two)) as agent:
        async with server(two, witness, folder) as served:
            first = await served.client.call_tool("get_site", {"site": WWW})
            agent.set_script(accounts(two, without=DEMO))  # the person removes the demo account in the app
            second = await served.client.call_tool("get_site", {"site": WWW})
            blog = await served.client.call_tool("get_site", {"site": BLOG})
            agent.set_script(Script(accounts=[]))  # and then the agency's
            none = await served.client.call_tool("get_site", {"site": WWW})
    assert structured(first)["permission"] == "siteOwner" and structured(second)["permission"] == "siteRestrictedUser"
    assert to_google(two, "GET", site_path(WWW)) == [DEMO, AGENCY]
    # One account left: it acts as a single account always did; Google says it has no access.
    assert blog.is_error and BLOG in text_of(blog) and structured(blog)["kind"] == "permission"
    assert to_google(two, "GET", site_path(BLOG)) == [AGENCY]
    assert none.is_error and "No Google account is signed in to the SearchDesk app" in text_of(none), text_of(none)


@LISTENERS
async def test_a_revoked_sign_in_in_one_account_does_not_break_the_other(
    two: FakeGoogle, witness: Witness, folder: Path, kind: str
) -> None:
    with running(kind, folder, accounts(two, error={DEMO: "refresh_failed"})):
        async with server(two, witness, folder) as served:
            client = await served.client.call_tool("get_site", {"site": CLIENT})
            www = await served.client.call_tool("get_site", {"site": WWW})
            blog = await served.client.call_tool("get_site", {"site": BLOG})
            listing = await served.client.call_tool("list_sites", {})
    assert structured(client)["permission"] == "siteOwner" and structured(www)["permission"] == "siteRestrictedUser"
    assert blog.is_error and BLOG in text_of(blog) and "could not be read" in text_of(blog)
    assert "sign in again" in text_of(blog) and DEMO in text_of(blog)
    assert not listing.is_error, text_of(listing)
    assert {r["site"] for r in structured(listing)["sites"]} == {WWW, CLIENT}
    assert f"{DEMO} could not be read" in text_of(listing)
    failed = [a for a in structured(listing)["accounts"] if "error" in a]
    assert [a["account"] for a in failed] == [DEMO]
    assert all(account == AGENCY for account in to_google(two, "GET", "/webmasters/v3/sites/"))


async def test_an_app_from_before_accounts_serves_its_one_account_as_before(
    fake: FakeGoogle, witness: Witness, folder: Path
) -> None:
    script = Script(token=TokenScript(access_token=fake.mint_token(), account=DEMO), features=["requester"])
    with running("reference", folder, script) as agent:
        async with server(fake, witness, folder) as served:
            listing = await served.client.call_tool("list_sites", {})
            site = await served.client.call_tool("get_site", {"site": WWW})
        methods = [r.method for r in agent.requests()]
        tokens = [r.params for r in agent.requests() if r.method == "credentials/token"]
    assert not listing.is_error and not site.is_error
    assert "accounts/list" not in methods
    assert tokens and all("account" not in t for t in tokens)  # an older app would not know the name
    assert len([r for r in fake.api_requests() if r.path == "/webmasters/v3/sites"]) == 1  # no routing reads


# --------------------------------------------------------------------------------------------------
# A guarded call's account is fixed with its question


@LISTENERS
async def test_a_guarded_call_whose_account_changes_between_the_question_and_the_yes_is_refused(
    two: FakeGoogle, witness: Witness, folder: Path, kind: str
) -> None:
    script = accounts(two, approval=ApprovalScript(decision="approve", delay=3))
    with running(kind, folder, script) as agent:
        async with server(two, witness, folder) as served:
            result: list[Any] = []

            async def call() -> None:
                result.append(await served.client.call_tool("delete_sitemap", {"site": WWW, "feedpath": FEED}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await anyio.to_thread.run_sync(lambda: agent.wait_for_requests("approval/request", 1, 30))
                agent.set_script(accounts(two, without=DEMO))  # the owner's account leaves before the yes
        questions = asked(agent)
    text = text_of(result[0])
    assert result[0].is_error and structured(result[0])["decision"] == "refused", text
    assert DEMO in text and AGENCY in text and "confirm_token" not in json.dumps(structured(result[0]))
    assert [q["requester"]["account"] for q in questions] == [DEMO]
    assert DEMO in questions[0]["what"]
    assert destructive(two) == []


@LISTENERS
async def test_a_yes_given_for_one_account_is_never_collected_by_a_call_routed_to_another(
    two: FakeGoogle, witness: Witness, folder: Path, kind: str
) -> None:
    args = {"site": WWW, "feedpath": FEED}
    with running(kind, folder, accounts(two)) as agent:
        async with server(two, witness, folder, SEARCHDESK_APPROVAL_WAIT="1") as served:
            first = await served.client.call_tool("delete_sitemap", args)
            assert structured(first)["decision"] == "pending", text_of(first)
            assert agent.answer(asked(agent)[0]["fingerprint"], "approve")  # a yes for the demo account
            agent.set_script(accounts(two, without=DEMO))
            second = await served.client.call_tool("delete_sitemap", args)  # now routed to the agency
        questions = asked(agent)
        activity = [a.account for a in agent.book.activity] if isinstance(agent, DesktopListener) else None
    assert structured(second)["decision"] == "pending", text_of(second)  # asked anew, for the agency
    assert [q["requester"]["account"] for q in questions] == [DEMO, AGENCY]
    assert AGENCY in questions[1]["what"] and DEMO not in questions[1]["what"]
    assert questions[0]["fingerprint"] == questions[1]["fingerprint"]  # the same targets; bound apart by account
    keys = {protocol.answer_key(q["fingerprint"], protocol.Requester.from_json(q["requester"], "r")) for q in questions}
    assert len(keys) == 2
    assert activity in (None, [DEMO, AGENCY])  # the Activity log names the account
    assert destructive(two) == []


@LISTENERS
async def test_a_guarded_call_acts_with_the_token_of_the_account_its_question_named(
    two: FakeGoogle, witness: Witness, folder: Path, kind: str
) -> None:
    with running(kind, folder, accounts(two, approval=ApprovalScript(decision="approve"))) as agent:
        async with server(two, witness, folder) as served:
            result = await served.client.call_tool("delete_sitemap", {"site": WWW, "feedpath": FEED})
        questions = asked(agent)
    assert not result.is_error, text_of(result)
    assert [q["requester"]["account"] for q in questions] == [DEMO]
    assert [two.account_of(r.token) for r in destructive(two)] == [DEMO]


# --------------------------------------------------------------------------------------------------
# Quotas, diagnostics and the self-check


def _quota_file(home: Path, used: dict[str, int]) -> Path:
    path = home / "data" / "searchdesk" / "quota.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    day = google_day(datetime.now(UTC)).isoformat()
    path.write_text(json.dumps({"format": 1, "days": {day: {"indexing": used}}}))
    return path


async def test_the_indexing_quota_is_shared_by_accounts_of_one_cloud_project(
    two: FakeGoogle, witness: Witness, folder: Path
) -> None:
    path = _quota_file(folder / "home", {"project:42": 199})
    with running("reference", folder, accounts(two)):
        async with server(two, witness, folder) as served:
            first = await served.client.call_tool("request_indexing", {"url": f"{WWW}jobs/new-role"})
            second = await served.client.call_tool("request_indexing", {"url": f"{CLIENT}jobs/other-role"})
    assert not first.is_error, text_of(first)
    assert second.is_error and "shared by every account" in text_of(second), text_of(second)
    assert to_google(two, "POST", "urlNotifications:publish") == [DEMO]
    day = google_day(datetime.now(UTC)).isoformat()
    assert json.loads(path.read_text())["days"][day]["indexing"] == {"project:42": 200}


async def test_describe_connection_lists_the_accounts_claude_may_use_and_no_token(
    two: FakeGoogle, witness: Witness, folder: Path
) -> None:
    with running("reference", folder, accounts(two, without=DEMO)):
        async with server(two, witness, folder, MCP_DIAGNOSTICS="true") as served:
            result = await served.client.call_tool("describe_connection", {})
    text = text_of(result)
    assert f"Google accounts Claude may use: {AGENCY} (Google sign-in)" in text, text
    assert DEMO not in text and "ya29" not in text
    assert structured(result)["accounts"] == [{"account": AGENCY, "kind": "oauth", "default": True}]


def test_the_self_check_checks_each_account_and_names_the_one_that_fails(
    two: FakeGoogle, witness: Witness, folder: Path
) -> None:
    home = folder / "home"
    home.mkdir()
    with running("reference", folder, accounts(two, error={DEMO: "refresh_failed"})):
        proc = subprocess.run(
            [sys.executable, "-m", "searchdesk_server", "--check"],
            env=base_env(two, home, str(folder / "agent.sock")),
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
    witness.saw("stdout", proc.stdout, "self-check")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert f"Google account {AGENCY} (Google sign-in): 2 properties" in out
    assert f"Google account {DEMO} (service account): could not be read" in out
    assert (
        out.strip()
        .splitlines()[-1]
        .startswith(f"FAIL: SearchDesk can read 2 properties, but the Google account {DEMO}")
    )


def test_the_self_checks_report_names_each_account_for_the_app(two: FakeGoogle, folder: Path) -> None:
    """What the app's "Check it works" shows and counts: each account, its kind, what it sees."""
    from searchdesk_server.stdio_check import CheckedAccount, run_check

    home = folder / "home"
    home.mkdir()
    with running("reference", folder, accounts(two, error={DEMO: "refresh_failed"})):
        env = base_env(two, home, str(folder / "agent.sock"))
        report = anyio.run(run_check, [sys.executable, "-m", "searchdesk_server"], env)
    assert [(a.name, a.kind, a.properties, bool(a.error)) for a in report.accounts] == [
        (AGENCY, "oauth", 2, False),
        (DEMO, "service_account", 0, True),
    ]
    assert isinstance(report.accounts[0], CheckedAccount)
    table = next(t for t in report.tables if t.title == "Google accounts checked")
    assert table.rows == ((AGENCY, "Google sign-in", "2 properties"), (DEMO, "service account", "could not be read"))


# --------------------------------------------------------------------------------------------------
# Instructions in results act as the account they were worked out for


def followed(text: str) -> list[tuple[str, dict[str, str]]]:
    """Every "call <tool> with <key> <value>, … and <key> <value>." in `text`, as Claude would call it."""
    import re

    calls = []
    for tool, args in re.findall(r"call (\w+) with (.+?)\.(?:\s|$)", text):
        pairs = re.split(r", | and ", args)
        calls.append((tool, dict(pair.split(" ", 1) for pair in pairs)))
    return calls


async def test_next_steps_for_the_other_account_followed_literally_act_as_it(
    two: FakeGoogle, witness: Witness, folder: Path
) -> None:
    new = "https://fresh-shop.example.org/"  # in no list and no verified domain: add it, then verify it
    domain_site = "sc-domain:fresh-shop.example.org"
    with running("desktop", folder, accounts(two)):
        async with server(two, witness, folder) as served:
            setup = await served.client.call_tool("setup_site", {"site": new, "account": DEMO})
            token = await served.client.call_tool("get_verification_token", {"site": CLIENT, "account": DEMO})
            # A domain is verified by DNS: the step names verify_site's own "DNS", not Google's "DNS_TXT".
            domain = await served.client.call_tool("get_verification_token", {"site": domain_site, "account": DEMO})
            steps = followed(text_of(setup)) + followed(text_of(token)) + followed(text_of(domain))
            assert [tool for tool, _ in steps] == ["add_site", "verify_site", "verify_site", "verify_site"], steps
            assert [args.get("site") for _, args in steps] == [new, new, CLIENT, domain_site], steps
            assert steps[-1][1].get("method") == "DNS", steps[-1]
            for tool, args in steps:
                assert args.get("account") == DEMO, (tool, args)  # named in the same sentence
                await served.client.call_tool(tool, args)  # each reaches Google (counted below): callable as written
    # The default account is the agency's: followed literally, every step went as the demo account, and the
    # verification used the token Google issued to the demo account.
    assert to_google(two, "PUT", site_path(new)) == [DEMO]
    assert to_google(two, "POST", "/siteVerification/v1/token") == [DEMO, DEMO, DEMO]  # setup_site's, the others
    assert to_google(two, "POST", "/siteVerification/v1/webResource") == [DEMO, DEMO, DEMO]
