"""Secrets do not stay readable: not in /proc/<pid>/environ of the running server, not in a child."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.stdio import REPO, server_env

from .test_config import PLANTED, PRIVATE_KEY, REFRESH, SA, SECRET

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")

CASES = {
    "oauth": {
        "GSC_CLIENT_ID": "cid.apps.googleusercontent.com",
        "GSC_CLIENT_SECRET": SECRET,
        "GSC_REFRESH_TOKEN": REFRESH,
    },
    "service_account": {"GSC_SERVICE_ACCOUNT_KEY": json.dumps(SA)},
}


@pytest.mark.parametrize("kind", list(CASES))
def test_running_server_environ_holds_no_secret(kind: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "searchdesk_server"],
        env=server_env(CASES[kind]),
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()  # the start-up line: scrubbing is done by then
        assert line.startswith("searchdesk-server: credentials:"), line
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes()
        assert b"SEARCHDESK_DEMO_TODAY=" in environ  # the block is readable and intact otherwise
        for secret in (*PLANTED, PRIVATE_KEY.splitlines()[1]):
            assert secret.encode() not in environ
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_children_inherit_no_secret() -> None:
    code = (
        "import subprocess, sys; from searchdesk_server.credential_setting import scrub_secrets; scrub_secrets();"
        "sys.stdout.write(subprocess.run(['cat', '/proc/self/environ'], capture_output=True, text=True).stdout)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=server_env(CASES["oauth"]),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    assert "SEARCHDESK_DEMO_TODAY" in out.stdout
    for secret in PLANTED:
        assert secret not in out.stdout
    assert "GSC_CLIENT_ID" not in out.stdout
