"""A wheel changes nothing the pointer only passed over (issue 36, item 6).

Scrolling Settings with the mouse wheel over "Default property" used to change it (to the one property no
account can read), and Close then offered Save as its default. Real windows offscreen, the real self-check
against the real server on the demo's data (so the default property has its list), real QWheelEvents
delivered as Qt delivers them: to the widget under the pointer, then on to its parents while ignored.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from searchdesk_desktop.widgets import ChoiceBox, NumberBox
from tests import REPO
from tests.desktop.helpers import finish, make_core, open_settings
from tests.desktop.windows.test_settings_properties import checked_demo

DOWN = -120  # one notch of a mouse wheel, turned towards the person (the next item, the page further down)


def wheel(box: QWidget, notches: int = 1) -> None:
    """Turn the wheel over the middle of `box`, as a mouse does: the event goes to whatever widget is
    under the pointer there (an editable combo box's line), then up its parents while nobody takes it.
    (Qt propagates only a wheel the system sent; one sent by a program stops at its receiver, so the
    walk up the parents is done here, as QApplication::notify does it for the system's.)"""
    centre = box.rect().center()
    for _ in range(notches):
        target: QWidget | None = box.childAt(centre) or box
        assert target is not None
        at = target.mapFrom(box, centre)
        while target is not None:
            event = QWheelEvent(
                QPointF(at),
                QPointF(target.mapToGlobal(at)),
                QPoint(0, 0),
                QPoint(0, DOWN),
                Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier,
                Qt.ScrollPhase.NoScrollPhase,
                False,
            )
            QApplication.sendEvent(target, event)
            if event.isAccepted() or target.isWindow():
                break
            at = target.mapToParent(at)
            target = target.parentWidget()


def boxes(window: QWidget) -> list[QWidget]:
    return [*window.findChildren(QComboBox), *window.findChildren(QAbstractSpinBox)]


def value(box: QWidget) -> object:
    if isinstance(box, QComboBox):
        return (box.currentIndex(), box.currentText())
    assert isinstance(box, QAbstractSpinBox)
    return box.text()


def test_a_wheel_over_every_settings_box_changes_nothing_until_clicked_into(qtbot: QtBot, place: dict) -> None:
    core = checked_demo(qtbot, place)  # the default property offers the accounts' own list
    window = open_settings(qtbot, core)
    window.resize(window.width(), 420)  # a small screen: the page scrolls
    qtbot.wait(50)
    every = boxes(window)
    assert {b.objectName() for b in every} >= {"defaultProperty", "keptFor"}
    for box in every:
        assert isinstance(box, QComboBox) and box.count() > 1, box.objectName()
        box.setCurrentIndex(0)  # the first choice: a wheel turned down would pick the next
    before = {box.objectName(): value(box) for box in every}
    window.setFocus()
    bar = window.page.verticalScrollBar()
    assert bar.maximum() > 0
    for box in every:
        window.page.ensureWidgetVisible(box)
        top = bar.value()
        wheel(box, 3)
        assert value(box) == before[box.objectName()], f"the wheel changed {box.objectName()}"
        if top < bar.maximum():
            assert bar.value() > top, "the wheel no longer scrolls the page over a box"

    # Clicked into, the box takes the wheel as any box does (so the wheel above really was delivered).
    box = window.site_choice
    window.page.ensureWidgetVisible(box)
    qtbot.mouseClick(box.lineEdit(), Qt.MouseButton.LeftButton)
    assert box.hasFocus()
    wheel(box)
    assert box.currentIndex() == 1
    finish(core)


def test_close_with_an_edit_defaults_to_keep_editing(qtbot: QtBot, place: dict) -> None:
    """An edit nobody meant is neither saved nor thrown away by a reflexive Enter."""
    core = checked_demo(qtbot, place)
    window = open_settings(qtbot, core)
    window.site_choice.setCurrentIndex(1)
    asked: list[QMessageBox] = []

    def choose(box: QMessageBox) -> QMessageBox.StandardButton:
        asked.append(box)
        return QMessageBox.StandardButton.Cancel

    window.choose = choose
    window.close()
    assert asked and asked[0].defaultButton() is asked[0].button(QMessageBox.StandardButton.Cancel)
    assert asked[0].defaultButton().text() == "Keep editing"
    assert window.isVisible() and window.has_unsaved_changes()
    window.load()
    finish(core)


def test_no_plain_combo_or_spin_box_is_made_anywhere_in_the_app() -> None:
    """Every box a window makes is a ChoiceBox or a NumberBox: a plain QComboBox, QSpinBox (or any other
    spin box, date or time box) made anywhere in the app but widgets.py would take the wheel again.
    (The window walk, tests/desktop/ui_walk.py, checks the same on every window state it opens.)"""
    plain = {"QComboBox", "QFontComboBox", "QSpinBox", "QDoubleSpinBox", "QDateEdit", "QTimeEdit", "QDateTimeEdit"}
    package = REPO / "desktop" / "searchdesk_desktop"
    found: list[str] = []
    for path in sorted(package.rglob("*.py")):
        if path == package / "widgets.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if name in plain:
                    found.append(f"{Path(path).relative_to(REPO)}:{node.lineno} makes a {name}")
    assert not found, "\n".join(found)
    assert issubclass(ChoiceBox, QComboBox) and issubclass(NumberBox, QAbstractSpinBox)


def test_a_wheel_over_activitys_filters_changes_nothing(
    qtbot: QtBot, place: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other boxes of the app: Activity's property and account filters, over a real journal."""
    from searchdesk_desktop.windows.activity import ActivityWindow
    from searchdesk_server.journal.paths import journal_path
    from searchdesk_server.journal.store import Journal
    from tests.desktop.windows.test_activity_says import record

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    record(Journal(journal_path()))
    core = make_core(place)
    window = ActivityWindow(core)
    qtbot.addWidget(window)
    window.refresh()
    window.show()
    qtbot.waitExposed(window)
    shown = window.table.rowCount()
    for box in (window.site_filter, window.account_filter):
        assert isinstance(box, ChoiceBox) and box.count() == 2 and box.currentIndex() == 0
        wheel(box, 3)
        assert box.currentIndex() == 0 and window.table.rowCount() == shown
    finish(core)


def test_the_window_walk_names_a_plain_box(qtbot: QtBot) -> None:
    """The walk's check (uicheck.layout_problems, run on every window state) finds a plain box, and
    passes a ChoiceBox."""
    from PySide6.QtWidgets import QVBoxLayout

    from tests.desktop.uicheck import layout_problems

    top = QWidget()
    column = QVBoxLayout(top)
    plain, guarded = QComboBox(), ChoiceBox()
    for box in (plain, guarded):
        box.addItems(["one", "two"])
        column.addWidget(box)
    qtbot.addWidget(top)
    top.show()
    qtbot.waitExposed(top)
    found = [p for p in layout_problems(top, "a window") if "plain box" in p]
    assert len(found) == 1
    plain.hide()
    assert not [p for p in layout_problems(top, "a window") if "plain box" in p]
