"""Where Claude Desktop keeps its settings file on each system, and a path as a person reads it.

Pure path logic first (``candidate_paths``, ``choose``: every system's rules, testable on any system),
then the lookups on this machine (``locate``, ``every_location``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

CONFIG_NAME = "claude_desktop_config.json"


def candidate_paths(
    system: str,
    env: Mapping[str, str],
    home: PurePath,
    list_dir: Callable[[PurePath], Sequence[str]] = lambda p: (),
) -> list[PurePath]:
    """Every place Claude Desktop may read its settings from, most specific first (pure path logic).

    ``system`` is ``sys.platform``. On Windows the Store (MSIX) build keeps a private copy of
    ``%APPDATA%`` under its package folder; when that copy exists it is what Claude reads.
    """
    if system == "win32":
        home_w = PureWindowsPath(str(home))
        appdata = PureWindowsPath(env.get("APPDATA") or str(home_w / "AppData" / "Roaming"))
        local = PureWindowsPath(env.get("LOCALAPPDATA") or str(home_w / "AppData" / "Local"))
        found: list[PurePath] = []
        packages = local / "Packages"
        for name in sorted(list_dir(packages)):
            if name.lower().startswith("claude_"):
                found.append(packages / name / "LocalCache" / "Roaming" / "Claude" / CONFIG_NAME)
        found.append(appdata / "Claude" / CONFIG_NAME)
        return found
    home_p = PurePosixPath(str(home))
    if system == "darwin":
        return [home_p / "Library" / "Application Support" / "Claude" / CONFIG_NAME]
    config_home = env.get("XDG_CONFIG_HOME") or str(home_p / ".config")
    return [PurePosixPath(config_home) / "Claude" / CONFIG_NAME]


def choose(candidates: Sequence[PurePath], exists: Callable[[PurePath], bool]) -> PurePath:
    """An existing file first, then a file in an existing Claude folder, then the platform default."""
    for path in candidates:
        if exists(path):
            return path
    for path in candidates:
        if exists(path.parent):
            return path
    return candidates[-1]


def _list_dir(path: PurePath) -> Sequence[str]:
    try:
        return os.listdir(path)
    except OSError:
        return ()


def locate(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """The settings file for this machine (it may not exist yet)."""
    chosen = choose(
        candidate_paths(sys.platform, os.environ if env is None else env, home or Path.home(), _list_dir),
        lambda p: os.path.exists(p),
    )
    return Path(str(chosen))


def every_location(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """Every settings file that exists on this machine (uninstalling cleans all of them)."""
    found = candidate_paths(sys.platform, os.environ if env is None else env, home or Path.home(), _list_dir)
    return [Path(str(p)) for p in found if os.path.isfile(p)]


def claude_installed(path: Path) -> bool:
    return path.parent.is_dir()


def display_path(path: PurePath, home: PurePath | None = None, system: str | None = None) -> str:
    """A path as a person reads it: ``~/.config/Claude/...`` rather than ``/home/alex/.config/...``.

    Only on macOS and Linux, where ``~`` is the everyday spelling; Windows shows the full path.
    ``system`` is ``sys.platform`` unless given (the setup pages' pictures spell each system's paths).
    """
    if (system or sys.platform) == "win32":
        return str(path)
    home = home or Path.home()
    try:
        rest = path.relative_to(home)
    except ValueError:
        return str(path)
    return "~" if str(rest) == "." else f"~/{rest.as_posix()}"
