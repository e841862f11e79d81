"""The native approval dialog, and the queue that shows waiting questions one at a time.

Everything a caller or Google supplied is shown as plain text (``Qt.PlainText`` on every label), so
no value can format, link or hide anything. Deny is the default button; Approve is armed only after
a short delay (a click meant for another window cannot land on it) and needs a deliberate click or
Tab then Space: Enter, Escape and closing the window all deny.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QFont, QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from .approvals import ApprovalBook, Entry, State
from .titles import title

try:  # the server's own words, so the dialog, the notification and the client's dialog all agree
    from searchdesk_server.approval.question import VALUES_HEADING as VALUES_HEADING
except ImportError:  # pragma: no cover (an older server package)
    VALUES_HEADING = "Supplied by the caller or by Google (check them; they are not SearchDesk's words):"
ARM_DELAY_MS = 800
STOPPED_WAITING = "Claude stopped waiting — answer here, then ask Claude to try again within 5 minutes."


def plain_label(text: str, *, wrap: bool = True, selectable: bool = True) -> QLabel:
    """A QLabel that never interprets its text (no rich text, no links)."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    label.setWordWrap(wrap)
    label.setOpenExternalLinks(False)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


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


class FittingScrollArea(QScrollArea):
    """A frameless scroll area exactly as tall as its content at its width; it scrolls only when its
    window is held smaller (by the screen)."""

    def __init__(self, content: QWidget) -> None:
        super().__init__()
        self.setWidget(content)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        content = self.widget()
        margins = self.contentsMargins()
        inner = width - margins.left() - margins.right()
        need = content.heightForWidth(inner) if content.hasHeightForWidth() else content.sizeHint().height()
        return need + margins.top() + margins.bottom()

    def sizeHint(self) -> QSize:
        hint = self.widget().sizeHint()
        return QSize(hint.width(), self.heightForWidth(hint.width()))


class ApprovalDialog(QDialog):
    """One question. ``decided(fingerprint, approve)`` is emitted at most once."""

    decided = Signal(str, bool)

    def __init__(
        self,
        entry: Entry,
        *,
        demo: bool = False,
        waiting_after: int = 0,
        arm_delay_ms: int = ARM_DELAY_MS,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.fingerprint = entry.fingerprint
        self._done = False
        request = entry.request
        self.setWindowTitle(title(demo, "approval needed"))
        self.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint, True)
        self.setWindowFlag(Qt.WindowType.WindowContextHelpButtonHint, False)
        self.setModal(False)
        self.setMinimumWidth(480)

        outer = QVBoxLayout(self)
        if demo:
            banner = plain_label("DEMO: nothing here touches a real Google account.", selectable=False)
            banner.setObjectName("demoBanner")
            banner.setStyleSheet("background:#fff3c4;color:#5c4400;padding:4px;border-radius:3px;")
            outer.addWidget(banner)
        # The question scrolls when the screen is too small for it (200 owners on a small screen);
        # the "stopped waiting" line and the buttons below it stay in view.
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)

        self.what_label = plain_label(request.what)
        bold = QFont(self.what_label.font())
        bold.setBold(True)
        bold.setPointSizeF(bold.pointSizeF() * 1.15)
        self.what_label.setFont(bold)
        self.consequence_label = plain_label(request.consequence)
        layout.addWidget(self.what_label)
        layout.addWidget(self.consequence_label)

        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        layout.addWidget(line)
        self.values_heading = plain_label(VALUES_HEADING, selectable=False)
        layout.addWidget(self.values_heading)
        values = QWidget()
        grid = QGridLayout(values)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setColumnStretch(1, 1)
        self.value_labels: list[tuple[QLabel, QLabel]] = []
        for row, item in enumerate(request.values):
            key = plain_label(item.label + ":", wrap=False)
            key.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
            val = plain_label(item.value)
            mono = QFont(val.font())
            mono.setStyleHint(QFont.StyleHint.Monospace)
            mono.setFamily("monospace")
            val.setFont(mono)
            grid.addWidget(key, row, 0)
            grid.addWidget(val, row, 1)
            self.value_labels.append((key, val))
        layout.addWidget(values)
        layout.addSpacing(6)

        client = request.client.name + (f" {request.client.version}" if request.client.version else "")
        self.client_label = plain_label(f"Asked by a program that says it is: {client}")
        layout.addWidget(self.client_label)
        self.queue_label = plain_label("", selectable=False)
        layout.addWidget(self.queue_label)  # parented first: a bare label made visible is a window of its own
        self.set_waiting_after(waiting_after)
        layout.addStretch(1)
        self.body = FittingScrollArea(body)
        outer.addWidget(self.body, 1)
        self.stopped_label = plain_label(STOPPED_WAITING, selectable=False)
        self.stopped_label.setObjectName("stoppedWaiting")
        self.stopped_label.setFont(bold)
        outer.addWidget(self.stopped_label)
        self.set_caller_waiting(entry.waited_on)

        outer.addSpacing(6)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.deny_button = QPushButton("Deny")
        self.approve_button = QPushButton("Approve")
        self.deny_button.setDefault(True)
        self.deny_button.setAutoDefault(True)
        self.approve_button.setAutoDefault(False)
        self.approve_button.setDefault(False)
        self.approve_button.setEnabled(arm_delay_ms <= 0)
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.deny_button)
        outer.addLayout(buttons)
        self.deny_button.clicked.connect(lambda: self._decide(False))
        self.approve_button.clicked.connect(lambda: self._decide(True))
        self.setTabOrder(self.deny_button, self.approve_button)
        self.deny_button.setFocus()
        if arm_delay_ms > 0:
            QTimer.singleShot(arm_delay_ms, self, self._arm)

    def _arm(self) -> None:
        self.approve_button.setEnabled(True)

    def set_waiting_after(self, count: int) -> None:
        noun = "question" if count == 1 else "questions"
        self.queue_label.setText(f"{count} more {noun} waiting after this one." if count else "")
        self.queue_label.setVisible(bool(count))

    def set_caller_waiting(self, waiting: bool) -> None:
        """Claude's call gave up waiting: the answer is kept, and Claude must ask again to use it."""
        self.stopped_label.setVisible(not waiting)

    def showEvent(self, event: object) -> None:
        super().showEvent(event)  # type: ignore[arg-type]
        fit_height(self)
        self.deny_button.setFocus()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Enter/Return anywhere, including on a focused Approve button, means the default: Deny.
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._decide(False)
            return
        super().keyPressEvent(event)

    def reject(self) -> None:  # Escape
        self._decide(False)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._done:
            self._decide(False)
        event.accept()

    def close_silently(self) -> None:
        """Close without deciding (the question was answered elsewhere, cancelled or expired)."""
        self._done = True
        super().done(QDialog.DialogCode.Rejected)

    def _decide(self, approve: bool) -> None:
        if self._done:
            return
        self._done = True
        self.decided.emit(self.fingerprint, approve)
        super().done(QDialog.DialogCode.Accepted if approve else QDialog.DialogCode.Rejected)


