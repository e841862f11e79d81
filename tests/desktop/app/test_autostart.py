"""Start at login starts what is running (issue 26): ticked in the demo, the entry starts the demo.

One entry on each system (one app runs at a time): the Linux XDG autostart file, the macOS LaunchAgent,
the Windows Run value (the registry faked at the boundary: no Windows here). Each copy shows the box
ticked only when the entry starts that copy.
"""

from __future__ import annotations

import gc
import plistlib
import shlex
import sys
import types
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from searchdesk_desktop.core import Core
from searchdesk_desktop.lifecycle.autostart import RUN_KEY, RUN_VALUE, Autostart
from tests.desktop.helpers import core_args, make_core


def exec_args(path: Path) -> list[str]:
    line = next(x for x in path.read_text().splitlines() if x.startswith("Exec="))
    return shlex.split(line[len("Exec=") :])


def test_ticked_in_the_demo_the_app_starts_the_demo_at_login(
    qtbot: QtBot, qapp: object, place: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's own wiring (no Autostart handed in): the box in the demo's main window writes the demo's
    start, with --demo; the real app does not count it as its own, and ticking there makes it the real one."""
    from searchdesk_desktop.app import DesktopApp

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    entry = tmp_path / "cfg" / "autostart" / "searchdesk.desktop"
    core = Core(**core_args(place), demo=True)  # type: ignore[arg-type]
    app = DesktopApp(qapp, core, tray=False)  # type: ignore[arg-type]
    box = app.window.autostart_box
    assert not box.isChecked()
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(6, box.height() // 2))
    assert box.isChecked()
    args = exec_args(entry)
    assert args[1:] == ["-m", "searchdesk_desktop", "--demo", "--autostart"], args
    assert "Name=SearchDesk demo" in entry.read_text()
    real = Autostart()
    assert real.present() and not real.is_enabled()  # the demo's start is not the real app's
    app.gc.stop()
    app.dispose()
    gc.collect()

    real_core = make_core(place)
    real_app = DesktopApp(qapp, real_core, tray=False)  # type: ignore[arg-type]
    box = real_app.window.autostart_box
    assert not box.isChecked()  # the entry starts the demo, not this
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(6, box.height() // 2))
    assert exec_args(entry)[1:] == ["-m", "searchdesk_desktop", "--autostart"]
    assert Autostart().is_enabled() and not Autostart(demo=True).is_enabled()
    real_app.gc.stop()
    real_app.dispose()
    gc.collect()


def test_the_macos_launch_agent_starts_the_demo_from_the_demo(tmp_path: Path) -> None:
    app = "/Applications/SearchDesk.app/Contents/MacOS/searchdesk"
    demo = Autostart([app, "--demo", "--autostart"], platform="darwin", home=tmp_path)
    real = Autostart([app, "--autostart"], platform="darwin", home=tmp_path)
    demo.enable()
    data = plistlib.loads((tmp_path / "Library/LaunchAgents/com.searchdesk.app.plist").read_bytes())
    assert data["ProgramArguments"] == [app, "--demo", "--autostart"] and data["RunAtLoad"] is True
    assert demo.is_enabled() and not real.is_enabled() and real.present()
    real.enable()  # one entry: ticking in the real app makes it the real app's
    data = plistlib.loads((tmp_path / "Library/LaunchAgents/com.searchdesk.app.plist").read_bytes())
    assert data["ProgramArguments"] == [app, "--autostart"]
    assert real.is_enabled() and not demo.is_enabled()
    demo.disable()  # uninstalling removes whichever is there
    assert not real.present()


class FakeRegistry(types.ModuleType):
    """``winreg`` at its boundary: HKEY_CURRENT_USER's keys as dictionaries."""

    HKEY_CURRENT_USER = "HKCU"
    REG_SZ = 1
    KEY_SET_VALUE = 2

    def __init__(self) -> None:
        super().__init__("winreg")
        self.keys: dict[str, dict[str, object]] = {}

    class _Key:
        def __init__(self, values: dict[str, object]) -> None:
            self.values = values

        def __enter__(self) -> FakeRegistry._Key:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    def OpenKey(self, root: str, path: str, reserved: int = 0, access: int = 0) -> FakeRegistry._Key:
        if (root, path) != (self.HKEY_CURRENT_USER, RUN_KEY) or path not in self.keys:
            raise FileNotFoundError(path)
        return self._Key(self.keys[path])

    def CreateKey(self, root: str, path: str) -> FakeRegistry._Key:
        return self._Key(self.keys.setdefault(path, {}))

    def QueryValueEx(self, key: FakeRegistry._Key, name: str) -> tuple[object, int]:
        if name not in key.values:
            raise FileNotFoundError(name)
        return key.values[name], self.REG_SZ

    def SetValueEx(self, key: FakeRegistry._Key, name: str, reserved: int, kind: int, value: object) -> None:
        assert kind == self.REG_SZ
        key.values[name] = value

    def DeleteValue(self, key: FakeRegistry._Key, name: str) -> None:
        if name not in key.values:
            raise FileNotFoundError(name)
        del key.values[name]


def test_the_windows_run_value_starts_the_demo_from_the_demo(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = FakeRegistry()
    monkeypatch.setitem(sys.modules, "winreg", registry)
    exe = r"C:\Program Files\SearchDesk\searchdesk.exe"
    demo = Autostart([exe, "--demo", "--autostart"], platform="win32")
    real = Autostart([exe, "--autostart"], platform="win32")
    assert not demo.is_enabled() and not real.present()
    demo.enable()
    assert registry.keys[RUN_KEY][RUN_VALUE] == f'"{exe}" "--demo" "--autostart"'
    assert demo.is_enabled() and not real.is_enabled()
    real.enable()
    assert registry.keys[RUN_KEY][RUN_VALUE] == f'"{exe}" "--autostart"'
    assert real.is_enabled() and not demo.is_enabled()
    real.disable()
    assert not real.present() and RUN_VALUE not in registry.keys[RUN_KEY]


def test_the_default_start_is_this_interpreters_app_with_demo_when_asked() -> None:
    assert Autostart(demo=True).command == [sys.executable, "-m", "searchdesk_desktop", "--demo", "--autostart"]
    assert Autostart().command == [sys.executable, "-m", "searchdesk_desktop", "--autostart"]
    assert Autostart(demo=True).demo and not Autostart().demo
