"""Each setup page numbers its steps exactly as the app's main window does, in the same words.

A site owner reads "Step 2: Add to Claude Desktop" on the page and looks for a 2 beside those words
in the window; when the window's steps change, this fails until the pages follow.
"""

from __future__ import annotations

import re

import pytest
from pytestqt.qtbot import QtBot

from tests import REPO
from tests.desktop.helpers import finish, make_core, make_window

SETUP_PAGES = ["docs/setup-macos.md", "docs/setup-windows.md", "docs/setup-linux.md"]
STEP_HEADING = re.compile(r"^## Step (\d+): (.+?)\s*$", re.M)


def page_steps(text: str) -> list[tuple[int, str]]:
    return [(int(n), title) for n, title in STEP_HEADING.findall(text)]


@pytest.mark.parametrize("name", SETUP_PAGES)
def test_setup_page_steps_are_the_windows(name: str, qtbot: QtBot, place: dict, real_keyring: object) -> None:
    core = make_core(place)
    window = make_window(qtbot, core, place)
    try:
        rows = [window.step1, window.step2, window.step3]
        in_window = [(row.number, row.title.text()) for row in rows]
    finally:
        window.close()
        finish(core)
    assert page_steps((REPO / name).read_text(encoding="utf-8")) == in_window


def test_page_steps_reads_only_step_headings() -> None:
    text = "# Set up\n\n## Install SearchDesk\n\n## Step 1: Sign in with Google\n\n### Step 9: not one\n"
    assert page_steps(text + "## Step 2: Add to Claude Desktop \n") == [
        (1, "Sign in with Google"),
        (2, "Add to Claude Desktop"),
    ]
