"""Load: 50 calls at once on one connection, ten servers asking one desktop app for tokens and
approvals at once, a 25,000-row answer while other calls run. Every answer must belong to its own
question, and nothing may leak: the server's file descriptors (and, in-process, its tasks) are
counted before and after."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from searchdesk_server.approval import question as q
from tests.agentref import ApprovalScript, Script, TokenScript
from tests.agentref.harness import AgentThread
from tests.fakegoogle import FakeGoogle

from ..conftest import Planted, Served, Witness, fd_count, new_fake, serve
from ..inproc import LIMIT, check_result, in_process, server_env, table_rows, text_of

pytestmark = pytest.mark.anyio

SITES = ("https://www.example.com/", "https://blog.example.com/", "https://shop.example.org/", "sc-domain:example.com")
#: httpx keeps at most this many connections open per client (google/http.py's Limits), plus the
#: agent socket: the most a server may legitimately hold on to after a burst.
POOL = 8 + 1


def burst(n: int) -> list[tuple[str, dict[str, Any], Callable[[dict[str, Any]], bool]]]:
    """n different read calls, each with a test that its answer is about what it asked."""
    out: list[tuple[str, dict[str, Any], Callable[[dict[str, Any]], bool]]] = []
    for i in range(n):
        site = SITES[i % len(SITES)]
        kind = i % 5
        if kind == 0:
            out.append(("get_site", {"site": site}, lambda d, s=site: d["site"] == s))
        elif kind == 1:
            out.append(("list_sitemaps", {"site": site}, lambda d, s=site: d["site"] == s))
        elif kind == 2:
            url = f"https://www.example.com/page-{i}"
            out.append(("inspect_url", {"site": SITES[0], "url": url}, lambda d, u=url: d["url"] == u))
        elif kind == 3:
            out.append(
                (
                    "query_search_analytics",
                    {"site": site, "dimensions": ["query"], "row_limit": 10 + i},
                    lambda d, s=site, n=10 + i: d["site"] == s and len(d["rows"]) <= n,
                )
            )
        else:
            out.append(("list_sites", {}, lambda d: isinstance(d["sites"], list)))
    return out


async def run_burst(served: Served, witness: Witness, n: int = 50) -> int:
    calls = burst(n)
    results: list[Any] = [None] * n

    async def one(i: int) -> None:
        tool, args, _ = calls[i]
        results[i] = await served.client.call_tool(tool, args)

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, i)
    for (tool, _args, belongs), result in zip(calls, results, strict=True):
        data = check_result(tool, result, witness)
        assert not result.is_error, f"{tool}: {text_of(result)[:300]}"
        assert belongs(data), f"{tool} answered another question: {json.dumps(data)[:300]}"
    return n


async def settled_fds(pid: int) -> int:
    await anyio.sleep(0.3)  # let closed connections finish closing
    return fd_count(pid)


async def test_fifty_calls_at_once_on_one_connection(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path
) -> None:
    async with serve(fake, witness, tmp_path, planted.service_account_env(fake)) as served:
        assert not (await served.client.call_tool("list_sites", {})).is_error  # warm: imports, token
        before = await settled_fds(served.pid)
        done = await run_burst(served, witness)
        after_one = await settled_fds(served.pid)
        done += await run_burst(served, witness)
        done += await run_burst(served, witness)
        after_three = await settled_fds(served.pid)
    witness.counts["concurrent calls on one connection"] = done
    assert after_one <= before + POOL, f"{after_one - before} descriptors more after 50 calls"
    assert after_three <= after_one + 2, f"descriptors grow with every burst: {before} → {after_one} → {after_three}"


def test_fifty_calls_at_once_leave_no_tasks_behind(tmp_path: Path, planted: Planted, witness: Witness) -> None:
    """In-process, where the event loop's tasks can be counted."""
    fake = new_fake(tmp_path / "fake", planted, witness)
    try:
        with in_process(fake, server_env(fake, planted.service_account_env(fake)), tmp_path) as server:
            calls = burst(50)

            async def all_at_once() -> list[Any]:
                results: list[Any] = [None] * len(calls)

                async def one(i: int) -> None:
                    results[i] = await server.client.call_tool(calls[i][0], calls[i][1])

                async with anyio.create_task_group() as tg:
                    for i in range(len(calls)):
                        tg.start_soon(one, i)
                return results

            async def tasks() -> int:
                await anyio.sleep(0.2)
                return len(asyncio.all_tasks())

            server.call("list_sites", {})
            before = server.portal.call(tasks)
            for _ in range(2):
                for (tool, _args, belongs), result in zip(calls, server.portal.call(all_at_once), strict=True):
                    assert belongs(check_result(tool, result, witness)), tool
            after = server.portal.call(tasks)
    finally:
        fake.close()
    assert after <= before, f"{after - before} tasks were left running after 100 calls"


