"""The agent-socket conformance suite: every listener in conftest.LISTENERS must pass all of it.

It speaks to the listener only over the socket (the server's AgentClient, or raw bytes), and steers
it only through the ListenerHarness, so the desktop app's listener can be held to the same tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.agent import paths, protocol
from searchdesk_server.agent.client import AgentClient, ApprovalCancelled
from searchdesk_server.agent.protocol import MAX_MESSAGE_BYTES, ErrorCode
from tests.agentref import AccountScript, ApprovalScript, ListenerHarness, Script, TokenScript
from tests.agentref.testing import NOBODY, needs_root, request_approval, run
from tests.agentref.wire import Raw, error_code

WM = "https://www.googleapis.com/auth/webmasters"
WM_RO = "https://www.googleapis.com/auth/webmasters.readonly"
SITE = "https://example.com/"


def question(
    request_id: str = "req-1", targets: tuple[str, ...] = (SITE,), wait_s: float = 0, tool: str = "delete_site"
) -> dict[str, Any]:
    """approval/request params as the server sends them."""
    return {
        "request_id": request_id,
        "tool": tool,
        "what": "This will remove the property from your Search Console.",
        "consequence": "About 16 months of performance data go with it; re-adding starts empty.",
        "values": [{"label": "Property", "value": targets[0]}],
        "fingerprint": protocol.fingerprint(tool, list(targets)),
        "client": {"name": "Claude Desktop", "version": "1.0"},
        "wait_s": wait_s,
    }


async def ask(client: AgentClient, params: dict[str, Any]) -> str:
    return await request_approval(
        client,
        request_id=params["request_id"],
        tool=params["tool"],
        what=params["what"],
        consequence=params["consequence"],
        values=[protocol.Value(**v) for v in params["values"]],
        fingerprint=params["fingerprint"],
        client=protocol.ClientInfo(**params["client"]),
        wait_s=params["wait_s"],
    )


def hello_line(padding: int = 0, request_id: int = 1) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "hello", "params": {"protocol": 1}})
    return body.encode() + b" " * padding + b"\n"


# --------------------------------------------------------------------------------------------------
# Every method's happy path


def test_error_codes_are_stable_and_documented() -> None:
    app_codes = [c for c in ErrorCode if c > -32700 and c not in range(-32603, -32599)]
    assert all(-32099 <= c <= -32000 for c in app_codes)
    assert len({int(c) for c in ErrorCode}) == len(ErrorCode)
    assert set(protocol.ERROR_MEANINGS) == set(ErrorCode)
    assert protocol.PROTOCOL_VERSION == 1


def test_hello(listener: ListenerHarness, agent_socket: str) -> None:
    async def go() -> None:
        async with await Raw.open(agent_socket) as raw:
            answer = await raw.call("hello", {"protocol": 1, "app": "conformance", "version": "0"})
        result = answer["result"]
        assert result["protocol"] == 1
        assert isinstance(result["app"], str) and result["app"]
        assert isinstance(result["version"], str)

    run(go())


def test_hello_of_another_protocol_gets_an_error_and_the_connection_stays_usable(
    listener: ListenerHarness, agent_socket: str
) -> None:
    async def go() -> None:
        async with await Raw.open(agent_socket) as raw:
            answer = await raw.call("hello", {"protocol": 2})
            assert error_code(answer) == ErrorCode.PROTOCOL_MISMATCH
            assert answer["error"]["data"]["supported"] == [1]
            assert (await raw.call("hello", {"protocol": 1}))["result"]["protocol"] == 1

    run(go())


def test_token_is_handed_out_and_force_refresh_mints_a_new_one(listener: ListenerHarness) -> None:
    listener.set_script(Script(token=TokenScript(access_token="ya29.first", account="site@example.com")))

    async def go() -> tuple[protocol.Token, protocol.Token]:
        async with AgentClient() as client:
            first = await client.token([WM, WM_RO])
            second = await client.token([WM], force_refresh=True)
            return first, second

    first, second = run(go())
    assert first.access_token == "ya29.first"
    assert (first.kind, first.account) == ("oauth", "site@example.com")
    assert 0 < first.expires_in <= protocol.MAX_EXPIRES_IN
    assert second.access_token != first.access_token
    sent = [r.params for r in listener.wait_for_requests("credentials/token", 2)]
    assert [p.get("force_refresh") for p in sent] == [False, True]
    assert sent[0]["scopes"] == [WM, WM_RO]


@pytest.mark.parametrize(
    ("token", "code"),
    [
        (TokenScript(error="signed_out"), ErrorCode.SIGNED_OUT),
        (TokenScript(error="refresh_failed"), ErrorCode.REFRESH_FAILED),
        (TokenScript(error="keyring_locked"), ErrorCode.KEYRING_LOCKED),
        (TokenScript(granted_scopes=[WM_RO]), ErrorCode.SCOPE_NOT_GRANTED),
    ],
    ids=["signed-out", "refresh-failed", "keyring-locked", "scope-not-granted"],
)
def test_token_errors_have_stable_codes(
    listener: ListenerHarness, agent_socket: str, token: TokenScript, code: ErrorCode
) -> None:
    listener.set_script(Script(token=token))

    async def go() -> dict[str, Any]:
        async with await Raw.open(agent_socket) as raw:
            return await raw.call("credentials/token", {"scopes": [WM_RO, WM]})

    answer = run(go())
    assert error_code(answer) == code
    if code == ErrorCode.SCOPE_NOT_GRANTED:
        assert answer["error"]["data"]["missing"] == [WM]


def test_refresh_failure_on_force_refresh(listener: ListenerHarness) -> None:
    listener.set_script(Script(token=TokenScript(refresh_error="refresh_failed")))

    async def go() -> None:
        async with AgentClient() as client:
            await client.token([WM])
            with pytest.raises(protocol.AgentError) as caught:
                await client.token([WM], force_refresh=True)
            assert caught.value.code == ErrorCode.REFRESH_FAILED

    run(go())


# --------------------------------------------------------------------------------------------------
# Several accounts: listed (never a token), each its own token, the default for an older server

TWO = Script(
    accounts=[
        AccountScript("owner@example.com", access_token="ya29.owner", quota_project="1234"),
        AccountScript("Agency@Example.net", access_token="ya29.agency", kind="service_account", default=True),
    ]
)


def test_hello_announces_accounts(listener: ListenerHarness, agent_socket: str) -> None:
    async def go() -> dict[str, Any]:
        async with await Raw.open(agent_socket) as raw:
            return await raw.call("hello", {"protocol": 1})

    assert {"requester", "accounts"} <= set(run(go())["result"]["features"])


def test_accounts_are_listed_with_their_default_and_never_a_token(listener: ListenerHarness, agent_socket: str) -> None:
    listener.set_script(TWO)

    async def go() -> tuple[dict[str, Any], tuple[protocol.AccountInfo, ...]]:
        async with await Raw.open(agent_socket) as raw:
            answer = await raw.call("accounts/list", {})
        async with AgentClient() as client:
            return answer, await client.accounts()

    answer, parsed = run(go())
    assert answer["result"] == {
        "accounts": [
            {"account": "owner@example.com", "kind": "oauth", "default": False, "quota_project": "1234"},
            {"account": "Agency@Example.net", "kind": "service_account", "default": True},
        ]
    }
    assert "ya29" not in json.dumps(answer)
    assert [(a.account, a.default) for a in parsed] == [("owner@example.com", False), ("Agency@Example.net", True)]


def test_a_token_is_handed_out_for_the_account_named_and_the_default_when_none_is(
    listener: ListenerHarness, agent_socket: str
) -> None:
    listener.set_script(TWO)

    async def go() -> list[protocol.Token]:
        async with AgentClient() as client:
            return [
                await client.token([WM], account="owner@example.com"),
                await client.token([WM], account="agency@example.NET"),  # e-mail addresses ignore case
                await client.token([WM]),  # a server from before accounts: the default account
            ]

    named, other_case, older = run(go())
    assert (named.access_token, named.account) == ("ya29.owner", "owner@example.com")
    assert (other_case.access_token, other_case.account) == ("ya29.agency", "Agency@Example.net")
    assert (older.access_token, older.account, older.kind) == ("ya29.agency", "Agency@Example.net", "service_account")
    sent = [r.params for r in listener.wait_for_requests("credentials/token", 3)]
    assert [p.get("account") for p in sent] == ["owner@example.com", "agency@example.NET", None]


@pytest.mark.parametrize("script", [TWO, Script(token=TokenScript(account="site@example.com"))], ids=["two", "one"])
def test_a_token_for_an_account_claude_may_not_use_is_refused(
    listener: ListenerHarness, agent_socket: str, script: Script
) -> None:
    listener.set_script(script)

    async def go() -> dict[str, Any]:
        async with await Raw.open(agent_socket) as raw:
            return await raw.call("credentials/token", {"scopes": [WM], "account": "someone.else@example.org"})

    answer = run(go())
    assert error_code(answer) == ErrorCode.UNKNOWN_ACCOUNT
    assert "result" not in answer and "ya29" not in json.dumps(answer)


def test_one_account_is_listed_and_named_as_before(listener: ListenerHarness) -> None:
    listener.set_script(Script(token=TokenScript(access_token="ya29.only", account="site@example.com")))

    async def go() -> tuple[tuple[protocol.AccountInfo, ...], protocol.Token]:
        async with AgentClient() as client:
            return await client.accounts(), await client.token([WM], account="site@example.com")

    listed, token = run(go())
    assert [(a.account, a.kind, a.default) for a in listed] == [("site@example.com", "oauth", True)]
    assert (token.access_token, token.account) == ("ya29.only", "site@example.com")


def test_a_token_error_of_one_account_leaves_the_other(listener: ListenerHarness, agent_socket: str) -> None:
    listener.set_script(
        Script(
            accounts=[
                AccountScript("a@example.com", "ya29.a", error="refresh_failed"),
                AccountScript("b@example.com", "ya29.b"),
            ]
        )
    )

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with await Raw.open(agent_socket) as raw:
            return (
                await raw.call("credentials/token", {"scopes": [WM], "account": "a@example.com"}),
                await raw.call("credentials/token", {"scopes": [WM], "account": "b@example.com"}),
            )

    failed, served = run(go())
    assert error_code(failed) == ErrorCode.REFRESH_FAILED
    assert served["result"]["access_token"] == "ya29.b"


def test_a_demo_app_lists_no_account_to_a_real_server(listener: ListenerHarness, agent_socket: str) -> None:
    listener.set_script(Script(demo=True))
    real = {"server": "s1", "account": None, "demo": False}

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with await Raw.open(agent_socket) as raw:
            return await raw.call("accounts/list", {"requester": real}), await raw.call("accounts/list", {})

    refused, older = run(go())
    assert error_code(refused) == ErrorCode.DEMO_APP
    assert "result" in older  # a server from before requesters is answered as before


@pytest.mark.parametrize("decision", ["approve", "deny"])
def test_approval_answered_within_wait(listener: ListenerHarness, decision: str) -> None:
    listener.set_script(Script(approval=ApprovalScript(decision=decision)))
    params = question(wait_s=10)

    async def go() -> tuple[str, str]:
        async with AgentClient() as client:
            answer = await ask(client, params)
            return answer, await client.approval_status(params["fingerprint"])

    answer, status = run(go())
    assert answer == decision
    # An approve handed to the asking call is spent; a deny stays on record for identical calls.
    assert status == ("none" if decision == "approve" else "deny")
    sent = listener.wait_for_requests("approval/request")[0].params
    assert sent["fingerprint"] == params["fingerprint"]


def test_pending_answer_is_picked_up_once_by_status(listener: ListenerHarness) -> None:
    params = question(wait_s=0)

    async def first_call() -> tuple[str, str]:
        async with AgentClient() as client:
            return await ask(client, params), await client.approval_status(params["fingerprint"])

    assert run(first_call()) == ("pending", "pending")
    assert listener.answer(params["fingerprint"], "approve")

    async def later_call() -> list[str]:
        async with AgentClient() as client:
            return [await client.approval_status(params["fingerprint"]) for _ in range(2)]

    assert run(later_call()) == ["approve", "none"]


def test_answer_while_the_call_waits(listener: ListenerHarness) -> None:
    params = question(wait_s=30)

    async def go() -> str:
        async with AgentClient() as client:
            waiting = asyncio.create_task(ask(client, params))
            await asyncio.to_thread(listener.wait_for_requests, "approval/request")
            assert await asyncio.to_thread(listener.answer, params["fingerprint"], "approve")
            return await waiting

    assert run(go()) == "approve"


def test_cancel_closes_the_question_and_approves_nothing(listener: ListenerHarness) -> None:
    params = question(request_id="to-cancel", wait_s=30)

    async def go() -> tuple[bool, bool, str]:
        async with AgentClient() as client, AgentClient() as other:
            waiting = asyncio.create_task(ask(client, params))
            await asyncio.to_thread(listener.wait_for_requests, "approval/request")
            cancelled = await other.approval_cancel("to-cancel")
            with pytest.raises(ApprovalCancelled) as caught:
                await waiting
            assert caught.value.code == ErrorCode.CANCELLED
            again = await other.approval_cancel("to-cancel")
            return cancelled, again, await other.approval_status(params["fingerprint"])

    assert run(go()) == (True, False, "none")
    assert not listener.answer(params["fingerprint"], "approve")


def test_cancel_of_an_unknown_request_is_not_an_error(listener: ListenerHarness) -> None:
    async def go() -> bool:
        async with AgentClient() as client:
            return await client.approval_cancel("never-asked")

    assert run(go()) is False


def test_one_yes_is_spent_by_one_call(listener: ListenerHarness) -> None:
    """Two identical questions share one dialog; one approve answers only one of them."""
    first, second = question(request_id="a", wait_s=30), question(request_id="b", wait_s=30)

    async def go() -> list[Any]:
        async with AgentClient() as client:
            tasks = [asyncio.create_task(ask(client, first)), asyncio.create_task(ask(client, second))]
            await asyncio.to_thread(listener.wait_for_requests, "approval/request", 2)
            assert await asyncio.to_thread(listener.answer, first["fingerprint"], "approve")
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            assert len(done) == 1 and done.pop().result() == "approve"
            await client.approval_cancel("a")  # closes the shared dialog for the one still waiting
            await client.approval_cancel("b")
            return await asyncio.gather(*tasks, return_exceptions=True)

    results = run(go())
    assert sorted(r if isinstance(r, str) else type(r).__name__ for r in results) == ["ApprovalCancelled", "approve"]


def words(params: dict[str, Any]) -> str:
    """The digest of a question's words, as the server sends it with approval/status."""
    pairs = [(v["label"], v["value"]) for v in params["values"]]
    return protocol.words_digest(params["what"], params["consequence"], pairs)


