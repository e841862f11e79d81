"""Start at login, per OS; off by default, one checkbox.

Linux: an XDG autostart ``.desktop`` file; macOS: a LaunchAgent plist; Windows: a value under
HKCU\\...\\Run. Each writes only its own entry and removes only its own entry.

It starts what is running: ticked in the demo, the entry starts the demo (``--demo``), since a person
who ticks it there expects to see again what they are looking at, not their real account. There is
one entry either way (one app runs at a time, so two entries would only race at login); each copy
shows it ticked only when the entry starts that copy, and ticking it there makes it start that copy.
"""

from __future__ import annotations

import os
import plistlib
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

LABEL = "com.searchdesk.app"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
RUN_VALUE = "SearchDesk"


def app_command(*args: str) -> list[str]:
    """How to start this app again: the frozen executable, or this interpreter with ``-m``."""
    if getattr(sys, "frozen", False):
        return [sys.executable, *args]
    return [sys.executable, "-m", "searchdesk_desktop", *args]


#: The argument that starts the demo (``searchdesk --demo``).
DEMO_FLAG = "--demo"


def launch_command(*, demo: bool = False) -> list[str]:
    """How to start this app at login (``--autostart``: quietly, to the tray when there is one), the demo
    when ``demo``."""
    return app_command(*([DEMO_FLAG] if demo else []), "--autostart")


def _windows_command(command: Sequence[str]) -> str:
    """A Run value: every argument in double quotes (a path with spaces stays one argument)."""
    return " ".join(f'"{a}"' for a in command)


def _windows_args(value: str) -> list[str]:
    """A Run value's arguments (quoted as ``_windows_command`` writes them, or bare words)."""
    return [quoted or bare for quoted, bare in re.findall(r'"([^"]*)"|(\S+)', value)]


def _desktop_args(text: str) -> list[str]:
    """The arguments of a ``.desktop`` file's Exec line (its quoting is the shell's double quotes)."""
    for line in text.splitlines():
        if line.startswith("Exec="):
            try:
                return [a.replace("%%", "%") for a in shlex.split(line[len("Exec=") :])]
            except ValueError:
                return line[len("Exec=") :].split()
    return []


def _desktop_exec(command: Sequence[str]) -> str:
    """Quote per the Desktop Entry spec: double quotes, with ", `, $ and \\ escaped inside."""

    def quote(arg: str) -> str:
        if arg and not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`"):
            return arg
        escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`").replace("$", "\\$")
        return f'"{escaped}"'

    return " ".join(quote(a).replace("%", "%%") for a in command)


class Autostart:
    """The start-at-login entry of one copy of the app: the real one, or the demo (``demo``, or a
    ``command`` carrying ``--demo``)."""

    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        demo: bool = False,
        platform: str | None = None,
        home: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.command = list(command or launch_command(demo=demo))
        #: Whether this copy is the demo: its entry starts the demo, and only such an entry is its own.
        self.demo = DEMO_FLAG in self.command
        self.platform = platform or sys.platform
        self.home = home or Path.home()
        self.env = os.environ if env is None else env

    @property
    def path(self) -> Path | None:
        if self.platform == "darwin":
            return self.home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
        if self.platform == "win32":
            return None
        config = Path(self.env.get("XDG_CONFIG_HOME") or self.home / ".config")
        return config / "autostart" / "searchdesk.desktop"

    def is_enabled(self) -> bool:
        """Does this copy start at login? The entry is there and starts this copy (the demo's entry
        is not the real app's start, nor the other way round)."""
        args = self.entry_args()
        return args is not None and (DEMO_FLAG in args) == self.demo

    def present(self) -> bool:
        """Is there a start-at-login entry at all, whichever copy it starts (for uninstalling)?"""
        return self.entry_args() is not None

    def entry_args(self) -> list[str] | None:
        """The command the entry starts at login, or None when there is no entry."""
        if self.platform == "win32":
            value = self._win_get()
            return None if value is None else _windows_args(value)
        path = self.path
        if path is None or not path.is_file():
            return None
        try:
            if self.platform == "darwin":
                arguments = plistlib.loads(path.read_bytes()).get("ProgramArguments", [])
                return [str(a) for a in arguments] if isinstance(arguments, list) else []
            return _desktop_args(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, plistlib.InvalidFileException):
            return []  # there, but unreadable: an entry all the same

    def set_enabled(self, enabled: bool) -> None:
        if enabled:
            self.enable()
        else:
            self.disable()

    def enable(self) -> None:
        if self.platform == "win32":
            self._win_set(_windows_command(self.command))
            return
        path = self.path
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.platform == "darwin":
            data = plistlib.dumps(
                {"Label": LABEL, "ProgramArguments": self.command, "RunAtLoad": True, "ProcessType": "Interactive"}
            )
            path.write_bytes(data)
        else:
            path.write_text(
                "[Desktop Entry]\n"
                "Type=Application\n"
                f"Name={'SearchDesk demo' if self.demo else 'SearchDesk'}\n"
                "Comment=Approvals and Google sign-in for SearchDesk\n"
                f"Exec={_desktop_exec(self.command)}\n"
                "Icon=searchdesk\n"
                "Terminal=false\n"
                "X-GNOME-Autostart-enabled=true\n",
                encoding="utf-8",
            )

    def disable(self) -> None:
        if self.platform == "win32":
            self._win_delete()
            return
        path = self.path
        if path is not None:
            path.unlink(missing_ok=True)

    # --- Windows registry (untested here: no Windows CI) ---
    def _win_get(self) -> str | None:
        winreg = _winreg()

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
                value, _ = winreg.QueryValueEx(key, RUN_VALUE)
                return str(value)
        except OSError:
            return None

    def _win_set(self, value: str) -> None:
        winreg = _winreg()

        with winreg.CreateKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
            winreg.SetValueEx(key, RUN_VALUE, 0, winreg.REG_SZ, value)

    def _win_delete(self) -> None:
        winreg = _winreg()

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
                winreg.DeleteValue(key, RUN_VALUE)
        except OSError:
            pass


def _winreg() -> Any:
    import importlib

    return importlib.import_module("winreg")
