"""Words a site owner reads, and Help where they get stuck (issue 26, "Words and help").

Real windows offscreen, a real Core, the real demo server for the check; the one edge patched is
`QDesktopServices.openUrl` (the system's browser and file manager, which a test cannot watch).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QAbstractButton, QLabel, QPushButton, QToolButton, QWidget
from pytestqt.qtbot import QtBot

from searchdesk_desktop import __version__
from searchdesk_desktop.accounts.keystore import SignInRecord, now
from searchdesk_desktop.claude import config_file as cc
from searchdesk_desktop.logs import log_dir
from searchdesk_desktop.project import docs_url
from searchdesk_desktop.windows.about import AboutDialog
from searchdesk_desktop.windows.main import MainWindow
from searchdesk_server.demo.vocab import HOSTILE_INJECTION
from tests.desktop.fake_oauth import CLIENT_ID, CLIENT_SECRET, EMAIL
from tests.desktop.helpers import finish, make_core, make_tray, make_window, plant_sign_in
from tests.desktop.words.test_docs_match_app import DOCS, anchors

WM_RO = "https://www.googleapis.com/auth/webmasters.readonly"
SUPPORT = "Details for support"
TECHNICAL = ("Secret Service", "Error", "KWallet", "Keychain:", "provider")


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[QUrl]]:
    """Every address the app asks the system to open (the browser, the file manager), in order."""
    urls: list[QUrl] = []

    def open_url(url: QUrl) -> bool:
        urls.append(QUrl(url))
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(open_url))
    yield urls


def visible_texts(root: QWidget) -> list[str]:
    """The labels' texts a person can see in `root`, top to bottom (then left to right)."""
    labels = [w for w in root.findChildren(QLabel) if w.isVisibleTo(root) and w.text()]
    labels.sort(key=lambda w: (w.mapTo(root, w.rect().topLeft()).y(), w.mapTo(root, w.rect().topLeft()).x()))
    return [w.text() for w in labels]


def support_toggle(root: QWidget) -> QToolButton:
    toggles = [b for b in root.findChildren(QToolButton) if b.text() == SUPPORT and b.isVisibleTo(root)]
    assert len(toggles) == 1, f"one visible {SUPPORT!r} in {root.objectName() or type(root).__name__}"
    return toggles[0]


def help_buttons(root: QWidget) -> list[QPushButton]:
    return [b for b in root.findChildren(QPushButton) if b.text() == "Help" and b.isVisibleTo(root)]


def assert_opens_a_help_page(qtbot: QtBot, button: QAbstractButton, opened: list[QUrl]) -> str:
    """Click it: the address is `docs_url` of a page in docs/ and, if any, a real heading of it."""
    before = len(opened)
    button.click()
    assert len(opened) == before + 1, "the Help button opened nothing"
    url = opened[-1].toString()
    page = urlsplit(url).path.rsplit("/", 1)[-1]
    anchor = urlsplit(url).fragment
    assert url == docs_url(page, anchor)
    assert (DOCS / page).is_file(), url
    assert not anchor or anchor in anchors(page), url
    return url


def test_keyring_error_in_plain_words_the_details_only_when_asked(
    qtbot: QtBot, place: dict, no_dbus: None, opened: list[QUrl]
) -> None:
    """No keyring reachable: step 1 says so plainly; which keyrings failed (for support) waits behind
    "Details for support", and Help opens the page's section about this message."""
    core = make_core(place)
    window = make_window(qtbot, core, place)
    step = window.step1
    assert step.status.text() == "Your keyring is not available"
    shown = " ".join(visible_texts(step))
    assert "could not use it" in shown
    assert not any(word in shown for word in TECHNICAL), shown
    toggle = support_toggle(step)
    toggle.click()
    details = " ".join(visible_texts(step))
    assert "Secret Service" in details  # the backend that was tried, and why not, now in view
    url = assert_opens_a_help_page(qtbot, help_buttons(step)[0], opened)
    assert url.endswith("troubleshooting-sign-in.md#your-keyring-is-not-available")
    finish(core)


def test_about_opens_with_the_version_and_the_accounts(
    qtbot: QtBot, place: dict, real_keyring: object, opened: list[QUrl]
) -> None:
    plant_sign_in(place, SignInRecord("1//rt", EMAIL, "own", CLIENT_ID, CLIENT_SECRET, (WM_RO,), now()))
    core = make_core(place)
    about = AboutDialog(core)
    qtbot.addWidget(about)
    about.show()
    texts = visible_texts(about)
    first = texts[1]  # under the app's name
    assert __version__ in first and EMAIL in first, texts
    assert not any("Qt" in t or "Python" in t for t in texts), texts
    support_toggle(about).click()
    expanded = " ".join(visible_texts(about))
    assert "Qt / PySide6" in expanded and "Python" in expanded
    url = assert_opens_a_help_page(qtbot, help_buttons(about)[0], opened)
    assert url == docs_url("every-day.md", "about")
    finish(core)


