"""Google's OAuth 2.0 grants, written once for both programs.

The server's credentials (a service-account key, a refresh token) and the desktop app's sign-in,
refresh and revoke all build their forms, check Google's answers and clamp token lifetimes here, and
all of them send through the hardened client (`google/wire.py`, `google/attempts.py`): Google's hosts
only, no redirects, byte ceilings, secrets redacted from anything Google echoes. "Does what the person granted cover
what this call needs" is answered here too, so it has one answer on both sides of the agent socket.
Two facts are the catalogue's, because the server's start-up path reads them and must not import
this package: which scope implies which, and the token address. docs/architecture.md places this
module among the others.

The hardened client and google-auth are imported when a grant is actually made, so the desktop app
pays for them only when it first talks to Google.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from ..scopes import SCOPE_IMPLIES
from ..scopes import TOKEN_URL as TOKEN_URL  # written there: the start-up path checks keys against it
from . import jsonbody
from .errors import ErrorKind, GoogleError, explain_token_error

if TYPE_CHECKING:
    import httpx

    from .wire import Answer

__all__ = [
    "AUTH_URL",
    "REVOKE_URL",
    "TOKEN_URL",
    "Grant",
    "assertion_form",
    "code_form",
    "lifetime",
    "missing_scopes",
    "refresh_form",
    "request_grant",
    "revoke",
]

#: Google's consent page: only the person's browser opens it (the desktop's sign-in).
AUTH_URL: Final = "https://accounts.google.com/o/oauth2/v2/auth"
REVOKE_URL: Final = "https://oauth2.googleapis.com/revoke"
JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ASSERTION_LIFETIME: Final = 3600  # seconds; Google's maximum for a service-account assertion
DEFAULT_EXPIRES_IN: Final = 3600
MAX_EXPIRES_IN: Final = 86400


def missing_scopes(granted: Iterable[str], wanted: Iterable[str]) -> list[str]:
    """The wanted scopes that `granted` does not cover, in the order wanted (a broad scope covers its
    narrow twin: `scopes.SCOPE_IMPLIES`, which the start-up path reads to ask for the fewest)."""
    have = set(granted)
    for scope in tuple(have):
        have |= SCOPE_IMPLIES.get(scope, frozenset())
    return [s for s in wanted if s not in have]


def lifetime(value: object) -> float:
    """A token's lifetime in seconds from Google's `expires_in`: bounded, defaulting when absent or odd
    (a huge value would keep a cached token past its real end)."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value[:9])
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return float(min(max(value, 0), MAX_EXPIRES_IN))
    return float(DEFAULT_EXPIRES_IN)


# ---------------------------------------------------------------------------------------------------
# Forms


def refresh_form(
    client_id: str, client_secret: str, refresh_token: str, scopes: Sequence[str] | None = None
) -> dict[str, str]:
    """A refresh-token grant; `scopes` narrows the token (None: everything the sign-in holds)."""
    form = {
        "grant_type": "refresh_token",
        "client_id": client_id,
        "client_secret": client_secret,
        "refresh_token": refresh_token,
    }
    if scopes is not None:
        form["scope"] = " ".join(scopes)
    return form


def code_form(code: str, client_id: str, client_secret: str, redirect_uri: str, verifier: str) -> dict[str, str]:
    """The authorization-code grant that ends an installed app's sign-in (PKCE: the verifier)."""
    return {
        "grant_type": "authorization_code",
        "code": code,
        "client_id": client_id,
        "client_secret": client_secret,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    }


def assertion_form(info: Mapping[str, str], scopes: Sequence[str], *, origin: str = "") -> dict[str, str]:
    """A service-account grant: a JWT signed here with the key (which never leaves this computer),
    addressed to Google's token endpoint whatever the key file says."""
    from google.auth import crypt, jwt

    where = f" ({origin})" if origin else ""
    try:
        signer = crypt.RSASigner.from_service_account_info(info)  # type: ignore[no-untyped-call]
    except Exception:  # any parse failure of a key we must not quote
        raise GoogleError(
            ErrorKind.AUTH,
            f"The service-account key's private_key{where} could not be read. Use the whole JSON key "
            "file as downloaded from the Google Cloud console.",
        ) from None
    now = int(time.time())
    payload = {
        "iss": info["client_email"],
        "scope": " ".join(scopes),
        "aud": TOKEN_URL,
        "iat": now,
        "exp": now + ASSERTION_LIFETIME,
    }
    signed: bytes = jwt.encode(signer, payload)  # type: ignore[no-untyped-call]
    return {"grant_type": JWT_BEARER, "assertion": signed.decode("ascii")}


