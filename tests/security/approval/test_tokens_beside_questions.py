"""Questions waiting for the person never hold up the app's tokens: with as many questions open as the
app's real listener takes, a read through a server signed in with the app still works (the server asks
for tokens on a connection of its own), and the server still keeps no token of the app's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.agentref import Script, TokenScript
from tests.fakegoogle import FakeGoogle
from tests.security.conftest import Witness, serve
from tests.server.stdio import text_of

from .test_person_approves import WWW, app_listener, in_thread

pytestmark = pytest.mark.anyio

QUESTIONS = 32  # the app's queue (approvals.MAX_OPEN) and one connection's requests in flight


async def test_a_read_works_while_the_apps_queue_is_full_of_questions(
    fake: FakeGoogle, witness: Witness, agent_folder: Path
) -> None:
    folder = agent_folder
    script = Script(token=TokenScript(access_token=fake.mint_token(), account="owner@example.com"))
    env = {"SEARCHDESK_APPROVAL_WAIT": "55"}  # every question waits for the person as long as it may
    with app_listener(folder, script) as app:
        async with serve(fake, witness, folder / "home", env, socket=str(folder / "agent.sock")) as served:
            results: list[Any] = []

            async def ask(i: int) -> None:
                args = {"site": WWW, "feedpath": f"{WWW}held/{i}.xml"}
                results.append(await served.client.call_tool("delete_sitemap", args))

            async with anyio.create_task_group() as tg:
                for i in range(QUESTIONS):
                    tg.start_soon(ask, i)
                await in_thread(app.wait_for_requests, "approval/request", QUESTIONS, 60.0)
                before = len(app.requests())
                listed = await served.client.call_tool("list_sites", {})
                asked_meanwhile = [r.method for r in app.requests()[before:]]
                tg.cancel_scope.cancel()  # the questions are left to the person (closed when the calls end)
    assert results == [], "a question was answered or refused while it should have been waiting"
    assert not listed.is_error, text_of(listed)
    assert WWW in text_of(listed)
    assert "credentials/token" in asked_meanwhile, "the token did not come from the app"
