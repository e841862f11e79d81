"""A yes is bound to the words (issue 23): no yes ever reaches a call whose words were not shown.

The real server as a stdio subprocess against the fake Google (its request log is the judge: a
property was removed or it was not) and the app's real listener and book (`DesktopListener`). Two
identical `delete_site` calls of one server are in flight at once, and between their two builds the
property's other verified owner leaves at Google: the first call's question says "1 other verified
owner remains, so nobody else loses access", the second's that this account is the last verified
owner. Before issue 23 the second joined the first's entry in the app, the dialog kept the first
words, and each yes went to a waiting call: the person approved the reassuring words twice and the
property was removed while the account was its last verified owner. Now the second replaces the first
(the dialog shows the words that are true now), the first is told it was asked again, and the one yes
the person gives, to the words shown, removes the property once.

The words themselves depend only on the targets and Google's answers (owners in one fixed order, no
clock time), so the same call made again reads the same: checked here over reorderings of Google's
owner list.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from searchdesk_server.approval import question as q
from searchdesk_server.demo.state import DEMO_USER
from tests.desktop.agent_harness import DesktopListener
from tests.fakegoogle import FakeGoogle
from tests.security.approval.test_person_approves import (
    WWW,
    app_listener,
    asked,
    assert_no_token,
    destructive,
    google_owners,
    sa_env,
    structured,
)
from tests.security.conftest import Planted, Witness, serve
from tests.server.stdio import text_of

pytestmark = pytest.mark.anyio

OTHER_OWNER = "other.owner@example.com"
#: The two readings of the same call's question (approval/question.py delete_site).
REASSURING = "1 other verified owner remains, so nobody else loses access"
LAST_OWNER = "This account is the property's last verified owner"


def owner_reads(fake: FakeGoogle) -> int:
    """How many times a server read the property's verified owners (each build of a question does once)."""
    return sum(1 for r in fake.api_requests() if r.method == "GET" and "webResource" in r.path)


async def until(done: Callable[[], bool], timeout: float = 20.0) -> None:
    with anyio.fail_after(timeout):
        while not done():
            await anyio.sleep(0.02)


@contextlib.contextmanager
def held(app: DesktopListener) -> Iterator[Callable[[], None]]:
    """The app's thread held busy; the caller releases it (and it is released at the end regardless)."""
    release = app.hold()
    try:
        yield release
    finally:
        release()