#: The same call as `question()` builds, its question built again after Google's side changed.
REWORDED = "This account is the property's last verified owner: everyone who uses it loses access."


def test_status_with_the_digest_of_other_words_never_approves(listener: ListenerHarness) -> None:
    """A yes is bound to the words: a status for the same fingerprint that reads otherwise finds none."""
    shown = question(wait_s=0)
    other = {**shown, "consequence": REWORDED}
    assert words(shown) != words(other) and shown["fingerprint"] == other["fingerprint"]

    async def ask_it() -> str:
        async with AgentClient() as client:
            return await ask(client, shown)

    assert run(ask_it()) == "pending"
    assert listener.answer(shown["fingerprint"], "approve")

    async def later_calls() -> list[str]:
        async with AgentClient() as client:
            fp = shown["fingerprint"]
            return [
                await client.approval_status(fp, digest=words(other)),  # other words: no answer of theirs
                await client.approval_status(fp, digest=words(shown)),  # the words shown: the yes, once
                await client.approval_status(fp, digest=words(shown)),
            ]

    assert run(later_calls()) == ["none", "approve", "none"]


def test_a_second_request_with_other_words_replaces_the_first(listener: ListenerHarness) -> None:
    """The same fingerprint and requester asked again with other words never joins the open dialog: it
    takes its place, the call waiting on the old words is answered "pending" (never the yes), and the
    person's yes goes to the call whose words the dialog shows."""
    first = question(request_id="old-words", wait_s=30)
    second = {**question(request_id="new-words", wait_s=30), "consequence": REWORDED}

    async def go() -> tuple[str, str, str, str]:
        async with AgentClient() as client:
            old = asyncio.create_task(ask(client, first))
            await asyncio.to_thread(listener.wait_for_requests, "approval/request")
            new = asyncio.create_task(ask(client, second))
            await asyncio.to_thread(listener.wait_for_requests, "approval/request", 2)
            replaced = await asyncio.wait_for(old, 10)  # at once, not after its wait
            assert not new.done()
            assert await asyncio.to_thread(listener.answer, first["fingerprint"], "approve")
            approved = await asyncio.wait_for(new, 10)
            fp = first["fingerprint"]
            return (
                replaced,
                approved,
                await client.approval_status(fp, digest=words(first)),
                await client.approval_status(fp, digest=words(second)),
            )

    assert run(go()) == ("pending", "approve", "none", "none")


