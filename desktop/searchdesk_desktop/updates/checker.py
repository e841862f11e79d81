"""Telling the person a new SearchDesk is out, in the running app (DESIGN.md, "The update check"; issue 27).

Off until the person turns it on: the main window asks once ("Tell me when a new SearchDesk is
out?"), and Settings has the switch. When on, at most once a day, the app asks this project's release
page for one small signed file (updates/manifest.py says what it holds and why it is read so strictly).
A newer version is shown in the main window and the tray menu with a link to the release page. Nothing
is ever downloaded or installed by the app itself. About says when the check last had a fresh answer
(`status_text`), or that this copy has no check at all (a build without the release key).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import httpx
from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QCheckBox, QFrame, QGroupBox, QLabel, QVBoxLayout

from .. import __version__
from ..settings import AppSettings
from ..widgets import OnceQuestion, bold, panel, plain_label
from .manifest import Found, Outcome, Release, Seen, check_once, due, is_newer, load_key, release_link_ok

log = logging.getLogger(__name__)

KEY_FILE = Path(__file__).parents[1] / "update_public_key.txt"
"""Where a release build puts the project's release key, at the package's top (not beside this
module): packaging/spec_common.py writes it from SEARCHDESK_BUILD_UPDATE_PUBLIC_KEY, which the release
workflow fills from the repository variable UPDATE_PUBLIC_KEY. Not in the repository: a fork or a
development build has none."""


def built_in_key(path: Path = KEY_FILE) -> str:
    """The release key this build carries (raw Ed25519 public key, base64), or "" for none."""
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""


PUBLIC_KEY = built_in_key()
"""The project's release key, or "" in a build made without it; then no manifest can be believed, so
the check sends nothing at all, and About says this copy does not check for updates."""

#: How often the running app looks whether a day has passed since the last check. Hourly, not daily: a
#: computer asleep overnight stops a day-long timer's clock with it (as keeping the record does).
LOOK_EVERY_MS = 3_600_000

QUESTION = "Tell me when a new SearchDesk is out?"
EXPLAINED = (
    "Once a day, SearchDesk would ask this project's release page on GitHub which version is the newest, "
    "and tell you here when there is a newer one. Nothing about you, this computer or your Google account "
    "is sent, and SearchDesk never installs anything by itself. You can change this in Settings."
)
SWITCH = "Tell me when a new SearchDesk is out (asks GitHub once a day)"


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
        seen = Seen(self.settings.update_seen_version, self.settings.update_seen_issued)
        now = self._now

        def work() -> None:
            try:
                found = check_once(key, running, transport, seen=seen, now=now())
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
        s = self.settings
        s.update_last_outcome = found.outcome.value
        believed = found.outcome in (Outcome.NEWER, Outcome.CURRENT) and found.release is not None
        if believed and found.release is not None:  # what replays are measured against from now on
            if not is_newer(s.update_seen_version, found.release.version):
                s.update_seen_version = found.release.version
            s.update_seen_issued = max(s.update_seen_issued, found.release.issued)
            s.update_fresh_at = self._now()
        if found.outcome is Outcome.NEWER and found.release is not None:
            log.info("a newer SearchDesk is out: %s", found.release.version)
            s.newer_version, s.newer_url = found.release.version, found.release.url
        else:
            log.info("update check: %s (%s)", found.outcome.value, found.why or "nothing newer")
        self._save()
        self.changed.emit()

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


NO_CHECK = (
    "This copy does not check for updates: it was built without SearchDesk's release key, which is how it "
    "would know that news of a new version really comes from SearchDesk. New versions are on SearchDesk's "
    "release page."
)
"""About's line in a build without the release key (a development build, or a fork's)."""

#: What About adds when the last check did not bring a fresh answer, by how it ended (Outcome's value).
AFTER = {
    Outcome.STALE.value: "The last answer was out of date, so SearchDesk ignored it.",
    Outcome.REJECTED.value: "The last answer was not signed by SearchDesk, so SearchDesk ignored it.",
    Outcome.UNREACHABLE.value: "The last check could not reach GitHub.",
}


def day(when: float) -> str:
    """A date as a person reads it, on this computer's clock: 4 December 2026."""
    moment = datetime.fromtimestamp(when)
    return f"{moment.day} {moment:%B %Y}"


def status_text(settings: AppSettings, *, offered: bool, running: str = __version__) -> str:
    """About's "Updates" line: whether the check is on, when it last had a fresh answer and what that said.

    A fresh answer is one the release key signed that had not expired and was no older than one already
    believed; a person can tell from the date whether news of a new version could have reached them."""
    if not offered:
        return NO_CHECK
    if not settings.update_check:
        return "Off. You can turn it on in Settings."
    if settings.update_fresh_at <= 0:
        said = "On. No up-to-date answer from SearchDesk's release page yet."
    else:
        newest = is_newer(settings.newer_version, running)
        said = f"On. Last up-to-date answer on {day(settings.update_fresh_at)}: " + (
            f"SearchDesk {settings.newer_version} is out." if newest else "this is the newest version."
        )
    after = AFTER.get(settings.update_last_outcome, "")
    return f"{said} {after}" if after else said


def news_line(release: Release) -> str:
    return f"SearchDesk {release.version} is out: open the release page"


class UpdateQuestion(OnceQuestion):
    """The update check's question, once, in the main window: it stays until answered."""

    def __init__(self) -> None:
        super().__init__("updateQuestion", QUESTION, EXPLAINED, "Yes, tell me")


class UpdateNotice(QFrame):
    """A newer version, in the main window, with the link to its release page."""

    def __init__(self) -> None:
        super().__init__()
        layout = panel(self, "updateNotice")
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
