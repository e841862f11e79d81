"""Secrets: the session's planted credentials (conftest.py) in every way a server can be given them,
and Google (or whatever answers in its place) echoing them back. None may appear in stdout (the whole
MCP stream, read raw), stderr, tool results, exception or exit messages, or /proc/<pid>/environ of
the server and its children. The witness checks each of these as it is seen, and the whole session
at its end, where it also checks that every channel a test here said it would look at was looked at."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakegoogle import FakeGoogle
from tests.server.stdio import REPO

from ..conftest import Planted, Witness, base_env, serve, tree
from ..inproc import text_of

WWW = "https://www.example.com/"
SITES = r"searchconsole\.googleapis\.com/webmasters/v3/sites$"


def echo_token(token: str) -> dict[str, Any]:
    """An API error quoting back what the API was sent: the access token (a careless proxy would)."""
    message = f"Request had invalid authentication credentials: Bearer {token} (token={token})"
    return {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT", "details": [{"echo": token}]}}


def echo_grant(fake: FakeGoogle, sent: str = "") -> dict[str, Any]:
    """A token-endpoint error quoting back the grant it was sent (the last one the fake saw, or `sent`)."""
    grants = [e.body.decode() for e in fake.log if e.host == "oauth2.googleapis.com"]
    key = fake.service_account_info["private_key"]  # never sent: a key-shaped string must go anyway
    described = f"{sent or (grants[-1] if grants else '')} key={key}"
    return {"error": "invalid_request", "error_description": described}


# --------------------------------------------------------------------------------------------------
# The raw MCP stream


class RawServer:
    """A server subprocess spoken to in raw JSON-RPC, so every byte of stdout is seen."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "searchdesk_server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=REPO,
        )
        self.stdout = bytearray()
        self.stderr = bytearray()
        self._lines: list[bytes] = []
        self._cond = threading.Condition()
        self._threads = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self.stdout, True), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr, False), daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        self._id = 0

    def _pump(self, stream: Any, into: bytearray, lines: bool) -> None:
        for line in iter(stream.readline, b""):
            with self._cond:
                into.extend(line)
                if lines:
                    self._lines.append(line)
                self._cond.notify_all()

    def send(self, method: str, params: dict[str, Any] | None = None, *, notify: bool = False) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if not notify:
            self._id += 1
            message["id"] = self._id
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        if notify:
            return None
        deadline = time.monotonic() + 60
        with self._cond:
            while True:
                for line in self._lines:
                    doc = json.loads(line)
                    if doc.get("id") == self._id:
                        return doc
                left = deadline - time.monotonic()
                assert left > 0, f"no answer to {method}"
                self._cond.wait(left)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        for thread in self._threads:
            thread.join(5)


def test_the_raw_mcp_stream_and_stderr_hold_no_secret(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path
) -> None:
    witness.expect("stdout", "stderr", "/proc/<pid>/environ", "tool results")
    env = {**base_env(fake, tmp_path), **planted.oauth_env(), "MCP_DIAGNOSTICS": "true", "GSC_SITE_URL": WWW}
    server = RawServer(env)
    try:
        init = server.send(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
        )
        assert "result" in init, init
        server.send("notifications/initialized", notify=True)
        assert len(server.send("tools/list")["result"]["tools"]) > 20
        for pid in tree(server.proc.pid):
            assert witness.saw_environ(pid, "raw server")
        calls = [
            ("list_sites", {}),
            ("describe_connection", {}),
            ("query_search_analytics", {"dimensions": ["query"], "row_limit": 5}),
            ("get_site", {"site": "not a property"}),
        ]
        for name, args in calls:
            answer = server.send("tools/call", {"name": name, "arguments": args})
            assert "result" in answer, answer
        token = next(e.token for e in fake.log if e.token)
        fake.fail(SITES, status=400, body=echo_token(token), times=1)
        echoed = server.send("tools/call", {"name": "list_sites", "arguments": {}})["result"]
        assert echoed["isError"] and "Google said" in echoed["content"][0]["text"]
        fake.revoke_refresh_token()
        fake.revoke_tokens()
        revoked = server.send("tools/call", {"name": "list_sites", "arguments": {}})["result"]
        assert revoked["isError"] and "sign in again" in revoked["content"][0]["text"]
    finally:
        server.close()
    witness.saw("stdout", bytes(server.stdout), "raw MCP stream")
    witness.saw("stderr", bytes(server.stderr), "raw server")
    assert server.stdout.count(b"\n") >= 8 and server.stderr


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["GSC_SERVICE_ACCOUNT_KEY", "GSC_SERVICE_ACCOUNT_KEY_FILE", "ADC authorized_user"])
async def test_every_way_of_giving_credentials_keeps_them_in(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path, how: str
) -> None:
    if how == "GSC_SERVICE_ACCOUNT_KEY":
        env = planted.service_account_env(fake)
    elif how == "GSC_SERVICE_ACCOUNT_KEY_FILE":
        env = {"GSC_SERVICE_ACCOUNT_KEY_FILE": str(fake.service_account_file(tmp_path / "key.json"))}
    else:
        adc = tmp_path / "adc.json"
        adc.write_text(json.dumps({"type": "authorized_user", **fake.oauth_info}), encoding="utf-8")
        env = {"GOOGLE_APPLICATION_CREDENTIALS": str(adc)}
    async with serve(fake, witness, tmp_path / "home", env, mode="2026-07-28") as served:
        ok = await served.client.call_tool("list_sites", {})
        witness.saw_result(ok, how)
        assert not ok.is_error, text_of(ok)
        token = next(e.token for e in fake.log if e.token)
        fake.fail(SITES, status=400, body=echo_token(token), times=1)
        echoed = await served.client.call_tool("list_sites", {})
        witness.saw_result(echoed, how)
        assert echoed.is_error and "Google said" in text_of(echoed)
        fake.fail(r"oauth2\.googleapis\.com/token", status=400, body=echo_grant(fake), times=3)
        fake.revoke_tokens()
        refused = await served.client.call_tool("get_site", {"site": WWW})
        witness.saw_result(refused, how)
        assert refused.is_error


