""" "Add to Claude Desktop": the .mcpb beside the frozen app when there is one, the settings file otherwise
(and as the fallback when the system will not open the .mcpb)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from searchdesk_desktop import __version__
from searchdesk_desktop.claude import config_file as cc
from searchdesk_desktop.claude.extension import choose_method, find_bundle, installed_extension
from searchdesk_desktop.windows.parts import OK, PROBLEM, TODO
from tests.desktop.helpers import finish, make_core, make_window

VERSION = "0.1.0"


def exe_in(folder: Path, name: str = "searchdesk.exe") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text("")
    return exe


def test_no_bundle_in_development(tmp_path: Path) -> None:
    exe = exe_in(tmp_path)
    (tmp_path / "searchdesk.mcpb").write_text("zip")
    assert find_bundle(exe, frozen=False, platform="win32", version=VERSION) is None


def test_no_bundle_on_linux_even_when_one_is_there(tmp_path: Path) -> None:
    """There is no official Claude Desktop for Linux: the Linux .mcpb exists for CI, not to be opened."""
    exe = exe_in(tmp_path, "searchdesk")
    (tmp_path / "searchdesk.mcpb").write_text("zip")
    assert find_bundle(exe, frozen=True, platform="linux", version=VERSION) is None


@pytest.mark.parametrize("name", ["searchdesk.mcpb", f"searchdesk-{VERSION}-windows-x86_64.mcpb"])
def test_bundle_beside_the_windows_exe(tmp_path: Path, name: str) -> None:
    exe = exe_in(tmp_path)
    (tmp_path / name).write_text("zip")
    assert find_bundle(exe, frozen=True, platform="win32", version=VERSION) == tmp_path / name


def test_a_bundle_of_another_version_is_not_used(tmp_path: Path) -> None:
    exe = exe_in(tmp_path)
    (tmp_path / "searchdesk-0.0.9-windows-x86_64.mcpb").write_text("zip")
    assert find_bundle(exe, frozen=True, platform="win32", version=VERSION) is None


def test_bundle_in_the_macos_app_resources(tmp_path: Path) -> None:
    contents = tmp_path / "SearchDesk.app" / "Contents"
    exe = exe_in(contents / "MacOS", "searchdesk")
    (contents / "Resources").mkdir()
    (contents / "Resources" / f"searchdesk-{VERSION}-macos-arm64.mcpb").write_text("zip")
    found = find_bundle(exe, frozen=True, platform="darwin", version=VERSION)
    assert found == contents / "Resources" / f"searchdesk-{VERSION}-macos-arm64.mcpb"


def test_choose_method() -> None:
    bundle = Path("/Applications/SearchDesk.app/Contents/Resources/searchdesk.mcpb")
    assert choose_method(bundle, demo=False) == "bundle"
    assert choose_method(bundle, demo=True) == "config"  # the demo goes in the settings file, labelled
    assert choose_method(None, demo=False) == "config"


def test_installed_extension_is_found_by_its_manifest(tmp_path: Path) -> None:
    config = tmp_path / "Claude" / cc.CONFIG_NAME
    extensions = tmp_path / "Claude" / "Claude Extensions"
    assert installed_extension(config) is None
    (extensions / "local.mcpb.someone.other").mkdir(parents=True)
    (extensions / "local.mcpb.someone.other" / "manifest.json").write_text('{"name": "other"}')
    (extensions / "broken").mkdir()
    (extensions / "broken" / "manifest.json").write_text("{ nope")
    assert installed_extension(config) is None
    ours = extensions / "local.mcpb.searchdesk.searchdesk"
    ours.mkdir()
    (ours / "manifest.json").write_text(json.dumps({"name": "searchdesk", "version": VERSION}))
    assert installed_extension(config) == ours


def test_add_opens_the_bundle_and_offers_the_settings_file_too(
    qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object
) -> None:
    bundle = tmp_path / "searchdesk.mcpb"
    bundle.write_text("zip")
    opened: list[Path] = []
    core = make_core(place, bundle=bundle, open_file=lambda p: opened.append(p) or True)
    window = make_window(qtbot, core, place)
    assert "Settings file" not in window.step2.detail.text()  # the file is not how it will be added
    qtbot.mouseClick(window.step2.button_widgets["Add to Claude Desktop"], Qt.MouseButton.LeftButton)
    assert opened == [bundle]
    assert not Path(place["claude_path"]).exists()  # Claude's own install dialog takes it from here
    assert window.step2.state == TODO and window.step2.status.text() == "Opened in Claude Desktop"
    qtbot.mouseClick(window.step2.button_widgets["Use the settings file instead"], Qt.MouseButton.LeftButton)
    assert window.step2.state == OK and window.step2.status.text() == "Added to Claude Desktop"
    assert json.loads(Path(place["claude_path"]).read_text())["mcpServers"]["searchdesk"]
    finish(core)


def test_bundle_the_system_will_not_open_falls_back_to_the_settings_file(
    qtbot: QtBot, place: dict, tmp_path: Path, real_keyring: object
) -> None:
    bundle = tmp_path / "searchdesk.mcpb"
    bundle.write_text("zip")
    core = make_core(place, bundle=bundle, open_file=lambda p: False)
    window = make_window(qtbot, core, place)
    window.add_to_claude()
    assert window.step2.state == OK
    assert "did not open SearchDesk's extension file" in window.step2.error.text()
    assert json.loads(Path(place["claude_path"]).read_text())["mcpServers"]["searchdesk"]
    finish(core)


def test_demo_never_opens_the_bundle(qtbot: QtBot, place: dict, tmp_path: Path) -> None:
    bundle = tmp_path / "searchdesk.mcpb"
    bundle.write_text("zip")
    core = make_core(place, demo=True, bundle=bundle, open_file=lambda p: pytest.fail("opened in the demo"))
    window = make_window(qtbot, core, place)
    window.add_to_claude(confirm=lambda: True)
    assert window.step2.status.text() == "Added to Claude Desktop (the demo)"
    finish(core)


def test_installed_extension_counts_as_added_and_twice_is_flagged(
    qtbot: QtBot, place: dict, real_keyring: object
) -> None:
    ours = Path(place["claude_path"]).parent / "Claude Extensions" / "local.mcpb.searchdesk.searchdesk"
    ours.mkdir(parents=True)
    (ours / "manifest.json").write_text(json.dumps({"name": "searchdesk", "version": __version__}))
    core = make_core(place)
    window = make_window(qtbot, core, place)
    window.ask = lambda box: True
    assert window.step2.state == OK and window.step2.status.text() == "Added to Claude Desktop as an extension"
    assert core.claude_status().short == "Claude Desktop: added (extension)"
    core.add_to_claude()
    window.refresh()
    assert window.step2.state == PROBLEM and window.step2.status.text() == "SearchDesk is in Claude Desktop twice"
    qtbot.mouseClick(window.step2.button_widgets["Remove from the settings file"], Qt.MouseButton.LeftButton)
    assert window.step2.state == OK and window.step2.status.text() == "Added to Claude Desktop as an extension"
    finish(core)