def _deletes_succeed(api: Callable[[httpx.Request], httpx.Response]) -> Callable[[httpx.Request], httpx.Response]:
    """The demo, except that any sitemap can be deleted (ten servers delete ten different ones)."""

    @functools.wraps(api)
    def wrapped(request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE" and "/sitemaps/" in request.url.path:
            return httpx.Response(204)
        return api(request)

    return wrapped


async def test_ten_servers_share_one_app_without_mixing_answers(
    fake: FakeGoogle, witness: Witness, tmp_path: Path, agent_socket: str, reference_agent: AgentThread
) -> None:
    fake.backend.api = _deletes_succeed(fake.backend.api)
    reference_agent.set_script(
        Script(
            token=TokenScript(access_token=fake.mint_token()), approval=ApprovalScript(decision="approve", delay=0.2)
        )
    )
    site = "https://www.example.com/"
    feeds = [f"{site}load/sitemap-{i}.xml" for i in range(10)]
    results: dict[int, Any] = {}
    fds: dict[int, tuple[int, int]] = {}

    async def one_server(i: int) -> None:
        env = {"SEARCHDESK_APPROVAL_WAIT": "20"}  # no credential: tokens come from the app
        async with serve(fake, witness, tmp_path / f"server-{i}", env, socket=agent_socket) as served:
            assert not (await served.client.call_tool("list_sites", {})).is_error
            before = await settled_fds(served.pid)
            results[i] = await served.client.call_tool("delete_sitemap", {"site": site, "feedpath": feeds[i]})
            fds[i] = (before, await settled_fds(served.pid))

    async with anyio.create_task_group() as tg:
        for i in range(10):
            tg.start_soon(one_server, i)

    asked = reference_agent.requests_of("approval/request")
    expected = {q.delete_sitemap(site, feed, None).fingerprint: feed for feed in feeds}
    assert sorted(r.params["fingerprint"] for r in asked) == sorted(expected), "a question was asked twice or lost"
    for request in asked:  # the question carries its own target, and its fingerprint is that target's
        assert expected[request.params["fingerprint"]] in json.dumps(request.params["values"])
    for i, result in results.items():
        witness.saw_result(result, f"server {i}")
        assert not result.is_error, text_of(result)
        assert feeds[i] in text_of(result) and result.structured_content["feedpath"] == feeds[i]
    deleted = sorted(r.path for r in fake.api_requests() if r.method == "DELETE")
    assert len(deleted) == 10 and len(set(deleted)) == 10, deleted
    assert len(reference_agent.requests_of("credentials/token")) >= 10
    assert len({r.connection for r in asked}) == 10, "each server asks over its own connection"
    for i, (before, after) in fds.items():
        assert after <= before + POOL, f"server {i}: {before} → {after} descriptors"
    witness.counts["servers sharing one app"] = len(results)


async def test_a_25000_row_answer_while_other_calls_run(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path
) -> None:
    big_args = {
        "site": "sc-domain:example.com",
        "period": "last16months",
        "dimensions": ["date", "query", "page", "country", "device"],
        "row_limit": 25_000,
    }
    async with serve(fake, witness, tmp_path, planted.service_account_env(fake)) as served:
        assert not (await served.client.call_tool("list_sites", {})).is_error
        before = await settled_fds(served.pid)
        big: list[Any] = []
        others: list[int] = []

        async def the_big_one() -> None:
            big.append(await served.client.call_tool("query_search_analytics", big_args))

        async def the_rest() -> None:
            others.append(await run_burst(served, witness, 30))

        async with anyio.create_task_group() as tg:
            tg.start_soon(the_big_one)
            tg.start_soon(the_rest)
        after = await settled_fds(served.pid)
    result = big[0]
    data = check_result("query_search_analytics", result, witness)
    text = text_of(result)
    assert not result.is_error, text[:500]
    assert len(text.encode()) <= LIMIT
    assert data["count"] == 25_000 and len(table_rows(text)) == len(data["rows"]) == data["shown"]
    assert data["next_start_row"] == data["shown"]
    assert others == [30]
    assert after <= before + POOL