def test_a_token_is_served_while_an_approval_waits_on_the_same_connection(listener: ListenerHarness) -> None:
    params = question(wait_s=30)

    async def go() -> None:
        async with AgentClient() as client:
            waiting = asyncio.create_task(ask(client, params))
            await asyncio.to_thread(listener.wait_for_requests, "approval/request")
            token = await client.token([WM])
            assert token.access_token
            assert await client.approval_status(params["fingerprint"]) == "pending"
            assert not waiting.done()
            await client.approval_cancel(params["request_id"])
            with pytest.raises(ApprovalCancelled):
                await waiting
        assert client.connections_opened == 1

    run(go())


# --------------------------------------------------------------------------------------------------
# Garbage gets an error, never a hang, and never stops the listener


def test_malformed_json_gets_a_parse_error_and_the_connection_goes_on(
    listener: ListenerHarness, agent_socket: str
) -> None:
    async def go() -> None:
        async with await Raw.open(agent_socket) as raw:
            for garbage in (b"{not json\n", b"\xff\xfe\x00garbage\n", b'{"jsonrpc": "2.0", "id": 1, "id": 2}\n'):
                await raw.send(garbage)
                answer = await raw.read()
                assert error_code(answer) == ErrorCode.PARSE_ERROR, garbage
                assert answer is not None and answer["id"] is None
            assert (await raw.call("hello", {"protocol": 1}))["result"]["protocol"] == 1

    run(go())


