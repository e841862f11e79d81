"""What a person can read in a window: does every text have the room it needs, and enough contrast?

Two checks on a shown top-level window, used by the window walk (``ui_walk``):

- ``layout_problems``: the window fits its screen; no combo or spin box takes a wheel it was not clicked into
  (each is a ``ChoiceBox`` or ``NumberBox``); every label, button, check box and group box has
  the room its text needs at its present size (wrapped text: the height for its width; one line:
  the width); nothing is cut off by a parent that does not scroll, and a window's page never
  scrolls sideways; table headers are whole, and
  every table cell fits, wraps (no word wider than its column) or carries its whole text as a tooltip.
- ``contrast_problems``: every visible, enabled text's foreground against the nearest opaque
  background behind it reaches the WCAG AA contrast (4.5:1), with colours taken from the widget's
  palette after ``ensurePolished()`` (so style-sheet colours are what is measured).

Each problem is one line naming the window state, the widget and its text, so a failure says what
to look at.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPalette
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QStyle,
    QTableWidget,
    QWidget,
)

from searchdesk_desktop.widgets import ChoiceBox, NumberBox

WCAG_AA = 4.5
BIG = 1_000_000
#: The runs of text a wrapping table cell cannot break: Qt breaks at spaces, zero-width spaces, and
#: after a hyphen or a slash.
UNBREAKABLE = re.compile(r"[^\s\u200b/-]*[/-]?")


def _shown(top: QWidget) -> Iterator[QWidget]:
    """The window and every descendant a person can see now."""
    yield top
    for child in top.findChildren(QWidget):
        if child.isVisibleTo(top) and not child.isWindow() and child.width() > 0 and child.height() > 0:
            yield child


def _name(w: QWidget) -> str:
    text = ""
    if isinstance(w, (QLabel, QAbstractButton)):
        text = w.text()
    elif isinstance(w, QGroupBox):
        text = w.title()
    text = " ".join(text.split())
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{type(w).__name__} {text!r}" if text else f"{type(w).__name__} {w.objectName()!r}"


def _scroll_viewport(w: QWidget) -> bool:
    parent = w.parentWidget()
    return isinstance(parent, QAbstractScrollArea) and parent.viewport() is w


def _clipped_by(w: QWidget, top: QWidget) -> str:
    """The first ancestor (below a scroll area's viewport) that cuts part of ``w`` off, or ''."""
    rect = QRect(QPoint(0, 0), w.size())
    child = w
    parent = w.parentWidget()
    while parent is not None and child is not top:
        rect = rect.translated(child.pos())
        if _scroll_viewport(parent):
            return ""  # the content scrolls: every part of it can be brought into view
        if not parent.rect().contains(rect):
            return _name(parent)
        child, parent = parent, parent.parentWidget()
    return ""


def _text_room(w: QLabel) -> str:
    text = w.text()
    if not text:
        return ""
    room = w.contentsRect()
    fm = QFontMetrics(w.font())
    flags = int(w.alignment().value) | int(Qt.TextFlag.TextExpandTabs.value)
    if w.wordWrap():
        flags |= int(Qt.TextFlag.TextWordWrap.value)
        need = fm.boundingRect(QRect(0, 0, room.width(), BIG), flags, text)
    else:
        need = fm.boundingRect(QRect(0, 0, BIG, BIG), flags, text)
    if need.width() > room.width() + 1 or need.height() > room.height() + 1:
        return f"needs {need.width()}x{need.height()}, has {room.width()}x{room.height()}"
    return ""


def _button_room(w: QAbstractButton) -> str:
    hint = w.sizeHint()
    if isinstance(w, QPushButton):
        if w.height() < hint.height() or w.width() < min(hint.width(), _push_text_width(w)):
            return f"needs {hint.width()}x{hint.height()}, has {w.width()}x{w.height()}"
        return ""
    if w.width() < hint.width() or w.height() < hint.height():
        return f"needs {hint.width()}x{hint.height()}, has {w.width()}x{w.height()}"
    return ""


def _push_text_width(w: QPushButton) -> int:
    """The width a push button needs for its text alone (the style's minimum width may be larger)."""
    margin = w.style().pixelMetric(QStyle.PixelMetric.PM_ButtonMargin, None, w)
    frame = w.style().pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth, None, w)
    return QFontMetrics(w.font()).horizontalAdvance(w.text().replace("&", "")) + 2 * (margin + frame)


def _header_problems(h: QHeaderView) -> list[str]:
    out = []
    model = h.model()
    if model is None:
        return out
    for i in range(h.count()):
        if h.isSectionHidden(i):
            continue
        need = h.sectionSizeHint(i) if h.orientation() == Qt.Orientation.Horizontal else 0
        if need > h.sectionSize(i):
            title = model.headerData(i, h.orientation())
            out.append(f"header {title!r} needs {need} px, has {h.sectionSize(i)}")
    return out


