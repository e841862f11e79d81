"""With SearchDesk's keys there is no token path; reachable is a fact of the process (issue 23).

The two-call token stands in for a person only where nobody ever could be asked: a server given its
credentials directly (variables, key files: a scheduled job), without SEARCHDESK_ASK_IN_APP, that
has not reached the app at any time in this process. Everywhere else a guarded call is asked in the
client's dialog or the app, or refused with one of two sentences. Each test runs the real server as
a stdio subprocess; the fake Google's request log is the judge (the demo's own in-memory Google is
read back through the server). The refusals with the app's keys after its socket file or folder
vanished, with the switch and nobody listening, after the app was reached once, and the entries the
app writes each fail on the code before this change; the token controls pass on both.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import ElicitResult

from searchdesk_desktop.claude import config_file as cc
from searchdesk_server.config import load
from searchdesk_server.variables import Var
from tests.agentref import ApprovalScript, Script, TokenScript
from tests.fakegoogle import FakeGoogle
from tests.security.approval.test_person_approves import (
    TARGET,
    WWW,
    app_listener,
    asked,
    assert_no_token,
    destructive,
    reference,
    structured,
)
from tests.security.conftest import NO_AGENT, Planted, Witness, serve
from tests.server.stdio import DEMO_TODAY, REPO, server_env, text_of

pytestmark = pytest.mark.anyio

#: The two refusals, word for word (issue 23: a contract checked from outside).
CLOSED = "Open SearchDesk to approve this; nothing was done."
NOT_JUST_NOW = (
    "SearchDesk could not be reached just now; nothing was done. If it is open, wait a few seconds and ask again."
)
SWITCH = "SEARCHDESK_ASK_IN_APP"  # the name as the issue and DESIGN.md write it
ASK_IN_APP = {SWITCH: "true"}
WAIT = {Var.SEARCHDESK_APPROVAL_WAIT.value: "2"}


def refused_with(result: Any, sentence: str) -> None:
    """Refused with exactly `sentence` (it is the whole text), no token and no "not running"."""
    assert result.is_error and structured(result).get("decision") == "refused", text_of(result)
    assert text_of(result) == sentence, text_of(result)
    assert_no_token(result)


def key_file_env(planted: Planted, fake: FakeGoogle, **extra: str) -> dict[str, str]:
    """Credentials given to the server as a key file, as a scheduled job would have them."""
    key = fake.service_account_file()  # the planted key (the fixture planted its id)
    return {Var.GSC_SERVICE_ACCOUNT_KEY_FILE.value: str(key), **WAIT, **extra}


async def demo_sitemaps(client: Client) -> list[str]:
    """The sitemaps the demo's own Google lists for the property now."""
    result = await client.call_tool("list_sitemaps", {"site": WWW})
    assert not result.is_error, text_of(result)
    return [row["path"] for row in (result.structured_content or {})["sitemaps"]]


# --------------------------------------------------------------------------------------------------
# 1. The app's keys: its socket removed while it runs is a refusal, never a token


@pytest.mark.parametrize("what", ["socket file", "socket folder"])
async def test_with_the_apps_keys_a_vanished_socket_is_a_refusal_not_a_token(
    fake: FakeGoogle, witness: Witness, folder: Path, what: str
) -> None:
    run = folder / "run"
    path = str(run / "agent.sock")
    with reference(run, Script(token=TokenScript(access_token=fake.mint_token()))) as agent:
        async with serve(fake, witness, folder / "home", WAIT, socket=path) as served:  # the app's sign-in
            listing = await served.client.call_tool("list_sites", {})  # the app hands out a token
            assert not listing.is_error, text_of(listing)
            if what == "socket file":
                os.unlink(path)  # a cache cleaner; the app runs on, its token connection stays open
            else:
                shutil.rmtree(run)
            first = await served.client.call_tool("delete_sitemap", TARGET)
            again = await served.client.call_tool("delete_sitemap", TARGET)  # every call tries again
        assert asked(agent) == [] and agent.requests_of("credentials/token")
    refused_with(first, NOT_JUST_NOW)
    refused_with(again, NOT_JUST_NOW)
    assert destructive(fake) == []


# --------------------------------------------------------------------------------------------------
# 2. SEARCHDESK_ASK_IN_APP=true with nobody listening: refused, whatever the credentials