INVALID_REQUESTS: list[Any] = [
    [],
    [{"jsonrpc": "2.0", "id": 1, "method": "hello", "params": {"protocol": 1}}],
    "hello",
    42,
    {"id": 1, "method": "hello", "params": {"protocol": 1}},
    {"jsonrpc": "1.0", "id": 1, "method": "hello"},
    {"jsonrpc": "2.0", "id": 1},
    {"jsonrpc": "2.0", "id": 1, "method": 7},
    {"jsonrpc": "2.0", "id": 1.5, "method": "hello"},
    {"jsonrpc": "2.0", "id": {"a": 1}, "method": "hello"},
    {"jsonrpc": "2.0", "id": None, "method": "hello"},
]


def test_invalid_requests(listener: ListenerHarness, agent_socket: str) -> None:
    """Each case on one connection (cheap to run against a slow-starting listener); all are reported."""

    async def go() -> list[str]:
        wrong = []
        async with await Raw.open(agent_socket) as raw:
            for message in INVALID_REQUESTS:
                await raw.send_obj(message)
                answer = await raw.read()
                if error_code(answer) != ErrorCode.INVALID_REQUEST:
                    wrong.append(f"{json.dumps(message)} -> {answer}")
            assert "result" in await raw.call("hello", {"protocol": 1})
        return wrong

    assert run(go()) == []


