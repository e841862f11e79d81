"""Faults, through the real proxy path and a real stdio server: Google's throttling and outages, broken
and stalled connections, redirects, expired and revoked credentials, and the desktop app or the
server itself dying while a person is being asked. The fake's request log is the judge."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.agentref import ApprovalScript, Script, TokenScript
from tests.agentref.harness import AgentProcess, AgentThread
from tests.fakegoogle import FakeGoogle, bodies

from ..conftest import Planted, Witness, serve
from ..inproc import text_of

pytestmark = pytest.mark.anyio

WWW = "https://www.example.com/"
SITEMAP = "https://www.example.com/old/sitemap.xml"
SITES = r"searchconsole\.googleapis\.com/webmasters/v3/sites$"
GOOGLE = {"searchconsole.googleapis.com", "www.googleapis.com", "indexing.googleapis.com", "oauth2.googleapis.com"}


def hits(fake: FakeGoogle, method: str, path_end: str) -> int:
    return sum(1 for r in fake.api_requests() if r.method == method and r.path.endswith(path_end))


def sitemap_deletes(fake: FakeGoogle) -> int:
    return sum(1 for r in fake.api_requests() if r.method == "DELETE" and "/sitemaps/" in r.path)


async def call(served: Any, witness: Witness, tool: str, args: dict[str, Any]) -> Any:
    result = await served.client.call_tool(tool, args)
    witness.saw_result(result, tool)
    return result


# --------------------------------------------------------------------------------------------------
# Google throttling and failing


async def test_a_429_burst_is_waited_out_as_retry_after_says(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path
) -> None:
    async with serve(fake, witness, tmp_path, planted.service_account_env(fake)) as served:
        assert not (await call(served, witness, "list_sites", {})).is_error  # warm: token fetched
        fake.fail(SITES, status=429, body=bodies.quota(), headers={"retry-after": "1"}, times=2)
        started = time.monotonic()
        result = await call(served, witness, "list_sites", {})
        waited = time.monotonic() - started
        assert not result.is_error, text_of(result)
        assert hits(fake, "GET", "/webmasters/v3/sites") == 1 + 3
        assert waited >= 1.9, "Retry-After: 1 was not honoured between the attempts"

        # A longer burst: three attempts, then a clear answer, and the server keeps working.
        fake.fail(SITES, status=429, body=bodies.quota(), headers={"retry-after": "0"}, times=3)
        burst = await call(served, witness, "list_sites", {})
        assert burst.is_error and burst.structured_content["kind"] == "quota"
        assert "tried 3 times" in text_of(burst) and "Wait a minute" in text_of(burst)
        assert hits(fake, "GET", "/webmasters/v3/sites") == 4 + 3

        # Asked to wait an hour: not waited out, said so, one request only.
        fake.fail(SITES, status=429, body=bodies.quota(), headers={"retry-after": "3600"}, times=1)
        hour = await call(served, witness, "list_sites", {})
        assert hour.is_error and "about 60 minutes" in text_of(hour)
        assert hits(fake, "GET", "/webmasters/v3/sites") == 7 + 1

        # A Retry-After no parser should trust ("²" passes str.isdigit) is ignored, not a crash.
        fake.fail(SITES, status=429, body=bodies.quota(), headers={"retry-after": "\u00b2"}, times=1)
        odd = await call(served, witness, "list_sites", {})
        assert not odd.is_error, text_of(odd)
        assert not (await call(served, witness, "list_sites", {})).is_error
    assert "Traceback" not in served.stderr()


async def test_503_flapping_never_reaches_the_caller(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path
) -> None:
    async with serve(fake, witness, tmp_path, planted.service_account_env(fake)) as served:
        for i in range(12):
            fake.fail(r"/webmasters/v3/sites/", status=503, body=bodies.unavailable(), times=1)
            result = await call(served, witness, "get_site", {"site": WWW})
            assert not result.is_error, f"call {i}: {text_of(result)}"
        assert hits(fake, "GET", "/webmasters/v3/sites/https%3A%2F%2Fwww.example.com%2F") == 24
        fake.fail(r"urlInspection", status=503, body=bodies.unavailable(), times=3)
        batch = await call(served, witness, "inspect_urls", {"site": WWW, "urls": [WWW, WWW + "a", WWW + "b"]})
        assert not batch.is_error
        assert [r["status"] for r in batch.structured_content["results"]] == ["inspected"] * 3


async def test_a_connection_reset_mid_body_is_retried_only_where_harmless(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path
) -> None:
    doc = {"siteEntry": [{"siteUrl": WWW, "permissionLevel": "siteOwner"}]}
    async with serve(fake, witness, tmp_path, planted.service_account_env(fake)) as served:
        assert not (await call(served, witness, "list_sites", {})).is_error
        fake.fail(SITES, status=200, body=doc, size=400_000, chunk_size=1000, reset_after=5000, times=1)
        result = await call(served, witness, "list_sites", {})
        assert not result.is_error, text_of(result)
        assert hits(fake, "GET", "/webmasters/v3/sites") == 3  # warm-up, the reset one, the retry

        fake.fail(r"urlNotifications:publish", status=200, body={"x": 1}, size=400_000, reset_after=5000, times=1)
        publish = await call(served, witness, "request_indexing", {"url": WWW + "job"})
        assert publish.is_error and publish.structured_content["kind"] == "network"
        assert "broke off" in text_of(publish)
        assert hits(fake, "POST", "urlNotifications:publish") == 1, "a notification is not resent by itself"
        again = await call(served, witness, "request_indexing", {"url": WWW + "job"})
        assert not again.is_error
        assert again.structured_content["quota_left"] == 199, "the broken request's quota was given back"


async def test_a_slow_loris_body_is_cut_off_in_bounded_time(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process but through the real proxy path (HTTPS_PROXY, the fake's CA), with a 2 s request limit."""
    from searchdesk_server.config import load
    from searchdesk_server.google.http import RetryPolicy
    from searchdesk_server.runtime import Runtime
    from searchdesk_server.server import build_server

    fake.apply_env(monkeypatch)
    config = load({**planted.service_account_env(fake), "SEARCHDESK_AGENT_SOCKET": "/nonexistent/agent.sock"})
    runtime = Runtime(config)
    (await runtime.client()).policy = RetryPolicy(attempts=2, base_delay=0.1, max_wait=0.5, request_timeout=2.0)
    from mcp import Client

    fault = fake.fail(SITES, status=200, body=b'{"siteEntry": [', chunk_size=1, delay=0.05, endless=True, times=2)
    async with Client(build_server(config, runtime=runtime), mode="legacy") as client:
        started = time.monotonic()
        result = await client.call_tool("list_sites", {})
        took = time.monotonic() - started
        witness.saw_result(result, "slow loris")
        assert result.is_error and "longer than 2 seconds" in text_of(result)
        assert took < 20, f"the slow body held the call for {took:.0f} s"
        assert fault.hits == 2 and fault.bytes_out < 200, "the server kept reading a body it had given up on"
        assert not (await client.call_tool("list_sites", {})).is_error, "the next call works"
    await runtime.aclose()
    assert {r.via for r in fake.log} == {"https"} and set(fake.proxy_log) <= {f"{h}:443" for h in GOOGLE}


