"""How the approval dialog's words take exactly the room they need.

``ValueText`` shows one of the question's values whole, as plain text a person can select and copy;
``FittingScrollArea`` holds everything above the dialog's buttons, and inside it the values alone, and is
exactly as tall as its words at its width, scrolling only when the window is held smaller. Neither
interprets its text.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFont, QResizeEvent, QTextLayout, QTextOption, QWheelEvent
from PySide6.QtWidgets import QFrame, QPlainTextEdit, QScrollArea, QSizePolicy, QWidget


class ValueText(QPlainTextEdit):
    """A value under the question, whole (``Value.full``): plain text a person can select and copy exactly,
    wrapped at the dialog's width between words where it can and anywhere in a long address.

    Not a QLabel: a label wraps only between words, so one long URL would make the dialog as wide as the
    URL; and the zero-width spaces that let `widgets.breakable` wrap an address would be copied with it.
    Read-only, no frame, no background of its own and no scroll bars: exactly as tall as its text at its
    width (``heightForWidth``), so the dialog's own scroll area is the only one.
    """

    WRAP = QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere

    def __init__(self, text: str) -> None:
        super().__init__()
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setPlainText(text)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)  # as a selectable label: Tab goes to the buttons
        self.setTabChangesFocus(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(self.WRAP)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.document().setDocumentMargin(0)
        self.viewport().setAutoFillBackground(False)
        mono = QFont(self.font())
        mono.setStyleHint(QFont.StyleHint.Monospace)
        mono.setFamily("monospace")
        self.setFont(mono)
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def text(self) -> str:
        """What is shown, as a label's ``text()``: exactly the value."""
        return self.toPlainText()

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        """The height the wrapped text needs at `width`, laid out as the document lays it out."""
        margins = self.contentsMargins()
        room = max(width - margins.left() - margins.right(), 1)
        layout = QTextLayout(self.toPlainText(), self.font())
        option = QTextOption()
        option.setWrapMode(self.WRAP)
        layout.setTextOption(option)
        height = 0.0
        layout.beginLayout()
        while (line := layout.createLine()).isValid():
            line.setLineWidth(room)
            height += line.height()
        layout.endLayout()
        # One pixel more than the lines: at exactly their height the edit still scrolls by a line.
        return int(height + 0.999) + 1 + margins.top() + margins.bottom()

    def sizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        width = min(metrics.horizontalAdvance(self.toPlainText()) + 2, 60 * metrics.averageCharWidth())
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:
        width = 12 * self.fontMetrics().averageCharWidth()
        return QSize(width, self.heightForWidth(width))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.updateGeometry()  # the height for the new width

    def wheelEvent(self, event: QWheelEvent) -> None:
        event.ignore()  # the dialog scrolls, not one value (and Ctrl+wheel does not zoom it)


class FittingScrollArea(QScrollArea):
    """A frameless scroll area exactly as tall as its content at its width; it scrolls only when its
    window is held smaller (by the screen)."""

    def __init__(self, content: QWidget) -> None:
        super().__init__()
        self._content = content  # held here too: widget() may say None, which this area never holds
        #: Called after each resize (the dialog bounds the values' own area to the room left: ``resized``).
        self.resized: Callable[[], None] | None = None
        # Its height is the height for the view's width alone: not the taller minimum its wrapped text would
        # have at its narrowest, which made the words scroll with room to spare.
        policy = content.sizePolicy()
        policy.setVerticalPolicy(QSizePolicy.Policy.Ignored)
        content.setSizePolicy(policy)
        self.setWidget(content)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def set_content(self, content: QWidget) -> QWidget:
        """Hold `content` in place of what it held (returned, for the caller to delete)."""
        policy = content.sizePolicy()
        policy.setVerticalPolicy(QSizePolicy.Policy.Ignored)
        content.setSizePolicy(policy)
        old = self.takeWidget()
        self.setWidget(content)
        self._content = content
        self.updateGeometry()
        return old if old is not None else content

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        content = self._content
        margins = self.contentsMargins()
        inner = width - margins.left() - margins.right()
        need = content.heightForWidth(inner) if content.hasHeightForWidth() else content.sizeHint().height()
        return need + margins.top() + margins.bottom()

    def sizeHint(self) -> QSize:
        hint = self._content.sizeHint()
        return QSize(hint.width(), self.heightForWidth(hint.width()))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.resized is not None:
            self.resized()
