"""A fake Google that speaks real HTTP(S) on loopback, for the whole test suite.

    fake = FakeGoogle(tmp_path)            # or the `fake_google` fixture (tests/fakegoogle/plugin.py)
    env = {**os.environ, **fake.env}       # a subprocess reaches it via HTTPS_PROXY + SSL_CERT_FILE
    fake.transport()                       # or in-process, as an httpx transport (no TLS)
    fake.fail("sites$", status=503, times=2)
    fake.log                               # every request: method, host, path, query, token
    fake.close()

Backend: the demo's DemoGoogle (with a ``scopes_for_token`` hook when it takes one) behind a token
check and a scope check, plus oauth2.googleapis.com/token, which verifies service-account assertions
against the test key and refresh tokens against the test OAuth client.
"""

from __future__ import annotations

import datetime
import functools
import json
import re
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import httpx

from tests.fakegoogle import bodies
from tests.fakegoogle.backend import (
    TOKEN_URL,
    Backend,
    Fault,
    Framing,
    LoggedRequest,
    OAuthClient,
    TokenRequest,
)
from tests.fakegoogle.certs import GOOGLE_HOSTS, Pki, make_pki, make_service_account_key
from tests.fakegoogle.inspection_quotas import InspectionQuotas
from tests.fakegoogle.quotas import Quotas
from tests.fakegoogle.scopes import ALL_SCOPES
from tests.fakegoogle.servers import ConnectProxy, TLSServer, serve_in_thread
from tests.fakegoogle.standin import default_api
from tests.fakegoogle.transport import FakeTransport

__all__ = [
    "ALL_SCOPES",
    "GOOGLE_HOSTS",
    "FakeGoogle",
    "Fault",
    "InspectionQuotas",
    "LoggedRequest",
    "Quotas",
    "TokenRequest",
    "bodies",
]

SERVICE_ACCOUNT_EMAIL = "searchdesk-test@searchdesk-test.iam.gserviceaccount.com"
PROXY_VARIABLES = ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY")

_service_account_key = functools.cache(make_service_account_key)  # RSA key generation is slow-ish