# --------------------------------------------------------------------------------------------------
# Redirects and credentials


@pytest.mark.parametrize(
    ("status", "location"),
    [
        (302, "https://evil.example.net/collect?from=searchdesk"),
        (307, "https://searchconsole.googleapis.com/webmasters/v3/elsewhere"),
        (301, "http://searchconsole.googleapis.com/webmasters/v3/sites"),
    ],
)
async def test_a_redirect_is_never_followed_and_the_token_goes_nowhere_else(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path, status: int, location: str
) -> None:
    fake.fail(SITES, status=status, redirect_to=location, times=5)
    async with serve(fake, witness, tmp_path, planted.service_account_env(fake)) as served:
        result = await call(served, witness, "list_sites", {})
    assert result.is_error and result.structured_content["kind"] == "redirect"
    assert "did not follow" in text_of(result)
    assert hits(fake, "GET", "/webmasters/v3/sites") == 1, "a redirect is not retried either"
    assert [r.path for r in fake.api_requests()] == ["/webmasters/v3/sites"]
    assert set(fake.tokens_seen_by_host()) <= GOOGLE
    assert set(fake.proxy_log) <= {f"{h}:443" for h in GOOGLE}, fake.proxy_log


async def test_an_expired_token_is_refreshed_once_and_the_call_sent_once_more(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path
) -> None:
    async with serve(fake, witness, tmp_path, planted.service_account_env(fake)) as served:
        assert not (await call(served, witness, "list_sites", {})).is_error
        assert len(fake.token_requests) == 1
        fake.revoke_tokens()  # the cached token has expired at Google
        result = await call(served, witness, "list_sites", {})
        assert not result.is_error, text_of(result)
        assert len(fake.token_requests) == 2 and hits(fake, "GET", "/webmasters/v3/sites") == 3

        # Google keeps refusing: one refresh, one retry, then a clear answer; never a loop.
        fake.fail(SITES, status=401, body=bodies.unauthenticated(), times=50)
        refused = await call(served, witness, "list_sites", {})
        assert refused.is_error and refused.structured_content["kind"] == "auth"
        assert "did not accept the credentials" in text_of(refused)
        assert len(fake.token_requests) == 3 and hits(fake, "GET", "/webmasters/v3/sites") == 5
        fake.clear_faults()

        # A guarded call refused with 401 is not sent again: a yes is spent by one request.
        fake.fail(r"/sitemaps/", status=401, body=bodies.unauthenticated(), times=50, method="DELETE")
        args = {"site": WWW, "feedpath": SITEMAP}
        token = (await call(served, witness, "delete_sitemap", args)).structured_content["confirm_token"]
        once = await call(served, witness, "delete_sitemap", {**args, "confirm_token": token})
        assert once.is_error and sitemap_deletes(fake) == 1