class ApprovalQueue(QObject):
    """Shows the oldest open question; the next one appears when it is answered or withdrawn."""

    current_changed = Signal()

    def __init__(
        self,
        book: ApprovalBook,
        *,
        demo: bool = False,
        arm_delay_ms: int = ARM_DELAY_MS,
        on_answer: Callable[[str, bool], None] | None = None,
    ) -> None:
        super().__init__()
        self.book = book
        self.demo = demo
        self.arm_delay_ms = arm_delay_ms
        self.dialog: ApprovalDialog | None = None
        self._on_answer = on_answer or (lambda fp, ok: self.book.answer(fp, ok, "dialog"))
        book.on_change.append(self._book_changed)
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)
        self._ticker.start()

    def _book_changed(self, entry: Entry) -> None:
        QTimer.singleShot(0, self, self.refresh)

    def _tick(self) -> None:
        self.book.expire()

    def close(self) -> None:
        """Stop showing questions (app quit); an open dialog closes without deciding anything."""
        self._ticker.stop()
        if self._book_changed in self.book.on_change:
            self.book.on_change.remove(self._book_changed)
        if self.dialog is not None:
            self.dialog.close_silently()
            self.dialog.deleteLater()
            self.dialog = None

    def refresh(self) -> None:
        waiting = self.book.open_entries()
        current = self.dialog
        if current is not None:
            entry = self.book.get(current.fingerprint)
            if entry is None or entry.state is not State.PENDING:
                self.dialog = None
                current.close_silently()
                current.deleteLater()
            else:
                current.set_waiting_after(len(waiting) - 1)
                current.set_caller_waiting(entry.waited_on)
                return
        if waiting:
            self.show(waiting[0], len(waiting) - 1)
        self.current_changed.emit()

    def show(self, entry: Entry, waiting_after: int) -> None:
        dialog = ApprovalDialog(entry, demo=self.demo, waiting_after=waiting_after, arm_delay_ms=self.arm_delay_ms)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        dialog.decided.connect(self._decided)
        self.dialog = dialog
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()

    def bring_forward(self) -> None:
        if self.dialog is not None:
            self.dialog.show()
            self.dialog.raise_()
            self.dialog.activateWindow()
        else:
            self.refresh()

    def _decided(self, fingerprint: str, approve: bool) -> None:
        self._on_answer(fingerprint, approve)
        self.refresh()
