"""Small widgets and layout helpers shared by the windows.

Colours: text takes the palette's colours, so it reads in a light and a dark theme alike. A fixed
colour appears only as a foreground/background pair on one widget (the DEMO banner, a step's badge,
an error box), and each pair is readable on its own (the contrast test checks them).
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QGuiApplication, QWheelEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from searchdesk_server.text.phrases import plural as plural  # one definition for both programs

#: Dark red on pale red: an error that reads the same in a light and a dark theme.
ERROR_STYLE = "background:#fdecea;color:#8a1c1c;padding:4px;border-radius:3px;"
BANNER_STYLE = "background:#fff3c4;color:#5c4400;padding:6px;border-radius:4px;font-weight:bold;"


def plain_label(text: str, *, wrap: bool = True, selectable: bool = True) -> QLabel:
    """A QLabel that never interprets its text (no rich text, no links): every label that may show what a
    caller or Google supplied is made here, so no value can format, link or hide anything."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    label.setWordWrap(wrap)
    label.setOpenExternalLinks(False)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def demo_banner(text: str = "") -> QLabel:
    """The yellow strip every demo window carries: nobody should mistake made-up data for theirs."""
    banner = plain_label(
        text or "DEMO: SearchDesk is running on made-up Search Console data. No Google account is used.",
        selectable=False,
    )
    banner.setObjectName("demoBanner")
    banner.setStyleSheet(BANNER_STYLE)
    return banner


def page_column(demo: bool, heading: str, scale: float) -> tuple[QWidget, QVBoxLayout]:
    """A window's content, as every window with steps or settings opens: the demo's strip first (in
    the demo), then the window's heading; the caller adds the rest to the column."""
    content = QWidget()
    column = QVBoxLayout(content)
    if demo:
        column.addWidget(demo_banner())
    column.addWidget(bold(plain_label(heading, selectable=False), scale))
    return content, column


def error_label(text: str = "") -> QLabel:
    """A sentence that says what went wrong and what to do, hidden while there is none."""
    label = plain_label(text)
    label.setObjectName("error")
    label.setStyleSheet(ERROR_STYLE)
    label.setVisible(bool(text))
    return label


def set_error(label: QLabel, text: str) -> None:
    label.setText(text)
    label.setVisible(bool(text))


class ChoiceBox(QComboBox):
    """A combo box that a mouse wheel changes only once the person has clicked (or tabbed) into it.

    Why: Qt's combo box takes the wheel whenever the pointer is over it, so scrolling a window with the
    wheel changed whatever box the pointer happened to pass over (Settings' default property became one
    no account can read, and Close then asked whether to save it). Here a wheel over a box without the
    keyboard focus is left to the page around it, which scrolls on; a wheel never gives the box the focus.
    Every combo box of the app is one of these (a test walks every window for a plain one)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # Qt's WheelFocus would let the wheel take it

    def wheelEvent(self, event: QWheelEvent) -> None:
        if self.hasFocus():
            super().wheelEvent(event)
        else:
            event.ignore()  # on to the scroll area around it


class NumberBox(QSpinBox):
    """A spin box that a mouse wheel changes only once clicked (or tabbed) into: the same rule as
    `ChoiceBox`, for numbers."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def wheelEvent(self, event: QWheelEvent) -> None:
        if self.hasFocus():
            super().wheelEvent(event)
        else:
            event.ignore()


SUPPORT = "Details for support"
"""The one name of what is for whoever helps the person (versions, the names of the parts that failed)."""