def test_deep_nesting_is_refused_not_crashed_on(listener: ListenerHarness, agent_socket: str) -> None:
    async def go() -> None:
        async with await Raw.open(agent_socket) as raw:
            await raw.send(b"[" * 30000 + b"]" * 30000 + b"\n")
            assert error_code(await raw.read()) in (ErrorCode.PARSE_ERROR, ErrorCode.INVALID_REQUEST)
            assert "result" in await raw.call("hello", {"protocol": 1})

    run(go())


def test_unknown_method(listener: ListenerHarness, agent_socket: str) -> None:
    async def go() -> dict[str, Any]:
        async with await Raw.open(agent_socket) as raw:
            return await raw.call("credentials/steal", {})

    assert error_code(run(go())) == ErrorCode.METHOD_NOT_FOUND


def test_a_notification_is_never_answered(listener: ListenerHarness, agent_socket: str) -> None:
    async def go() -> None:
        async with await Raw.open(agent_socket) as raw:
            await raw.send_obj({"jsonrpc": "2.0", "method": "hello", "params": {"protocol": 1}})
            await raw.send_obj({"jsonrpc": "2.0", "id": "after", "method": "hello", "params": {"protocol": 1}})
            answer = await raw.read()
            assert answer is not None and answer["id"] == "after"

    run(go())


