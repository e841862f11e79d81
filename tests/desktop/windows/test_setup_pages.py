"""Each setup page is true for its reader: its pictures are its own system's, in that system's words; it
links the second-account section; it says how to install a signed release and, labelled, today's unsigned
build, in the words the system shows; and Google's unverified-app screen as Google shows it.

The pictures' words are read from the real window the pictures are taken of (`screenshots.step_window`
under `pictured_on`), so a picture that said another system's keyring or settings path fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop import project
from searchdesk_desktop.claude import config_file as claude_config
from searchdesk_desktop.screenshots import STEPS, SYSTEMS, System, pictured_on, step_picture
from tests import REPO
from tests.server.foundation.test_docs_site_owner import site_owner_text

PAGES = {system.page: f"docs/setup-{system.page}.md" for system in SYSTEMS}
SECOND_ACCOUNT = "getting-started.md#more-than-one-google-account"
PICTURE = re.compile(r"!\[[^\]]*\]\((?:\./)?images/([\w.-]+\.png)\)")


def test_each_system_is_pictured_in_its_own_words() -> None:
    """The keyring and the settings file each system's app names (the app's own rules, each system's places)."""
    words = {s.page: (s.place, s.shown(s.claude_settings)) for s in SYSTEMS}
    assert words == {
        "macos": ("your Mac's keychain", "~/Library/Application Support/Claude/claude_desktop_config.json"),
        "windows": (
            "Windows Credential Manager",
            r"C:\Users\you\AppData\Local\Packages\Claude_pzs8sxrjxfjjc\LocalCache\Roaming\Claude"
            r"\claude_desktop_config.json",
        ),
        "linux": ("your system's keyring (GNOME Keyring)", "~/.config/Claude/claude_desktop_config.json"),
    }


@pytest.mark.parametrize("system", SYSTEMS, ids=lambda s: s.page)
def test_the_pictured_window_says_its_systems_words(system: System, qtbot: QtBot, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from searchdesk_desktop.screenshots import Scene, _dispose, _scratch_home, step_window
    from searchdesk_desktop.widgets import ZWSP

    with _scratch_home("sdpages-") as (root, home):
        scene = Scene(QApplication.instance(), root, home, None, [])
        try:
            with pictured_on(scene, system):
                window = step_window(scene, system)
                # What a person reads: the path's invisible break points (widgets.breakable_path) aside.
                step1, step2 = (step.detail.text().replace(ZWSP, "") for step in (window.step1, window.step2))
        finally:
            _dispose(scene)
    assert f"kept in {system.place}" in step1
    assert f"Settings file: {system.shown(system.claude_settings)}" in step2
    others = [s for s in SYSTEMS if s is not system]
    assert not any(f"kept in {s.place}" in step1 for s in others)
    assert claude_config.display_path is not None and claude_config.display_path.__name__ == "display_path"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_setup_page_shows_its_own_pictures(page: str) -> None:
    text = site_owner_text(PAGES[page])
    shown = [name for name in PICTURE.findall(text) if not name.endswith("-dark.png")]
    assert shown == [step_picture(step, next(s for s in SYSTEMS if s.page == page)) for step in STEPS]
    assert "only the frame and fonts differ" not in text


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_setup_page_links_the_second_account_section(page: str) -> None:
    assert f"]({SECOND_ACCOUNT})" in site_owner_text(PAGES[page])
    assert "## More than one Google account" in site_owner_text("docs/getting-started.md")


#: What each system shows for an app from outside its store, as its maker documents it: macOS 15 and macOS 13/14
#: for an app Apple has not notarised, SmartScreen for an unsigned file, and Smart App Control (no Run anyway).
UNSIGNED_WORDS = {
    "macos": ["**Privacy & Security**", "**Open Anyway**", "Not notarised", "macOS 15", "macOS 13 or 14"],
    "windows": [
        "*Windows protected your PC*",
        "**More info**",
        "**Run anyway**",
        "*Unknown publisher*",
        "Smart App Control",
        "no **Run anyway**",
    ],
    "linux": ["carry no signature"],
}
#: The processors and oldest systems each page promises: what release.yml builds (the lead's decision, issue 35).
MACHINES = {
    "macos": ["Apple silicon", "not an Intel Mac", "macOS 13"],
    "windows": ["64-bit Intel or AMD", "Arm-based PCs are not supported", "1809"],
    "linux": ["64-bit Intel or AMD", "Debian 12"],
}
#: How each page says a person updates (and, on Linux, removes) what they installed.
UPDATES = {
    "macos": ["**A new version:**", "replacing the old"],
    "windows": ["**A new version:**", "run the new installer"],
    "linux": ["**A new version:**", "`sudo apt remove searchdesk`", "`./uninstall.sh`", "`./install.sh`"],
}
GOOGLES_PAGE = "https://support.google.com/accounts/answer/7455163"
LINUX_OPENING = "There is no Claude Desktop for Linux: Anthropic offers it for macOS and Windows only."


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_setup_page_says_what_installing_shows(page: str) -> None:
    source = (REPO / PAGES[page]).read_text(encoding="utf-8")
    text = site_owner_text(PAGES[page])
    assert f"]({project.RELEASES})" in text, "the download link is the release page"
    assert "not released yet" not in text and "nothing to download" not in text
    for words in UNSIGNED_WORDS[page] + MACHINES[page] + UPDATES[page]:
        assert words in text, words
    assert "not decided" not in text
    # Google's unverified-app screen as Google's help names it, and its Testing stage (testers only, at most 100).
    assert "*This app isn't verified*" in text and "Google hasn't verified this app" not in text
    assert "**Back to safety**" in text and f"]({GOOGLES_PAGE})" in text
    assert "testing stage" in text and "at most 100" in text
    # A release carries no extension file: no page sends a person to Claude Desktop's Install button.
    assert "**Install** button" not in text and "Use the settings file instead" not in text
    # Each statement a person acts on carries its source beside it.
    assert source.count("<!-- source:") >= 3
    # What could not be tried here is said in the page's source, not to the reader.
    comment = re.search(r"<!--(.*?)-->", source, re.S)
    assert comment is not None and "not tried" in source.lower()


def test_the_linux_page_opens_with_what_is_true_there() -> None:
    """Anthropic offers Claude Desktop for macOS and Windows only: the Linux page says so first, and names the
    programs SearchDesk works with there, as Other clients describes them."""
    text = site_owner_text(PAGES["linux"])
    first = next(line for line in text.splitlines()[1:] if line.strip() and not line.startswith("<!--"))
    assert first == LINUX_OPENING
    assert "](other-clients.md#claude-code)" in text and "](other-clients.md" in text
    assert "Claude Desktop for Linux, installed" not in text
