"""Help always shows where it points (issue 36, item 9).

With no browser to open, Help used to do nothing a person could see. Qt's offscreen platform, on which
these tests run, opens nothing (its QDesktopServices.openUrl returns False, as a desktop with no browser
set up does), so nothing is patched here but the one test where the system does open the page.
Real windows, the real tray menu, the real clipboard.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QDir, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from searchdesk_desktop.logs import log_dir
from searchdesk_desktop.project import docs_url
from searchdesk_desktop.windows.about import AboutDialog
from tests.desktop.helpers import finish, make_core, make_tray


@pytest.fixture
def no_address_shown() -> Iterator[None]:
    """No address window is left over from another test, before or after."""
    close_shown()
    yield
    close_shown()


def shown() -> list[QWidget]:
    """The windows showing an address SearchDesk could not open."""
    return [w for w in QApplication.topLevelWidgets() if w.objectName() == "addressDialog" and w.isVisible()]


def close_shown() -> None:
    for window in shown():
        window.close()


def the_address_window(qtbot: QtBot) -> QWidget:
    qtbot.waitUntil(lambda: len(shown()) == 1, timeout=2000)
    return shown()[0]


def copies(qtbot: QtBot, window: QWidget, address: str) -> None:
    """The address is shown whole, selectable, and Copy puts exactly it on the clipboard."""
    box = window.findChild(QPlainTextEdit, "address")
    assert box is not None and box.isVisible() and box.isReadOnly()
    assert box.toPlainText() == address
    assert box.textCursor().selectedText() == address  # selected on opening: Ctrl+C copies it too
    copy = next(b for b in window.findChildren(QPushButton) if b.text() == "Copy")
    QGuiApplication.clipboard().clear()
    width = copy.width()
    copy.click()
    assert QGuiApplication.clipboard().text() == address
    assert copy.text() == "Copied" and copy.width() == width  # the button keeps its size
    screen = window.screen().availableGeometry()
    assert window.width() <= 1024 - 40 and window.height() <= 600 - 40, (window.size(), screen)


def test_the_system_opens_nothing_here() -> None:
    """The condition every other test here stands on: nothing takes the address."""
    assert not QDesktopServices.openUrl(QUrl("https://example.com/"))


def test_help_in_a_window_shows_the_address_when_no_browser_opens(
    qtbot: QtBot, place: dict, no_address_shown: None
) -> None:
    core = make_core(place)
    about = AboutDialog(core)
    qtbot.addWidget(about)
    about.show()
    about.help.click()
    window = the_address_window(qtbot)
    copies(qtbot, window, docs_url("every-day.md", "about"))
    window.close()
    finish(core)


def test_the_log_folder_shows_its_place_when_no_file_manager_opens(
    qtbot: QtBot, place: dict, no_address_shown: None
) -> None:
    core = make_core(place)
    about = AboutDialog(core)
    qtbot.addWidget(about)
    about.show()
    about.log_button.click()
    window = the_address_window(qtbot)
    copies(qtbot, window, QDir.toNativeSeparators(str(log_dir())))
    finish(core)


def test_the_tray_menus_help_shows_the_address_when_no_browser_opens(
    qtbot: QtBot, place: dict, no_address_shown: None
) -> None:
    core = make_core(place, demo=True)
    tray = make_tray(core, place)
    tray.menu.aboutToShow.emit()
    next(a for a in tray.menu.actions() if a.text() == "Help").trigger()
    window = the_address_window(qtbot)
    assert window.windowTitle().startswith("SearchDesk (Demo)")
    copies(qtbot, window, docs_url("every-day.md", ""))
    finish(core)


def test_nothing_is_shown_when_the_browser_opens_the_page(
    qtbot: QtBot, place: dict, no_address_shown: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url.toString()) or True))
    core = make_core(place)
    about = AboutDialog(core)
    qtbot.addWidget(about)
    about.show()
    about.help.click()
    qtbot.wait(50)
    assert opened == [docs_url("every-day.md", "about")] and shown() == []
    finish(core)


def test_every_page_and_folder_is_opened_through_the_one_helper() -> None:
    """No other openUrl in the app: each would again do nothing visible when the system opens nothing.
    The one other caller hands the extension file to Claude Desktop (claude/extension.py), and step 2 already
    says what to do when that fails (it adds SearchDesk to Claude Desktop's settings file instead)."""
    from tests import REPO

    package = REPO / "desktop" / "searchdesk_desktop"
    callers = sorted(
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "openUrl(" in path.read_text(encoding="utf-8")
    )
    assert callers == ["claude/extension.py", "help.py"]
