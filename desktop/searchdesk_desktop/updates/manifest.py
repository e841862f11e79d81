"""The update check without Qt: the signed manifest, its signature, comparing versions, and the one fetch.

At most once a day, when the person has turned the check on, the app asks this project's release page
for one small file, `update.json`, which names the newest version and the page to get it from, signed
with the project's Ed25519 key (its public half is `update_check.PUBLIC_KEY`, written into the app by the
release build from the repository variable UPDATE_PUBLIC_KEY).

Why so strict: this is the only request the app makes that does not go to Google, so it says nothing
about the person (no cookies, no version, no system, no account), goes only to GitHub (the release
page and the file host it redirects downloads to, `HOSTS`), and believes only what the key signed and
only while it is fresh: a manifest lapses 30 days after it was signed, and one older than a manifest
already believed (an earlier `issued`, or a lower version) is a replay and refused, so whoever stands
between the app and GitHub can neither hold back news of a new version for ever nor bring back an old
one. A bad signature, a stale manifest, an older or the same version, a link anywhere but the release
page, or no answer at all changes nothing the person is shown except About's line on when the app last
had a fresh answer: none of them is the person's problem.

The manifest (written by packaging/sign_manifest.py, which cannot import this module; the one definition
of its bytes is docs/update-manifest.md):
    {"payload": base64(JSON bytes), "signature": base64(Ed25519 signature of those bytes)}
    payload = {"app": "searchdesk", "expires": "2027-01-03T12:00:00Z", "issued": "2026-12-04T12:00:00Z",
               "url": "<RELEASES>/tag/v1.2.0", "version": "1.2.0"}

The running app's side (the daily timer, the worker thread, the question and the notice) is
updates/checker.py (DESIGN.md, "The update check"; issue 27).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import ssl
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from urllib.parse import urljoin, urlsplit

import httpx
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .. import __version__
from ..project import RELEASES
from ..settings import AppSettings

log = logging.getLogger(__name__)

MANIFEST_URL = f"{RELEASES}/latest/download/update.json"
"""The one address the check asks: GitHub answers it with a redirect to the newest release's file."""

HOSTS = ("github.com", "release-assets.githubusercontent.com")
"""The only hosts the check talks to: the release page's, and the file host GitHub redirects release
downloads to (release-assets.githubusercontent.com since mid-2025; docs/security.md lists both)."""

APP = "searchdesk"
DAY_S = 24 * 3600
MAX_BYTES = 8 * 1024  # the manifest is under 1 kB; anything bigger is not ours
MAX_REDIRECTS = 3  # latest -> the tag's file (github.com) -> the file host
TIMEOUT = httpx.Timeout(10.0, connect=10.0)  # each step; TOTAL_S bounds the whole check
TOTAL_S = 30.0  # a server that drips a byte every few seconds is given up on, not waited for
#: Every header the check sends, besides Host (httpx adds no others to a request built this way).
HEADERS = {"user-agent": "SearchDesk", "accept": "*/*", "accept-encoding": "identity"}
_VERSION = re.compile(r"^\d{1,6}(?:\.\d{1,6}){1,3}$")
_SAFE_PATH = re.compile(r"^[A-Za-z0-9._/-]*$")
#: The manifest's times: UTC, to the second (docs/update-manifest.md).
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
#: The longest a signed manifest may be believed (the signer writes exactly this; a weekly workflow
#: signs the latest release's again, so a lapse means no fresh answer for weeks).
VALID_DAYS = 30


class Outcome(Enum):
    """What one check found. Only NEWER is ever shown; the others are written to the log, in words."""

    NEWER = "newer"
    CURRENT = "current"  # the same version, or an older one: nothing to say
    UNREACHABLE = "unreachable"  # no network, a timeout, a server error, a redirect elsewhere
    REJECTED = "rejected"  # not signed by our key, not our shape, or a link that is not the release page
    STALE = "stale"  # signed by our key, but expired, or older than a manifest already believed (a replay)


@dataclass(frozen=True)
class Release:
    version: str
    url: str
    #: When the manifest naming it was signed, and until when it may be believed (Unix times; 0.0 for a
    #: release remembered in the settings rather than just read).
    issued: float = 0.0
    expires: float = 0.0


@dataclass(frozen=True)
class Seen:
    """What the app has already believed, kept in its settings: a manifest older than this is a replay."""

    version: str = ""
    issued: float = 0.0


@dataclass(frozen=True)
class Found:
    outcome: Outcome
    release: Release | None = None
    why: str = ""  # for the log: never shown


class NotOurs(Exception):
    """The manifest is not one our key signed for this app, or names a page that is not ours."""


class NotFresh(Exception):
    """Our key signed it, but it may not be believed now; the subclass says why (for the log)."""


class Expired(NotFresh):
    """Past its `expires`: a manifest someone kept back, or one the weekly re-signing missed."""


class Replayed(NotFresh):
    """Signed before a manifest the app already believed: an old answer played back."""


class SteppedBack(NotFresh):
    """Names a lower version than one a believed manifest named: a step back to an old release."""


