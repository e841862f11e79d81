"""Agent socket abuse against the desktop app's real listener, and the desktop log's secrets.

A client that is not a server connects to the app's `AgentListener` (the real one, with the real
`ApprovalBook`, on its own Qt thread through the conformance suite's `DesktopListener` harness) and
sends random bytes, a 10 MB line, 1,000 connections, byte-at-a-time writes, and asks for answers to
questions it did not ask. After each, a legitimate client still gets `hello` answered, no token was
handed out and nothing was approved. The last test signs in (real keyring on a private bus, a fake
Google OAuth server), hands tokens to a server, and gives the app's log file to the witness.
"""

from __future__ import annotations

import json
import logging
import random
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop import logs
from searchdesk_desktop.accounts.keystore import KeyStore
from searchdesk_desktop.accounts.signin import OAuthClient
from searchdesk_desktop.agent_socket import listener as listener_module
from searchdesk_desktop.approval.book import State
from searchdesk_server.agent import client as agent_client
from searchdesk_server.agent.protocol import ErrorCode, fingerprint
from tests.agentref import Script
from tests.desktop.agent_harness import DesktopListener
from tests.desktop.agent_helpers import in_background
from tests.desktop.conftest import collect_on_main_thread, keyring_session, place, real_keyring  # noqa: F401
from tests.desktop.fake_oauth import CLIENT_ID, CLIENT_SECRET, EMAIL, FakeOAuth, fake_oauth_server
from tests.desktop.helpers import finish, make_core, question
from tests.security.conftest import Planted, Witness

WM_RO = "https://www.googleapis.com/auth/webmasters.readonly"
HELLO = b'{"jsonrpc":"2.0","id":"legit","method":"hello","params":{"protocol":1}}\n'
SEED = 20261129


# --------------------------------------------------------------------------------------------------
# The app's listener, and plain blocking clients (the listener runs on its own thread)


@pytest.fixture
def app() -> Iterator[DesktopListener]:
    folder = Path(tempfile.mkdtemp(prefix="sd-ab-"))  # short: socket paths are limited to ~100 bytes
    harness = DesktopListener()
    harness.start(str(folder / "agent.sock"), Script())  # nobody answers questions on their own
    try:
        yield harness
    finally:
        harness.stop()
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


def sock_path(app: DesktopListener) -> str:
    assert app.listener is not None and app.listener.path is not None
    return app.listener.path


def connect(app: DesktopListener, timeout: float = 10.0) -> socket.socket:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(sock_path(app))
    return s


def read_lines(s: socket.socket, n: int | None = None) -> tuple[list[dict[str, Any]], bool]:
    """Answer lines until n have come (or, with n None, until the listener closes); and whether it closed."""
    buf = bytearray()
    closed = False
    while n is None or buf.count(b"\n") < n:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:  # closed by the listener with our unread bytes in its queue
            closed = True
            break
        if not chunk:
            closed = True
            break
        buf.extend(chunk)
    return [json.loads(line) for line in bytes(buf).splitlines()], closed


def assert_responsive(app: DesktopListener) -> None:
    """A legitimate client, on a fresh connection, gets its hello answered."""
    with connect(app) as s:
        s.sendall(HELLO)
        answers, _ = read_lines(s, 1)
    assert answers[0].get("id") == "legit"
    assert answers[0].get("result", {}).get("app") == "SearchDesk", answers[0]


def assert_nothing_given(app: DesktopListener) -> None:
    """No token handed out, no question approved (or even asked), by this abuse."""
    listener, book = app.listener, app.book
    assert listener is not None and book is not None
    # Read on the listener's own thread: the book is not shared state.
    handed, states, decisions = app._on_thread(
        lambda: (
            listener.tokens_handed_out,
            [e.state for e in book._entries.values()],
            [a.decision for a in book.activity],
        )
    )
    assert handed == 0
    assert State.APPROVED not in states and State.USED not in states
    assert "approved" not in decisions


def rpc_line(rpc_id: object, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}).encode() + b"\n"


