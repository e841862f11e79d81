"""Settings (issue 26): the default property picked from the accounts' own (the last check's list, typing
still possible), a default no account Claude may use can see flagged with what to do, a wrong separator
named, Close with unsaved changes asks (Close, Escape and the window's X), and every message in view
at 1024×600.

Real windows offscreen, the real self-check against the real server on the demo's data.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QScrollArea, QWidget
from pytestqt.qtbot import QtBot

from searchdesk_desktop.claude import config_file as cc
from searchdesk_desktop.core import Core
from searchdesk_desktop.settings import AppSettings
from searchdesk_desktop.windows.settings import SettingsWindow
from searchdesk_server.stdio_check import CheckReport
from tests.desktop.helpers import finish, make_core, open_settings

#: The longest message a field shows: the server's refusal of a "..", named as the second entry.
LONG_ENTRY = "sc-domain:ok.example, https://www.example-garden-supplies.com/blog/%2e%2e/shop/"


def type_into(qtbot: QtBot, field: QWidget, text: str) -> None:
    field.clear()  # type: ignore[attr-defined]
    qtbot.keyClicks(field, text)


def shown_texts(window: QWidget) -> list[str]:
    return [w.text() for w in window.findChildren(QLabel) if w.isVisibleTo(window) and w.text()]


def checked_demo(qtbot: QtBot, place: dict) -> Core:
    """The demo's core after the real self-check ran the real server (as "Check it works" does)."""
    core = make_core(dict(place, server=cc.server_command()), demo=True)
    with qtbot.waitSignal(core.check_done, timeout=60_000) as done:
        core.run_check()
    report = done.args[0]
    assert isinstance(report, CheckReport) and report.ok, report
    return core


# --- 1. picked from the accounts' own properties, typing still possible -------------------------------


def test_the_default_is_picked_from_the_accounts_own_properties(qtbot: QtBot, place: dict) -> None:
    core = checked_demo(qtbot, place)
    listed = list(core.last_check.sites)
    assert len(listed) > 1
    window = open_settings(qtbot, core)
    offered = [window.site_choice.itemText(i) for i in range(window.site_choice.count())]
    assert offered == listed
    assert window.site.text() == ""  # offering the list chose nothing
    assert "Pick one from the list" in window.site_hint.text()

    window.site_choice.setCurrentIndex(1)  # picked from the list
    assert window.site.text() == listed[1] and window.validate().site_url == listed[1]
    assert not window.site_warning.isVisibleTo(window)  # one of the account's own: nothing to flag

    type_into(qtbot, window.site, "https://typed.example/")  # typing still works
    assert window.site.text() == "https://typed.example/"
    part = listed[0].split(":", 1)[-1][:6]
    completer = window.site_choice.completer()
    assert completer is not None
    completer.setCompletionPrefix(part)
    assert completer.completionCount() >= 1 and completer.currentCompletion() in listed

    # The allowed properties complete the entry being typed, keeping the ones before it.
    type_into(qtbot, window.allowed, "sc-domain:kept.example, " + part)
    allowed = window.allowed_completer
    assert allowed.completionCount() >= 1
    picked = allowed.pathFromIndex(allowed.completionModel().index(0, 0))
    assert picked.startswith("sc-domain:kept.example, ") and picked.split(", ")[1] in listed

    # Saving a new default changes the entry (the check's result no longer holds), not the list.
    window.load()
    window.site_choice.setCurrentIndex(0)
    assert window.save()
    assert core.last_check is None
    window.load()
    assert [window.site_choice.itemText(i) for i in range(window.site_choice.count())] == listed
    assert window.site.text() == listed[0]
    finish(core)


# --- 2. a default no account Claude may use can see -----------------------------------------------------


def test_a_default_the_account_cannot_see_is_flagged_with_what_to_do(qtbot: QtBot, place: dict) -> None:
    core = checked_demo(qtbot, place)
    window = open_settings(qtbot, core)
    type_into(qtbot, window.site, "sc-domain:nobody-has-this.example")
    flagged = [t for t in shown_texts(window) if "nobody-has-this.example" in t]
    assert flagged, shown_texts(window)
    words = flagged[0]
    assert (
        "does not include the domain nobody-has-this.example" in words and "Pick one of the demo's properties" in words
    )
    for code in ("sc-domain:", "GSC_", "list_sites", "site_url"):
        assert code not in words
    assert window.save_button.isEnabled()  # said, not refused: it may be about to be added in Search Console

    window.site_choice.setCurrentIndex(0)  # one the account sees: the warning goes
    assert not any("nobody-has-this" in t for t in shown_texts(window))
    finish(core)


