"""Step 2 on Linux, through the real window: Anthropic offers Claude Desktop for macOS and Windows only, so on
Linux SearchDesk offers to add itself to Claude Desktop's settings file only where an unofficial build is on
this computer (its program, or its settings folder from before SearchDesk wrote there); elsewhere it says there
is none, names what works instead, and writes nothing. macOS and Windows keep adding before Claude Desktop is
installed (test_app.py's computer without it).

These run on Linux (the `place` computer: a desktop entry for Claude Desktop, removed here where it must be
absent); the macOS case sets `core.system`, the one place step 2 reads the system from.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from searchdesk_desktop.claude import config_file as cc
from searchdesk_desktop.claude import install as install
from searchdesk_desktop.help import TOPICS
from searchdesk_desktop.windows.parts import OK, TODO
from tests.desktop.helpers import finish, make_core, make_window

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's rules on a Linux computer")


def test_the_rule_itself() -> None:
    assert install.offers_claude_desktop("darwin", claude_found=False)
    assert install.offers_claude_desktop("win32", claude_found=False)
    assert not install.offers_claude_desktop("linux", claude_found=False)
    assert install.offers_claude_desktop("linux", claude_found=True)


def test_linux_without_claude_desktop_offers_nothing_to_add_and_names_what_works(
    qtbot: QtBot, place: dict, real_keyring: object
) -> None:
    Path(place["claude_entry"]).unlink()  # no unofficial Claude Desktop on this computer
    core = make_core(place)
    window = make_window(qtbot, core, place)
    step = window.step2
    assert step.state == TODO and step.status.text() == "There is no Claude Desktop for Linux"
    assert "macOS and Windows only" in step.detail.text() and "Claude Code" in step.detail.text()
    assert set(step.button_widgets) == {"Look again"}
    assert step.help.isVisibleTo(window) and step.help.topic == "claude-linux"
    assert TOPICS["claude-linux"][0] == "setup-linux.md"
    assert not Path(place["claude_path"]).exists(), "nothing written for a program that is not there"
    # An unofficial build is installed meanwhile: Look again offers to add SearchDesk to its settings.
    Path(place["claude_entry"]).write_text("[Desktop Entry]\nName=Claude\n")
    qtbot.mouseClick(step.button_widgets["Look again"], Qt.MouseButton.LeftButton)
    assert "Add to Claude Desktop" in step.button_widgets
    qtbot.mouseClick(step.button_widgets["Add to Claude Desktop"], Qt.MouseButton.LeftButton)
    assert cc.read_entry(place["claude_path"]) is not None and step.state == OK
    finish(core)


def test_linux_where_an_unofficial_build_made_its_settings_offers_to_add(
    qtbot: QtBot, place: dict, real_keyring: object
) -> None:
    Path(place["claude_entry"]).unlink()  # no program found, but its settings folder was there before SearchDesk
    Path(place["claude_path"]).parent.mkdir(parents=True)
    core = make_core(place)
    window = make_window(qtbot, core, place)
    assert window.step2.status.text() == "Not added yet"
    assert "Add to Claude Desktop" in window.step2.button_widgets
    finish(core)


def test_a_mac_without_claude_desktop_still_offers_to_add(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    Path(place["claude_entry"]).unlink()
    core = make_core(place)
    core.system = "darwin"
    window = make_window(qtbot, core, place)
    window.refresh()
    assert "Add to Claude Desktop" in window.step2.button_widgets
    assert "Claude Desktop was not found on this computer" in window.step2.detail.text()
    finish(core)


def test_a_check_that_passed_on_linux_without_claude_desktop_points_to_other_programs(
    qtbot: QtBot, place: dict
) -> None:
    Path(place["claude_entry"]).unlink()
    place = dict(place, server=cc.server_command())
    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    with qtbot.waitSignal(core.check_done, timeout=60_000):
        qtbot.mouseClick(window.step3.button_widgets["Check it works"], Qt.MouseButton.LeftButton)
    assert window.step3.state != OK
    shown = window.step3.check_result.findChildren(type(window.step3.status))
    said = " ".join(label.text() for label in shown)
    assert install.NO_CLAUDE_DESKTOP_THEN in said and "claude.ai/download" not in said
    finish(core)
