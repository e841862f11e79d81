"""Settings' brand names (issue 38): a line per property seeded from its domain name (the server's own
derivation), edited in the real window, saved with Save into the app's settings and Claude Desktop's
entry, and used by a real stdio server started with that entry's variables; at 1024×600 every line
and message in view."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLineEdit, QScrollArea
from pytestqt.qtbot import QtBot

from searchdesk_desktop.settings import AppSettings
from searchdesk_server import config as server_config
from searchdesk_server.brand import domain_terms
from searchdesk_server.stdio_check import CheckReport
from tests.desktop.helpers import finish, make_core, open_settings
from tests.desktop.windows.test_settings_properties import SCREENS, at_size, in_view
from tests.server.stdio import connect, text_of

BIG = "sc-domain:example.com"  # the demo's property with branded queries
GARDEN = "sc-domain:example-garden-supplies.com"
SHOP = "https://shop.example.org/"


def entry_env(place: dict) -> dict[str, str]:
    return json.loads(Path(place["claude_path"]).read_text())["mcpServers"]["searchdesk"]["env"]


def type_into(qtbot: QtBot, field: QLineEdit, text: str) -> None:
    field.clear()
    qtbot.keyClicks(field, text)


def checked(place: dict, sites: list[str]) -> Any:
    """The demo's core with its Claude entry, after a check that listed `sites`."""
    core = make_core(place, demo=True)
    core.add_to_claude(allow_demo=True)
    core.last_check = CheckReport(ok=True, sites=sites)
    return core


async def brand_report(env: dict[str, str], home: Path, site: str) -> tuple[dict[str, Any], str]:
    async with connect(env={"HOME": str(home), **env}) as client:
        result = await client.call_tool("report_brand_split", {"site": site})
    assert not result.is_error, text_of(result)
    return result.structured_content, text_of(result)


def test_brand_names_edited_saved_and_used_by_the_server(qtbot: QtBot, place: dict, tmp_path: Path) -> None:
    core = checked(place, [BIG, GARDEN, SHOP])
    window = open_settings(qtbot, core)
    lines = window.brand.fields
    assert list(lines) == [BIG, GARDEN, SHOP]
    for site, line in lines.items():  # each starts from the server's own derivation of the domain name
        assert line.text() == ", ".join(domain_terms(site)) and line.text(), site
    assert lines[GARDEN].text() == "example-garden-supplies, example garden supplies, examplegardensupplies"
    assert window.brand.title() == "Your brand's names, as people search for them"
    assert not window.has_unsaved_changes()  # the seeds are not an edit

    # A pattern's special characters, capitals, a repeat: kept as the person means them.
    type_into(qtbot, lines[BIG], "Example Garden,  garden (supply), example garden")
    assert window.has_unsaved_changes()
    qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    assert window.status.text().startswith("Saved."), window.status.text()
    assert window.brand.fields[BIG].text() == "example garden, garden (supply)"  # as kept

    kept = {BIG: ["example garden", "garden (supply)"]}  # the untouched lines follow their domain name
    assert AppSettings.load(place["settings_path"]).brand_terms == kept
    env = entry_env(place)
    assert json.loads(env["GSC_BRAND_TERMS"]) == kept
    assert server_config.load(env).brand_terms == {BIG: ("example garden", "garden (supply)")}

    # A real stdio server started with the entry's settings uses the person's names; another property
    # its domain name's.
    server_env = {k: v for k, v in env.items() if k.startswith("GSC_")}
    data, text = anyio.run(brand_report, server_env, tmp_path, BIG)
    assert data["terms"] == ["example garden", "garden (supply)"] and data["terms_from"] == "settings"
    assert "as kept for this property in SearchDesk's Settings" in text
    other, _ = anyio.run(brand_report, server_env, tmp_path, SHOP)
    assert other["terms"] == ["example"] and other["terms_from"] == "domain"

    # Emptied, a line goes back to its domain name's names, and the entry no longer carries them.
    window.brand.fields[BIG].clear()
    assert window.save()
    assert window.brand.fields[BIG].text() == "example"
    assert "GSC_BRAND_TERMS" not in entry_env(place)
    assert AppSettings.load(place["settings_path"]).brand_terms == {}
    finish(core)


def test_a_kept_list_is_shown_and_an_unsaved_edit_outlives_a_new_check(qtbot: QtBot, place: dict) -> None:
    core = make_core(place, demo=True)
    core.settings.brand_terms = {"https://www.example.com": ["Example Shop"], "not a property": ["x"]}
    window = open_settings(qtbot, core)
    assert list(window.brand.fields) == ["https://www.example.com/"]  # the server's spelling; a damaged one left out
    assert window.brand.fields["https://www.example.com/"].text() == "example shop"
    type_into(qtbot, window.brand.fields["https://www.example.com/"], "example shop, exmaple")
    core.last_check = CheckReport(ok=True, sites=[BIG])
    window._check_done(core.last_check)
    assert list(window.brand.fields) == [BIG, "https://www.example.com/"]
    assert window.brand.fields["https://www.example.com/"].text() == "example shop, exmaple"
    assert window.has_unsaved_changes()
    window.load()  # Close and open again: the edit is dropped
    assert window.brand.fields["https://www.example.com/"].text() == "example shop"
    finish(core)


def test_too_many_names_are_named_and_block_save(qtbot: QtBot, place: dict) -> None:
    core = checked(place, [BIG])
    window = open_settings(qtbot, core)
    window.brand.fields[BIG].setText(", ".join(f"name {i}" for i in range(21)))
    assert window.brand.error.isVisibleTo(window)
    assert window.brand.error.text() == f"{BIG}: give at most 20 names (there are 21)."
    assert not window.save_button.isEnabled() and not window.save()
    window.brand.fields[BIG].setText("x" * 101)
    assert "at most 100 characters" in window.brand.error.text()
    window.brand.fields[BIG].setText("example")
    assert not window.brand.error.isVisibleTo(window) and window.save_button.isEnabled()
    assert not window.findChildren(QComboBox, "brandTerms")
    finish(core)


@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("scheme", [Qt.ColorScheme.Light, Qt.ColorScheme.Dark])
def test_brand_lines_fit_at_1024x600(qtbot: QtBot, place: dict, screen: str, scheme: Qt.ColorScheme) -> None:
    from PySide6.QtGui import QGuiApplication

    hints = QGuiApplication.styleHints()
    before = hints.colorScheme()
    hints.setColorScheme(scheme)
    try:
        core = checked(place, [BIG, GARDEN, "https://www.example-garden-supplies-and-more.example.co.uk/blog/"])
        window = at_size(qtbot, core, SCREENS[screen])
        area = window.findChild(QScrollArea, "page")
        assert area is not None
        for line in window.brand.fields.values():
            area.ensureWidgetVisible(line, 0, 12)
            qtbot.waitUntil(lambda line=line: in_view(window, line) == "", timeout=2000)
            assert line.width() >= 200  # room to read and edit the names
        window.brand.fields[BIG].setText(", ".join(f"name {i}" for i in range(21)))
        area.ensureWidgetVisible(window.brand.error, 0, 12)
        qtbot.waitUntil(lambda: in_view(window, window.brand.error) == "", timeout=2000)
        assert area.horizontalScrollBar().maximum() == 0  # nothing wider than the window
        finish(core)
    finally:
        hints.setColorScheme(before)
