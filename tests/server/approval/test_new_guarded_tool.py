"""A guarded tool added to a copy of the catalogue is asked for by the whole chain with no other change:
the client's dialog (both protocol revisions), the app's dialog (the reference agent) and the two-call
token. Its handler and question builder are the two functions below, named in its entry."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client

from searchdesk_server import catalogue, scopes, tool_spec
from searchdesk_server.approval.question import Question
from searchdesk_server.config import load
from searchdesk_server.result import Output
from searchdesk_server.runtime import Call, Runtime
from searchdesk_server.server import build_server
from searchdesk_server.tool_spec import ToolSpec
from tests.agentref.harness import AgentThread
from tests.fakegoogle import FakeGoogle
from tests.server.stdio import MODES, text_of

from .conftest import Elicitor, script

pytestmark = pytest.mark.anyio

SITE = "https://www.example.com/"
#: What the handler acted on, one entry per action (the judge: nothing else may add to it).
ACTED: list[tuple[object, ...]] = []


async def ask(call: Call) -> Question:
    site = call.site()
    return Question(
        tool=call.spec.name,
        what="This will archive the notes kept for this property.",
        consequence="Archived notes cannot be brought back.",
        values=(("Property", site),),
        targets=(site,),
        site=site,
    )


async def act(call: Call) -> Output:
    ACTED.append(call.question.targets)
    return Output(f"Archived the notes of {call.question.site}.", {"site": call.question.site}, from_google=False)


NEW = ToolSpec(
    "archive_notes",
    "sites",
    "searchconsole",
    "none (a test's tool)",
    "guarded",
    (scopes.SCOPE_WM,),
    "Archive notes",
    "Archive a property's notes." + tool_spec.GUARD_NOTE,
    {"site": tool_spec.SITE_REQ},
    ("site",),
    handler=f"{__name__}.act",
    question=f"{__name__}.ask",
)


@pytest.fixture(autouse=True)
def _nothing_acted() -> None:
    ACTED.clear()


def server(fake: FakeGoogle, socket: str) -> Any:
    config = load(
        {
            "GSC_SERVICE_ACCOUNT_KEY": json.dumps(fake.service_account_info),
            "SEARCHDESK_AGENT_SOCKET": socket,
            "SEARCHDESK_APPROVAL_WAIT": "2",
        },
        table=catalogue.CATALOGUE.adding(NEW),
    )
    return build_server(config, runtime=Runtime(config, transport=fake.transport()))


@pytest.mark.parametrize("mode", MODES)
async def test_the_clients_dialog_asks_for_it(fake: FakeGoogle, mode: str) -> None:
    elicitor = Elicitor()
    async with Client(server(fake, "/nonexistent/agent.sock"), mode=mode, elicitation_callback=elicitor) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("archive_notes", {"site": SITE})
    menu = listed["archive_notes"]
    assert menu.annotations is not None and menu.annotations.destructive_hint is True
    assert "confirm_token" in menu.input_schema["properties"]
    assert not result.is_error, text_of(result)
    assert len(elicitor.seen) == 1 and elicitor.seen[0].startswith("This will archive the notes")
    assert ACTED == [(SITE,)]
    assert "archive_notes" not in catalogue.BY_NAME  # the copy had it, not the catalogue


async def test_the_apps_dialog_asks_for_it(fake: FakeGoogle, agent_socket: str, reference_agent: AgentThread) -> None:
    reference_agent.set_script(script("approve"))
    async with Client(server(fake, agent_socket), mode="legacy") as client:  # no elicitation: the app asks
        approved = await client.call_tool("archive_notes", {"site": SITE})
    assert not approved.is_error, text_of(approved)
    asked = reference_agent.requests_of("approval/request")
    assert [a.params["tool"] for a in asked] == ["archive_notes"]
    assert asked[0].params["what"] == "This will archive the notes kept for this property."
    assert ACTED == [(SITE,)]


async def test_the_two_call_token_stands_in_when_nobody_can_be_asked(fake: FakeGoogle) -> None:
    async with Client(server(fake, "/nonexistent/agent.sock"), mode="legacy") as client:
        first = await client.call_tool("archive_notes", {"site": SITE})
        assert first.is_error and first.structured_content["decision"] == "token", text_of(first)
        assert "This will archive the notes" in text_of(first) and ACTED == []
        token = first.structured_content["confirm_token"]
        second = await client.call_tool("archive_notes", {"site": SITE, "confirm_token": token})
    assert not second.is_error, text_of(second)
    assert "Nobody was asked" in text_of(second)
    assert ACTED == [(SITE,)]