def test_a_real_default_is_flagged_only_for_accounts_the_check_read(qtbot: QtBot, place: dict) -> None:
    """The evidence is the check's: a default outside what the check was allowed to list, or an account
    it did not read, is not called unseen."""
    from searchdesk_server.stdio_check import CheckedAccount

    AppSettings(allowed_sites=["sc-domain:mine.example"]).save(place["settings_path"])
    core = make_core(place)
    core.last_check = CheckReport(
        ok=True, sites=["sc-domain:mine.example"], accounts=[CheckedAccount("me@example.com", "oauth", 1)]
    )
    seen = core.seen_sites
    assert seen is not None and seen.allowed == ("sc-domain:mine.example",)
    assert seen.unseen("sc-domain:shop.mine.example", ["me@example.com"])
    assert not seen.unseen("sc-domain:mine.example", ["me@example.com"])
    assert not seen.unseen("sc-domain:other.example", ["me@example.com"])  # the check could not list it
    assert not seen.unseen("sc-domain:shop.mine.example", ["me@example.com", "b@example.com"])  # b: not read
    window = open_settings(qtbot, core)
    type_into(qtbot, window.site, "sc-domain:shop.mine.example")
    assert window.site_warning.isVisibleTo(window)
    assert window.site_warning.text().startswith(
        "Your Google account could not see the domain shop.mine.example in Search Console at the last check"
    )
    finish(core)


# --- 3. a wrong separator is named ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("sc-domain:a.example; sc-domain:b.example", "a semicolon"),
        ("sc-domain:a.example;https://b.example/", "a semicolon"),
        ("https://a.example/ | https://b.example/", "a vertical bar"),
        ("sc-domain:a.example sc-domain:b.example", "a space"),
        ("sc-domain:ok.example, a.example;b.example", "a semicolon"),
    ],
)
def test_a_wrong_separator_between_properties_is_named(qtbot: QtBot, place: dict, text: str, named: str) -> None:
    core = make_core(place, demo=True)
    window = open_settings(qtbot, core)
    type_into(qtbot, window.allowed, text)
    assert window.allowed_error.text() == f"Put a comma between properties, not {named}."
    assert not window.save_button.isEnabled()
    finish(core)


def test_a_list_in_the_default_field_says_it_takes_one(qtbot: QtBot, place: dict) -> None:
    core = make_core(place, demo=True)
    window = open_settings(qtbot, core)
    type_into(qtbot, window.site, "sc-domain:a.example; sc-domain:b.example")
    assert window.site_error.text().startswith("The default property is one property, not a list")
    assert "spaces or control characters" not in window.site_error.text()
    type_into(qtbot, window.site, "https://www.example.com/a;b/")  # a ";" inside one address is the server's
    assert "not a list" not in window.site_error.text()
    finish(core)


# --- 4. Close with unsaved changes asks --------------------------------------------------------------------


def close_by_button(qtbot: QtBot, window: SettingsWindow) -> None:
    qtbot.mouseClick(window.close_button, Qt.MouseButton.LeftButton)


def close_by_escape(qtbot: QtBot, window: SettingsWindow) -> None:
    qtbot.keyClick(window, Qt.Key.Key_Escape)


def close_by_x(qtbot: QtBot, window: SettingsWindow) -> None:
    window.close()  # what the window manager's X sends: a close event


CLOSES: dict[str, Callable[[QtBot, SettingsWindow], None]] = {
    "Close": close_by_button,
    "Escape": close_by_escape,
    "X": close_by_x,
}


@pytest.mark.parametrize("how", list(CLOSES))
def test_closing_with_unsaved_changes_asks(qtbot: QtBot, place: dict, how: str) -> None:
    core = make_core(place, demo=True)
    window = open_settings(qtbot, core)
    close = CLOSES[how]
    asked: list[list[str]] = []
    answers: list[QMessageBox.StandardButton] = []

    def choose(box: QMessageBox) -> QMessageBox.StandardButton:
        asked.append([b.text() for b in box.buttons()])
        assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)  # Enter changes nothing
        assert box.escapeButton() is box.button(QMessageBox.StandardButton.Cancel)
        box.deleteLater()
        return answers.pop(0)

    window.choose = choose

    close(qtbot, window)  # nothing changed: no question
    assert asked == [] and not window.isVisible()

    window.show()
    window.read_only.setChecked(True)
    answers.append(QMessageBox.StandardButton.Cancel)
    close(qtbot, window)
    assert len(asked) == 1 and set(asked[0]) == {"Save", "Discard changes", "Keep editing"}
    assert window.isVisible() and window.read_only.isChecked()  # kept editing, the edit kept

    answers.append(QMessageBox.StandardButton.Discard)
    close(qtbot, window)
    assert not window.isVisible() and not AppSettings.load(place["settings_path"]).read_only
    window.show()
    assert not window.read_only.isChecked()  # discarded: the saved settings again

    window.read_only.setChecked(True)
    window.site.setText("sc-domain:a.example; sc-domain:b.example")
    answers.append(QMessageBox.StandardButton.Save)
    close(qtbot, window)
    assert window.isVisible() and window.site_error.isVisibleTo(window)  # a mistake: stays open, said
    window.site.setText("sc-domain:a.example")
    answers.append(QMessageBox.StandardButton.Save)
    close(qtbot, window)
    assert not window.isVisible()
    saved = AppSettings.load(place["settings_path"])
    assert saved.read_only and saved.site_url == "sc-domain:a.example"
    assert len(asked) == 4 and answers == []
    finish(core)