@pytest.mark.parametrize(
    "credentials", ["key file", "service account key", "oauth refresh token", "--demo", "demo entry"]
)
@pytest.mark.parametrize("elicitation", ["true", "false"])
async def test_ask_in_app_with_nobody_listening_is_refused_without_a_token(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, credentials: str, elicitation: str
) -> None:
    env: dict[str, str] = {**ASK_IN_APP, **WAIT, Var.ELICITATION.value: elicitation}
    args: tuple[str, ...] = ()
    if credentials == "key file":
        env.update(key_file_env(planted, fake))
    elif credentials == "service account key":
        env.update(planted.service_account_env(fake))
    elif credentials == "oauth refresh token":
        env.update(planted.oauth_env())
    elif credentials == "--demo":
        args = ("--demo",)
    else:
        env[Var.SEARCHDESK_DEMO.value] = "true"
    demo = credentials in ("--demo", "demo entry")
    async with serve(fake, witness, folder / "home", env, socket=str(folder / "agent.sock"), args=args) as served:
        first = await served.client.call_tool("delete_sitemap", TARGET)
        with_token = await served.client.call_tool("delete_sitemap", {**TARGET, "confirm_token": "sdk_" + "a" * 32})
        left = await demo_sitemaps(served.client) if demo else []
    refused_with(first, CLOSED)
    refused_with(with_token, CLOSED)  # a confirm_token means nothing here: asked as always, so refused
    assert destructive(fake) == []
    if demo:
        assert TARGET["feedpath"] in left


