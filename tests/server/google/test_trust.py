"""Trust and proxies: SSL_CERT_FILE is honoured (through truststore), a wrong CA fails clearly, and
a real subprocess reaches the fake the way a user behind a company proxy would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest

from searchdesk_server.google.errors import ErrorKind, GoogleError
from searchdesk_server.google.http import Api
from tests.fakegoogle import FakeGoogle
from tests.fakegoogle.certs import make_pki

from .conftest import FAST, Clients

pytestmark = pytest.mark.anyio

SITES = "webmasters/v3/sites"
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def proxied(fake_google_env: FakeGoogle) -> Clients:
    return Clients(fake_google_env, "proxy")


async def _refused(clients: Clients) -> GoogleError:
    client = clients.client()
    try:
        with pytest.raises(GoogleError) as caught:
            await client.call(Api.SEARCHCONSOLE, "GET", SITES, retry=True)
    finally:
        await client.aclose()
    return caught.value


async def test_a_ca_from_another_authority_fails_clearly_and_sends_nothing(
    proxied: Clients, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_pki(tmp_path / "other", label="Some other CA")
    monkeypatch.setenv("SSL_CERT_FILE", str(other.ca_pem))
    err = await _refused(proxied)
    assert err.kind is ErrorKind.NETWORK
    assert "not trusted" in str(err) and "SSL_CERT_FILE" in str(err)
    assert proxied.fake.log == []  # the token exchange never got past the handshake
    assert proxied.fake.proxy_log == ["oauth2.googleapis.com:443"]  # and was not retried: it cannot help
    assert err.attempts == 1


async def test_without_ssl_cert_file_the_fake_is_not_trusted(proxied: Clients, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE")
    err = await _refused(proxied)
    assert err.kind is ErrorKind.NETWORK and "not trusted" in str(err)
    assert proxied.fake.log == []


async def test_a_dead_proxy_is_a_network_error_naming_the_variable(
    proxied: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for name in ("HTTPS_PROXY", "https_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
    err = await _refused(proxied)
    assert err.kind is ErrorKind.NETWORK and "HTTPS_PROXY" in str(err)
    assert err.attempts == FAST.attempts


async def test_reading_stops_at_the_ceiling_in_bounded_memory(fake_google: FakeGoogle) -> None:
    clients = Clients(fake_google, "transport")
    fake_google.fail(r"/sites$", status=200, body=b'{"siteEntry": [', size=100 << 20, content_length=10)
    client = clients.client()
    tracemalloc.start()
    try:
        with pytest.raises(GoogleError) as caught:
            await client.call(Api.SEARCHCONSOLE, "GET", SITES)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        await client.aclose()
    assert caught.value.kind is ErrorKind.TOO_LARGE
    assert peak < 8 << 20  # the 1 MB ceiling plus a chunk and bookkeeping, never the 100 MB


async def test_a_compressed_bomb_is_refused_in_bounded_memory(fake_google: FakeGoogle) -> None:
    import gzip

    bomb = gzip.compress(b'{"siteEntry": [' + b" " * (64 << 20), compresslevel=9)
    assert len(bomb) < 1 << 20
    fake_google.fail(r"/sites$", status=200, body=bomb, headers={"content-encoding": "gzip"})
    fake_google.fail(
        r"/sites$", status=200, body=gzip.compress(b'{"siteEntry": []}'), headers={"content-encoding": "gzip"}
    )
    client = Clients(fake_google, "transport").client()
    tracemalloc.start()
    try:
        with pytest.raises(GoogleError) as caught:
            await client.call(Api.SEARCHCONSOLE, "GET", SITES)
        _, peak = tracemalloc.get_traced_memory()
        assert await client.call(Api.SEARCHCONSOLE, "GET", SITES) == {"siteEntry": []}  # gzip itself is fine
    finally:
        tracemalloc.stop()
        await client.aclose()
    assert caught.value.kind is ErrorKind.TOO_LARGE
    assert peak < 8 << 20


SCRIPT = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from searchdesk_server.credential_setting import Credential
    from searchdesk_server.google.credentials import token_source
    from searchdesk_server.google.http import Api, GoogleClient

    async def main():
        info = json.loads(sys.stdin.read())
        tokens = token_source(Credential("service_account", "GSC_SERVICE_ACCOUNT_KEY_FILE", info))
        client = GoogleClient(tokens, ["https://www.googleapis.com/auth/webmasters.readonly"])
        try:
            answer = await client.call(Api.SEARCHCONSOLE, "GET", "webmasters/v3/sites", retry=True)
        finally:
            await client.aclose()
        print(json.dumps(sorted(answer)))

    asyncio.run(main())
    """
)


def test_a_subprocess_reaches_google_through_the_proxy_with_the_ca_from_ssl_cert_file(
    fake_google: FakeGoogle,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update(fake_google.env)
    env["PYTHONPATH"] = str(REPO / "server")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        input=json.dumps(fake_google.service_account_info),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == ["siteEntry"]
    assert fake_google.proxy_log == ["oauth2.googleapis.com:443", "searchconsole.googleapis.com:443"]
    assert [e.via for e in fake_google.log] == ["https", "https"]