# --- 5. every message in view at 1024×600 -------------------------------------------------------------------


def in_view(window: QWidget, label: QWidget) -> str:
    """'' when the whole of ``label`` can be seen: inside the window and, when it is in what scrolls,
    inside the part of it in view; else where it is."""
    area = next((a for a in window.findChildren(QScrollArea) if a.isAncestorOf(label)), None)
    if area is not None:
        viewport = area.viewport()
        place = QRect(label.mapTo(viewport, QPoint(0, 0)), label.size())
        if not viewport.rect().contains(place):
            return f"at {place.top()}..{place.bottom()} in a view of 0..{viewport.height() - 1}"
    place = QRect(label.mapTo(window, QPoint(0, 0)), label.size())
    if not window.rect().contains(place):
        return f"at {place.top()}..{place.bottom()} in a window of 0..{window.height() - 1}"
    return ""


def scroll_field_to_bottom(window: SettingsWindow, field: QWidget) -> None:
    """The field the person types into at the very bottom of what they see (they scrolled just far enough)."""
    area = window.findChild(QScrollArea, "page")
    assert area is not None
    area.verticalScrollBar().setValue(0)
    area.ensureWidgetVisible(field, 0, 0)


#: A 1024×600 screen, as it is (less the title bar) and at 150 % scale (683×400 logical pixels).
SCREENS = {"1024x600": (1024, 560), "1024x600 at 150%": (683, 360)}


def at_size(qtbot: QtBot, core: Core, size: tuple[int, int]) -> SettingsWindow:
    window = open_settings(qtbot, core)
    window.resize(*size)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == size)
    return window


def message_in_view(
    qtbot: QtBot, window: SettingsWindow, field: QWidget, make: Callable[[], object], label: QLabel
) -> None:
    """With ``field`` at the bottom of the view, make the message appear: all of it comes into view."""
    window.load()
    scroll_field_to_bottom(window, field)
    make()
    assert label.isVisibleTo(window) and len(label.text()) > 80, label.text()
    qtbot.waitUntil(lambda: in_view(window, label) == "", timeout=2000)


@pytest.mark.parametrize("screen", list(SCREENS))
def test_every_message_is_in_view_at_1024x600(qtbot: QtBot, place: dict, screen: str) -> None:
    core = make_core(place, demo=True)
    core.add_to_claude(allow_demo=True)
    window = at_size(qtbot, core, SCREENS[screen])
    message_in_view(
        qtbot, window, window.allowed, lambda: type_into(qtbot, window.allowed, LONG_ENTRY), window.allowed_error
    )

    def default_not_allowed() -> None:
        window.site.setText("https://www.example-garden-supplies.com/")
        window.allowed.setText("sc-domain:a.example")

    message_in_view(qtbot, window, window.allowed, default_not_allowed, window.site_error)

    # What Save says, whatever is scrolled into view at the time: Claude Desktop's file is broken.
    window.load()
    window.read_only.setChecked(True)
    area = window.findChild(QScrollArea, "page")
    assert area is not None
    area.verticalScrollBar().setValue(0)
    Path(place["claude_path"]).write_text("{ broken")
    assert window.save()
    assert window.status_error.isVisibleTo(window)
    qtbot.waitUntil(lambda: in_view(window, window.status_error) == "", timeout=2000)
    finish(core)


@pytest.mark.parametrize("screen", list(SCREENS))
def test_the_unseen_default_warning_is_in_view_at_1024x600(qtbot: QtBot, place: dict, screen: str) -> None:
    core = make_core(place, demo=True)
    core.last_check = CheckReport(ok=True, sites=["sc-domain:example-garden-supplies.com"])
    window = at_size(qtbot, core, SCREENS[screen])
    typed = lambda: type_into(qtbot, window.site, "sc-domain:nobody-has-this.example")  # noqa: E731
    message_in_view(qtbot, window, window.site, typed, window.site_warning)
    finish(core)
