"""What runs around a request is set once on the client made for a tool call (`GoogleClient.for_call`,
as httpx's event hooks), against the fake Google: each hook's `before_send` runs once, after the token is
in hand and before the request leaves; its `after_answer` once the call ended, with how; a hook that
refuses sends nothing; and a call sent once is sent once whatever its caller asked."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from searchdesk_server.google.errors import ErrorKind, GoogleError
from searchdesk_server.google.http import Api, Outgoing
from searchdesk_server.result import ToolFailure
from tests.fakegoogle import bodies

from .conftest import Clients

pytestmark = pytest.mark.anyio

SITES = "webmasters/v3/sites"
SITE = "webmasters/v3/sites/{siteUrl}"
SITE_RE = r"searchconsole\.googleapis\.com/webmasters/v3/sites/"
WRITE = "https://www.googleapis.com/auth/webmasters"


class Hook:
    """Writes down what it is told, as the journal's record would."""

    def __init__(self, clients: Clients, *, refuse: bool = False) -> None:
        self.clients = clients
        self.refuse = refuse
        self.said: list[tuple[str, Any]] = []

    async def before_send(self, request: Outgoing) -> int:
        hosts = [e.host for e in self.clients.fake.log]
        self.said.append(("before", (request.method, request.path, dict(request.path_params or {}), hosts)))
        if self.refuse:
            raise ToolFailure("not recorded")
        return len(self.said)

    async def after_answer(self, request: Outgoing, note: int, failure: GoogleError | None, *, lost: bool) -> None:
        self.said.append(("after", (note, None if failure is None else failure.status, lost)))


def api_hits(clients: Clients) -> list[str]:
    return [e.method for e in clients.fake.log if e.host == "searchconsole.googleapis.com"]


async def test_a_hook_runs_once_before_the_request_leaves_and_once_after_its_answer(clients: Clients) -> None:
    hook = Hook(clients)
    client = clients.client(scopes=[WRITE]).for_call(hooks=[hook])
    await client.call(Api.SEARCHCONSOLE, "PUT", SITE, path_params={"siteUrl": "https://www.example.com/"})
    assert hook.said == [
        # The token was in hand (Google's token address asked), nothing had gone to the API yet.
        ("before", ("PUT", SITE, {"siteUrl": "https://www.example.com/"}, ["oauth2.googleapis.com"])),
        ("after", (1, None, False)),
    ]
    assert api_hits(clients) == ["PUT"]


async def test_a_hook_that_refuses_sends_nothing_and_is_not_told_an_outcome(clients: Clients) -> None:
    hook = Hook(clients, refuse=True)
    client = clients.client(scopes=[WRITE]).for_call(hooks=[hook])
    with pytest.raises(ToolFailure):
        await client.call(Api.SEARCHCONSOLE, "DELETE", SITE, path_params={"siteUrl": "https://www.example.com/"})
    assert [what for what, _ in hook.said] == ["before"]
    assert api_hits(clients) == []


async def test_a_client_for_a_call_sent_once_never_retries_and_its_hook_hears_googles_refusal(clients: Clients) -> None:
    clients.fake.fail(SITE_RE, status=503, body=bodies.unavailable(), times=10)
    hook = Hook(clients)
    client = clients.client(scopes=[WRITE]).for_call(once=True, hooks=[hook])
    with pytest.raises(GoogleError) as caught:
        await client.call(
            Api.SEARCHCONSOLE, "DELETE", SITE, path_params={"siteUrl": "https://www.example.com/"}, retry=True
        )
    assert caught.value.kind is ErrorKind.SERVER and caught.value.attempts == 1
    assert api_hits(clients) == ["DELETE"]
    assert hook.said[-1] == ("after", (1, 503, False))


async def test_a_call_cancelled_after_the_request_left_tells_its_hook_the_outcome_is_lost(clients: Clients) -> None:
    clients.fake.fail(SITE_RE, status=200, body={"a": 1}, size=4096, chunk_size=1, delay=0.05)
    hook = Hook(clients)
    client = clients.client(scopes=[WRITE]).for_call(once=True, hooks=[hook])
    async with anyio.create_task_group() as group:
        group.start_soon(
            lambda: client.call(Api.SEARCHCONSOLE, "PUT", SITE, path_params={"siteUrl": "https://www.example.com/"})
        )
        with anyio.fail_after(30):  # cancelled once Google has the request, however loaded the machine
            while api_hits(clients) != ["PUT"]:
                await anyio.sleep(0.02)
        group.cancel_scope.cancel()
    assert hook.said[-1] == ("after", (1, None, True))
    assert api_hits(clients) == ["PUT"]


async def test_the_client_a_call_was_made_from_keeps_no_hook_and_shares_its_rules(clients: Clients) -> None:
    maker = clients.client()
    hook = Hook(clients)
    made = maker.for_call(hooks=[hook])
    await maker.call(Api.SEARCHCONSOLE, "GET", SITES)
    assert hook.said == []
    maker.policy = maker.policy.__class__(attempts=1)
    assert made.policy.attempts == 1  # one set of connections and retry rules for both