def version_key(text: str) -> tuple[int, ...] | None:
    """1.2.0 -> (1, 2, 0), trailing zeros dropped so 1.2 == 1.2.0; None for anything else."""
    if not isinstance(text, str) or not _VERSION.match(text):
        return None
    parts = [int(p) for p in text.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def is_newer(candidate: str, running: str = __version__) -> bool:
    new, old = version_key(candidate), version_key(running)
    return new is not None and old is not None and new > old


def release_link_ok(url: str) -> bool:
    """True only for this project's release page or a page under it, over HTTPS, said plainly."""
    if not isinstance(url, str) or len(url) > 300:
        return False
    ours, theirs = urlsplit(RELEASES), urlsplit(url)
    if theirs.scheme != "https" or theirs.netloc != ours.netloc or theirs.query or theirs.fragment:
        return False
    path = theirs.path
    if not _SAFE_PATH.match(path) or "/../" in path + "/" or "//" in path:
        return False
    return path == ours.path or path.startswith(ours.path + "/")


def parse_time(text: object) -> float | None:
    """A manifest time (`2026-12-04T12:00:00Z`) as a Unix time; None for anything else."""
    if not isinstance(text, str) or not _TIME.match(text):
        return None
    try:
        return datetime.strptime(text, TIME_FORMAT).replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def load_key(text: str) -> Ed25519PublicKey | None:
    """The release key from its base64 form; None when there is none (or it is not a key)."""
    if not text:
        return None
    try:
        return Ed25519PublicKey.from_public_bytes(base64.b64decode(text, validate=True))
    except (ValueError, binascii.Error):
        log.error("the update check's public key is not an Ed25519 key; the check stays silent")
        return None


def read_manifest(document: bytes, key: Ed25519PublicKey) -> Release:
    """The release the manifest names, once the key's signature over its payload checks; else NotOurs."""
    try:
        outer = json.loads(document)
        payload = base64.b64decode(outer["payload"], validate=True)
        signature = base64.b64decode(outer["signature"], validate=True)
    except (ValueError, TypeError, KeyError, binascii.Error):
        raise NotOurs("not a signed manifest") from None
    try:
        key.verify(signature, payload)
    except InvalidSignature:
        raise NotOurs("the signature does not check with SearchDesk's key") from None
    try:
        body = json.loads(payload)
    except ValueError:
        raise NotOurs("the signed payload is not JSON") from None
    if not isinstance(body, dict) or body.get("app") != APP:
        raise NotOurs("the signed payload is not about SearchDesk")
    version, url = body.get("version"), body.get("url")
    if not isinstance(version, str) or version_key(version) is None:
        raise NotOurs("the signed payload names no version")
    if not isinstance(url, str) or not release_link_ok(url):
        raise NotOurs("the signed payload points somewhere other than the release page")
    issued, expires = parse_time(body.get("issued")), parse_time(body.get("expires"))
    if issued is None or expires is None:
        raise NotOurs("the signed payload says no issued and expires times")
    if not issued < expires <= issued + VALID_DAYS * DAY_S:
        raise NotOurs(f"the signed payload's validity is not between its issue and {VALID_DAYS} days later")
    return Release(version, url, issued, expires)


def check_fresh(release: Release, seen: Seen, now: float) -> None:
    """Raise NotFresh unless the release may be believed now, given what was believed before."""
    if now >= release.expires:
        raise Expired("the manifest has expired")
    if release.issued < seen.issued:
        raise Replayed("the manifest is older than one already believed")
    if is_newer(seen.version, release.version):
        raise SteppedBack(f"the manifest names {release.version}, lower than {seen.version} already seen")


def new_client(transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """One client per check, so nothing (a cookie, a connection) outlives it. The system's trust store
    (which honours SSL_CERT_FILE) and the environment's proxy, as every HTTPS request the app makes."""
    import truststore

    context = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return httpx.Client(
        transport=transport,
        verify=context,
        trust_env=True,
        follow_redirects=False,
        http2=False,
        timeout=TIMEOUT,
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=5.0),
    )


def fetch(client: httpx.Client, url: str = MANIFEST_URL) -> bytes:
    """GET the manifest, following at most MAX_REDIRECTS redirects, each to one of HOSTS over HTTPS.

    Each request is built here, not by the client, so it carries HEADERS and nothing else: no cookie a
    previous answer set, no Referer, no Authorization."""
    deadline = time.monotonic() + TOTAL_S
    for _ in range(MAX_REDIRECTS + 1):
        parts = urlsplit(url)
        if parts.scheme != "https" or parts.hostname not in HOSTS or parts.port not in (None, 443):
            raise httpx.UnsupportedProtocol(f"not a release host: {parts.hostname!r}")
        client.cookies.clear()
        request = httpx.Request("GET", url, headers=HEADERS)
        response = client.send(request, stream=True)
        try:
            if response.is_redirect:
                url = urljoin(url, response.headers.get("location", ""))
                continue
            response.raise_for_status()
            body = b""
            for chunk in response.iter_raw():
                body += chunk
                if len(body) > MAX_BYTES:
                    raise httpx.DecodingError("the manifest is larger than any we publish")
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the manifest took too long")
            return body
        finally:
            response.close()
    raise httpx.TooManyRedirects("too many redirects")


def check_once(
    key: Ed25519PublicKey,
    running: str = __version__,
    transport: httpx.BaseTransport | None = None,
    *,
    seen: Seen = Seen(),
    now: float | None = None,
) -> Found:
    """One check, start to end; never raises (runs on a worker thread). `seen` is what was believed
    before (the settings keep it), `now` the app's clock."""
    try:
        with new_client(transport) as client:
            document = fetch(client)
    except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
        return Found(Outcome.UNREACHABLE, why=type(exc).__name__)
    try:
        release = read_manifest(document, key)
    except NotOurs as exc:
        return Found(Outcome.REJECTED, why=str(exc))
    try:
        check_fresh(release, seen, time.time() if now is None else now)
    except NotFresh as exc:
        return Found(Outcome.STALE, release, why=str(exc))
    if not is_newer(release.version, running):
        return Found(Outcome.CURRENT, release)
    return Found(Outcome.NEWER, release)


def due(settings: AppSettings, now: float) -> bool:
    """On, and a day since the last attempt (or the clock went back before it)."""
    last = settings.update_checked_at
    return settings.update_check and (now - last >= DAY_S or now < last)
