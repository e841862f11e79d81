"""A person approves: with the app reachable, no failure, cap or odd string earns the two-call token.

Issue 14's suite. Every test runs the real server as a stdio subprocess against the fake Google (its
request log is the judge: a destructive request either reached Google or it did not) and the app's
real listener (the `DesktopListener` harness: the real `AgentListener` and `ApprovalBook`) or the
reference agent. The ways around the person each have a test here, and each test fails on the code
before issue 14: caps filled by decoys (32, 60, 200), BUSY then close at hello, a listener that
accepts and closes, an answer that never comes; owner changes past the old 50-value cap; client names
and owner addresses holding characters the socket refuses; a yes collected by another server or for
another account; owners changed between the question and the yes (app and client dialog); Google
answering without owners; two long URLs that read the same; a demo app asked by a real server; an app
too old to bind answers. Boundary controls (1 and 49 owner changes, a plain client name) pass on both.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_types import ElicitResult, Implementation

from searchdesk_desktop.approval.book import Origin, origin
from searchdesk_server.agent import protocol
from searchdesk_server.agent.protocol import ErrorCode
from searchdesk_server.demo.state import DEMO_USER
from searchdesk_server.text.display import is_plain_text, is_safe_char, show_value
from tests.agentref import AgentThread, ApprovalScript, Script, TokenScript
from tests.agentref.wire import Raw
from tests.desktop.agent_harness import DesktopListener
from tests.fakegoogle import FakeGoogle
from tests.security.conftest import Planted, Witness, serve
from tests.server.stdio import text_of

pytestmark = pytest.mark.anyio

WWW = "https://www.example.com/"
RESOURCE = "https://www.example.com/"
TARGET = {"site": WWW, "feedpath": f"{WWW}old/sitemap.xml"}


# --------------------------------------------------------------------------------------------------
# Set-up


@contextlib.contextmanager
def app_listener(folder: Path, script: Script | None = None) -> Iterator[DesktopListener]:
    """The desktop app's real listener and book on their own Qt thread."""
    harness = DesktopListener()
    harness.start(str(folder / "agent.sock"), script or Script())
    try:
        yield harness
    finally:
        harness.stop()


@contextlib.contextmanager
def reference(folder: Path, script: Script | None = None) -> Iterator[AgentThread]:
    agent = AgentThread()
    agent.start(str(folder / "agent.sock"), script or Script())
    try:
        yield agent
    finally:
        agent.stop()


#: The app's wait where every question a test asks is left open by design (the answer is "pending"): the
#: least the server accepts (1–55 s). What those tests check — the words sent, that the app was asked, that
#: no yes was collected or used — does not depend on how long the app held the question open.
OPEN_WAIT = "1"


def sa_env(planted: Planted, fake: FakeGoogle, **extra: str) -> dict[str, str]:
    return {**planted.service_account_env(fake), "SEARCHDESK_APPROVAL_WAIT": "2", **extra}


def open_env(planted: Planted, fake: FakeGoogle) -> dict[str, str]:
    """`sa_env` for a test whose every question is left open by design (`OPEN_WAIT`)."""
    return sa_env(planted, fake, SEARCHDESK_APPROVAL_WAIT=OPEN_WAIT)


def destructive(fake: FakeGoogle) -> list[Any]:
    """Every request that changed something at Google (the judge)."""
    return [r for r in fake.api_requests() if r.method in ("DELETE", "PUT")]


def structured(result: Any) -> dict[str, Any]:
    return result.structured_content or {}


def assert_no_token(*results: Any) -> None:
    for result in results:
        data = structured(result)
        assert data.get("decision") != "token" and "confirm_token" not in data, text_of(result)
        assert 'confirm_token "sdk_' not in text_of(result)


def google_owners(fake: FakeGoogle, owners: list[str], resource: str = RESOURCE) -> None:
    """Set the verified owners the fake Google lists for `resource` (as if changed at Google)."""
    fake.backend.api.state.resources[resource].owners = list(owners)  # type: ignore[attr-defined]


def put_owners(fake: FakeGoogle) -> list[list[str]]:
    return [json.loads(r.body)["owners"] for r in fake.api_requests() if r.method == "PUT"]