def _big_question() -> dict[str, Any]:
    """Over the question's 60 KiB as a dialog lays it out, yet under the 64 KiB message limit."""
    params = question()
    params["what"] = params["consequence"] = "日" * 1000
    params["values"] = [{"label": "O", "value": "日" * 240} for _ in range(78)]
    return params


def _with(**changes: Any) -> dict[str, Any]:
    params = question()
    params.update(changes)
    return params


INVALID_PARAMS: list[tuple[str, Any]] = [
    ("hello", {}),
    ("hello", {"protocol": "1"}),
    ("hello", {"protocol": 1, "app": "x" * 101}),
    ("hello", [1]),
    ("credentials/token", {}),
    ("credentials/token", {"scopes": WM}),
    ("credentials/token", {"scopes": []}),
    ("credentials/token", {"scopes": [WM] * 11}),
    ("credentials/token", {"scopes": ["https://evil.example/auth/webmasters"]}),
    ("credentials/token", {"scopes": ["https://www.googleapis.com/auth/../x"]}),
    ("credentials/token", {"scopes": [WM], "force_refresh": "yes"}),
    ("credentials/token", {"scopes": [WM], "account": ""}),
    ("credentials/token", {"scopes": [WM], "account": 5}),
    ("credentials/token", {"scopes": [WM], "account": "a@example.com\nb@example.com"}),
    ("credentials/token", {"scopes": [WM], "account": "x" * 321}),
    ("accounts/list", []),
    ("accounts/list", {"requester": {"server": "s1"}}),
    ("approval/request", {}),
    ("approval/request", _with(fingerprint="A" * 64)),
    ("approval/request", _with(fingerprint="a" * 63)),
    ("approval/request", _with(wait_s=56)),
    ("approval/request", _with(wait_s=-1)),
    ("approval/request", _with(wait_s=True)),
    ("approval/request", _with(wait_s="10")),
    ("approval/request", _with(values=[{"label": "x", "value": "y"}] * 2001)),
    ("approval/request", _with(values=[{"label": "x" * 101, "value": "y"}])),
    ("approval/request", _with(values=[{"label": "x", "value": "y" * 241}])),
    ("approval/request", _with(values=[{"label": "Owner", "value": "a\u0600b@example.com"}])),
    ("approval/request", _with(client={"name": "two\nlines"})),
    ("approval/request", _with(requester={"server": "s1", "account": None})),
    ("approval/request", _with(requester={"server": "", "account": None, "demo": False})),
    ("approval/status", {"fingerprint": "a" * 64, "requester": {"server": "s1", "account": 5, "demo": False}}),
    ("credentials/token", {"scopes": [WM], "requester": {"server": "s 1", "account": None, "demo": False}}),
    ("approval/request", _with(values=[{"label": "x"}])),
    ("approval/request", _with(values=[{"label": "Site", "value": "https://example.com/\u202egnp.exe"}])),
    ("approval/request", _with(values=[{"label": "Site", "value": "a\u200bb"}])),
    ("approval/request", _with(what="x" * 1001)),
    ("approval/request", _with(what="line one\nline two")),
    ("approval/request", _with(consequence="")),
    ("approval/request", _with(tool="Delete Site")),
    ("approval/request", _with(request_id="")),
    ("approval/request", _with(request_id="x" * 129)),
    ("approval/request", _with(client={"version": "1"})),
    ("approval/request", _with(client="Claude")),
    ("approval/request", _big_question()),
    ("approval/status", {}),
    ("approval/status", {"fingerprint": "g" * 64}),
    ("approval/cancel", {}),
    ("approval/cancel", {"request_id": 7}),
]


def test_invalid_params(listener: ListenerHarness, agent_socket: str) -> None:
    """Each case on one connection; every wrong answer is reported, with the case's index."""

    async def go() -> list[str]:
        wrong = []
        async with await Raw.open(agent_socket) as raw:
            for i, (method, params) in enumerate(INVALID_PARAMS):
                answer = await raw.call(method, params)
                if error_code(answer) != ErrorCode.INVALID_PARAMS:
                    wrong.append(f"case {i} ({method}) -> {answer}")
                    continue
                message = answer["error"]["message"]
                if "\u202e" in message or "y" * 241 in message:  # name the problem, never the hostile value
                    wrong.append(f"case {i} ({method}) echoes the value")
        return wrong

    assert run(go()) == []