def test_open_the_log_folder_opens_it(
    qtbot: QtBot, place: dict, opened: list[QUrl], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """About's Open the log folder: the folder itself (made if there is no log yet) in the file manager, not
    a path to find by hand (on a Mac and on Windows it is hidden: Library, AppData)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    core = make_core(place, demo=True)
    about = AboutDialog(core)
    qtbot.addWidget(about)
    about.show()
    assert not log_dir().exists()
    buttons = [b for b in about.findChildren(QPushButton) if b.text() == "Open the log folder" and b.isVisibleTo(about)]
    assert len(buttons) == 1, "About has no Open the log folder"
    buttons[0].click()
    assert [u.toLocalFile() for u in opened] == [str(log_dir())] and opened[0].isLocalFile()
    assert log_dir().is_dir() and log_dir().is_relative_to(tmp_path)
    finish(core)


def test_tray_menu_has_help(qtbot: QtBot, place: dict, opened: list[QUrl]) -> None:
    core = make_core(place, demo=True)
    tray = make_tray(core, place)
    (action,) = [a for a in tray.menu.actions() if a.text() == "Help"]
    action.trigger()
    assert [u.toString() for u in opened] == [docs_url("every-day.md")]
    finish(core)


def test_the_demo_report_opens_with_a_summary_and_names_its_hostile_rows(qtbot: QtBot, place: dict) -> None:
    """The real demo server, checked as Claude Desktop would start it: the report's first words are a
    summary a site owner reads, the made-up hostile searches are labelled as a test of SearchDesk's
    protections, "Excluded" is explained, and nothing is in a programmer's fixed-width table."""
    place = dict(place, server=cc.server_command())
    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    window.show()
    qtbot.waitExposed(window)
    window.add_to_claude(confirm=lambda: True)
    with qtbot.waitSignal(core.check_done, timeout=60_000):
        window.step3.button_widgets["Check it works"].click()
    result = window.check_result
    qtbot.wait(50)  # laid out
    texts = visible_texts(result)
    assert texts[0] == "What Claude would see"
    summary = texts[1]
    assert summary.startswith("SearchDesk read your Search Console data the way Claude will"), texts
    assert "test SearchDesk's protections" in summary
    everything = "\n".join(texts)
    from searchdesk_desktop.windows.check_report import ReportTable

    rows = [row for table in result.findChildren(ReportTable) for row in table.rows]
    (note,) = [note for cells, note in rows if HOSTILE_INJECTION in cells]
    assert note.startswith(f"“{HOSTILE_INJECTION}”: A test of SearchDesk's protections")
    assert "never as an instruction" in note
    assert note in texts  # shown, under its row
    assert [cells for cells, note in rows if not note and "example garden supply" in cells]  # a real row: no note
    assert "Excluded" in texts and "This page is not in Google's index" in everything
    assert "sc-domain:" not in everything and "the domain example.com" in everything
    outside_the_test_row = everything.replace(HOSTILE_INJECTION, "")
    for word in ("list_sites", "query_search_analytics", "inspect_url", "delete_site", "server said"):
        assert word not in outside_the_test_row
    assert not any(label.font().fixedPitch() for label in result.findChildren(QLabel) if label.isVisibleTo(result))
    finish(core)


def error_views(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> Iterator[tuple[str, QWidget]]:
    """Each error the main window shows, made for real, and the part of the window that shows it."""
    core = window.core
    bad = tmp_path / "client.json"
    bad.write_text('{"installed": {"client_id": "x", "client_secret": "y"}}')
    window.use_service_account(bad)  # a sign-in error: the wrong kind of file
    yield "sign-in error", window.step1
    window.step_errors.pop(1, None)
    Path(core.claude_path).parent.mkdir(parents=True, exist_ok=True)
    Path(core.claude_path).write_text("{ not json")  # Claude Desktop's settings file unreadable
    window.refresh()
    yield "Claude Desktop's settings file", window.step2
    Path(core.claude_path).unlink()
    window.refresh()
    window.add_to_claude()
    with qtbot.waitSignal(core.check_done, timeout=60_000):
        window.run_check()  # the test's server program does nothing: the check fails
    yield "the check failed", window.step3
    core.listener_error = "the folder for its connection is not private"
    window.refresh()
    yield "approval questions", window


def test_every_error_the_window_shows_has_help(
    qtbot: QtBot, place: dict, real_keyring: object, opened: list[QUrl], tmp_path: Path
) -> None:
    core = make_core(place)
    window = make_window(qtbot, core, place)
    window.show()
    seen = []
    for name, view in error_views(qtbot, window, tmp_path):
        buttons = help_buttons(view)
        assert buttons, f"{name}: no Help"
        seen.append(assert_opens_a_help_page(qtbot, buttons[-1], opened))
    assert "troubleshooting-sign-in.md" in seen[0]
    assert seen[1].endswith("#claude-desktops-settings-file-cannot-be-read")
    assert "troubleshooting-check.md" in seen[2]
    assert seen[3].endswith("asking-a-person.md#when-nobody-can-be-asked")
    finish(core)


def test_settings_and_an_account_in_trouble_have_help(qtbot: QtBot, place: dict, opened: list[QUrl]) -> None:
    """The Settings window's messages and an account card's problem each sit beside Help to their page."""
    from searchdesk_desktop.accounts.model import AccountRow
    from searchdesk_desktop.accounts.model import AccountState as Account
    from searchdesk_desktop.windows.accounts import AccountCard, AccountsList
    from searchdesk_desktop.windows.settings import SettingsWindow

    core = make_core(place)
    settings = SettingsWindow(core)
    qtbot.addWidget(settings)
    settings.show()
    (button,) = help_buttons(settings)
    assert assert_opens_a_help_page(qtbot, button, opened).endswith("every-day.md#choose-what-claude-may-do")
    owner = AccountsList()
    qtbot.addWidget(owner)
    expired = AccountCard(AccountRow("a@example.com", "oauth", Account.EXPIRED, detail="Sign in again."), owner)
    fine = AccountCard(AccountRow("b@example.com", "oauth", Account.SIGNED_IN), owner)
    for card in (expired, fine):
        qtbot.addWidget(card)
        card.show()
    assert not help_buttons(fine)  # nothing wrong: no Help to distract
    (button,) = help_buttons(expired)
    assert "troubleshooting-sign-in.md#sign-in-expired" in assert_opens_a_help_page(qtbot, button, opened)
    settings.close()
    finish(core)