async def test_a_revoked_refresh_token_says_sign_in_again(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path
) -> None:
    async with serve(fake, witness, tmp_path, planted.oauth_env()) as served:
        assert not (await call(served, witness, "list_sites", {})).is_error
        fake.revoke_refresh_token()
        fake.revoke_tokens()
        result = await call(served, witness, "list_sites", {})
        text = text_of(result)
        assert result.is_error and result.structured_content["kind"] == "auth"
        assert "revoked or expired" in text and "sign in again" in text
        refreshes = [t for t in fake.token_requests if t.grant == "refresh_token"]
        assert [t.ok for t in refreshes] == [True, False], "one refused refresh, no loop"
        assert hits(fake, "GET", "/webmasters/v3/sites") == 2


async def test_a_revoked_desktop_sign_in_says_sign_in_again(
    fake: FakeGoogle, witness: Witness, tmp_path: Path, agent_socket: str, reference_agent: AgentThread
) -> None:
    token = fake.mint_token()
    reference_agent.set_script(Script(token=TokenScript(access_token=token, refresh_error="refresh_failed")))
    async with serve(fake, witness, tmp_path, {}, socket=agent_socket) as served:
        assert not (await call(served, witness, "list_sites", {})).is_error
        fake.revoke_tokens()
        result = await call(served, witness, "list_sites", {})
    assert result.is_error and "sign in again in the SearchDesk app" in text_of(result)
    asks = reference_agent.requests_of("credentials/token")
    # Every call asks the app (the server keeps no token of the app's); after the 401, once more, forced.
    assert [a.params.get("force_refresh", False) for a in asks] == [False, False, True]


# --------------------------------------------------------------------------------------------------
# Something dies while a person is being asked


async def test_the_app_killed_while_a_question_waits_means_nothing_happens(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path, agent_socket: str
) -> None:
    agent = AgentProcess()
    agent.start(agent_socket, Script(approval=ApprovalScript(decision="pending")))
    env = {**planted.service_account_env(fake), "SEARCHDESK_APPROVAL_WAIT": "30"}
    outcome: list[Any] = []
    try:
        async with serve(fake, witness, tmp_path, env, socket=agent_socket) as served:

            async def ask() -> None:
                try:
                    outcome.append(await call(served, witness, "delete_sitemap", {"site": WWW, "feedpath": SITEMAP}))
                except MCPError as exc:
                    witness.saw_exception(exc, "app killed")
                    outcome.append(exc)

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                await anyio.to_thread.run_sync(lambda: agent.wait_for_requests("approval/request", timeout=20))
                assert agent._proc is not None
                agent._proc.kill()  # the app crashes with the dialog open
            assert not (await call(served, witness, "list_sites", {})).is_error, "the server carries on"
    finally:
        agent.stop()
    assert sitemap_deletes(fake) == 0, "the destructive request reached Google"
    result = outcome[0]
    assert not isinstance(result, BaseException), result
    assert result.is_error and result.structured_content["decision"] == "unanswered"
    assert "closed before anyone answered" in text_of(result) and "did nothing" in text_of(result)


async def test_the_server_killed_mid_wait_acts_never(
    fake: FakeGoogle,
    planted: Planted,
    witness: Witness,
    tmp_path: Path,
    agent_socket: str,
    reference_agent: AgentThread,
) -> None:
    env = {**planted.service_account_env(fake), "SEARCHDESK_APPROVAL_WAIT": "30"}
    failures: list[BaseException] = []
    try:
        async with serve(fake, witness, tmp_path, env, socket=agent_socket) as served, anyio.create_task_group() as tg:

            async def ask() -> None:
                with anyio.move_on_after(20):
                    try:
                        await served.client.call_tool("delete_sitemap", {"site": WWW, "feedpath": SITEMAP})
                    except Exception as exc:  # the server is gone: the call cannot finish
                        failures.append(exc)

            tg.start_soon(ask)
            asked = await anyio.to_thread.run_sync(
                lambda: reference_agent.wait_for_requests("approval/request", timeout=20)
            )
            os.kill(served.pid, signal.SIGKILL)
            fingerprint = asked[0].params["fingerprint"]
            await anyio.sleep(0.5)
            assert reference_agent.answer(fingerprint, "approve")  # the person says yes after the server died
            await anyio.sleep(2)
    except BaseException as exc:  # the dead server's transport may fail on the way out
        failures.append(exc)
    for exc in failures:
        witness.saw_exception(exc, "server killed mid-wait")
    assert sitemap_deletes(fake) == 0, "a destructive request reached Google after the server died"
    assert not [r for r in fake.api_requests() if r.method != "GET"]
