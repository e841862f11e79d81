""" "Add to Claude Desktop" through the SearchDesk extension (``.mcpb``), when the app ships one.

Claude for macOS and Windows installs a ``.mcpb`` with its own dialog when the file is opened, and
then owns the entry (its settings live in Claude: Settings → Extensions). That is the path we prefer:
no file of Claude's is edited. Editing ``claude_desktop_config.json`` stays as the fallback — when
there is no bundle (a development build, Linux: there is no official Claude Desktop for Linux), in
the demo (the bundle has no demo switch, and the demo must be labelled and asked for), or when the
system has nothing to open a ``.mcpb`` with (Claude Desktop not installed).

Where the bundle is: beside the frozen executable (``searchdesk.exe``'s folder on Windows,
``SearchDesk.app/Contents/Resources`` or ``Contents/MacOS`` on macOS), named ``searchdesk.mcpb`` or
as the packaging names its output, ``searchdesk-<version>-<os>-<arch>.mcpb`` for this version.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from .. import __version__

log = logging.getLogger(__name__)

BUNDLE_NAME = "searchdesk.mcpb"
MANIFEST_NAME = "searchdesk"  # packaging/mcpb/manifest.json "name"
EXTENSIONS_FOLDER = "Claude Extensions"
#: Claude Desktop opens ``.mcpb`` files on these systems only.
BUNDLE_PLATFORMS = ("darwin", "win32")
MAX_MANIFEST = 1024 * 1024
MAX_EXTENSIONS = 500

Method = Literal["bundle", "config"]


def bundle_folders(executable: Path, platform: str) -> list[Path]:
    folder = executable.parent
    if platform == "darwin" and folder.name == "MacOS" and folder.parent.name == "Contents":
        return [folder.parent / "Resources", folder]
    return [folder]


def find_bundle(
    executable: Path | None = None,
    *,
    frozen: bool | None = None,
    platform: str | None = None,
    version: str | None = None,
) -> Path | None:
    """The ``.mcpb`` this build ships, or None (development builds and Linux ship none we open)."""
    frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    platform = platform or sys.platform
    if not frozen or platform not in BUNDLE_PLATFORMS:
        return None
    version = version or __version__
    exe = (executable or Path(sys.executable)).absolute()
    for folder in bundle_folders(exe, platform):
        plain = folder / BUNDLE_NAME
        if plain.is_file():
            return plain
        versioned = sorted(p for p in folder.glob(f"searchdesk-{version}-*.mcpb") if p.is_file())
        if versioned:
            return versioned[0]
    return None


def choose_method(bundle: Path | None, *, demo: bool) -> Method:
    """Open the bundle when there is one, except in the demo (which goes in the settings file, labelled)."""
    return "bundle" if bundle is not None and not demo else "config"


def open_with_system(path: Path) -> bool:
    """Hand the file to the OS (Claude Desktop registers ``.mcpb``); False when nothing took it."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    return bool(QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))))


def installed_extension(config_path: Path) -> Path | None:
    """The folder of an installed SearchDesk extension beside Claude's settings file, if any.

    Claude Desktop unpacks extensions under ``<Claude folder>/Claude Extensions/<id>/``. The id's
    spelling is Claude's business, so we look for the manifest that names us instead.
    """
    root = config_path.parent / EXTENSIONS_FOLDER
    try:
        children = sorted(root.iterdir())[:MAX_EXTENSIONS]
    except OSError:
        return None
    for child in children:
        if _manifest(child).get("name") == MANIFEST_NAME:
            return child
    return None


def extension_version(folder: Path) -> str:
    """The version an installed extension's manifest names ('' when it cannot be read).

    The extension runs its own copy of the server; it is this app's only when it is this app's version.
    """
    version = _manifest(folder).get("version")
    return version if isinstance(version, str) else ""


def _manifest(folder: Path) -> dict[str, object]:
    manifest = folder / "manifest.json"
    try:
        if not manifest.is_file() or manifest.stat().st_size > MAX_MANIFEST:
            return {}
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def open_bundle(bundle: Path, opener: Callable[[Path], bool] = open_with_system) -> bool:
    try:
        ok = opener(bundle)
    except Exception as exc:  # a broken file association must not break the button
        log.warning("opening the extension failed: %s", type(exc).__name__)
        return False
    log.info("extension %s", "opened" if ok else "could not be opened")
    return ok