def ask_line(rpc_id: object, site: str, *, request_id: str, wait_s: float = 0) -> tuple[bytes, str]:
    q = question(site, request_id=request_id, wait_s=wait_s)
    return rpc_line(rpc_id, "approval/request", q.to_json()), q.fingerprint


def in_thread(fn: Callable[[], None]) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def quietly_send(s: socket.socket, data: bytes, errors: list[BaseException]) -> None:
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except OSError as exc:  # the listener closed on us: expected for the oversized line
        errors.append(exc)


# --------------------------------------------------------------------------------------------------
# Random bytes


def test_random_bytes_get_errors_only(app: DesktopListener) -> None:
    rng = random.Random(SEED)
    connections, total, errors_seen = 24, 0, 0
    for i in range(connections):
        size = rng.randrange(1, 48 * 1024)
        payload = bytearray(rng.randbytes(size))
        if i % 2:  # half of them with many short "lines" of garbage, so each one is parsed and refused
            for _ in range(size // 200):
                payload[rng.randrange(size)] = 0x0A
        payload += b"\n"
        total += len(payload)
        with connect(app) as s:
            sent: list[BaseException] = []
            sender = in_thread(lambda: quietly_send(s, bytes(payload), sent))  # noqa: B023
            answers, closed = read_lines(s)
            sender.join(10)
        assert closed, "the listener never closed a half-closed connection"
        for a in answers:  # every answer is an error, none a result
            assert "result" not in a and isinstance(a.get("error", {}).get("code"), int), a
        errors_seen += len(answers)
        assert answers, "random bytes got no error at all"
    assert errors_seen >= connections
    assert_responsive(app)
    assert_nothing_given(app)
    print(f"random bytes: {connections} connections, {total} bytes, {errors_seen} error answers")


def test_random_bytes_between_valid_requests_do_not_desync(app: DesktopListener) -> None:
    """Garbage before and after a real hello on one connection: the hello is still answered as itself."""
    rng = random.Random(SEED + 1)
    garbage = bytes(b for b in rng.randbytes(4096) if b != 0x0A)
    with connect(app) as s:
        s.sendall(garbage + b"\n" + HELLO + garbage + b"\n" + HELLO)
        answers, _ = read_lines(s, 4)
    kinds = ["error" if "error" in a else a["result"]["app"] for a in answers]
    assert kinds == ["error", "SearchDesk", "error", "SearchDesk"]
    assert_nothing_given(app)


# --------------------------------------------------------------------------------------------------
# A 10 MB line


@pytest.mark.parametrize("shape", ["no newline", "one json line"])
def test_ten_megabyte_line_is_refused_and_others_are_served(app: DesktopListener, shape: str) -> None:
    big = 10 * 1024 * 1024
    if shape == "no newline":
        payload = b"{" + b"a" * big
    else:  # a well-formed approval request whose "what" is 10 MB: refused on size, never shown or asked
        line, _fp = ask_line(1, "https://big.example/", request_id="big")
        payload = line.replace(b'"what": "', b'"what": "' + b"x" * big, 1)
        assert len(payload) > big
    with connect(app) as s:
        sent: list[BaseException] = []
        sender = in_thread(lambda: quietly_send(s, payload, sent))
        assert_responsive(app)  # served while the big line streams in
        answers, closed = read_lines(s)
        sender.join(10)
    assert closed
    assert [a["error"]["code"] for a in answers] == [ErrorCode.TOO_LARGE]
    assert sent, "the listener read all 10 MB instead of closing the connection"
    assert_responsive(app)
    assert_nothing_given(app)
    assert app.book is not None and app.book.get(fingerprint("delete_site", ["https://big.example/"])) is None


def test_a_client_that_never_reads_its_answers_is_dropped(app: DesktopListener) -> None:
    """Pipelined requests whose answers are never read: the app's write buffer is bounded (1 MiB)."""
    hellos = HELLO * 40_000  # about 2.8 MB of answers, more than the buffer and the socket's queues
    with connect(app) as s:
        sent: list[BaseException] = []
        sender = in_thread(lambda: quietly_send(s, hellos, sent))
        sender.join(30)
        assert not sender.is_alive() and sent, "the app kept reading a client that never read its answers"
        assert_responsive(app)
    assert_nothing_given(app)


# --------------------------------------------------------------------------------------------------
# 1,000 connections


def test_a_thousand_connections_while_a_legitimate_client_is_served(app: DesktopListener) -> None:
    listener = app.listener
    assert listener is not None
    cap = listener.max_connections
    hold = cap - 1  # the legitimate client makes exactly the cap
    total, opened, waves, full, busy = 1000, 0, 0, 0, 0
    while opened < total:
        wave: list[socket.socket] = []
        for i in range(min(hold, total - opened)):
            s = connect(app)
            if i % 2:
                s.sendall(rpc_line(i, "approval/status", {"fingerprint": "0" * 64}))  # answer never read
            wave.append(s)
        opened += len(wave)
        waves += 1
        _wait(lambda: listener.connection_count == len(wave), "wave accepted")  # noqa: B023
        assert_responsive(app)  # while the wave is held open
        _wait(lambda: listener.connection_count == len(wave), "hello connection forgotten")  # noqa: B023
        if len(wave) == hold:  # full: one more is taken (the cap), the next is refused with BUSY and closed
            full += 1
            with connect(app) as last:
                _wait(lambda: listener.connection_count == cap, "connection at the cap accepted")
                with connect(app) as over:
                    answers, closed = read_lines(over)
                assert closed and [a["error"]["code"] for a in answers] == [ErrorCode.BUSY]
                busy += 1
                last.sendall(HELLO)
                assert read_lines(last, 1)[0][0]["result"]["app"] == "SearchDesk"
            opened += 2
        for s in wave:
            s.close()
        _wait(lambda: listener.connection_count == 0, "wave forgotten")
    assert opened >= total and busy == full >= 1
    assert_responsive(app)
    assert_nothing_given(app)
    print(f"connections: {opened} in {waves} waves of up to {hold} held open (cap {cap}), {busy} refused BUSY")


def _wait(cond: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting: {what}")
        time.sleep(0.01)


# --------------------------------------------------------------------------------------------------
# Slow writes


def _dribble(s: socket.socket, data: bytes, pause: float, stop: threading.Event) -> None:
    try:
        for i in range(len(data)):
            if stop.is_set():
                return
            s.send(data[i : i + 1])
            time.sleep(pause)
    except OSError:
        return


def test_byte_at_a_time_writers_do_not_starve_others(app: DesktopListener) -> None:
    stop = threading.Event()
    slow = [connect(app) for _ in range(30)]
    asks = [ask_line(i, f"https://slow{i}.example/", request_id=f"slow-{i}") for i in range(len(slow))]
    try:
        threads = [
            in_thread(lambda s=s, line=line: _dribble(s, line, 0.002, stop))  # type: ignore[misc]
            for s, (line, _fp) in zip(slow, asks, strict=True)
        ]
        for _ in range(5):  # answered while 30 clients dribble a byte at a time
            assert_responsive(app)
        for t in threads:
            t.join(30)
        # Completed one byte at a time, each is an ordinary request: asked, still pending, never approved.
        for s, (_line, fp) in zip(slow, asks, strict=True):
            assert read_lines(s, 1)[0][0]["result"] == {"decision": "pending", "fingerprint": fp}
    finally:
        stop.set()
        for s in slow:
            s.close()
    assert_nothing_given(app)
    assert app.book is not None
    assert [app.book.get(fp).state for _line, fp in asks] == [State.PENDING] * len(asks)  # type: ignore[union-attr]


def test_a_line_that_never_finishes_is_dropped(app: DesktopListener, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slow loris: a byte every 100 ms, forever; the app drops it (30 s in the app, 1.5 s here)."""
    monkeypatch.setattr(listener_module, "PARTIAL_LINE_TIMEOUT_MS", 1500)  # read as each connection opens
    stop = threading.Event()
    loris = [connect(app) for _ in range(10)]
    try:
        for s in loris:
            in_thread(lambda s=s: _dribble(s, HELLO[:-1] * 100, 0.1, stop))  # type: ignore[misc]
        assert_responsive(app)
        for s in loris:
            answers, closed = read_lines(s)
            assert closed and [a["error"]["code"] for a in answers] == [ErrorCode.INVALID_REQUEST]
    finally:
        stop.set()
        for s in loris:
            s.close()
    _wait(lambda: app.listener is not None and app.listener.connection_count == 0, "slow clients dropped")
    assert_responsive(app)
    assert_nothing_given(app)


# --------------------------------------------------------------------------------------------------
# Another fingerprint's answer


def test_status_of_a_question_nobody_asked_is_none(app: DesktopListener) -> None:
    rng = random.Random(SEED + 2)
    fps = [f"{rng.getrandbits(256):064x}" for _ in range(200)]
    fps += [fingerprint("delete_site", [f"https://never{i}.example/"]) for i in range(20)]
    with connect(app) as s:
        s.sendall(b"".join(rpc_line(i, "approval/status", {"fingerprint": fp}) for i, fp in enumerate(fps)))
        answers, _ = read_lines(s, len(fps))
    assert [a["result"]["decision"] for a in answers] == ["none"] * len(fps)
    assert_nothing_given(app)


def test_an_approve_for_one_fingerprint_is_never_returned_for_another(app: DesktopListener) -> None:
    line_a, fp_a = ask_line(1, "https://a.example/", request_id="qa")
    line_b, fp_b = ask_line(2, "https://b.example/", request_id="qb")
    assert fp_a != fp_b
    with connect(app) as a, connect(app) as b:
        a.sendall(line_a)
        b.sendall(line_b)
        assert read_lines(a, 1)[0][0]["result"] == {"decision": "pending", "fingerprint": fp_a}
        assert read_lines(b, 1)[0][0]["result"] == {"decision": "pending", "fingerprint": fp_b}
        # B waits on its own question; the person approves A's.
        wait_b, _ = ask_line(3, "https://b.example/", request_id="qb", wait_s=1.0)
        b.sendall(wait_b)
        app.wait_for_requests("approval/request", 3)
        assert app.answer(fp_a, "approve")
        # B's wait ends "pending" (not approve); B's status, and any other fingerprint's, say so.
        answers, _ = read_lines(b, 1)
        assert answers[0]["result"] == {"decision": "pending", "fingerprint": fp_b}
        b.sendall(rpc_line(4, "approval/status", {"fingerprint": fp_b}))
        assert read_lines(b, 1)[0][0]["result"] == {"decision": "pending"}
        other = fingerprint("delete_site", ["https://c.example/"])
        for fp in (other, fp_a.upper(), fp_a[:-1] + ("0" if fp_a[-1] != "0" else "1")):
            b.sendall(rpc_line(5, "approval/status", {"fingerprint": fp}))
            result = read_lines(b, 1)[0][0]
            assert result.get("result", {}).get("decision") in ("none", None), result  # none, or refused
        # A new question on B's connection with A's approval still unspent is asked, not approved.
        line_c, fp_c = ask_line(6, "https://c.example/", request_id="qc")
        b.sendall(line_c)
        assert read_lines(b, 1)[0][0]["result"] == {"decision": "pending", "fingerprint": fp_c}
        # The control: A's yes is there, for A only, exactly once.
        a.sendall(rpc_line(7, "approval/status", {"fingerprint": fp_a}))
        answer = read_lines(a, 1)[0][0]["result"]
        assert answer["decision"] == "approve" and set(answer) <= {"decision", "answered_in"}  # additive only
        a.sendall(rpc_line(8, "approval/status", {"fingerprint": fp_a}))
        assert read_lines(a, 1)[0][0]["result"] == {"decision": "none"}
    assert app.book is not None
    assert app.book.get(fp_b) is not None and app.book.get(fp_b).state is State.PENDING  # type: ignore[union-attr]
    assert app.book.get(fp_c) is not None and app.book.get(fp_c).state is State.PENDING  # type: ignore[union-attr]
    assert app.listener is not None and app.listener.tokens_handed_out == 0
    assert_responsive(app)


# --------------------------------------------------------------------------------------------------
# Secrets: the desktop log file after a sign-in and token hand-off round trip


def _browser(fake: FakeOAuth) -> Callable[[str], bool]:
    def open_browser(url: str) -> bool:
        threading.Thread(target=fake.browser, args=(url,), daemon=True).start()
        return True

    return open_browser


@pytest.fixture
def desktop_log(tmp_path: Path) -> Iterator[Path]:
    """The app's own log set-up (its file, its redactor), in a folder of this test's, at DEBUG."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    path = logs.setup(logging.DEBUG, folder=tmp_path / "logs")
    try:
        yield path
    finally:
        for handler in [h for h in root.handlers if h not in before]:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(level)


def test_desktop_log_holds_no_refresh_or_access_token(
    qtbot: QtBot,
    place: dict[str, object],  # noqa: F811
    real_keyring: object,  # noqa: F811
    desktop_log: Path,
    planted: Planted,
    witness: Witness,
) -> None:
    witness.expect("desktop log")
    with fake_oauth_server() as fake:
        # The keyring holds a recognisable refresh token no redactor knows the shape of.
        fake.refresh_tokens[planted.refresh_token] = [WM_RO, "openid", "email"]
        oauth_client = OAuthClient(CLIENT_ID, CLIENT_SECRET, "own", testing=True)
        core = make_core(
            place,
            auth_uri=fake.auth_uri,
            open_browser=_browser(fake),
        )
        handed: list[str] = []
        try:
            # 1. A sign-in round trip: browser, code, keyring.
            with qtbot.waitSignal(core.signin_done, timeout=15_000) as done:
                core.sign_in(oauth_client)
            assert done.args == [""]
            signed = KeyStore().load(EMAIL)
            assert signed is not None and signed.refresh_token in fake.refresh_tokens
            witness.secret("desktop sign-in refresh token", signed.refresh_token)
            # 2. Replace it in the keyring with the planted one; the app reads it from there.
            KeyStore().save(replace(signed, refresh_token=planted.refresh_token))
            core.refresh_account()  # the provider is made on the first token request, from the keyring

            # 3. Servers ask for tokens (and a forced refresh) over the agent socket.
            async def tokens() -> list[str]:
                async with agent_client.AgentClient(str(place["socket_path"])) as c:
                    first = await c.token([WM_RO])
                    forced = await c.token([WM_RO], force_refresh=True)
                    return [first.access_token, forced.access_token]

            handed = in_background(qtbot, tokens)
            assert len(set(handed)) == 2 and all(t in fake.issued for t in handed)
            refreshed_with = [
                r.get("refresh_token") for r in fake.token_requests if r.get("grant_type") == "refresh_token"
            ]
            assert planted.refresh_token in refreshed_with  # the planted secret really was used
        finally:
            finish(core)
        for i, token in enumerate(fake.issued):
            witness.secret(f"desktop access token {i}", token)
            witness.secret(f"desktop access token {i} without its prefix", token.split(".", 1)[1])
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = desktop_log.read_text(encoding="utf-8")
    # The log is the app's and was written during the round trip (else this test could not fail).
    assert "sign-in finished" in text and "agent socket listening" in text, text
    witness.saw("desktop log", text, "sign-in and token hand-off")
    # The redactor knows a token's shape ("ya29.…"); the body alone, or a refresh token of no known shape,
    # only stays out because nothing logs it.
    needles = {"refresh token": planted.refresh_token}
    for t in handed:
        needles[f"access token {t[:10]}…"] = t
        needles[f"access token {t[:10]}… without its prefix"] = t.split(".", 1)[1]
    for name, value in needles.items():
        assert value not in text, f"the {name} appeared in the desktop log"
