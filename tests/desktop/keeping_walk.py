"""The window walk (`ui_walk`) over what the record of changes adds: the main window with the first
start's note, and Settings with the record's box in each of its states (as it opens, clearing, cleared,
a removal that failed), real and demo. Run as `python -m tests.desktop.keeping_walk`, with `ui_walk`'s
arguments and screen set-ups (test_record_keeper.py runs it at 1024×600, and in light and dark)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from PySide6.QtWidgets import QApplication, QWidget

from searchdesk_desktop.widgets import set_error
from searchdesk_desktop.windows.main import MainWindow
from searchdesk_desktop.windows.settings import SettingsWindow
from searchdesk_desktop.windows.settings_form import RecordNotice
from tests.desktop import ui_walk
from tests.desktop.ui_walk import Scene, dispose, settle
from tests.desktop.uicheck import out_of_view

FAILED = (
    "SearchDesk could not write its record of changes at ~/.local/share/searchdesk/journal.sqlite3: the disk is full."
)


def record_states(qapp: QApplication, scene: Scene, reports: dict[str, Any]) -> Iterator[tuple[str, QWidget]]:
    for account in ("signed out", "service account"):
        core = scene.core(demo=False, account=account)
        scene.entry("real entry")
        window = MainWindow(core, has_tray=True)
        notice = RecordNotice(core)
        window.add_notice(notice)  # where the app puts it
        window.show()
        settle(qapp)
        hidden = out_of_view(notice)
        if hidden:  # a note nobody scrolls down to is a note nobody reads
            raise RuntimeError(f"main window ({account}): the record's note is below the fold: {hidden}")
        yield f"main window ({account}, the record's note)", window
        window.close()
        dispose(window, core)
    for demo in (False, True):
        core = scene.core(demo=demo, account="demo" if demo else "service account")
        settings = SettingsWindow(core)
        settings.show()
        settle(qapp)
        mode = "demo" if demo else "real"
        yield f"settings ({mode}, the record)", settings
        box = settings.confirm_clear_box()
        box.show()
        settle(qapp)
        yield f"settings ({mode}, clear the record?)", box
        box.close()
        box.deleteLater()
        settings._record_said("Clearing the record…")
        settle(qapp)
        yield f"settings ({mode}, clearing the record)", settings
        settings._cleared("")
        settle(qapp)
        yield f"settings ({mode}, the record cleared)", settings
        settings._cleared(FAILED)
        set_error(settings.record_error, FAILED)
        settle(qapp)
        yield f"settings ({mode}, the record not cleared)", settings
        settings.close()
        dispose(settings, core)


if __name__ == "__main__":
    ui_walk.walk = record_states
    raise SystemExit(ui_walk.main())
