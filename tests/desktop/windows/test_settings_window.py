"""The settings that reach the server: read-only, tool groups, default and allowed properties.

Typed into the real window, checked with the server's own property rules, saved to the app's
settings and into Claude Desktop's entry, and accepted by the server's own configuration loader.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QCheckBox
from pytestqt.qtbot import QtBot

from searchdesk_desktop.accounts.keystore import SignInRecord, now
from searchdesk_desktop.claude import config_file as cc
from searchdesk_desktop.settings import AppSettings
from searchdesk_desktop.windows.settings_form import parse_properties
from searchdesk_server import config as server_config
from searchdesk_server.scopes import SCOPE_WM_RO
from searchdesk_server.tool_spec import GROUPS
from tests.desktop.helpers import finish, make_core, open_settings, plant_sign_in


def entry(place: dict) -> dict:
    return json.loads(Path(place["claude_path"]).read_text())["mcpServers"]["searchdesk"]


def tick(qtbot: QtBot, box: QCheckBox) -> None:
    """Click the box itself (a click far right of a checkbox's label is not a click on it)."""
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(6, box.height() // 2))


def type_into(qtbot: QtBot, field: object, text: str) -> None:
    field.clear()  # type: ignore[attr-defined]
    qtbot.keyClicks(field, text)


def test_every_catalogue_group_has_a_checkbox(qtbot: QtBot, place: dict) -> None:
    core = make_core(place, demo=True)
    window = open_settings(qtbot, core)
    assert list(window.group_boxes) == list(GROUPS)
    assert window.all_tools.isChecked() and not any(b.isEnabled() for b in window.group_boxes.values())
    # The tools' own titles, never their programmatic names; the guarded ones say they ask first.
    assert window.group_boxes["analytics"].toolTip() == "Lets Claude: Search performance"
    sitemaps = window.group_boxes["sitemaps"].toolTip()
    assert "Remove a sitemap (asks you first)" in sitemaps and "_" not in sitemaps
    finish(core)


def test_mistakes_are_shown_beside_the_field_and_block_save(qtbot: QtBot, place: dict) -> None:
    core = make_core(place, demo=True)
    window = open_settings(qtbot, core)
    tick(qtbot, window.all_tools)  # "only these groups", none chosen yet
    assert window.groups_error.text() == "Choose at least one group, or offer every tool."
    assert not window.save_button.isEnabled()
    tick(qtbot, window.group_boxes["sitemaps"])
    assert window.groups_error.isHidden() and window.save_button.isEnabled()

    type_into(qtbot, window.site, "example.com")
    assert "could mean two properties" in window.site_error.text() and window.site_error.isVisibleTo(window)
    assert not window.save_button.isEnabled()
    type_into(qtbot, window.site, "https://www.example.com")
    assert window.site_error.isHidden()

    type_into(qtbot, window.allowed, "sc-domain:example.com, ftp://nope/")
    assert window.allowed_error.text().startswith("Entry 2: ")
    assert not window.save_button.isEnabled()
    type_into(qtbot, window.allowed, "https://shop.example.net/")
    assert "not among the allowed properties" in window.site_error.text()  # refused whenever it was used
    assert not window.save_button.isEnabled()
    assert not window.save()  # Save itself refuses too
    assert not Path(place["settings_path"]).exists() or AppSettings.load(place["settings_path"]).groups == []
    finish(core)


def test_save_writes_settings_and_the_claude_entry_keeping_everything_else(qtbot: QtBot, place: dict) -> None:
    core = make_core(place, demo=True)
    core.add_to_claude(allow_demo=True)
    path = Path(place["claude_path"])
    data = json.loads(path.read_text())
    data["mcpServers"]["other"] = {"command": "/usr/bin/other", "args": []}
    data["mcpServers"]["searchdesk"]["env"]["MY_OWN"] = "kept"
    path.write_text(json.dumps(data))

    window = open_settings(qtbot, core)
    tick(qtbot, window.read_only)
    tick(qtbot, window.all_tools)
    for group in ("analytics", "reports"):
        tick(qtbot, window.group_boxes[group])
    type_into(qtbot, window.site, "https://www.example.com")
    type_into(qtbot, window.allowed, "sc-domain:Example.com, https://shop.example.net")
    qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)

    assert window.status.text().startswith("Saved. Claude Desktop's settings file was updated")
    assert window.site.text() == "https://www.example.com/"  # the server's spelling
    saved = AppSettings.load(place["settings_path"])
    assert (saved.read_only, saved.groups, saved.site_url, saved.allowed_sites) == (
        True,
        ["analytics", "reports"],
        "https://www.example.com/",
        ["sc-domain:example.com", "https://shop.example.net/"],
    )
    env = entry(place)["env"]
    assert env["GSC_READ_ONLY"] == "true"
    assert env["GSC_ALLOW_TOOLS"] == "analytics,reports"
    assert env["GSC_SITE_URL"] == "https://www.example.com/"
    assert env["GSC_ALLOWED_SITES"] == "sc-domain:example.com,https://shop.example.net/"
    assert env["MY_OWN"] == "kept" and env["SEARCHDESK_DEMO"] == "true"
    assert json.loads(path.read_text())["mcpServers"]["other"] == {"command": "/usr/bin/other", "args": []}
    conf = server_config.load(env)  # the server accepts exactly what was written
    assert conf.read_only and conf.default_site == "https://www.example.com/"
    assert set(conf.tools) == {"query_search_analytics", "compare_periods", "report_traffic_drops",
                               "report_quick_wins", "report_cannibalisation", "report_weekly_summary",
                               "report_content_decay", "report_ctr_gaps", "report_new_queries",
                               "report_brand_split"}  # fmt: skip

    # Back to every tool, no properties: the variables go away again.
    window.load()
    tick(qtbot, window.all_tools)
    window.site.clear()
    window.allowed.clear()
    assert window.save()
    env = entry(place)["env"]
    assert not {"GSC_ALLOW_TOOLS", "GSC_SITE_URL", "GSC_ALLOWED_SITES"} & set(env) and env["MY_OWN"] == "kept"
    finish(core)


def test_settings_before_claude_is_added_go_in_when_it_is(qtbot: QtBot, place: dict) -> None:
    core = make_core(place, demo=True)
    window = open_settings(qtbot, core)
    assert "not in Claude Desktop yet" in window.status.text()
    type_into(qtbot, window.site, "sc-domain:example.com")
    assert window.save()
    assert not Path(place["claude_path"]).exists()  # nothing added behind the person's back
    core.add_to_claude(allow_demo=True)
    assert entry(place)["env"]["GSC_SITE_URL"] == "sc-domain:example.com"
    finish(core)


def test_unreadable_claude_file_keeps_the_settings_and_says_so(qtbot: QtBot, place: dict) -> None:
    core = make_core(place, demo=True)
    core.add_to_claude(allow_demo=True)
    path = Path(place["claude_path"])
    window = open_settings(qtbot, core)
    path.write_text("{ broken")
    tick(qtbot, window.read_only)
    assert window.save()
    assert "Claude Desktop's settings were not changed" in window.status_error.text()
    assert window.status_error.isVisibleTo(window) and not window.status.isVisibleTo(window)
    assert path.read_text() == "{ broken" and AppSettings.load(place["settings_path"]).read_only
    finish(core)


def test_turning_read_only_off_asks_for_a_new_sign_in(qtbot: QtBot, place: dict, real_keyring: object) -> None:
    AppSettings(read_only=True).save(place["settings_path"])
    plant_sign_in(place, SignInRecord("1//rt", "owner@example.com", "own", "cid", "cs", (SCOPE_WM_RO,), now()))
    core = make_core(place)
    window = open_settings(qtbot, core)
    assert window.read_only.isChecked()
    tick(qtbot, window.read_only)
    assert window.save()
    assert "sign in again" in window.status.text()
    finish(core)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        (" , ,", []),
        ("sc-domain:a.com,sc-domain:A.com", ["sc-domain:a.com"]),
        ("https://a.com", ["https://a.com/"]),
    ],
)
def test_parse_properties(text: str, expected: list[str]) -> None:
    assert parse_properties(text) == expected


def test_update_settings_without_our_entry_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / cc.CONFIG_NAME
    path.write_text('{"mcpServers": {"other": {"command": "x"}}}')
    before = path.read_bytes()
    assert not cc.update_settings(path, cc.ServerSettings(read_only=True)).changed
    assert path.read_bytes() == before
    assert not cc.update_settings(tmp_path / "missing.json", cc.ServerSettings()).changed


def test_every_group_of_the_catalogue_has_a_title_a_person_reads() -> None:
    from searchdesk_desktop.windows.settings_form import GROUP_TITLES
    from searchdesk_server.tool_spec import GROUPS

    assert set(GROUP_TITLES) == set(GROUPS)  # a new group never shows as its code name