class SupportDetails(QWidget):
    """Technical facts a person can pass on to whoever helps them, collapsed under "Details for support".

    Why collapsed: the person's own words come first (what went wrong, what to do); names of keyrings,
    libraries and versions mean something only to support, so they wait behind one click, with a
    button that copies them whole. Hidden altogether while there are none.
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self.setObjectName("support")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.toggle = QToolButton()
        self.toggle.setObjectName("supportToggle")
        self.toggle.setText(SUPPORT)
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.toggled.connect(self._expand)
        self.body = QWidget()
        inner = QHBoxLayout(self.body)
        inner.setContentsMargins(16, 0, 0, 0)
        self.text = plain_label("")
        self.text.setObjectName("supportDetails")
        self.copy_button = QPushButton("Copy details")
        self.copy_button.setAutoDefault(False)
        keep_width(self.copy_button, "Copied")
        self.copy_button.clicked.connect(self.copy)
        inner.addWidget(self.text, 1)
        inner.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.body)
        self.body.setVisible(False)
        self.set_text(text)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    def set_text(self, text: str) -> None:
        """The details (plain text); none hides the whole widget and folds it up again."""
        if text != self.text.text():
            self.copy_button.setText("Copy details")
        self.text.setText(text)
        if not text:
            self.toggle.setChecked(False)
        self.setVisible(bool(text))

    def _expand(self, shown: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        self.body.setVisible(shown)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text.text())
        self.copy_button.setText("Copied")


def keep_width(button: QPushButton, *texts: str) -> None:
    """Make `button` as wide as it is with the widest of `texts` (the words it will say, "Copied"): when
    its words change, it keeps its size and the buttons beside it do not move."""
    shown = button.text()
    widest = 0
    for text in (shown, *texts):
        button.setText(text)
        widest = max(widest, button.sizeHint().width())
    button.setText(shown)
    button.setMinimumWidth(widest)


def clear_layout(layout: QLayout) -> None:
    """Take every item out of `layout` and delete its widget, for a list drawn again from fresh facts
    (a step's buttons, Settings' accounts, the archive's lines). Hidden first: a widget out of its
    layout but not yet deleted would otherwise stay painted where it stood until the next event loop turn."""
    while layout.count():
        item = layout.takeAt(0)
        widget = item.widget() if item is not None else None
        if widget is not None:
            widget.hide()
            widget.deleteLater()


def panel(frame: QFrame, name: str) -> QVBoxLayout:
    """Make `frame` one of the windows' framed panels (a question, a notice, a card, the check's result),
    all framed alike and named for the tests and screenshots; returns its column."""
    frame.setObjectName(name)
    frame.setFrameShape(QFrame.Shape.StyledPanel)
    return QVBoxLayout(frame)


def bold(label: QLabel, scale: float = 1.0) -> QLabel:
    font = label.font()
    font.setBold(True)
    if scale != 1.0:
        font.setPointSizeF(font.pointSizeF() * scale)
    label.setFont(font)
    return label


ZWSP = "\u200b"


def breakable(address: str) -> str:
    """An e-mail address that may wrap at its @ and its dots on a narrow screen (zero-width spaces: only
    for text that is shown and not selectable, since a copied address must be the address)."""
    return address.replace("@", f"{ZWSP}@{ZWSP}").replace(".", f"{ZWSP}.")


def breakable_path(path: str) -> str:
    """A file path that may wrap after each folder on a narrow screen: Claude Desktop's settings file on
    Windows (inside its MSIX package, ~120 characters with no space) is wider than the window. The
    same rule as `breakable`: only for text that is shown and not selectable."""
    return path.replace("\\", f"\\{ZWSP}").replace("/", f"/{ZWSP}")


def scrolling(content: QWidget) -> QScrollArea:
    """``content`` in a frameless scroll area: a window on a small screen scrolls instead of squeezing."""
    area = QScrollArea()
    area.setObjectName("page")  # a window's whole content: it should never need to scroll sideways
    area.setWidget(content)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
    return area


def fit_height(window: QWidget) -> None:
    """Make a window exactly as tall as its wrapped text needs at its present width.

    A top-level window sizes itself from its labels' size hints, which Qt computes for wrapped text
    at a narrow guess; at the real width the text needs fewer lines, and the spare height would be
    spread as gaps between the lines of the dialog.
    """
    layout = window.layout()
    if layout is None:
        return
    height = layout.totalHeightForWidth(window.width()) if layout.hasHeightForWidth() else window.sizeHint().height()
    room = window.screen().availableGeometry().height() - 40  # never taller than the screen: the values scroll
    height = min(max(height, window.minimumHeight()), room)
    if height > 0 and height != window.height():
        window.resize(window.width(), height)


def in_front(window: QWidget, *, activate: bool = False) -> None:
    """Show a window above the others (a window already open comes forward rather than a second one
    opening); `activate` also gives it the keyboard, for a window the person is about to type in."""
    window.show()
    window.raise_()
    if activate:
        window.activateWindow()


def fit_to_screen(window: QWidget, width: int, height: int) -> None:
    """Open ``window`` at the size it wants, but never larger than the screen's free area."""
    screen = window.screen().availableGeometry()
    frame = 40  # room for the title bar and borders the window manager adds
    window.resize(min(width, screen.width() - frame // 2), min(height, screen.height() - frame))


class FlowLayout(QLayout):
    """Buttons in a row that wraps onto the next line when the window is narrow, so none is squeezed.

    The flow layout of Qt's examples (heightForWidth: the height is what the rows need at a width).
    """

    def __init__(self, parent: QWidget | None = None, *, align_right: bool = False) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._right = align_right
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:
        width = sum(i.sizeHint().width() for i in self._items) + self._gap() * max(0, len(self._items) - 1)
        height = max((i.sizeHint().height() for i in self._items), default=0)
        m = self.contentsMargins()
        return QSize(width + m.left() + m.right(), height + m.top() + m.bottom())

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize().expandedTo(item.sizeHint()))
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    def _gap(self) -> int:
        spacing = self.spacing()
        if spacing >= 0:
            return spacing
        parent = self.parentWidget()
        style = parent.style() if parent is not None else None
        return style.pixelMetric(QStyle.PixelMetric.PM_LayoutHorizontalSpacing) if style is not None else 6

    def _arrange(self, rect: QRect, *, move: bool) -> int:
        m: QMargins = self.contentsMargins()
        area = rect.marginsRemoved(m)
        gap = self._gap()
        rows: list[list[tuple[QLayoutItem, QSize]]] = [[]]
        x = 0
        for item in self._items:
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            if rows[-1] and x + gap + hint.width() > area.width():
                rows.append([])
                x = 0
            x += (gap if rows[-1] else 0) + hint.width()
            rows[-1].append((item, hint))
        y = area.y()
        for row in rows:
            if not row:
                continue
            height = max(h.height() for _, h in row)
            used = sum(h.width() for _, h in row) + gap * (len(row) - 1)
            x = area.x() + (max(0, area.width() - used) if self._right else 0)
            for item, hint in row:
                if move:
                    item.setGeometry(QRect(QPoint(x, y), hint))
                x += hint.width() + gap
            y += height + gap
        return y - gap - rect.y() + m.bottom() if any(rows) else m.top() + m.bottom()


def exec_yes(box: QMessageBox) -> bool:
    """Show a question box; True for Yes. The box is deleted after (a window asks through this, or a test's
    stand-in, so the question can be answered without a person)."""
    try:
        return bool(box.exec() == QMessageBox.StandardButton.Yes)
    finally:
        box.deleteLater()


class OnceQuestion(QFrame):
    """A yes/no question asked once, in the main window rather than a box over the setup steps: it stays
    until answered, then hides and says the answer (`answered`). One widget for every such question
    (the update check's, the archive's), so they look and behave alike; each names its words."""

    answered = Signal(bool)

    def __init__(self, name: str, question: str, explained: str, yes: str, no: str = "No, thanks") -> None:
        super().__init__()
        layout = panel(self, name)
        layout.addWidget(bold(plain_label(question, selectable=False), 1.1))
        layout.addWidget(plain_label(explained))
        buttons = FlowLayout(align_right=True)
        self.yes_button = QPushButton(yes)
        self.no_button = QPushButton(no)
        for button, answer in ((self.yes_button, True), (self.no_button, False)):
            button.setAutoDefault(False)
            button.clicked.connect(lambda _checked=False, a=answer: self._answer(a))
            buttons.addWidget(button)
        layout.addLayout(buttons)

    def _answer(self, yes: bool) -> None:
        self.hide()
        self.answered.emit(yes)
