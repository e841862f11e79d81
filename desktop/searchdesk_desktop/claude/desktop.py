"""Claude Desktop as the app deals with it: its settings file and our entry there, the extension this
build ships, and the evidence that Claude Desktop is on this computer.

Apart from the Core (which adds the socket, the signals and the order of the steps) so that one object
holds where Claude Desktop's file is, which server our entry starts and what this session did with the
extension; and what the settings remember of Claude Desktop (the folder before SearchDesk wrote there,
the last connection it made) is read and written here alone. No Qt here.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from . import config_file as cc
from . import extension
from . import found as claude_found
from .state import ClaudeStatus, read_status

log = logging.getLogger(__name__)


class Remembered(Protocol):
    """What the app's settings remember of Claude Desktop (``AppSettings``' fields of these names)."""

    claude_seen_at: float
    claude_seen_version: str
    claude_folder_before: str


class ClaudeDesktop:
    """Our entry in Claude Desktop's settings file at ``path``, starting ``server``; the ``bundle`` (the
    .mcpb this build ships, None in development and on Linux) opened with ``open_file``; Claude Desktop
    looked for with ``find`` (a test's computer passes its own home)."""

    def __init__(
        self,
        settings: Remembered,
        save: Callable[[], None],
        *,
        demo: bool,
        path: Path | None,
        server: cc.ServerCommand | None,
        bundle: Path | None,
        open_file: Callable[[Path], bool],
        find: Callable[..., claude_found.Found | None],
    ) -> None:
        self._settings = settings
        self._save = save
        self.demo = demo
        self.path = path or cc.locate()
        self.server = server or cc.server_command()
        self.bundle = bundle if bundle is not None else extension.find_bundle()
        self._open_file = open_file
        self._find = find
        self.bundle_opened = False  # this session handed the .mcpb to Claude Desktop

    def started_by(self, name: str, version: str) -> bool:
        """A server said who started it: only Claude Desktop's own name counts for step 3 (the check's
        servers name themselves otherwise); remembered across restarts. Whether it counted."""
        if name.strip().casefold() != claude_found.CLAUDE_DESKTOP_CLIENT:
            return False
        self._settings.claude_seen_at = time.time()
        self._settings.claude_seen_version = version
        self._save()
        return True

    def seen(self) -> tuple[float, str] | None:
        """When a server Claude Desktop started last connected to this app, and the version it gave."""
        at = self._settings.claude_seen_at
        return (at, self._settings.claude_seen_version) if at > 0 else None

    def note_folder(self) -> None:
        """Remember, before SearchDesk first writes there, whether Claude Desktop's settings folder exists."""
        if not self._settings.claude_folder_before:
            self._settings.claude_folder_before = "yes" if self.path.parent.is_dir() else "no"
            self._save()

    def evidence(self) -> claude_found.Found | None:
        """The evidence that Claude Desktop is on this computer (found.py); None: step 2 is not green."""
        predated = self._settings.claude_folder_before == "yes"
        return self._find(settings_predated=predated, connected=self.seen() is not None)

    def status(self, socket: str, connected: int) -> ClaudeStatus:
        """What Claude Desktop holds of SearchDesk now (our entry against this server and ``socket``)."""
        status = read_status(self.path, self.server, socket, connected=connected, demo=self.demo)
        if status.check.entry is None and not self._settings.claude_folder_before:
            self.note_folder()  # nothing of ours there yet: what is there is Claude Desktop's
        return status

    def add_method(self) -> extension.Method:
        return extension.choose_method(self.bundle, demo=self.demo)

    def open_extension(self) -> bool:
        """Hand the .mcpb to Claude Desktop (its install dialog takes over); False: use the settings file."""
        if self.bundle is None:
            return False
        self.bundle_opened = extension.open_bundle(self.bundle, self._open_file)
        return self.bundle_opened

    def add(self, settings: cc.ServerSettings, *, allow_demo: bool, replace_real: bool) -> cc.Change:
        """Write this app's own entry: this server, and ``settings`` (this mode's, this socket)."""
        self.note_folder()
        change = cc.add(self.path, self.server, settings, allow_demo=allow_demo, replace_real=replace_real)
        log.info("Claude Desktop entry %s", "written" if change.changed else "already up to date")
        return change
