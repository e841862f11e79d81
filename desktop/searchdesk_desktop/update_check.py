"""Telling the person a new SearchDesk is out (DESIGN.md, "The update check"; issue 27).

Off until the person turns it on: the main window asks once ("Tell me when a new SearchDesk is
out?"), and Settings has the switch. When on, at most once a day, the app asks this project's release
page for one small file, `update.json`, which names the newest version and the page to get it from,
signed with the project's Ed25519 key (its public half is `PUBLIC_KEY`, below). A newer version is
shown in the main window and the tray menu with a link to the release page. Nothing is ever
downloaded or installed by the app itself.

Why so strict: this is the only request the app makes that does not go to Google, so it says nothing
about the person (no cookies, no version, no system, no account), goes only to GitHub (the release
page and the file host it redirects downloads to, `HOSTS`), and believes only what the key signed. A
bad signature, an older or the same version, a link anywhere but the release page, or no answer at all
changes nothing and is only written to the log: none of them is the person's problem.

The manifest (written by packaging/sign_manifest.py at release):
    {"payload": base64(JSON bytes), "signature": base64(Ed25519 signature of those bytes)}
    payload = {"app": "searchdesk", "version": "1.2.0", "url": "<RELEASES>/tag/v1.2.0"}
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
import ssl
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urljoin, urlsplit

import httpx
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QCheckBox, QFrame, QGroupBox, QLabel, QPushButton, QVBoxLayout

from . import __version__
from .project import RELEASES
from .settings import AppSettings
from .widgets import FlowLayout, bold, plain_label

log = logging.getLogger(__name__)

MANIFEST_URL = f"{RELEASES}/latest/download/update.json"
"""The one address the check asks: GitHub answers it with a redirect to the newest release's file."""

HOSTS = ("github.com", "release-assets.githubusercontent.com")
"""The only hosts the check talks to: the release page's, and the file host GitHub redirects release
downloads to (release-assets.githubusercontent.com since mid-2025; docs/security.md lists both)."""

PUBLIC_KEY = ""
"""The project's release key (raw Ed25519 public key, base64). Empty until a maintainer makes the key
(`packaging/sign_manifest.py keygen` prints the line to put here); while empty, no manifest can be
believed, so the check sends nothing at all."""

APP = "searchdesk"
DAY_S = 24 * 3600
#: How often the running app looks whether a day has passed since the last check. Hourly, not daily: a
#: computer asleep overnight stops a day-long timer's clock with it (as keeping the record does).
LOOK_EVERY_MS = 3_600_000
MAX_BYTES = 8 * 1024  # the manifest is under 1 kB; anything bigger is not ours
MAX_REDIRECTS = 3  # latest -> the tag's file (github.com) -> the file host
TIMEOUT = httpx.Timeout(10.0, connect=10.0)  # each step; TOTAL_S bounds the whole check
TOTAL_S = 30.0  # a server that drips a byte every few seconds is given up on, not waited for
#: Every header the check sends, besides Host (httpx adds no others to a request built this way).
HEADERS = {"user-agent": "SearchDesk", "accept": "*/*", "accept-encoding": "identity"}
_VERSION = re.compile(r"^\d{1,6}(?:\.\d{1,6}){1,3}$")
_SAFE_PATH = re.compile(r"^[A-Za-z0-9._/-]*$")

QUESTION = "Tell me when a new SearchDesk is out?"
EXPLAINED = (
    "Once a day, SearchDesk would ask this project's release page on GitHub which version is the newest, "
    "and tell you here when there is a newer one. Nothing about you, this computer or your Google account "
    "is sent, and SearchDesk never installs anything by itself. You can change this in Settings."
)
SWITCH = "Tell me when a new SearchDesk is out (asks GitHub once a day)"


class Outcome(Enum):
    """What one check found. Only NEWER is ever shown; the others are written to the log, in words."""

    NEWER = "newer"
    CURRENT = "current"  # the same version, or an older one: nothing to say
    UNREACHABLE = "unreachable"  # no network, a timeout, a server error, a redirect elsewhere
    REJECTED = "rejected"  # not signed by our key, not our shape, or a link that is not the release page


@dataclass(frozen=True)
class Release:
    version: str
    url: str


@dataclass(frozen=True)
class Found:
    outcome: Outcome
    release: Release | None = None
    why: str = ""  # for the log: never shown


class NotOurs(Exception):
    """The manifest is not one our key signed for this app, or names a page that is not ours."""


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
    return Release(version, url)


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
    key: Ed25519PublicKey, running: str = __version__, transport: httpx.BaseTransport | None = None
) -> Found:
    """One check, start to end; never raises (runs on a worker thread)."""
    try:
        with new_client(transport) as client:
            document = fetch(client)
    except (httpx.HTTPError, httpx.InvalidURL, OSError) as exc:
        return Found(Outcome.UNREACHABLE, why=type(exc).__name__)
    try:
        release = read_manifest(document, key)
    except NotOurs as exc:
        return Found(Outcome.REJECTED, why=str(exc))
    if not is_newer(release.version, running):
        return Found(Outcome.CURRENT, release)
    return Found(Outcome.NEWER, release)


def due(settings: AppSettings, now: float) -> bool:
    """On, and a day since the last attempt (or the clock went back before it)."""
    last = settings.update_checked_at
    return settings.update_check and (now - last >= DAY_S or now < last)