def asked(agent: AgentThread | DesktopListener) -> list[dict[str, Any]]:
    """The approval/request params the app received, as sent."""
    return [r.params for r in agent.requests() if r.method == "approval/request"]


async def in_thread(fn: Any, *args: Any) -> Any:
    return await anyio.to_thread.run_sync(lambda: fn(*args))


# --------------------------------------------------------------------------------------------------
# 1. Caps filled with decoys: refused, never a token


@pytest.mark.parametrize("decoys", [32, 60, 200])
async def test_decoys_that_fill_the_apps_caps_never_earn_a_token(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, decoys: int
) -> None:
    results: list[Any] = []

    async def call(args: dict[str, Any]) -> None:
        results.append(await served.client.call_tool("delete_sitemap", args))

    with app_listener(folder) as app:
        async with serve(
            fake, witness, folder / "home", sa_env(planted, fake), socket=str(folder / "agent.sock")
        ) as served:
            async with anyio.create_task_group() as tg:
                for i in range(decoys):
                    tg.start_soon(call, {"site": WWW, "feedpath": f"{WWW}decoy/{i}.xml"})
                await in_thread(app.wait_for_requests, "approval/request", min(decoys, 32), 60.0)
                tg.start_soon(call, TARGET)  # the real one, while the decoys hold the caps
            after = await served.client.call_tool("delete_sitemap", TARGET)  # 32 questions are still open
    assert_no_token(*results, after)
    assert after.is_error and "questions waiting" in text_of(after), text_of(after)
    refusals = [text_of(r) for r in results if structured(r).get("decision") == "refused"]
    assert refusals, "the caps were never reached"
    assert all("questions waiting" in t or "busy" in t for t in refusals), refusals
    assert destructive(fake) == []


# --------------------------------------------------------------------------------------------------
# 2. A listener that is there but does not serve: refused, never a token


async def _misbehaving_listener(path: str, how: str) -> asyncio.AbstractServer:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if how == "busy_then_close":
            writer.write(protocol.encode_error(None, ErrorCode.BUSY, "Too many connections."))
            await writer.drain()
            writer.close()
            return
        if how == "accept_then_close":
            writer.close()
            return
        buffer = protocol.LineBuffer()  # "silent": answers hello and status, never a question
        while data := await reader.read(65536):
            for line in buffer.feed(data):
                request = protocol.parse_request(line)
                if request.method == protocol.HELLO:
                    result: dict[str, Any] = protocol.Hello("x", "1", features=protocol.FEATURES).to_json()
                elif request.method == protocol.APPROVAL_STATUS:
                    result = {"decision": "none"}
                else:
                    continue
                writer.write(protocol.encode_result(request.id, result))
                await writer.drain()

    server = await asyncio.start_unix_server(handle, path=path)
    os.chmod(path, 0o600)
    return server


@pytest.mark.parametrize("how", ["busy_then_close", "accept_then_close", "silent"])
async def test_a_listener_that_does_not_serve_gets_a_refusal_not_a_token(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, how: str
) -> None:
    path = str(folder / "agent.sock")
    server = await _misbehaving_listener(path, how)
    try:
        async with serve(fake, witness, folder / "home", open_env(planted, fake), socket=path) as served:
            result = await served.client.call_tool("delete_sitemap", TARGET)
    finally:
        server.close()
    assert result.is_error and structured(result)["decision"] == "refused", text_of(result)
    assert_no_token(result)
    assert destructive(fake) == []