def _cell_problems(t: QTableWidget) -> list[str]:
    """A wrapped row must be as tall as Qt's own measure of its cells at their column widths; a cell
    that does not wrap must fit its column. Either way, a cell may instead carry its whole text as a
    tooltip."""
    out = []
    margin = t.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, t) + 1
    fm = QFontMetrics(t.font())
    for r in range(t.rowCount()):
        short_row = t.wordWrap() and t.rowHeight(r) < t.sizeHintForRow(r)
        for c in range(t.columnCount()):
            item = t.item(r, c)
            if item is None or not item.text() or t.isColumnHidden(c):
                continue
            if t.wordWrap():  # a row too short, or a word wider than its column (the view elides it)
                words = UNBREAKABLE.findall(item.text())
                cut = short_row or max(fm.horizontalAdvance(w) for w in words) > t.columnWidth(c) - 2 * margin
            else:
                lines = item.text().splitlines()
                width = max(fm.horizontalAdvance(line) for line in lines)
                cut = width > t.columnWidth(c) - 2 * margin or len(lines) * fm.lineSpacing() > t.rowHeight(r)
            if cut and item.toolTip() != item.text():
                out.append(f"cell ({r}, {c}) {item.text()[:40]!r} is cut and has no tooltip")
                if len(out) > 5:
                    return out
    return out


def layout_problems(top: QWidget, state: str) -> list[str]:
    """Every place in ``top`` (shown) where a text has less room than it needs."""
    problems: list[str] = []
    screen = top.screen().availableGeometry()
    frame = top.frameGeometry()
    if frame.width() > screen.width() or frame.height() > screen.height():
        problems.append(
            f"{state}: the window is {frame.width()}x{frame.height()}, larger than the screen "
            f"({screen.width()}x{screen.height()})"
        )
    for w in _shown(top):
        what = ""
        if isinstance(w, QLabel):
            what = _text_room(w)
        elif isinstance(w, (QPushButton, QCheckBox, QRadioButton)) and w.text():
            what = _button_room(w)
        elif isinstance(w, QGroupBox) and w.title():
            need = w.minimumSizeHint()
            if w.width() < need.width() or w.height() < need.height():
                what = f"needs {need.width()}x{need.height()}, has {w.width()}x{w.height()}"
        elif isinstance(w, QHeaderView):
            problems += [f"{state}: {p}" for p in _header_problems(w)]
        elif isinstance(w, QTableWidget):
            problems += [f"{state}: {p}" for p in _cell_problems(w)]
        elif isinstance(w, (QComboBox, QAbstractSpinBox)) and not isinstance(w, (ChoiceBox, NumberBox)):
            what = "is a plain box: a mouse wheel passing over it would change it (make it a ChoiceBox or NumberBox)"
        elif isinstance(w, QScrollArea) and w.objectName() == "page" and w.horizontalScrollBar().isVisible():
            problems.append(f"{state}: the window's content is wider than the window (it scrolls sideways)")
        if what:
            problems.append(f"{state}: {_name(w)} {what}")
        if isinstance(w, (QLabel, QAbstractButton, QGroupBox)) and w is not top:
            parent = _clipped_by(w, top)
            if parent:
                problems.append(f"{state}: {_name(w)} is cut off by {parent}")
    problems += [f"{state}: {p}" for p in _values_out_of_view(top)]
    return problems


def out_of_view(w: QWidget) -> str:
    """What of `w` a person does not see without scrolling its window's page (the scroll area it is in,
    as it stands: at the top when the window opens); "" when all of it is in view."""
    view = w.parentWidget()
    while view is not None and not _scroll_viewport(view):
        view = view.parentWidget()
    if view is None:
        return ""
    top = w.mapTo(view, QPoint(0, 0)).y()
    bottom = top + w.height()
    if top < 0 or bottom > view.height():
        return f"{_name(w)} is out of view (at {top}..{bottom}, view 0..{view.height()})"
    return ""


#: The smallest screen height (logical pixels) at which every value line must be in view without scrolling.
SMALLEST_SCREEN_HEIGHT = 600


