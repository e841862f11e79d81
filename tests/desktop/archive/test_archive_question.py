"""The archive's question after a real sign-in (issue 28): "Keep your history beyond 16 months on this
computer?" is shown once in the main window; Yes turns the archive on, No leaves it off and it is not
asked again after a restart; Settings still offers the switch either way. Real parts: the app and its
main window (offscreen Qt), the real sign-in code against the fake Google OAuth server (its token
endpoint over real TLS), the Secret Service keyring on a private bus, the settings file on disk."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from searchdesk_desktop.app import DesktopApp
from searchdesk_desktop.core import Core
from searchdesk_desktop.keeping.archive_keeper import QUESTION, Archives
from searchdesk_desktop.settings import AppSettings
from searchdesk_desktop.windows.archive import ArchiveQuestion
from tests.desktop.accounts.test_accounts import OWN, browser
from tests.desktop.fake_oauth import EMAIL, FakeOAuth, fake_oauth_server
from tests.desktop.helpers import core_args, open_settings


def start(qapp: QApplication, place: dict[str, object], tmp_path: Path, fake: FakeOAuth) -> DesktopApp:
    core = Core(
        **core_args(place),  # type: ignore[arg-type]
        auth_uri=fake.auth_uri,
        open_browser=browser(fake),
        archive_options={"archives": Archives(tmp_path / "archive")},
    )
    app = DesktopApp(qapp, core, autostart=place["autostart"], tray=False)  # type: ignore[arg-type]
    app.start(show_window=True)
    return app


def stop(app: DesktopApp) -> None:
    app.core.archive.stop()
    app.quit()
    QApplication.processEvents()
    app.dispose()
    gc.collect()


def questions(app: DesktopApp) -> list[ArchiveQuestion]:
    """The archive questions the main window shows now."""
    return [q for q in app.window.findChildren(ArchiveQuestion) if q.isVisibleTo(app.window)]


def sign_in(qtbot: QtBot, app: DesktopApp) -> None:
    """The real sign-in: the browser (the test) consents at the fake Google, the app gets the tokens."""
    with qtbot.waitSignal(app.core.signin_done, timeout=10_000) as done:
        app.core.sign_in(OWN)
    assert done.args == [""]
    assert app.core.account.account == EMAIL


@pytest.mark.parametrize("yes", [True, False], ids=["yes", "no"])
def test_the_question_is_asked_once_after_a_sign_in_and_its_answer_kept(
    qapp: QApplication, qtbot: QtBot, place: dict[str, object], tmp_path: Path, real_keyring: object, yes: bool
) -> None:
    settings_path = Path(place["settings_path"])  # type: ignore[arg-type]
    with fake_oauth_server() as fake:
        app = start(qapp, place, tmp_path, fake)
        try:
            assert questions(app) == []  # no account yet: nothing to keep
            sign_in(qtbot, app)
            qtbot.waitUntil(lambda: questions(app) != [], timeout=2000)  # Qt shows a new child on its next turn
            (question,) = questions(app)
            assert QUESTION in [label.text() for label in question.findChildren(QLabel)]
            app.core.changed.emit()  # the app's next change: still the one question, not a second
            qtbot.wait(50)
            assert questions(app) == [question]
            (question.yes_button if yes else question.no_button).click()
            assert questions(app) == []
            saved = AppSettings.load(settings_path)
            assert saved.archive_asked and saved.archive_on is yes
            assert app.core.archive.on is yes and (app.core.archive.sync is not None) is yes
        finally:
            stop(app)
        app = start(qapp, place, tmp_path, fake)  # a restart: the window and the core anew
        try:
            assert app.core.account.account == EMAIL
            qtbot.wait(100)
            assert questions(app) == [], "the question was asked again after a restart"
            settings = open_settings(qtbot, app.core)
            switch = settings.archive_box.switch
            assert switch.isVisibleTo(settings) and switch.isChecked() is yes
            settings.close()
        finally:
            stop(app)