# ---------------------------------------------------------------------------------------------------
# Google's answer


@dataclass(frozen=True)
class Grant:
    """What the token endpoint granted. `scopes` is None when Google did not say (a refresh)."""

    access_token: str = field(repr=False)
    lifetime: float
    refresh_token: str = field(default="", repr=False)
    scopes: tuple[str, ...] | None = None
    id_token: str = field(default="", repr=False)


def _grant(answer: Answer) -> Grant:
    """Check a 2xx answer field by field; anything without a usable access token is refused."""
    try:
        doc = jsonbody.loads(answer.body)
    except (ValueError, RecursionError):
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("access_token"), str) or not doc["access_token"]:
        raise GoogleError(
            ErrorKind.AUTH,
            "Google's sign-in service answered without an access token. Try again in a few minutes.",
            status=answer.status,
        )

    def text(name: str) -> str:
        value = doc.get(name)
        return value if isinstance(value, str) else ""

    scope = doc.get("scope")
    return Grant(
        access_token=doc["access_token"],
        lifetime=lifetime(doc.get("expires_in")),
        refresh_token=text("refresh_token"),
        scopes=tuple(scope.split()) if isinstance(scope, str) else None,
        id_token=text("id_token"),
    )


def _refusal(answer: Answer, credential: str, origin: str, secrets: Sequence[str]) -> GoogleError:
    return explain_token_error(
        answer.status,
        answer.body,
        answer.content_type,
        credential=credential,
        origin=origin,
        cut=answer.cut,
        known_secrets=secrets,
    )


# ---------------------------------------------------------------------------------------------------
# Sending


async def request_grant(
    form: Mapping[str, str],
    *,
    credential: str,
    origin: str = "",
    secrets: Sequence[str] = (),
    retry: bool = True,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Grant:
    """POST a grant to Google's token endpoint through the hardened client and check the answer.

    A refusal is a GoogleError whose `reason` is Google's own error code (`invalid_grant`: the
    sign-in was revoked or expired). `credential` ("oauth" or "service_account") and `origin` (where
    the credential came from: names, never values) shape its words; `secrets` are redacted from
    anything Google echoes. `retry`: asking for a token changes nothing at Google, so it may be
    repeated, except an authorization code, which is spent by its first use."""
    secrets = (*secrets, *(form[k] for k in ("client_secret", "refresh_token", "assertion", "code") if form.get(k)))
    answer = await _post(
        TOKEN_URL, form, retry=retry, transport=transport, explain=lambda a: _refusal(a, credential, origin, secrets)
    )
    return _grant(answer)


async def revoke(
    token: str, *, seconds: float | None = None, transport: httpx.AsyncBaseTransport | None = None
) -> bool:
    """Ask Google to revoke a token (a refresh token revokes the whole grant). Best effort: True when
    Google confirmed it; sent once, given up after `seconds` (None: the client's usual limit)."""
    try:
        await _post(
            REVOKE_URL,
            {"token": token},
            retry=False,
            transport=transport,
            explain=lambda a: _refusal(a, "oauth", "", (token,)),
            seconds=seconds,
        )
    except GoogleError:
        return False
    return True


async def _post(
    url: str,
    form: Mapping[str, str],
    *,
    retry: bool,
    transport: httpx.AsyncBaseTransport | None,
    explain: Callable[[Answer], GoogleError],
    seconds: float | None = None,
) -> Answer:
    from dataclasses import replace

    from .attempts import fetch
    from .wire import DEFAULT_POLICY, Limit, new_http_client

    policy = DEFAULT_POLICY if seconds is None else replace(DEFAULT_POLICY, request_timeout=seconds)
    async with new_http_client(transport) as http:

        async def build(_force_refresh: bool) -> httpx.Request:
            return http.build_request("POST", url, data=dict(form))

        return await fetch(http, build, explain=explain, cap=int(Limit.RECORD), retry=retry, policy=policy)