@pytest.mark.parametrize(
    "case",
    ["partial trio", "key not JSON", "key with a foreign token_uri", "empty secret", "ADC of another kind"],
)
def test_exit_messages_name_variables_never_values(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path, case: str
) -> None:
    info = planted.service_account_info(fake)
    env = base_env(fake, tmp_path)
    if case == "partial trio":
        env |= {"GSC_CLIENT_SECRET": planted.client_secret, "GSC_REFRESH_TOKEN": planted.refresh_token}
    elif case == "key not JSON":
        env |= {"GSC_SERVICE_ACCOUNT_KEY": f"{planted.client_secret}:{info['private_key']}"}
    elif case == "key with a foreign token_uri":
        env |= {"GSC_SERVICE_ACCOUNT_KEY": json.dumps({**info, "token_uri": "https://evil.example.net/token"})}
    elif case == "empty secret":
        env |= {**planted.oauth_env(), "GSC_CLIENT_SECRET": " "}
    else:
        adc = tmp_path / "adc.json"
        adc.write_text(json.dumps({"type": "external_account", "secret": planted.client_secret}), encoding="utf-8")
        env |= {"GOOGLE_APPLICATION_CREDENTIALS": str(adc)}
    done = subprocess.run(
        [sys.executable, "-m", "searchdesk_server"], env=env, cwd=REPO, capture_output=True, timeout=60, check=False
    )
    witness.saw("stdout", done.stdout, f"exit: {case}")
    witness.saw("stderr", done.stderr, f"exit: {case}")
    assert done.returncode == 1 and done.stdout == b"", (done.returncode, done.stdout[:200])
    assert done.stderr.startswith(b"searchdesk-server: ")


@pytest.mark.anyio
async def test_token_errors_raised_in_process_hold_no_secret(
    fake: FakeGoogle, planted: Planted, witness: Witness
) -> None:
    """The exception messages themselves, before any tool turns them into text."""
    from searchdesk_server.credential_setting import Credential
    from searchdesk_server.google.credentials import token_source
    from searchdesk_server.google.errors import GoogleError

    witness.expect("exception messages")
    transport = fake.transport()
    creds = [
        Credential("oauth", "GSC_CLIENT_ID/GSC_CLIENT_SECRET/GSC_REFRESH_TOKEN", fake.oauth_info),
        Credential("service_account", "GSC_SERVICE_ACCOUNT_KEY", planted.service_account_info(fake)),
    ]
    grant = f"grant_type=refresh_token&client_secret={planted.client_secret}&refresh_token={planted.refresh_token}"
    for status in (400, 401, 500):
        for cred in creds:
            sent = grant if cred.kind == "oauth" else "grant_type=jwt-bearer&assertion=eyJhbGciOi"  # no secret
            fake.fail(r"oauth2\.googleapis\.com/token", status=status, body=echo_grant(fake, sent), times=3)
            with pytest.raises(GoogleError) as caught:
                await token_source(cred, transport=transport).token(["https://www.googleapis.com/auth/webmasters"])
            witness.saw_exception(caught.value, f"token endpoint {status}")
            witness.saw("exception messages", repr(caught.value.args), "token error args")
            fake.clear_faults()


def has_socket(pid: int) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:") for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


def test_the_self_check_and_its_child_server_hold_no_secret(
    fake: FakeGoogle, planted: Planted, witness: Witness, tmp_path: Path
) -> None:
    witness.expect("stdout", "stderr", "/proc/<pid>/environ")
    env = {**base_env(fake, tmp_path), **planted.oauth_env()}
    check = subprocess.Popen(
        [sys.executable, "-m", "searchdesk_server", "--check"],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    children: set[int] = set()
    while check.poll() is None:  # the child server lives a second or two: look at it while it does
        for pid in tree(check.pid)[1:]:
            # Its event loop's first socket is made after the scrub, so from then on it must be clean.
            if pid not in children and has_socket(pid) and witness.saw_environ(pid, "the self-check's server"):
                children.add(pid)
        time.sleep(0.01)
    out, err = check.communicate(timeout=60)
    witness.saw("stdout", out, "--check")
    witness.saw("stderr", err, "--check")
    assert check.returncode == 0, out.decode()[-800:]
    assert b"PASS" in out
    assert children, "the self-check's server was never seen running"