def test_a_message_of_exactly_64_kib_is_served(listener: ListenerHarness, agent_socket: str) -> None:
    line = hello_line()
    line = hello_line(padding=MAX_MESSAGE_BYTES - len(line))
    assert len(line) == MAX_MESSAGE_BYTES

    async def go() -> dict[str, Any] | None:
        async with await Raw.open(agent_socket) as raw:
            await raw.send(line)
            return await raw.read()

    answer = run(go())
    assert answer is not None and answer["result"]["protocol"] == 1


def test_a_message_over_64_kib_is_too_large(listener: ListenerHarness, agent_socket: str) -> None:
    line = hello_line()
    line = hello_line(padding=MAX_MESSAGE_BYTES - len(line) + 1)

    async def go() -> None:
        async with await Raw.open(agent_socket) as raw:
            await raw.send(line)
            messages = await raw.read_until_eof()
            assert [error_code(m) for m in messages] == [ErrorCode.TOO_LARGE]
            assert messages[0]["id"] is None
        async with await Raw.open(agent_socket) as raw:
            assert "result" in await raw.call("hello", {"protocol": 1})

    run(go())


def _flood(path: str, megabytes: int = 10) -> list[dict[str, Any]]:
    """Send one line of `megabytes` MiB without a newline; return what the listener said (a blocking socket:
    asyncio drops the unread answer when its own write fails, the kernel does not)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(path)
    chunk = b"x" * (256 * 1024)
    try:
        for _ in range(megabytes * 4):
            sock.sendall(chunk)
    except OSError:
        pass  # the listener hung up on us: that is the point
    data = b""
    try:
        while part := sock.recv(65536):
            data += part
    except OSError:
        pass
    finally:
        sock.close()
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def test_a_10_mb_line_is_refused_while_others_are_served(listener: ListenerHarness, agent_socket: str) -> None:
    async def go() -> None:
        async with await Raw.open(agent_socket) as other:
            flood = asyncio.create_task(asyncio.to_thread(_flood, agent_socket))
            assert "result" in await other.call("hello", {"protocol": 1})
            messages = await flood
            assert [error_code(m) for m in messages] == [ErrorCode.TOO_LARGE]
            assert "result" in await other.call("credentials/token", {"scopes": [WM]})

    run(go())


def test_a_slow_writer_is_served_and_blocks_nobody(listener: ListenerHarness, agent_socket: str) -> None:
    line = hello_line(request_id=99)

    async def go() -> None:
        async with await Raw.open(agent_socket) as slow, await Raw.open(agent_socket) as other:
            for i, byte in enumerate(line):
                await slow.send(bytes([byte]))
                await asyncio.sleep(0.001)
                if i == len(line) // 2:  # halfway through the slow line, somebody else is served
                    assert "result" in await other.call("hello", {"protocol": 1})
            answer = await slow.read()
            assert answer is not None and answer["id"] == 99 and "result" in answer

    run(go())


def test_half_closed_connection_still_gets_its_answer(listener: ListenerHarness, agent_socket: str) -> None:
    async def go() -> None:
        async with await Raw.open(agent_socket) as raw:
            await raw.send(hello_line(request_id=5))
            raw.writer.write_eof()
            messages = await raw.read_until_eof()
            assert [m.get("id") for m in messages] == [5] and "result" in messages[0]

    run(go())


def test_half_closed_in_the_middle_of_a_line_ends_cleanly(listener: ListenerHarness, agent_socket: str) -> None:
    async def go() -> None:
        async with await Raw.open(agent_socket) as raw:
            await raw.send(hello_line()[:20])
            raw.writer.write_eof()
            messages = await raw.read_until_eof()  # closed, maybe after an error: never a result, never a hang
            assert all("error" in m for m in messages)
        async with await Raw.open(agent_socket) as raw:
            assert "result" in await raw.call("hello", {"protocol": 1})

    run(go())


def test_a_caller_vanishing_mid_question_harms_nobody(listener: ListenerHarness, agent_socket: str) -> None:
    async def go() -> None:
        raw = await Raw.open(agent_socket)
        await raw.send_obj({"jsonrpc": "2.0", "id": 1, "method": "approval/request", "params": question(wait_s=30)})
        await asyncio.to_thread(listener.wait_for_requests, "approval/request")
        raw.writer.transport.abort()
        async with AgentClient() as client:
            assert (await client.hello()).protocol == 1
            assert await client.approval_status(question()["fingerprint"]) == "pending"

    run(go())


def test_100_concurrent_connections_are_all_served(listener: ListenerHarness, agent_socket: str) -> None:
    async def one(i: int) -> None:
        async with await Raw.open(agent_socket) as raw:
            assert (await raw.call("hello", {"protocol": 1}, timeout=15))["result"]["protocol"] == 1
            token = await raw.call("credentials/token", {"scopes": [WM]}, timeout=15)
            assert token["result"]["access_token"]

    async def go() -> None:
        await asyncio.gather(*(one(i) for i in range(100)))

    run(go(), timeout=30)


# --------------------------------------------------------------------------------------------------
# Trust


_OTHER_USER = textwrap.dedent(
    """
    import json, os, socket, sys
    fd = os.open(sys.argv[1], os.O_PATH)        # opened as root: reaches the socket past its 0700 folder
    os.setgroups([]); os.setgid({uid}); os.setuid({uid})
    out = {{"connected": False, "data": ""}}
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    try:
        s.connect("/proc/self/fd/%d" % fd)
        out["connected"] = True
        s.sendall(sys.argv[2].encode())
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        out["data"] = b"".join(chunks).decode("utf-8", "replace")
    except OSError as err:
        out["error"] = type(err).__name__
    print(json.dumps(out))
    """
).format(uid=NOBODY)


@needs_root
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc/self/fd to reach the socket")
def test_a_peer_of_another_user_is_refused(listener: ListenerHarness, agent_socket: str) -> None:
    # The 0700 folder already stops another user; to test the listener's own peer check, the probe
    # reaches the socket through a descriptor opened before it drops to `nobody`.
    os.chmod(agent_socket, 0o666)
    before = len(listener.requests())
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "credentials/token", "params": {"scopes": [WM]}})
    probe = subprocess.run(
        [sys.executable, "-c", _OTHER_USER, agent_socket, request + "\n"], capture_output=True, text=True, timeout=20
    )
    assert probe.returncode == 0, probe.stderr
    out = json.loads(probe.stdout)
    assert out["connected"], out  # the probe did reach the listener: the refusal below is the listener's
    assert "access_token" not in out["data"] and '"result"' not in out["data"]
    assert len(listener.requests()) == before

    async def still_serving() -> None:
        async with AgentClient() as client:
            assert (await client.token([WM])).access_token

    run(still_serving())


def _untrusted(scratch: Path, case: str) -> tuple[Path, Path]:
    """(folder to put the socket in, the real folder it resolves to) for one kind of untrusted folder."""
    if case == "symlink":
        real = scratch / "real"
        real.mkdir(mode=0o700)
        link = scratch / "link"
        link.symlink_to(real)
        return link, real
    if case == "parent":
        parent = scratch / "shared"
        parent.mkdir()
        os.chmod(parent, 0o777)
        os.chown(parent, NOBODY, NOBODY)
        folder = parent / "sd"
        folder.mkdir(mode=0o700)
        return folder, folder
    folder = scratch / "sd"
    folder.mkdir(mode=0o700)
    if case == "other-owner":
        os.chown(folder, NOBODY, NOBODY)
    elif case == "mode-0755":
        os.chmod(folder, 0o755)
    return folder, folder


UNTRUSTED = [
    pytest.param("other-owner", marks=needs_root),
    "mode-0755",
    "symlink",
    pytest.param("parent", marks=needs_root),
]


@pytest.mark.parametrize("case", UNTRUSTED)
def test_listener_refuses_an_untrusted_folder(make_listener: Any, scratch: Path, case: str) -> None:
    folder, real = _untrusted(scratch, case)
    mode_before = os.lstat(real).st_mode
    harness = make_listener()
    with pytest.raises(paths.UntrustedFolder):
        harness.start(str(folder / "agent.sock"), Script())
    assert not (real / "agent.sock").exists()
    assert os.lstat(real).st_mode == mode_before  # never chmod-ed into use