async def test_ask_in_app_still_asks_in_the_clients_own_dialog(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    seen: list[str] = []

    async def elicit(ctx: Any, params: Any) -> ElicitResult:
        seen.append(params.message)
        return ElicitResult(action="accept", content={"confirm": True})

    env = key_file_env(planted, fake, **ASK_IN_APP)
    async with serve(
        fake, witness, folder / "home", env, socket=str(folder / "agent.sock"), elicitation_callback=elicit
    ) as served:
        result = await served.client.call_tool("delete_sitemap", TARGET)
    assert not result.is_error and len(seen) == 1, text_of(result)
    assert len(destructive(fake)) == 1


# --------------------------------------------------------------------------------------------------
# 3, 4. The token stays where credentials were given directly and nobody was ever there


async def test_key_file_credentials_without_the_app_still_get_the_token(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    async with serve(fake, witness, folder / "home", key_file_env(planted, fake), socket=str(folder / "x.sock")) as s:
        first = await s.client.call_tool("delete_sitemap", TARGET)
        assert structured(first).get("decision") == "token" and destructive(fake) == [], text_of(first)
        second = await s.client.call_tool(
            "delete_sitemap", {**TARGET, "confirm_token": structured(first)["confirm_token"]}
        )
    assert not second.is_error and "Nobody was asked to approve this" in text_of(second), text_of(second)
    assert [r.method for r in destructive(fake)] == ["DELETE"]


async def test_the_demo_started_by_hand_keeps_the_token(fake: FakeGoogle, witness: Witness, folder: Path) -> None:
    async with serve(fake, witness, folder / "home", WAIT, socket=str(folder / "x.sock"), args=("--demo",)) as s:
        first = await s.client.call_tool("delete_sitemap", TARGET)
        assert structured(first).get("decision") == "token", text_of(first)
        second = await s.client.call_tool(
            "delete_sitemap", {**TARGET, "confirm_token": structured(first)["confirm_token"]}
        )
        left = await demo_sitemaps(s.client)
    assert not second.is_error, text_of(second)
    assert TARGET["feedpath"] not in left


# --------------------------------------------------------------------------------------------------
# 5. Reached once in this process: no token for the rest of it


@pytest.mark.parametrize("reached_by", ["a question", "a hello"])
async def test_a_server_that_reached_the_app_once_never_offers_a_token(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, reached_by: str
) -> None:
    env = key_file_env(planted, fake, MCP_DIAGNOSTICS="true")
    with reference(folder, Script(approval=ApprovalScript(decision="deny"))) as agent:
        async with serve(fake, witness, folder / "home", env, socket=str(folder / "agent.sock")) as served:
            if reached_by == "a question":  # on the approval connection
                answered = await served.client.call_tool("delete_sitemap", TARGET)
                assert structured(answered).get("decision") == "declined", text_of(answered)
            else:  # a hello on the other connection
                described = await served.client.call_tool("describe_connection", {})
                assert not described.is_error and agent.requests_of("hello"), text_of(described)
            agent.stop()  # the app quits (its socket goes with it)
            first = await served.client.call_tool("delete_sitemap", TARGET)
            later = await served.client.call_tool("delete_sitemap", TARGET)
    refused_with(first, NOT_JUST_NOW)
    refused_with(later, NOT_JUST_NOW)
    assert destructive(fake) == []


# --------------------------------------------------------------------------------------------------
# 6. ELICITATION=false skips the client's dialog; the app still asks


async def test_elicitation_off_with_the_switch_asks_in_the_app(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    seen: list[str] = []

    async def elicit(ctx: Any, params: Any) -> ElicitResult:
        seen.append(params.message)
        return ElicitResult(action="accept", content={"confirm": True})

    env = key_file_env(planted, fake, **ASK_IN_APP, ELICITATION="false")
    with app_listener(folder, Script(approval=ApprovalScript(decision="approve"))) as app:
        async with serve(
            fake, witness, folder / "home", env, socket=str(folder / "agent.sock"), elicitation_callback=elicit
        ) as served:
            result = await served.client.call_tool("delete_sitemap", TARGET)
        questions = asked(app)
    assert not result.is_error, text_of(result)
    assert seen == [] and len(questions) == 1 and questions[0]["tool"] == "delete_sitemap"
    assert len(destructive(fake)) == 1


# --------------------------------------------------------------------------------------------------
# 7. The switch is parsed as GSC_READ_ONLY is


@pytest.mark.parametrize("raw", ["always", "on", "2", "truee"])
def test_a_bad_ask_in_app_value_exits_1_naming_the_accepted_values(raw: str) -> None:
    proc = subprocess.run(  # the real command, with this checkout's code first on the path
        [sys.executable, "-m", "searchdesk_server"],
        env=server_env(
            {SWITCH: raw, **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
        ),
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    assert proc.stderr.startswith("searchdesk-server: SEARCHDESK_ASK_IN_APP is "), proc.stderr
    assert "use one of true/false, 1/0, yes/no (any case), or leave it unset" in proc.stderr


@pytest.mark.parametrize(
    ("raw", "on"), [("true", True), (" YES ", True), ("1", True), ("No", False), ("0", False), ("", False)]
)
def test_ask_in_app_accepts_the_words_gsc_read_only_does(raw: str, on: bool) -> None:
    assert load({SWITCH: raw}).ask_in_app is on
    assert load({}).ask_in_app is False and load({}).never_a_token  # the app's sign-in: never a token anyway


# --------------------------------------------------------------------------------------------------
# 8. Every entry the app writes carries the switch, and a server started from it refuses


@pytest.fixture
def claude_file(tmp_path: Path) -> Path:
    return tmp_path / "Claude" / cc.CONFIG_NAME


@pytest.mark.parametrize("demo", [False, True], ids=["real", "demo"])
def test_every_entry_the_app_writes_asks_in_the_app(claude_file: Path, demo: bool) -> None:
    command = cc.server_command()
    settings = cc.ServerSettings(demo=demo, agent_socket="/tmp/sd-x/agent.sock")
    cc.add(claude_file, command, settings, allow_demo=demo)
    entry = cc.read_entry(claude_file)
    assert entry is not None and entry["env"][SWITCH] == "true"
    assert load(entry["env"]).never_a_token
    assert cc.check(claude_file, command, "/tmp/sd-x/agent.sock", demo=demo).state is cc.EntryState.OK


def test_an_older_entry_without_the_switch_reads_as_one_to_repair(claude_file: Path) -> None:
    command = cc.server_command()
    cc.add(claude_file, command, cc.ServerSettings(demo=True), allow_demo=True)
    entry = cc.read_entry(claude_file)
    assert entry is not None
    del entry["env"][SWITCH]  # as an older SearchDesk wrote it

    def older(data: dict[str, Any]) -> bool:
        data["mcpServers"][cc.SERVER_KEY] = entry
        return True

    cc.update(claude_file, older)
    check = cc.check(claude_file, command, demo=True)
    assert check.state is cc.EntryState.OTHER_COPY and "older version of SearchDesk" in check.detail
    assert cc.repair(claude_file, command).changed
    assert cc.check(claude_file, command, demo=True).state is cc.EntryState.OK


async def test_the_demo_entry_the_app_writes_refuses_while_searchdesk_is_closed(claude_file: Path) -> None:
    """Claude Desktop starts the entry as written: with SearchDesk closed nothing is removed."""
    nowhere = os.path.join(NO_AGENT, "agent.sock")
    cc.add(claude_file, cc.server_command(), cc.ServerSettings(demo=True, agent_socket=nowhere), allow_demo=True)
    entry = cc.read_entry(claude_file)
    assert entry is not None
    bare = {"PATH": os.environ.get("PATH", ""), "HOME": str(claude_file.parent), "SEARCHDESK_DEMO_TODAY": DEMO_TODAY}
    if os.environ.get("PYTHONPATH"):
        bare["PYTHONPATH"] = os.environ["PYTHONPATH"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env={**bare, **entry["env"]}, cwd=REPO)
    with open(claude_file.parent / "stderr.txt", "w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=60) as client:
            result = await client.call_tool("delete_sitemap", TARGET)
            left = await demo_sitemaps(client)
    refused_with(result, CLOSED)
    assert TARGET["feedpath"] in left
