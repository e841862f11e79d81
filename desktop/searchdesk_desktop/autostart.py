"""Start at login, per OS; off by default, one checkbox.

Linux: an XDG autostart ``.desktop`` file; macOS: a LaunchAgent plist; Windows: a value under
HKCU\\...\\Run. Each writes only its own entry and removes only its own entry.
"""

from __future__ import annotations

import os
import plistlib
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


def launch_command() -> list[str]:
    """How to start this app at login (``--autostart``: quietly, to the tray when there is one)."""
    return app_command("--autostart")


def _desktop_exec(command: Sequence[str]) -> str:
    """Quote per the Desktop Entry spec: double quotes, with ", `, $ and \\ escaped inside."""

    def quote(arg: str) -> str:
        if arg and not any(c in arg for c in " \t\n\"'\\><~|&;$*?#()`"):
            return arg
        escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`").replace("$", "\\$")
        return f'"{escaped}"'

    return " ".join(quote(a).replace("%", "%%") for a in command)


class Autostart:
    def __init__(
        self,
        command: Sequence[str] | None = None,
        *,
        platform: str | None = None,
        home: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.command = list(command or launch_command())
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
        if self.platform == "win32":
            return self._win_get() is not None
        path = self.path
        return path is not None and path.is_file()

    def set_enabled(self, enabled: bool) -> None:
        if enabled:
            self.enable()
        else:
            self.disable()

    def enable(self) -> None:
        if self.platform == "win32":
            self._win_set(" ".join(f'"{a}"' for a in self.command))
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
                "Name=SearchDesk\n"
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
