"""The app answers every request its windows make: each is a Qt signal the app connects as it makes the
window (none is a callable assigned afterwards, which fails silently when an assignment is forgotten),
and a forgotten connection shows here."""

from __future__ import annotations

import gc

from PySide6.QtCore import QMetaMethod
from pytestqt.qtbot import QtBot

from searchdesk_desktop.app import DesktopApp
from searchdesk_desktop.core import Core
from tests.desktop.helpers import core_args, finish, make_core, make_window


def test_a_window_on_its_own_has_nobody_answering(qtbot: QtBot, place: dict) -> None:
    """The check can fail: a main window nobody connected lists every request."""
    core = make_core(place, demo=True)
    window = make_window(qtbot, core, place)
    assert window.unconnected_signals() == [
        "quit_requested",
        "review_requested",
        "reconsider_requested",
        "demo_requested",
    ]
    finish(core)


def test_the_app_connects_every_request_of_the_window_and_the_tray(qtbot: QtBot, qapp: object, place: dict) -> None:
    core = Core(**core_args(place))  # type: ignore[arg-type]
    app = DesktopApp(qapp, core, autostart=place["autostart"], tray=True)  # type: ignore[arg-type]
    try:
        assert app.window.unconnected_signals() == []
        assert app.tray is not None
        assert app.tray.isSignalConnected(QMetaMethod.fromSignal(app.tray.news_chosen))
    finally:
        app.gc.stop()
        app.dispose()
        gc.collect()