class UpdateCheck(QObject):
    """The check in the running app: the daily look, the worker thread, what was found.

    The fetch runs on a thread of its own (as the app's other slow work does) and comes back to the Qt
    thread through a queued signal. What was found is kept in the settings, so a newer version is still
    shown after a restart without asking again that day."""

    changed = Signal()
    _finished = Signal(object)

    def __init__(
        self,
        settings: AppSettings,
        save: Callable[[], None],
        *,
        key: str = PUBLIC_KEY,
        now: Callable[[], float] = time.time,
        running: str = __version__,
        transport: httpx.BaseTransport | None = None,
        enabled: bool = True,
    ) -> None:
        super().__init__()
        self.settings = settings
        self._save = save
        self._key = load_key(key)
        self._now = now
        self.running = running
        self._transport = transport
        #: False in the demo: it never asks and never checks (it is a try-out, with settings of its own).
        self.enabled = enabled
        self.last: Found | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="searchdesk-update")
        self._busy = False
        self._timer = QTimer(self)
        self._timer.setInterval(LOOK_EVERY_MS)
        self._timer.timeout.connect(self.look)
        self._finished.connect(self._done)

    @property
    def can_check(self) -> bool:
        """Whether this build can believe a manifest at all: a build without the release key (a
        development build before a maintainer ran `sign_manifest.py keygen`) would check for nothing,
        so it neither asks the person nor offers the switch."""
        return self.enabled and self._key is not None

    @property
    def should_ask(self) -> bool:
        return self.can_check and not self.settings.update_check_asked

    def start(self) -> None:
        self.look()
        self._timer.start()

    def stop(self, *, wait: bool = False) -> None:
        self._timer.stop()
        self._pool.shutdown(wait=wait, cancel_futures=True)

    def set_on(self, on: bool) -> None:
        """The person's answer (the first-start question, or Settings): saved; on checks now if due."""
        self.settings.update_check = on
        self.settings.update_check_asked = True
        self._save()
        self.changed.emit()
        self.look()

    def look(self) -> None:
        """Check now if it is on and due; the attempt counts, answered or not (at most once a day)."""
        if not self.enabled or self._busy or self._key is None or not due(self.settings, self._now()):
            return
        self.settings.update_checked_at = self._now()
        self._save()
        self._busy = True
        key, running, transport = self._key, self.running, self._transport

        def work() -> None:
            try:
                found = check_once(key, running, transport)
            except Exception:  # a bug, not the network: still finish, so the next day's check runs
                log.exception("the update check failed")
                found = Found(Outcome.UNREACHABLE, why="error")
            self._finished.emit(found)

        try:
            self._pool.submit(work)
        except RuntimeError:  # stopping
            self._busy = False

    @Slot(object)
    def _done(self, found: Found) -> None:
        self._busy = False
        self.last = found
        if found.outcome is Outcome.NEWER and found.release is not None:
            log.info("a newer SearchDesk is out: %s", found.release.version)
            self.settings.newer_version, self.settings.newer_url = found.release.version, found.release.url
            self._save()
            self.changed.emit()
        else:
            log.info("update check: %s (%s)", found.outcome.value, found.why or "nothing newer")

    @property
    def newer(self) -> Release | None:
        """The newer version to tell the person about, if any (checked again here: a settings file is
        editable, and the version running may have caught up)."""
        s = self.settings
        if not self.enabled or not s.update_check or not is_newer(s.newer_version, self.running):
            return None
        if not release_link_ok(s.newer_url):
            return None
        return Release(s.newer_version, s.newer_url)


def news_line(release: Release) -> str:
    return f"SearchDesk {release.version} is out: open the release page"


class UpdateQuestion(QFrame):
    """The question, once, in the main window (not a box over the setup steps): it stays until answered."""

    answered = Signal(bool)

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("updateQuestion")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        layout.addWidget(bold(plain_label(QUESTION, selectable=False), 1.1))
        layout.addWidget(plain_label(EXPLAINED))
        buttons = FlowLayout(align_right=True)
        self.yes_button = QPushButton("Yes, tell me")
        self.no_button = QPushButton("No, thanks")
        for button, answer in ((self.yes_button, True), (self.no_button, False)):
            button.setAutoDefault(False)
            button.clicked.connect(lambda _checked=False, a=answer: self._answer(a))
            buttons.addWidget(button)
        layout.addLayout(buttons)

    def _answer(self, yes: bool) -> None:
        self.hide()
        self.answered.emit(yes)


class UpdateNotice(QFrame):
    """A newer version, in the main window, with the link to its release page."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("updateNotice")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        self.heading = bold(plain_label("", selectable=False), 1.1)
        layout.addWidget(self.heading)
        self.link = QLabel()
        self.link.setOpenExternalLinks(True)
        self.link.setWordWrap(True)
        layout.addWidget(self.link)
        self.url = ""
        self.setVisible(False)

    def show_release(self, release: Release | None) -> None:
        self.url = release.url if release is not None else ""
        if release is not None:
            self.heading.setText(f"SearchDesk {release.version} is out")
            self.link.setText(
                f'<a href="{release.url}">Open the release page</a> to download it. SearchDesk does not '
                "install anything by itself."
            )
        self.setVisible(release is not None)


def settings_box() -> tuple[QGroupBox, QCheckBox]:
    """Settings' switch (the check's only one), and the words that say what it sends."""
    box = QGroupBox("New versions")
    box.setObjectName("updates")
    column = QVBoxLayout(box)
    switch = QCheckBox(SWITCH)
    switch.setObjectName("updateCheck")
    column.addWidget(switch)
    column.addWidget(
        plain_label(
            "It asks for one small file from SearchDesk's release page and sends nothing about you. It never "
            "installs anything.",
            selectable=False,
        )
    )
    return box, switch
