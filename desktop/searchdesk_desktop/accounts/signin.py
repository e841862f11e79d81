"""Google sign-in for an installed app: loopback redirect, PKCE (S256), the system browser.

This is the flow google-auth-oauthlib's ``InstalledAppFlow.run_local_server`` runs, written out so
that the UI thread never blocks (``start()`` returns the URL at once and ``wait()`` runs in a worker)
and so that every request to Google is the server's: the grants of ``searchdesk_server.google.grants``
sent through its hardened client (Google's hosts only, no redirects, byte ceilings, the OS trust store
and the user's proxy, secrets redacted). The desktop calls it from worker threads, each request on a
short-lived event loop of its own (``blocking``).

Google's token and revoke addresses are fixed; only the consent page, which just the browser opens,
can be pointed elsewhere (the tests' fake). No environment variable can redirect a sign-in.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import time
import webbrowser
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ParamSpec, TypeVar
from urllib.parse import parse_qs, urlencode, urlsplit

from searchdesk_server.agent.protocol import ErrorCode
from searchdesk_server.deadlines import SIGN_IN_SECONDS
from searchdesk_server.google import grants
from searchdesk_server.google.errors import ErrorKind, GoogleError
from searchdesk_server.variables import Var

from ..refusals import Refusal
from .keystore import ClientKind, SignInRecord

log = logging.getLogger(__name__)

#: Asked for beside the tools' scopes, so the app can say which account is in use.
IDENTITY_SCOPES = ("openid", "email")
CLIENT_FILE_VAR = Var.SEARCHDESK_OAUTH_CLIENT_FILE
#: At the package's top (packaging/spec_common.py OAUTH_CLIENT_DEST), not beside this module.
BUNDLED_CLIENT = Path(__file__).parents[1] / "oauth_client.json"
SIGN_IN_TIMEOUT = SIGN_IN_SECONDS
MAX_KEY_FILE = 64 * 1024


class SignInError(Refusal):
    """Base for this module; ``str()`` is for the person at the screen."""


class NoOAuthClient(SignInError):
    def __init__(self) -> None:
        super().__init__(
            "This copy of SearchDesk has no Google OAuth client built in (a development build). "
            "You can try the demo, use your own OAuth client file (a 'Desktop app' client from Google "
            "Cloud), or use a service-account key file."
        )


class WrongKeyFile(SignInError):
    """The file is readable JSON but not the kind that was asked for; the message says which it is."""

    def __init__(self, found: KeyFileKind, wanted: str) -> None:
        self.found = found
        super().__init__(f"This file is {found.describe()}, not {wanted}.{found.hint()}")


class SignInCancelled(SignInError):
    def __init__(self) -> None:
        super().__init__("Sign-in was cancelled.")


class SignInDenied(SignInError):
    def __init__(self) -> None:
        super().__init__("Google sign-in was not completed: access was not granted in the browser.")


class SignInFailed(SignInError):
    pass


class SignInRevoked(SignInError):
    """Google refused the stored sign-in itself (revoked or expired): only signing in again helps."""

    code = ErrorCode.REFRESH_FAILED

    def __init__(self) -> None:
        super().__init__("Your Google sign-in has expired or was revoked. Sign in with Google again to continue.")


class TokenRequestFailed(SignInError):
    """Google gave no access token this time (the network, Google's trouble, a key it refused); the
    sign-in itself may still be good."""


# --- key files ------------------------------------------------------------------------------


class KeyFileKind(Enum):
    SERVICE_ACCOUNT = "service_account"
    DESKTOP_CLIENT = "installed"
    WEB_CLIENT = "web"
    AUTHORIZED_USER = "authorized_user"
    OTHER_JSON = "other_json"
    NOT_JSON = "not_json"

    def describe(self) -> str:
        return _KEY_FILE_WORDS[self][0]

    def hint(self) -> str:
        return _KEY_FILE_WORDS[self][1]


#: What each kind of file is, and what to do with it instead, in the person's words.
_KEY_FILE_WORDS = {
    KeyFileKind.SERVICE_ACCOUNT: (
        "a service-account key",
        " Choose 'Use a service-account key file' for it instead.",
    ),
    KeyFileKind.DESKTOP_CLIENT: (
        "an OAuth client file (Desktop app)",
        " Choose 'Use my own OAuth client file' for it instead.",
    ),
    KeyFileKind.WEB_CLIENT: (
        "an OAuth client file for a Web application",
        " In Google Cloud, create an OAuth client of type 'Desktop app' and use that.",
    ),
    KeyFileKind.AUTHORIZED_USER: (
        "a saved user sign-in (gcloud 'authorized_user' credentials)",
        " SearchDesk signs in itself; use an OAuth client file instead.",
    ),
    KeyFileKind.OTHER_JSON: ("a JSON file of an unknown kind", ""),
    KeyFileKind.NOT_JSON: ("not a JSON file", ""),
}


def _read_json(path: Path) -> tuple[KeyFileKind, dict[str, Any]]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_KEY_FILE + 1)
    except OSError as exc:
        why = "it is not there any more" if isinstance(exc, FileNotFoundError) else "it may not be yours to open"
        if isinstance(exc, IsADirectoryError):
            why = "it is a folder"
        raise SignInError(f"SearchDesk cannot read that file ({why}): {path}") from None
    if len(raw) > MAX_KEY_FILE:
        return KeyFileKind.NOT_JSON, {}
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError):
        return KeyFileKind.NOT_JSON, {}
    if not isinstance(data, dict):
        return KeyFileKind.OTHER_JSON, {}
    if data.get("type") == "service_account":
        return KeyFileKind.SERVICE_ACCOUNT, data
    if data.get("type") == "authorized_user":
        return KeyFileKind.AUTHORIZED_USER, data
    if isinstance(data.get("installed"), dict):
        return KeyFileKind.DESKTOP_CLIENT, data
    if isinstance(data.get("web"), dict):
        return KeyFileKind.WEB_CLIENT, data
    return KeyFileKind.OTHER_JSON, data


def classify_key_file(path: Path) -> KeyFileKind:
    return _read_json(path)[0]


@dataclass(frozen=True)
class OAuthClient:
    client_id: str
    client_secret: str = field(repr=False)
    kind: ClientKind
    #: An app in Google's "Testing" status: refresh tokens die 7 days after issue.
    testing: bool = False


@dataclass(frozen=True)
class ServiceAccountKey:
    path: Path
    client_email: str
    info: Mapping[str, str] = field(repr=False)


def load_client_file(path: Path, kind: ClientKind = "own") -> OAuthClient:
    """A 'Desktop app' client-secrets file. Its auth_uri/token_uri are ignored: Google's are fixed."""
    found, data = _read_json(path)
    if found is not KeyFileKind.DESKTOP_CLIENT:
        raise WrongKeyFile(found, "an OAuth client file (Desktop app)")
    inner = data["installed"]
    cid, secret = inner.get("client_id"), inner.get("client_secret", "")
    if not isinstance(cid, str) or not cid or not isinstance(secret, str):
        raise SignInError("This OAuth client file has no client_id; download it from Google Cloud again.")
    # Own clients are usually in "Testing"; a packaged file says so explicitly.
    testing = bool(data.get("searchdesk_testing", kind == "own"))
    return OAuthClient(cid, secret, kind, testing)


def load_service_account_file(path: Path) -> ServiceAccountKey:
    found, data = _read_json(path)
    if found is not KeyFileKind.SERVICE_ACCOUNT:
        raise WrongKeyFile(found, "a service-account key")
    email, key = data.get("client_email"), data.get("private_key")
    if not isinstance(email, str) or not email or not isinstance(key, str) or "PRIVATE KEY" not in key:
        raise SignInError(
            "This service-account key is missing its client_email or private_key; "
            "create a new key in Google Cloud and download it again."
        )
    return ServiceAccountKey(path, email, {k: v for k, v in data.items() if isinstance(v, str)})


def packaged_client(env: Mapping[str, str] | None = None, bundled: Path = BUNDLED_CLIENT) -> OAuthClient:
    """The OAuth client the build was configured with, or :class:`NoOAuthClient` in development."""
    env = os.environ if env is None else env
    configured = env.get(CLIENT_FILE_VAR, "").strip()
    if configured:
        return load_client_file(Path(configured), "packaged")
    if bundled.is_file():
        return load_client_file(bundled, "packaged")
    raise NoOAuthClient()


# --- talking to Google -----------------------------------------------------------------------

P = ParamSpec("P")
T = TypeVar("T")

UNREACHABLE = "SearchDesk could not reach Google. Check your internet connection or proxy, then try again."
INTERCEPTED = (
    "Something between this computer and Google answered in Google's place, so SearchDesk did not use "
    "the answer. If you use a company proxy or a network that asks you to sign in, check it, then try again."
)


def blocking(fn: Callable[P, Awaitable[T]], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run one of the grants' coroutines to its end on this thread (a worker's, never the Qt thread's,
    whose loop is running): an event loop of its own for the one request."""
    import anyio

    return anyio.run(functools.partial(fn, *args, **kwargs))


def google_failure(err: GoogleError, refused: str) -> str:
    """What a failed grant means for the person: ``refused`` when Google said no, our own words when
    Google could not be reached or something else answered in its place. Google's status goes to the
    log, not to the person."""
    if err.kind is ErrorKind.NETWORK:
        return UNREACHABLE
    if err.kind in (ErrorKind.REDIRECT, ErrorKind.TOO_LARGE) or (err.status is None and err.kind is ErrorKind.SERVER):
        return INTERCEPTED
    if err.status is None:  # refused before anything was sent (a key that cannot be read): it says why
        return err.summary
    log.warning("Google refused a grant: status %s, reason %s", err.status, err.reason or "none given")
    return refused


def email_from_id_token(id_token: str) -> str:
    """The ``email`` claim. Signature not checked: the token came straight from Google's token
    endpoint over TLS (OpenID Connect Core 3.1.3.7), and it only labels the account in the UI."""
    try:
        payload = id_token.split(".")[1]
        data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        email = data.get("email", "")
        return email if isinstance(email, str) else ""
    except (IndexError, ValueError):
        return ""


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(64)[:96]
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


# --- the loopback sign-in -------------------------------------------------------------------

DONE_PAGE = (
    "<!doctype html><meta charset=utf-8><title>SearchDesk</title>"
    "<body style='font-family:sans-serif;margin:3em'><h1>{title}</h1><p>{text}</p></body>"
)


@dataclass
class _Redirect:
    code: str = ""
    error: str = ""


class LoopbackSignIn:
    """One sign-in attempt. ``start()`` opens the browser; ``wait()`` returns the record to store."""

    def __init__(
        self,
        client: OAuthClient,
        scopes: Sequence[str],
        *,
        open_browser: Callable[[str], object] = webbrowser.open,
        auth_uri: str = grants.AUTH_URL,
    ) -> None:
        self.client = client
        self.scopes = tuple(dict.fromkeys([*scopes, *IDENTITY_SCOPES]))
        self._open_browser = open_browser
        self._auth_uri = auth_uri
        self._state = secrets.token_urlsafe(32)
        self._verifier, self._challenge = pkce_pair()
        self._done = threading.Event()
        self._result = _Redirect()
        self._server: ThreadingHTTPServer | None = None
        self.redirect_uri = ""

    def start(self) -> str:
        """Listen on a loopback port, open the browser at Google's consent page, return its URL."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        port = self._server.server_address[1]
        self.redirect_uri = f"http://127.0.0.1:{port}/"
        server = self._server
        threading.Thread(
            target=lambda: server.serve_forever(poll_interval=0.1), name="signin-loopback", daemon=True
        ).start()
        url = (
            self._auth_uri
            + "?"
            + urlencode(
                {
                    "response_type": "code",
                    "client_id": self.client.client_id,
                    "redirect_uri": self.redirect_uri,
                    "scope": " ".join(self.scopes),
                    "state": self._state,
                    "code_challenge": self._challenge,
                    "code_challenge_method": "S256",
                    "access_type": "offline",
                    "prompt": "select_account consent",  # adding a second account: Google lets the person choose
                }
            )
        )
        self._open_browser(url)
        return url

    def cancel(self) -> None:
        self._result = _Redirect(error="cancelled")
        self._done.set()

    def wait(self, timeout: float = SIGN_IN_TIMEOUT) -> SignInRecord:
        try:
            if not self._done.wait(timeout):
                raise SignInFailed("Sign-in timed out: the browser did not come back to SearchDesk. Try again.")
            if self._result.error == "cancelled":
                raise SignInCancelled()
            if self._result.error:
                raise (
                    SignInDenied()
                    if self._result.error == "access_denied"
                    else SignInFailed("Google did not complete the sign-in. Try again.")
                )
            return self._exchange(self._result.code)
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None

            def stop() -> None:
                server.shutdown()
                server.server_close()

            threading.Thread(target=stop, daemon=True).start()

    def _exchange(self, code: str) -> SignInRecord:
        refused = (
            "Google refused to finish the sign-in. Try again; if it keeps failing, "
            "remove SearchDesk at myaccount.google.com/permissions and sign in once more."
        )
        client = self.client
        form = grants.code_form(code, client.client_id, client.client_secret, self.redirect_uri, self._verifier)
        try:
            # A code is spent by its first use: never resent.
            grant = blocking(grants.request_grant, form, credential="oauth", secrets=(self._verifier,), retry=False)
        except GoogleError as err:
            raise SignInFailed(google_failure(err, refused)) from None
        if not grant.refresh_token:
            raise SignInFailed(refused.format(status=200))
        return SignInRecord(
            refresh_token=grant.refresh_token,
            account=email_from_id_token(grant.id_token),
            client_kind=self.client.kind,
            client_id=self.client.client_id,
            client_secret=self.client.client_secret if self.client.kind == "own" else "",
            scopes=tuple(s for s in grant.scopes or () if s not in IDENTITY_SCOPES and s.startswith("https://")),
            issued_at=int(time.time()),
        )

    def _accept(self, query: Mapping[str, list[str]]) -> bool:
        """First valid redirect wins; one with the wrong state is ignored (not ours)."""
        state = query.get("state", [""])[0]
        if self._done.is_set() or not hmac.compare_digest(state.encode(), self._state.encode()):
            return False
        self._result = _Redirect(code=query.get("code", [""])[0], error=query.get("error", [""])[0])
        if not self._result.code and not self._result.error:
            self._result.error = "no_code"
        self._done.set()
        return True

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path != "/":
                    self.send_error(404)
                    return
                accepted = owner._accept(parse_qs(parts.query))
                ok = accepted and not owner._result.error
                page = DONE_PAGE.format(
                    title="Signed in" if ok else "Sign-in did not finish",
                    text="You can close this tab and go back to SearchDesk."
                    if ok
                    else "Go back to SearchDesk and try again.",
                ).encode()
                self.send_response(200 if accepted else 400)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, format: str, *args: Any) -> None:  # the query holds the code: no logs
                return

        return Handler


def revoke(token: str, *, seconds: float | None = None) -> bool:
    """Ask Google to revoke a token (refresh tokens revoke the whole grant). Best effort: True if done."""
    return blocking(grants.revoke, token, seconds=seconds)