async def test_a_yes_never_reaches_a_call_whose_words_were_not_shown(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    google_owners(fake, [DEMO_USER, OTHER_OWNER])
    results: dict[str, Any] = {}
    approved: list[str] = []  # the consequence the dialog showed at each yes the person gave

    with app_listener(folder) as app:
        env = sa_env(planted, fake, SEARCHDESK_APPROVAL_WAIT="30")
        async with serve(fake, witness, folder / "home", env, socket=str(folder / "agent.sock")) as served:

            async def call(name: str) -> None:
                results[name] = await served.client.call_tool("delete_site", {"site": WWW})

            async with anyio.create_task_group() as tg:
                # Both calls reach the app together (a busy desktop, or two calls a moment apart): each
                # has built its question and asked approval/status before the app reads either request.
                with held(app) as release:
                    tg.start_soon(call, "first")
                    await until(lambda: owner_reads(fake) == 1)
                    google_owners(fake, [DEMO_USER])  # the other owner leaves, between the two builds
                    tg.start_soon(call, "second")
                    await until(lambda: owner_reads(fake) == 2)
                    await anyio.sleep(0.5)  # both approval/status requests wait in the socket
                    release()
                await anyio.to_thread.run_sync(lambda: app.wait_for_requests("approval/request", 2, 20.0))

                # The person answers what the dialog shows, each time it shows a question, until both
                # calls have their answer.
                with anyio.fail_after(60):
                    while len(results) < 2:
                        shown = await anyio.to_thread.run_sync(app.open_questions)
                        if shown:
                            key, request = shown[0]
                            if await anyio.to_thread.run_sync(app.answer, key, "approve"):
                                approved.append(request.consequence)
                        await anyio.sleep(0.05)
        sent = asked(app)

    words = {"first": REASSURING, "second": LAST_OWNER}
    assert REASSURING in sent[0]["consequence"] and LAST_OWNER in sent[1]["consequence"], sent
    assert_no_token(*results.values())
    acted = [name for name, result in results.items() if not result.is_error]
    # The judge: a call that acted did so only after the person said yes to its own words.
    for name in acted:
        assert any(words[name] in said for said in approved), (name, approved)
    # The person was asked once, with the words true at Google now; that one yes removed the property once.
    assert len(approved) == 1 and LAST_OWNER in approved[0], approved
    assert acted == ["second"], {n: text_of(r) for n, r in results.items()}
    assert [r.method for r in destructive(fake)] == ["DELETE"]
    # The call whose words were replaced is told the question was asked again, and did nothing.
    first = results["first"]
    assert first.is_error and structured(first)["decision"] == "pending", text_of(first)
    assert "asked again in SearchDesk with other words" in text_of(first), text_of(first)


async def test_a_later_call_whose_words_differ_is_shown_its_own_words_at_once(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    """The first call's question is still open when the same call comes again with other words: its
    approval/status carries the digest of its words, so the open question (other words) is not its
    answer, and it asks with its own words, which take the dialog's place at once."""
    google_owners(fake, [DEMO_USER, OTHER_OWNER])
    with app_listener(folder) as app:
        env = sa_env(planted, fake, SEARCHDESK_APPROVAL_WAIT="3")
        async with serve(fake, witness, folder / "home", env, socket=str(folder / "agent.sock")) as served:
            first = await served.client.call_tool("delete_site", {"site": WWW})  # nobody answers in time
            assert structured(first)["decision"] == "pending", text_of(first)
            google_owners(fake, [DEMO_USER])
            results: list[Any] = []

            async def again() -> None:
                results.append(await served.client.call_tool("delete_site", {"site": WWW}))

            async with anyio.create_task_group() as tg:
                tg.start_soon(again)
                await anyio.to_thread.run_sync(lambda: app.wait_for_requests("approval/request", 2, 10.0))
                shown = await anyio.to_thread.run_sync(app.open_questions)
                assert [LAST_OWNER in request.consequence for _, request in shown] == [True], shown
                assert await anyio.to_thread.run_sync(app.answer, shown[0][0], "approve")
        sent = asked(app)
    assert [REASSURING in sent[0]["consequence"], LAST_OWNER in sent[1]["consequence"]] == [True, True]
    assert not results[0].is_error, text_of(results[0])
    assert [r.method for r in destructive(fake)] == ["DELETE"]


# --------------------------------------------------------------------------------------------------
# The same call made again reads the same


OWNERS = [DEMO_USER, "b.owner@example.com", "a.owner@example.com", "Z.owner@example.com"]


@pytest.mark.parametrize("order", list(itertools.permutations(range(len(OWNERS)))))
def test_the_words_do_not_follow_the_order_google_lists_owners_in(order: tuple[int, ...]) -> None:
    listed = [OWNERS[i] for i in order]
    for facts in (q.owner_facts(listed, readable=True), q.owner_facts(OWNERS, readable=True)):
        assert facts == q.owner_facts(OWNERS, readable=True)
    site, new = "https://www.example.com/", [DEMO_USER, "new.owner@example.com"]
    assert q.update_site_owners(site, listed, new, DEMO_USER) == q.update_site_owners(site, OWNERS, new, DEMO_USER)
    assert q.delete_site(site, DEMO_USER, q.owner_facts(listed, readable=True)).digest == (
        q.delete_site(site, DEMO_USER, q.owner_facts(OWNERS, readable=True)).digest
    )
    assert q.unverify_site(site, DEMO_USER, q.owner_facts(listed, readable=True)).digest == (
        q.unverify_site(site, DEMO_USER, q.owner_facts(OWNERS, readable=True)).digest
    )