def _values_out_of_view(top: QWidget) -> list[str]:
    """An approval dialog's values: every one in view without scrolling while the dialog is below the
    screen's height; once it is as tall as the screen allows, it scrolls as a whole with the first value
    in view at the top (the buttons stay at the bottom, outside what scrolls)."""
    rows = getattr(top, "value_labels", None)
    body = getattr(top, "body", None)
    if not rows or not isinstance(body, QScrollArea):
        return []
    room = top.screen().availableGeometry().height() - 40
    viewport = body.viewport()
    # Below the smallest screen the issue names (1024x600: here 1.5 scale and 1.25 fonts leave 400 logical
    # pixels) the words cannot all stand above the buttons: there the dialog scrolls as a whole with the
    # first value in view, the stated alternative.
    small = top.screen().availableGeometry().height() < SMALLEST_SCREEN_HEIGHT
    capped = top.height() >= room - 2
    out = []
    first = rows[0][1].mapTo(viewport, rows[0][1].rect().topLeft()).y()
    last = rows[-1][1].mapTo(viewport, rows[-1][1].rect().bottomLeft()).y()
    every = not small and (not capped or last - first <= viewport.height())  # 200 owners' cannot all be in view
    for i, (label, value) in enumerate(rows):
        place = value.mapTo(viewport, value.rect().topLeft())
        bottom = place.y() + value.height()
        if (every or i == 0) and (place.y() < 0 or bottom > viewport.height()):
            out.append(
                f"the value {label.text()!r} is out of view (at {place.y()}..{bottom}, view {viewport.height()})"
            )
    return out


# --- contrast -------------------------------------------------------------------------------------


def _luminance(c: QColor) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())


def contrast(fg: QColor, bg: QColor) -> float:
    """WCAG 2 contrast ratio (1 to 21)."""
    a, b = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def _paints_background(w: QWidget) -> bool:
    if w.isWindow() or w.autoFillBackground():
        return True
    return w.testAttribute(Qt.WidgetAttribute.WA_StyledBackground) and "background" in w.styleSheet()


def _background(w: QWidget | None) -> QColor:
    """The colour behind ``w``: the nearest widget (itself or an ancestor) that paints its background."""
    while w is not None:
        w.ensurePolished()
        if _paints_background(w):
            return w.palette().color(w.backgroundRole())
        w = w.parentWidget()
    return QColor("white")


def _texts(w: QWidget) -> Iterator[tuple[str, QColor, QColor]]:
    """(what, foreground, background) for each text ``w`` draws."""
    pal = w.palette()
    if isinstance(w, QLabel) and w.text():
        yield _name(w), pal.color(w.foregroundRole()), _background(w)
    elif isinstance(w, QPushButton) and w.text():
        bg = _background(w) if _paints_background(w) else pal.color(QPalette.ColorRole.Button)
        yield _name(w), pal.color(w.foregroundRole()), bg
    elif isinstance(w, (QCheckBox, QRadioButton)) and w.text():
        yield _name(w), pal.color(w.foregroundRole()), _background(w)
    elif isinstance(w, QGroupBox) and w.title():
        yield _name(w), pal.color(QPalette.ColorRole.WindowText), _background(w)
    elif isinstance(w, QLineEdit):
        base = pal.color(QPalette.ColorRole.Base)
        if w.text():
            yield f"QLineEdit {w.text()[:30]!r}", pal.color(QPalette.ColorRole.Text), base
        elif w.placeholderText():
            yield (
                f"QLineEdit placeholder {w.placeholderText()[:30]!r}",
                pal.color(QPalette.ColorRole.PlaceholderText),
                base,
            )
    elif isinstance(w, QPlainTextEdit) and w.toPlainText():
        yield "QPlainTextEdit", pal.color(QPalette.ColorRole.Text), pal.color(QPalette.ColorRole.Base)
    elif isinstance(w, QHeaderView):
        yield "table header", pal.color(QPalette.ColorRole.ButtonText), pal.color(QPalette.ColorRole.Button)
    elif isinstance(w, QTableWidget) and w.rowCount():
        base = pal.color(QPalette.ColorRole.Base)
        yield "table cells", pal.color(QPalette.ColorRole.Text), base
        if w.alternatingRowColors():
            yield (
                "table cells (alternate rows)",
                pal.color(QPalette.ColorRole.Text),
                pal.color(QPalette.ColorRole.AlternateBase),
            )


def contrast_problems(top: QWidget, state: str, minimum: float = WCAG_AA) -> list[str]:
    """Every enabled text in ``top`` whose contrast with what is behind it is under ``minimum``.

    Disabled controls are left out, as WCAG 1.4.3 does ("part of an inactive user interface component").
    """
    problems = []
    for w in _shown(top):
        w.ensurePolished()
        if not w.isEnabled():
            continue
        for what, fg, bg in _texts(w):
            ratio = contrast(fg, bg)
            if ratio < minimum:
                problems.append(f"{state}: {what}: {fg.name()} on {bg.name()} is {ratio:.2f}:1")
    return problems
