"""How a Node.js command-line tool is started on every system: `node` on the JavaScript file its package names.

npm's `node_modules/.bin/<name>` is a shell script on macOS and Linux and, on Windows, a `<name>.cmd` and
a `<name>.ps1` beside an extensionless sh script Windows cannot start at all. A shim needs a shell, and a
.cmd started without one is run by cmd.exe with its own quoting rules. So the build never starts a shim:
it finds the `node` executable by the system's own search rules (PATH, and on Windows PATHEXT, keeping
only real executables) and gives it the entry file named by the package's package.json `bin`.

Both steps are pure functions of what they are given (the rules, the PATH text, which files exist), so the
tests give them Windows' rules on Linux; `Rules.here()` is the running system's.
npm's `bin` field: https://docs.npmjs.com/cli/v10/configuring-npm/package-json#bin
Windows' search order (PATHEXT): https://learn.microsoft.com/en-us/windows-server/administration/windows-commands/path
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

#: What CreateProcess starts by itself; .bat and .cmd need cmd.exe, .ps1 PowerShell, .js a host.
WINDOWS_EXECUTABLES = (".exe", ".com")


class NodeCliError(Exception):
    """A Node.js tool that cannot be started; the message says what to install or fix."""


@dataclass(frozen=True)
class Rules:
    """A system's rules for finding a program: its path type, PATH separator and, on Windows, PATHEXT."""

    windows: bool
    pathext: tuple[str, ...] = ()

    @property
    def pathsep(self) -> str:
        return ";" if self.windows else ":"

    def path(self, text: str) -> PurePath:
        return PureWindowsPath(text) if self.windows else PurePosixPath(text)

    @classmethod
    def here(cls) -> Rules:
        if sys.platform == "win32":
            return cls.for_windows(os.environ.get("PATHEXT", ""))
        return cls(windows=False)

    @classmethod
    def for_windows(cls, pathext: str) -> Rules:
        """Windows' rules; PATHEXT as the environment spells it (".COM;.EXE;.BAT;.CMD;...")."""
        exts = tuple(e.strip().lower() for e in (pathext or ".COM;.EXE;.BAT;.CMD").split(";") if e.strip())
        return cls(windows=True, pathext=exts)


def find_executable(name: str, search_path: str, rules: Rules, is_file: Callable[[str], bool]) -> str | None:
    """The first `name` on `search_path` the system can start without a shell, or None.

    On Windows each folder is tried with PATHEXT's extensions in its order, keeping only real executables
    (a `node.cmd` or `node.ps1` shim earlier on PATH is passed over, as is the extensionless sh script
    npm writes); a folder may be quoted and may hold spaces. Elsewhere the plain name is tried; whether it
    may be executed is left to `is_file`'s caller (shutil.which checks the mode bit).
    """
    for raw in search_path.split(rules.pathsep):
        folder = raw.strip().strip('"')
        if not folder:
            continue
        if rules.windows:
            for ext in rules.pathext:
                if ext not in WINDOWS_EXECUTABLES:
                    continue
                candidate = str(rules.path(folder) / f"{name}{ext}")
                if is_file(candidate):
                    return candidate
        else:
            candidate = str(rules.path(folder) / name)
            if is_file(candidate):
                return candidate
    return None


def entry_point(package_json: Mapping[str, object], package_dir: PurePath, command: str) -> PurePath:
    """The JavaScript file package.json's `bin` names for `command` (a string `bin` is the package's name)."""
    bins = package_json.get("bin")
    if isinstance(bins, str):
        relative = bins if str(package_json.get("name", "")).split("/")[-1] == command else None
    elif isinstance(bins, Mapping):
        relative = bins.get(command)
    else:
        relative = None
    if not isinstance(relative, str) or not relative:
        raise NodeCliError(f"{package_json.get('name')}'s package.json names no command {command!r} in its bin.")
    return package_dir / type(package_dir)(relative.replace("\\", "/"))


def command(
    package_json: Mapping[str, object],
    package_dir: PurePath,
    name: str,
    search_path: str,
    rules: Rules,
    is_file: Callable[[str], bool],
) -> list[str]:
    """[node, entry.js]: the argv that starts the package's `name` command, with no shell on any system."""
    node = find_executable("node", search_path, rules, is_file)
    if node is None:
        raise NodeCliError("node was not found on PATH: install Node.js 18 or later (it brings npm).")
    return [node, str(entry_point(package_json, package_dir, name))]


def command_here(package_dir: Path, name: str) -> list[str]:
    """`command` for this machine: its PATH, its rules, its files (node must also be executable here)."""
    data = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))
    rules = Rules.here()

    def runnable(path: str) -> bool:
        return os.path.isfile(path) and (rules.windows or os.access(path, os.X_OK))

    return command(data, package_dir, name, os.environ.get("PATH", os.defpath), rules, runnable)