async def test_with_nobody_listening_the_token_is_offered_and_used_once(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    """The control: nothing listening at the socket is the one case for the token."""
    async with serve(
        fake, witness, folder / "home", sa_env(planted, fake), socket=str(folder / "agent.sock")
    ) as served:
        first = await served.client.call_tool("delete_sitemap", TARGET)
        token = structured(first)["confirm_token"]
        assert "the SearchDesk app is not running" in text_of(first)
        second = await served.client.call_tool("delete_sitemap", {**TARGET, "confirm_token": token})
    assert not second.is_error and "Nobody was asked to approve this" in text_of(second)
    assert len(destructive(fake)) == 1


async def test_a_token_is_not_used_once_the_app_is_there_to_ask(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    path = str(folder / "agent.sock")
    async with serve(fake, witness, folder / "home", open_env(planted, fake), socket=path) as served:
        token = structured(await served.client.call_tool("delete_sitemap", TARGET))["confirm_token"]
        with reference(folder) as agent:  # the app starts: a person can be asked now
            second = await served.client.call_tool("delete_sitemap", {**TARGET, "confirm_token": token})
            assert second.is_error and structured(second)["decision"] == "pending", text_of(second)
            assert len(asked(agent)) == 1
    assert destructive(fake) == []


# --------------------------------------------------------------------------------------------------
# 3. Owner lists: shown whole, counted exactly, or refused without a token


def _new_owners(n: int) -> list[str]:
    return [f"new.owner.{i:03d}@example.com" for i in range(n)]


@pytest.mark.parametrize("changes", [1, 49, 50, 51, 200])
async def test_owner_changes_are_shown_whole_to_the_app_and_acted_on_once(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, changes: int
) -> None:
    if changes <= 100:
        google_owners(fake, [DEMO_USER])
        wanted = [DEMO_USER, *_new_owners(changes)]
        removed, added = 0, changes
    else:  # 100 owners at Google replaced by 100 others
        google_owners(fake, [DEMO_USER, *[f"old.owner.{i:03d}@example.com" for i in range(99)]])
        wanted = _new_owners(100)
        removed, added = 100, 100
    script = Script(approval=ApprovalScript(decision="approve"))
    with app_listener(folder, script) as app:
        async with serve(
            fake, witness, folder / "home", sa_env(planted, fake), socket=str(folder / "agent.sock")
        ) as served:
            result = await served.client.call_tool("update_site_owners", {"site": WWW, "owners": wanted})
        questions = asked(app)
    assert not result.is_error, text_of(result)
    assert_no_token(result)
    assert len(questions) == 1
    values = questions[0]["values"]
    assert sum(v["label"].startswith("Removed") for v in values) == removed
    assert sum(v["label"].startswith("Added") for v in values) == added
    assert f"{removed:,} removed, {added:,} added, {len(wanted):,} in total afterwards" in questions[0]["what"]
    assert put_owners(fake) == [sorted(wanted)]


async def test_a_change_too_long_for_one_message_is_refused_with_how_many_fit(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    long = "x" * 180
    google_owners(fake, [DEMO_USER, *[f"{long}.old{i:03d}@example.com" for i in range(299)]])
    wanted = [f"{long}.new{i:03d}@example.com" for i in range(100)]
    with app_listener(folder) as app:
        async with serve(
            fake, witness, folder / "home", sa_env(planted, fake), socket=str(folder / "agent.sock")
        ) as served:
            result = await served.client.call_tool("update_site_owners", {"site": WWW, "owners": wanted})
        questions = asked(app)
    text = text_of(result)
    assert result.is_error and "too many owners change at once to show them in one question" in text, text
    assert "change at most" not in text  # issue 23: a number nobody can follow is never said
    if "the largest change one call can make here is " in text:  # 300 at Google: a step leaves at most 100
        most = int(text.split("the largest change one call can make here is ")[1].split(" ")[0].replace(",", ""))
        assert 200 <= most < 400  # 400 lines do not fit one 64 KiB message; a good part of them does
        assert f"a list of {300 - most:,} (owners takes at most 100)" in text, text
    else:  # fewer than 200 fit: no list of at most 100 is one step from the 300 at Google
        assert "Settings › Users and permissions" in text and not any(c.isdigit() for c in text), text
    assert_no_token(result)
    assert questions == [] and destructive(fake) == []


async def test_a_question_too_long_for_the_clients_dialog_goes_to_the_app(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    seen: list[str] = []

    async def elicit(ctx: Any, params: Any) -> ElicitResult:
        seen.append(params.message)
        return ElicitResult(action="accept", content={"confirm": True})

    google_owners(fake, [DEMO_USER])
    wanted = [DEMO_USER, *[f"{'y' * 60}.{i:03d}@example.com" for i in range(80)]]  # > 4 KiB of question
    with reference(folder) as agent:
        async with serve(
            fake,
            witness,
            folder / "home",
            open_env(planted, fake),
            socket=str(folder / "agent.sock"),
            elicitation_callback=elicit,
        ) as served:
            result = await served.client.call_tool("update_site_owners", {"site": WWW, "owners": wanted})
        assert seen == [] and len(asked(agent)) == 1
    assert structured(result)["decision"] == "pending" and destructive(fake) == []


# --------------------------------------------------------------------------------------------------
# 4. Strings the socket refuses: shown escaped, never a reason for the token


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("two\nlines", "two\\u000alines"),
        ("\x1b[31mred\x1b[0m", "\\u001b[31mred\\u001b[0m"),
        ("👩\u200d💻 Dev Tool", "👩\\u200d💻 Dev Tool"),  # an honest emoji ZWJ sequence
        ("Plain Client", "Plain Client"),  # the control: passes before and after
    ],
)
async def test_any_client_name_reaches_the_app_shown_safely(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, name: str, shown: str
) -> None:
    with reference(folder, Script(approval=ApprovalScript(decision="approve"))) as agent:
        async with serve(
            fake,
            witness,
            folder / "home",
            sa_env(planted, fake),
            socket=str(folder / "agent.sock"),
            client_info=Implementation(name=name, version="1.0"),
        ) as served:
            result = await served.client.call_tool("delete_sitemap", TARGET)
        questions = asked(agent)
    assert not result.is_error, text_of(result)
    assert [q["client"]["name"] for q in questions] == [shown]
    assert len(destructive(fake)) == 1


def refused_characters() -> list[str]:
    """Every code point the one definition refuses (the socket's rule and the escaping's)."""
    return [chr(cp) for cp in range(0x110000) if not is_safe_char(chr(cp))]


def test_every_refused_code_point_is_shown_escaped_and_passes_the_socket() -> None:
    refused = refused_characters()
    assert len(refused) > 900_000  # unassigned and private-use code points are most of them
    assert protocol.is_plain_text is is_plain_text  # one definition, not two that agree today
    for i in range(0, len(refused), 50):
        chunk = refused[i : i + 50]
        shown = show_value("".join(chunk))  # long: start, end and a digest, all plain
        assert is_plain_text(shown) and not any(ch in shown for ch in chunk), [hex(ord(c)) for c in chunk]
        for ch in chunk[:2]:
            one = show_value(f"a{ch}b")
            assert is_plain_text(one) and ch not in one and one.startswith("a\\") and one.endswith("b")
    request = protocol.ApprovalRequest.from_json(
        {
            "request_id": "r1",
            "tool": "update_site_owners",
            "what": "w",
            "consequence": "c",
            "values": [
                {"label": "Added", "value": show_value(f"a{ch}@example.com", ascii_only=True)} for ch in refused[:1500]
            ],
            "fingerprint": "a" * 64,
            "client": {"name": show_value("n\u200b"), "version": ""},
            "wait_s": 1,
        }
    )
    assert len(request.values) == 1500


FORMAT_KEPT_BEFORE = [  # format characters the old cleaning kept and the socket refused
    ch
    for ch in map(chr, range(0x110000))
    if unicodedata.category(ch) == "Cf"
    and ch not in "\u00ad\u061c\u180e\ufeff"
    and not 0x200B <= ord(ch) <= 0x200F
    and not 0x202A <= ord(ch) <= 0x202E
    and not 0x2060 <= ord(ch) <= 0x206F
    and not 0xFFF9 <= ord(ch) <= 0xFFFB
    and not 0xE0000 <= ord(ch) <= 0xE007F
]


async def test_format_characters_in_owner_addresses_from_claude_and_from_google_are_shown_escaped(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    assert len(FORMAT_KEPT_BEFORE) >= 30
    from_google = [f"g{ch}@example.com" for ch in FORMAT_KEPT_BEFORE]
    from_claude = [f"c{ch}@example.com" for ch in FORMAT_KEPT_BEFORE]
    google_owners(fake, [DEMO_USER, *from_google])
    with reference(folder) as agent:
        async with serve(
            fake,
            witness,
            folder / "home",
            open_env(planted, fake),
            socket=str(folder / "agent.sock"),
        ) as served:
            result = await served.client.call_tool(
                "update_site_owners", {"site": WWW, "owners": [DEMO_USER, *from_claude]}
            )
        questions = asked(agent)
    assert structured(result)["decision"] == "pending", text_of(result)
    assert_no_token(result)
    values = [v["value"] for v in questions[0]["values"]]
    for ch in FORMAT_KEPT_BEFORE:
        escaped = f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"
        assert f"g{escaped}@example.com" in values and f"c{escaped}@example.com" in values
    assert destructive(fake) == []


@pytest.mark.parametrize(
    "lookalike",
    ["\u0430lice@example.com", "alice\u200b@example.com", "ALICE@example.com", "a1ice@example.com"],
)
async def test_an_added_address_that_reads_like_a_removed_one_is_escaped_and_flagged(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, lookalike: str
) -> None:
    google_owners(fake, [DEMO_USER, "alice@example.com"])
    with reference(folder) as agent:
        async with serve(
            fake,
            witness,
            folder / "home",
            open_env(planted, fake),
            socket=str(folder / "agent.sock"),
        ) as served:
            await served.client.call_tool("update_site_owners", {"site": WWW, "owners": [DEMO_USER, lookalike]})
        question = asked(agent)[0]
    lines = {v["label"]: v["value"] for v in question["values"]}
    assert lines["Removed (reads like an added one)"] == "alice@example.com"
    assert lines["Added (reads like a removed one)"] == show_value(lookalike, ascii_only=True)
    assert lines["Added (reads like a removed one)"].isascii()
    assert "check them letter by letter" in question["consequence"]


async def test_two_long_sitemaps_that_differ_late_never_read_the_same(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    stem = f"{WWW}{'section/' * 30}"
    one, two = f"{stem}sitemap-one.xml", f"{stem}sitemap-two.xml"
    with reference(folder) as agent:
        async with serve(
            fake,
            witness,
            folder / "home",
            open_env(planted, fake),
            socket=str(folder / "agent.sock"),
        ) as served:
            for feed in (one, two):
                await served.client.call_tool("delete_sitemap", {"site": WWW, "feedpath": feed})
        shown = [next(v["value"] for v in q["values"] if v["label"] == "Sitemap") for q in asked(agent)]
    assert len(shown) == 2 and shown[0] != shown[1]
    assert all(len(s) <= 240 and "characters left out" in s for s in shown)
    digits = hashlib.sha256(one.encode()).hexdigest()[:32]  # 128 bits, in groups of four (test_values_read_true)
    assert shown[0].endswith(f"[sha256 {' '.join(digits[i : i + 4] for i in range(0, 32, 4))}]")


# --------------------------------------------------------------------------------------------------
# 5. A yes belongs to who asked


async def test_a_yes_given_to_one_server_is_not_collected_by_another(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    path = str(folder / "agent.sock")
    with reference(folder) as agent:
        async with serve(fake, witness, folder / "a", open_env(planted, fake), socket=path) as first:
            pending = await first.client.call_tool("delete_sitemap", TARGET)
            assert structured(pending)["decision"] == "pending"
            assert agent.answer(asked(agent)[0]["fingerprint"], "approve")
            async with serve(fake, witness, folder / "b", open_env(planted, fake), socket=path) as second:
                other = await second.client.call_tool("delete_sitemap", TARGET)
            assert structured(other)["decision"] == "pending", text_of(other)  # asked its own question
            assert destructive(fake) == []
            mine = await first.client.call_tool("delete_sitemap", TARGET)
    assert not mine.is_error, text_of(mine)
    assert len(destructive(fake)) == 1


async def test_a_yes_for_one_google_account_is_not_used_for_another(
    fake: FakeGoogle, witness: Witness, folder: Path
) -> None:
    """The same server, signed in through the app; the person switches account between question and yes."""
    tokens = TokenScript(access_token=fake.mint_token(), account="first@example.com", expires_in=61)
    with reference(folder, Script(token=tokens)) as agent:
        async with serve(
            fake, witness, folder / "home", {"SEARCHDESK_APPROVAL_WAIT": OPEN_WAIT}, socket=str(folder / "agent.sock")
        ) as served:
            first = await served.client.call_tool("delete_sitemap", TARGET)
            assert structured(first)["decision"] == "pending", text_of(first)
            assert agent.answer(asked(agent)[0]["fingerprint"], "approve")
            agent.set_script(
                Script(token=TokenScript(access_token=fake.mint_token(), account="second@example.com", expires_in=61))
            )
            await anyio.sleep(1.5)  # the server's cached token (61 s, used until 60 s before it ends) runs out
            second = await served.client.call_tool("delete_sitemap", TARGET)
        questions = asked(agent)
    assert structured(second)["decision"] == "pending", text_of(second)
    assert [q["requester"]["account"] for q in questions] == ["first@example.com", "second@example.com"]
    assert "second@example.com" in questions[1]["what"]
    assert destructive(fake) == []


# --------------------------------------------------------------------------------------------------
# 6. Owners that change between the question and the yes


async def test_owners_changed_at_google_after_the_question_are_asked_about_again(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    google_owners(fake, [DEMO_USER, "old.agency@example.net"])
    wanted = [DEMO_USER, "new.person@example.com"]
    args = {"site": WWW, "owners": wanted}
    with reference(folder) as agent:
        async with serve(
            fake,
            witness,
            folder / "home",
            open_env(planted, fake),
            socket=str(folder / "agent.sock"),
        ) as served:
            assert structured(await served.client.call_tool("update_site_owners", args))["decision"] == "pending"
            google_owners(fake, [DEMO_USER, "old.agency@example.net", "late.joiner@example.com"])
            assert agent.answer(asked(agent)[0]["fingerprint"], "approve")  # a yes to the first words
            again = await served.client.call_tool("update_site_owners", args)
            assert structured(again)["decision"] == "pending", text_of(again)
            assert put_owners(fake) == []
            questions = asked(agent)
            assert len(questions) == 2
            assert {"label": "Removed", "value": "late.joiner@example.com"} in questions[1]["values"]
            assert agent.answer(questions[1]["fingerprint"], "approve")
            done = await served.client.call_tool("update_site_owners", args)
    assert not done.is_error, text_of(done)
    assert put_owners(fake) == [sorted(wanted)]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_owners_changed_while_the_client_dialog_was_open_are_asked_about_again(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, mode: str
) -> None:
    google_owners(fake, [DEMO_USER, "old.agency@example.net"])
    seen: list[str] = []

    async def elicit(ctx: Any, params: Any) -> ElicitResult:
        seen.append(params.message)
        if len(seen) == 1:  # someone adds an owner at Google while the person reads the question
            google_owners(fake, [DEMO_USER, "old.agency@example.net", "late.joiner@example.com"])
        return ElicitResult(action="accept", content={"confirm": True})

    async with serve(
        fake,
        witness,
        folder / "home",
        sa_env(planted, fake),
        socket=str(folder / "agent.sock"),
        mode=mode,
        elicitation_callback=elicit,
    ) as served:
        result = await served.client.call_tool(
            "update_site_owners", {"site": WWW, "owners": [DEMO_USER, "new.person@example.com"]}
        )
    assert not result.is_error, text_of(result)
    assert len(seen) == 2 and "late.joiner" not in seen[0] and "Removed: late.joiner@example.com" in seen[1]
    assert put_owners(fake) == [sorted([DEMO_USER, "new.person@example.com"])]


async def test_google_answering_without_owners_is_refused(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    fake.fail(
        r"webResource/",
        method="GET",
        status=200,
        body={"id": RESOURCE, "site": {"type": "SITE", "identifier": RESOURCE}},
        times=5,
    )
    with reference(folder) as agent:
        async with serve(
            fake, witness, folder / "home", sa_env(planted, fake), socket=str(folder / "agent.sock")
        ) as served:
            result = await served.client.call_tool("update_site_owners", {"site": WWW, "owners": [DEMO_USER]})
        assert asked(agent) == []
    assert result.is_error and "Google did not say who the owners are now" in text_of(result)
    assert_no_token(result)
    assert destructive(fake) == []


# --------------------------------------------------------------------------------------------------
# 7. Demo and real never mix; versions mix safely


async def test_a_demo_app_refuses_a_real_servers_question_and_token(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    path = str(folder / "agent.sock")
    with reference(folder, Script(demo=True)) as agent:
        async with serve(fake, witness, folder / "a", sa_env(planted, fake), socket=path) as served:
            question = await served.client.call_tool("delete_sitemap", TARGET)
        async with serve(fake, witness, folder / "b", {}, socket=path) as served:  # signed in through the app
            listing = await served.client.call_tool("list_sites", {})
        assert agent.agent is not None and agent.agent.pending_count() == 0  # refused: no dialog opened
    assert "the SearchDesk app is running the demo; start SearchDesk normally" in text_of(question)
    assert structured(question)["decision"] == "refused"
    assert_no_token(question)
    assert listing.is_error and "running the demo" in text_of(listing)
    assert destructive(fake) == []


async def test_a_demo_servers_question_in_the_real_app_is_labelled_demo(folder: Path) -> None:
    from tests.server.stdio import connect

    script = Script(approval=ApprovalScript(decision="approve"))
    with app_listener(folder, script) as app:
        env = {"SEARCHDESK_AGENT_SOCKET": str(folder / "agent.sock"), "SEARCHDESK_APPROVAL_WAIT": "5"}
        async with connect(env=env) as client:  # the demo server
            result = await client.call_tool("delete_sitemap", TARGET)
        request = protocol.ApprovalRequest.from_json(asked(app)[0])
    assert not result.is_error, text_of(result)
    assert request.requester is not None and request.requester.demo
    assert origin(request, demo_app=False) is Origin.DEMO


async def test_an_app_that_does_not_bind_answers_gets_no_question_and_gives_no_token(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path
) -> None:
    with reference(folder, Script(features=[])) as agent:  # an app from before requester binding
        async with serve(
            fake, witness, folder / "home", sa_env(planted, fake), socket=str(folder / "agent.sock")
        ) as served:
            result = await served.client.call_tool("delete_sitemap", TARGET)
        assert asked(agent) == [] and agent.requests_of("approval/status") == []
    assert "Update the SearchDesk app" in text_of(result) and structured(result)["decision"] == "refused"
    assert_no_token(result)


@pytest.mark.parametrize("demo_app", [False, True])
async def test_an_older_servers_question_is_served_without_a_new_error_code(folder: Path, demo_app: bool) -> None:
    """An older server sends no requester: it is answered as before; a demo app labels it as real."""
    old = {
        "request_id": "old-1",
        "tool": "delete_sitemap",
        "what": "This will delete the sitemap below.",
        "consequence": "Its history is lost.",
        "values": [{"label": "Sitemap", "value": TARGET["feedpath"]}],
        "fingerprint": "b" * 64,
        "client": {"name": "claude-ai", "version": "1"},
        "wait_s": 0,
    }
    with app_listener(folder, Script(demo=demo_app)) as app:
        async with await Raw.open(str(folder / "agent.sock")) as raw:
            hello = await raw.call("hello", {"protocol": 1})
            answer = await raw.call("approval/request", old)
            status = await raw.call("approval/status", {"fingerprint": "b" * 64})
        request = protocol.ApprovalRequest.from_json(asked(app)[0])
    assert hello["result"]["features"] == ["requester", "accounts"]
    assert answer["result"]["decision"] == "pending" and status["result"]["decision"] == "pending"
    assert origin(request, demo_app=demo_app) is (Origin.REAL_IN_DEMO_APP if demo_app else Origin.REAL)


async def test_a_real_servers_status_never_collects_an_older_servers_yes(folder: Path) -> None:
    with app_listener(folder) as app:
        async with await Raw.open(str(folder / "agent.sock")) as raw:
            old = {
                "request_id": "old-2",
                "tool": "delete_sitemap",
                "what": "w",
                "consequence": "c",
                "values": [],
                "fingerprint": "c" * 64,
                "client": {"name": "x"},
                "wait_s": 0,
            }
            await raw.call("approval/request", old)
            assert app.answer("c" * 64, "approve")
            me = {"server": "new-server", "account": None, "demo": False}
            theirs = await raw.call("approval/status", {"fingerprint": "c" * 64, "requester": me})
            mine = await raw.call("approval/status", {"fingerprint": "c" * 64})
    assert theirs["result"]["decision"] == "none" and mine["result"]["decision"] == "approve"