class FakeGoogle:
    """One running fake: TLS server + CONNECT proxy on loopback, and the in-process transport."""

    def __init__(
        self,
        folder: Path,
        *,
        api: Callable[[httpx.Request], httpx.Response] | None = None,
        today: datetime.date | None = None,
    ) -> None:
        self.folder = folder
        self.pki: Pki = make_pki(folder / "pki")
        private_pem, public_pem = _service_account_key()
        kid = secrets.token_hex(20)
        self.service_account_info: dict[str, str] = {
            "type": "service_account",
            "project_id": "searchdesk-test",
            "private_key_id": kid,
            "private_key": private_pem,
            "client_email": SERVICE_ACCOUNT_EMAIL,
            "client_id": "109876543210987654321",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": TOKEN_URL,
            "universe_domain": "googleapis.com",
        }
        self.oauth_info: dict[str, str] = {
            "client_id": "123456789012-fake.apps.googleusercontent.com",
            "client_secret": "GOCSPX-" + secrets.token_urlsafe(21),
            "refresh_token": "1//0g" + secrets.token_urlsafe(60),
        }
        self.backend = Backend(
            api=lambda request: httpx.Response(500),
            service_account_email=SERVICE_ACCOUNT_EMAIL,
            service_account_kid=kid,
            service_account_public_pem=public_pem,
            oauth=OAuthClient(
                self.oauth_info["client_id"], self.oauth_info["client_secret"], self.oauth_info["refresh_token"]
            ),
        )
        self._today = today
        self._default_api = api is None
        self.backend.api = api or default_api(today, self.backend.scopes_for_token)
        self._stop = threading.Event()
        self._tls = TLSServer(self.backend, self.pki.cert_pem, self.pki.key_pem, self._stop)
        self._proxy = ConnectProxy(self._tls.server_address[1])
        self._threads = [serve_in_thread(self._tls, "fake-google-tls"), serve_in_thread(self._proxy, "fake-proxy")]
        self.proxy_url = f"http://127.0.0.1:{self._proxy.server_address[1]}"
        self.tls_port = int(self._tls.server_address[1])

    # -- reaching it --------------------------------------------------------------------------------

    @property
    def env(self) -> dict[str, str]:
        """Environment for a subprocess (or monkeypatch) to reach the fake as a proxied user would."""
        env = {
            "HTTPS_PROXY": self.proxy_url,
            "https_proxy": self.proxy_url,
            "SSL_CERT_FILE": str(self.pki.ca_pem),
            "NO_PROXY": "",
            "no_proxy": "",
        }
        for name in ("HTTP_PROXY", "ALL_PROXY"):  # an inherited one must not win
            env[name] = ""
            env[name.lower()] = ""
        return env

    def apply_env(self, monkeypatch: Any) -> None:
        """Point this process's new httpx clients at the fake (pytest's monkeypatch undoes it)."""
        for name, value in self.env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)

    def transport(self) -> httpx.AsyncBaseTransport:
        """In-process: the same backend, no TLS, no proxy."""
        return FakeTransport(self.backend, self._stop)

    def service_account_file(self, path: Path | None = None, **overrides: str) -> Path:
        """Write the test service-account key as Google's JSON key file (for GSC_SERVICE_ACCOUNT_KEY_FILE)."""
        path = path or self.folder / "service-account.json"
        path.write_text(json.dumps({**self.service_account_info, **overrides}), encoding="utf-8")
        path.chmod(0o600)
        return path

    # -- scripting ----------------------------------------------------------------------------------

    def fail(
        self,
        pattern: str,
        *,
        status: int = 503,
        body: bytes | str | Mapping[str, Any] = b"",
        headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        times: int = 1,
        method: str | None = None,
        size: int | None = None,
        framing: Framing = "length",
        content_length: int | None = None,
        chunk_size: int = 65536,
        delay: float = 0.0,
        reset_after: int | None = None,
        endless: bool = False,
        redirect_to: str | None = None,
    ) -> Fault:
        """Script the next ``times`` responses for requests whose host+path matches ``pattern`` (re.search).

        ``body`` (a dict is sent as JSON, indented unless the request says prettyPrint=false, as Google
        does) is padded with spaces to ``size`` bytes and streamed lazily;
        ``framing`` "chunked"/"close" sends no Content-Length; ``content_length`` sends a lying one;
        ``delay`` sleeps between chunks (a slow-loris with chunk_size=1, endless=True);
        ``reset_after`` cuts the connection (TCP RST) after that many body bytes;
        ``redirect_to`` answers ``status`` (default 302 then) with that Location.
        """
        header_list = list(headers.items() if isinstance(headers, Mapping) else headers)
        compact = None
        if isinstance(body, Mapping):
            raw = bodies.encode(dict(body))
            compact = bodies.encode(dict(body), pretty=False)
            header_list.append(("content-type", "application/json; charset=UTF-8"))
        else:
            raw = body.encode() if isinstance(body, str) else body
        if endless and framing == "length" and content_length is None:
            framing = "chunked"  # an endless body has no length to announce
        if redirect_to is not None:
            status = status if 300 <= status < 400 else 302
            header_list.append(("location", redirect_to))
        fault = Fault(
            pattern=re.compile(pattern),
            method=method,
            remaining=times,
            status=status,
            headers=header_list,
            body=raw,
            compact=compact,
            size=size,
            framing=framing,
            content_length=content_length,
            chunk_size=chunk_size,
            delay=delay,
            reset_after=reset_after,
            endless=endless,
        )
        return self.backend.add_fault(fault)

    def enforce_quotas(self, quotas: Quotas | None = None) -> Quotas:
        """From now on, Search Analytics answers 429 past Google's published quotas (tests/fakegoogle/
        quotas.py; ``Quotas(minute=0.6)`` runs time 100 times faster). Returns the counters."""
        quotas = quotas or Quotas()
        with self.backend._lock:
            self.backend.quotas = quotas
        return quotas

    def enforce_inspection_quotas(self, quotas: InspectionQuotas | None = None) -> InspectionQuotas:
        """From now on, URL Inspection answers 429 past its per-property quotas (600 a minute, 2,000 a
        day; tests/fakegoogle/inspection_quotas.py). Returns the counters."""
        quotas = quotas or InspectionQuotas()
        with self.backend._lock:
            self.backend.inspection_quotas = quotas
        return quotas

    def clear_faults(self) -> None:
        with self.backend._lock:
            self.backend.faults.clear()

    def reset(self) -> None:
        """Back to how a new fake starts, except the access tokens it issued for its own account, so that
        a server shared by several tests (one per module) keeps its token while each test meets a fresh
        Search Console (the demo's data as at first), no faults, no added accounts (their tokens go with
        them), the default sign-in settings and empty logs. A fake made with its own ``api`` keeps it."""
        with self.backend._lock:
            if self._default_api:
                self.backend.api = default_api(self._today, self.backend.scopes_for_token)
            self.backend.faults.clear()
            self.backend.log.clear()
            self.backend.token_requests.clear()
            self.backend.accounts.clear()
            for token in self.backend.token_accounts:
                self.backend.tokens.pop(token, None)
            self.backend.token_accounts.clear()
            self.backend.service_account_keys.clear()
            self.backend.disabled_services.clear()
            self.backend.quotas = None
            self.backend.inspection_quotas = None
            self.backend.token_lifetime = 3600
            oauth = self.backend.oauth
            self.backend.oauth = OAuthClient(oauth.client_id, oauth.client_secret, oauth.refresh_token)
        with self._proxy.lock:
            self._proxy.connects.clear()

    def mint_token(self, scopes: Iterable[str] = ALL_SCOPES, account: str | None = None) -> str:
        """An access token the fake accepts for ``scopes`` (what the desktop app would hand out), for
        ``account`` (one added with add_account) or, by default, the demo's own account."""
        return self.backend.mint_token(scopes, account)

    def add_account(self, name: str, sites: Mapping[str, str], verified: Iterable[str] = ()) -> None:
        """Another Google account with a Search Console of its own: ``sites`` maps each property it sees
        to its permission level (siteOwner, siteFullUser, siteRestrictedUser, siteUnverifiedUser);
        ``verified`` lists the sites (URL prefixes, or dns://domain) it is a verified owner of. Its
        tokens come from mint_token(account=name), or from the token endpoint for a service account of
        that e-mail (add_service_account)."""
        from searchdesk_server.demo import DemoGoogle
        from searchdesk_server.demo.state import WebResource

        def scopes(token: str) -> set[str]:
            return set(self.backend.scopes_for_token(token) or ())

        api = DemoGoogle(self._today, scopes_for_token=scopes)
        api.state.user = name
        api.state.sites = dict(sites)
        api.state.resources = {
            ident: WebResource(
                ident,
                "INET_DOMAIN" if ident.startswith("dns://") else "SITE",
                ident.removeprefix("dns://"),
                [name],
            )
            for ident in verified
        }
        with self.backend._lock:
            self.backend.accounts[name] = api

    def add_service_account(self, email: str, project_id: str) -> dict[str, str]:
        """Another service account the token endpoint accepts (its tokens act as the account of that
        e-mail when one was added); returns the overrides for service_account_file()."""
        kid = secrets.token_hex(20)
        with self.backend._lock:
            self.backend.service_account_keys[kid] = (email, self.backend.service_account_public_pem)
        return {"client_email": email, "private_key_id": kid, "project_id": project_id}

    def account_of(self, token: str | None) -> str:
        """Whose access token it is: an added account's name, else the demo's own account."""
        from searchdesk_server.demo import DEMO_ACCOUNT

        return self.backend.account_of(token) or DEMO_ACCOUNT

    def revoke_tokens(self) -> None:
        self.backend.revoke_tokens()

    def revoke_refresh_token(self) -> None:
        """The OAuth refresh token now gets invalid_grant (the user revoked access)."""
        self.backend.oauth.revoked = True

    def grant_scopes(self, scopes: Iterable[str]) -> None:
        """The scopes the user consented to for the OAuth client."""
        self.backend.oauth.granted = frozenset(scopes)

    def disable_api(self, service: str) -> None:
        """e.g. "indexing.googleapis.com": calls get Google's SERVICE_DISABLED 403."""
        self.backend.disabled_services.add(service)

    @property
    def token_lifetime(self) -> int:
        return self.backend.token_lifetime

    @token_lifetime.setter
    def token_lifetime(self, seconds: int) -> None:
        self.backend.token_lifetime = seconds

    # -- what happened ------------------------------------------------------------------------------

    @property
    def log(self) -> list[LoggedRequest]:
        with self.backend._lock:
            return list(self.backend.log)

    @property
    def token_requests(self) -> list[TokenRequest]:
        with self.backend._lock:
            return list(self.backend.token_requests)

    @property
    def proxy_log(self) -> list[str]:
        """Every CONNECT target ("host:443") the proxy was asked for, Google's or not."""
        with self._proxy.lock:
            return list(self._proxy.connects)

    def api_requests(self) -> list[LoggedRequest]:
        """Requests to the three API hosts (not the token endpoint)."""
        return [entry for entry in self.log if entry.host != "oauth2.googleapis.com"]

    def tokens_seen_by_host(self) -> dict[str, set[str]]:
        seen: dict[str, set[str]] = {}
        for entry in self.log:
            if entry.token is not None:
                seen.setdefault(entry.host, set()).add(entry.token)
        return seen

    def close(self) -> None:
        self._stop.set()
        self._proxy.stop.set()
        self._proxy.shutdown()
        self._tls.shutdown()
        self._tls.close_connections()
        self._proxy.server_close()
        self._tls.server_close()
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> FakeGoogle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
