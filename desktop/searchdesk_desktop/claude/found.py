"""Is Claude Desktop on this computer? The evidence the main window's step 2 ticks on, and nothing less.

A settings folder alone proves nothing once SearchDesk has written its entry there (SearchDesk creates the
folder). So the tick needs one of: the program where its installer puts it; the settings folder as it was
*before* SearchDesk first wrote to it (remembered at that moment); or a server Claude Desktop started that
connected to the app and said so (the additive `client` of `hello`). Pure path logic with the file system
passed in, so each system's places are tested on every system; the macOS and Windows places never ran on
those systems here.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

#: The MCP client name Claude Desktop gives the servers it starts.
CLAUDE_DESKTOP_CLIENT = "claude-ai"
#: The program Linux community builds install, and their desktop entry.
LINUX_PROGRAM = "claude-desktop"


class Evidence(Enum):
    """Why SearchDesk believes Claude Desktop is installed, in the words step 2 uses."""

    PROGRAM = "Claude Desktop is installed"
    SETTINGS = "Claude Desktop's settings were on this computer before SearchDesk added itself"
    CONNECTED = "Claude Desktop started SearchDesk"


@dataclass(frozen=True)
class Found:
    evidence: Evidence
    where: str = ""  # the program's place, when that is the evidence


def program_places(system: str, env: Mapping[str, str], home: PurePath) -> list[PurePath]:
    """Where Claude Desktop's installer puts the program (Linux: its desktop entries; PATH is asked apart)."""
    if system == "darwin":
        home_p = PurePosixPath(str(home))
        return [PurePosixPath("/Applications/Claude.app"), home_p / "Applications" / "Claude.app"]
    if system == "win32":
        home_w = PureWindowsPath(str(home))
        local = PureWindowsPath(env.get("LOCALAPPDATA") or str(home_w / "AppData" / "Local"))
        # The per-user installer's folder; the MSIX package's folder is listed apart (its name has an id).
        return [local / "AnthropicClaude" / "claude.exe", local / "Programs" / "Claude" / "Claude.exe"]
    home_p = PurePosixPath(str(home))
    data_home = PurePosixPath(env.get("XDG_DATA_HOME") or str(home_p / ".local" / "share"))
    dirs = [
        data_home,
        *(PurePosixPath(d) for d in (env.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":") if d),
    ]
    return [d / "applications" / f"{LINUX_PROGRAM}.desktop" for d in dirs]


def msix_packages(
    env: Mapping[str, str], home: PurePath, list_dir: Callable[[PurePath], Sequence[str]]
) -> list[PurePath]:
    """Claude Desktop's MSIX package folders (Windows: `%LOCALAPPDATA%\\Packages\\Claude_<id>`)."""
    local = PureWindowsPath(env.get("LOCALAPPDATA") or str(PureWindowsPath(str(home)) / "AppData" / "Local"))
    packages = local / "Packages"
    return [packages / name for name in sorted(list_dir(packages)) if name.lower().startswith("claude_")]


def find(
    *,
    system: str,
    env: Mapping[str, str],
    home: PurePath,
    exists: Callable[[PurePath], bool],
    list_dir: Callable[[PurePath], Sequence[str]],
    which: Callable[[str], str | None],
    settings_predated: bool,
    connected: bool,
) -> Found | None:
    """The strongest evidence there is, or None: then step 2 is never green."""
    if connected:
        return Found(Evidence.CONNECTED)
    for place in program_places(system, env, home):
        if exists(place):
            return Found(Evidence.PROGRAM, str(place))
    if system == "win32":
        packages = msix_packages(env, home, list_dir)
        if packages:
            return Found(Evidence.PROGRAM, str(packages[0]))
    if system not in ("darwin", "win32"):
        program = which(LINUX_PROGRAM)
        if program:
            return Found(Evidence.PROGRAM, program)
    if settings_predated:
        return Found(Evidence.SETTINGS)
    return None


def _list_dir(path: PurePath) -> Sequence[str]:
    try:
        return os.listdir(path)
    except OSError:
        return ()


def on_this_computer(
    *, settings_predated: bool, connected: bool, home: Path | None = None, env: Mapping[str, str] | None = None
) -> Found | None:
    """`find` on this computer (`home` and `env`: another home's places, for a test's computer)."""
    return find(
        system=sys.platform,
        env=os.environ if env is None else env,
        home=home or Path.home(),
        exists=lambda p: os.path.exists(p),
        list_dir=_list_dir,
        which=shutil.which,
        settings_predated=settings_predated,
        connected=connected,
    )
