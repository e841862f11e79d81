"""The native approval dialog, and the queue that shows waiting questions one at a time.

Everything a caller or Google supplied is shown as plain text (``Qt.PlainText`` on every label), so
no value can format, link or hide anything.

Only a person who looked answers. The dialog appears without taking the keyboard from the window the
person is typing in (``WA_ShowWithoutActivating``, no ``activateWindow`` on show; it stays on top).
It is *armed* only once it has been on screen and active for ``ARM_DELAY_MS``; before that no key or
click answers: both buttons are disabled, Enter and Escape do nothing, and closing the window only hides it
(the question stays open, reachable from the tray, the main window's Review and the notification).
So the click that activates an inactive dialog never answers it. Losing activation (or being hidden
or minimised) disarms it; arming starts again at the next activation, so a click that brings the
dialog back to the front cannot answer either.

Once armed, today's rules: Deny is the default button; Approve needs a deliberate click or Tab then
Space; Enter, Escape and closing the window all deny.

A question asked again with other words (the book's ``replaced``: Google's side changed between two
builds of the same call) takes the place of the one on screen in the same window (``replace``): the
window keeps its place and size, so the buttons stay exactly where they were, the new words scroll
if they need more room, a line says the question changed, and arming starts again from the
beginning, so a click meant for the old words can never answer the new ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QFont,
    QHideEvent,
    QKeyEvent,
    QResizeEvent,
    QShowEvent,
    QTextLayout,
    QTextOption,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from searchdesk_server.agent.protocol import QUESTION_OPEN_S, ApprovalRequest, minutes, question_of
from searchdesk_server.approval.question import VALUES_HEADING, asked_by

from .approvals import ApprovalBook, Entry, Origin, State, origin
from .titles import title

#: How long the dialog must have been on screen and active before a key or click can answer it.
ARM_DELAY_MS = 800
ASKED_AGAIN = "Claude asked again after you said no"
NOT_ARMED_HINT = "The buttons work once this window has been in front for a moment."
ARMED_HINT = "Enter, Escape and closing this window all mean Deny."
BANNERS = {
    Origin.DEMO: "DEMO: this question comes from the demo; nothing here touches a real Google account.",
    Origin.REAL_IN_DEMO_APP: "From a real SearchDesk server, not the demo: approving changes a real Google account.",
}
STOPPED_WAITING = (
    f"Claude stopped waiting — answer here, then ask Claude to try again within {minutes(QUESTION_OPEN_S)}."
)
REWORDED = (
    "This question changed while it was open: it was asked again, and Google's side now makes it read as "
    "below. Read it again before you answer."
)


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


def first_sentence(text: str) -> str:
    """The server's opening sentence, for a one-line mention of a question (main window, tray)."""
    text = text.strip()
    match = re.match(r".+?[.!?](?=\s|$)", text, re.DOTALL)
    return match.group(0) if match else text


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
        self._content = content  # held here too: widget() may say None, which this area never holds
        self.setWidget(content)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

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


class ApprovalDialog(QDialog):
    """One question. ``decided(key, approve)`` is emitted at most once, and only when armed (`key`: the
    book's entry key: the fingerprint and who asked)."""

    decided = Signal(str, bool)
    armed_changed = Signal(bool)

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
        self.key = entry.key  # the fingerprint, who asked and the words
        self.fingerprint = entry.fingerprint  # the tool and its targets alone
        self._done = False
        self._armed = False
        self._held = False  # new words in place of old on screen: the window keeps its size (``replace``)
        self._arm_timer = QTimer(self)
        self._arm_timer.setSingleShot(True)
        self._arm_timer.setInterval(max(arm_delay_ms, 0))
        self._arm_timer.timeout.connect(self._arm)
        request = entry.request
        source = origin(request, demo_app=demo)
        self.setWindowTitle(title(source is Origin.DEMO, "approval needed"))
        self.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint, True)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
        self.setWindowFlag(Qt.WindowType.WindowContextHelpButtonHint, False)
        self.setModal(False)
        self.setMinimumWidth(480)

        outer = QVBoxLayout(self)
        if source is not Origin.REAL:
            banner = plain_label(BANNERS[source], selectable=False)
            banner.setObjectName("demoBanner")
            banner.setStyleSheet("background:#fff3c4;color:#5c4400;padding:4px;border-radius:3px;")
            outer.addWidget(banner)
        # The question scrolls when the screen is too small for it (200 owners on a small screen);
        # the "stopped waiting" line and the buttons below it stay in view.
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        self._question_layout = layout

        self.reworded_label = plain_label(REWORDED, selectable=False)
        self.reworded_label.setObjectName("reworded")
        self.reworded_label.setStyleSheet("background:#fff3c4;color:#5c4400;padding:4px;border-radius:3px;")
        self.reworded_label.setVisible(False)
        layout.addWidget(self.reworded_label)
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
        self.value_labels: list[tuple[QLabel, ValueText]] = []
        self._values = self._value_rows(request)
        layout.addWidget(self._values)
        layout.addSpacing(6)

        self.client_label = plain_label(asked_by(request.client.name, request.client.version))
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
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.deny_button)
        outer.addLayout(buttons)
        # Below the buttons: its text changes when the dialog arms, and nothing above may move then.
        self.arm_hint = plain_label(NOT_ARMED_HINT, selectable=False)
        outer.addWidget(self.arm_hint)
        self.deny_button.clicked.connect(lambda: self._decide(False))
        self.approve_button.clicked.connect(lambda: self._decide(True))
        self.setTabOrder(self.deny_button, self.approve_button)
        self._set_buttons(False)

    def _value_rows(self, request: ApprovalRequest) -> QWidget:
        """The values under the question, one `label: value` row each (``value_labels`` holds them)."""
        values = QWidget()
        grid = QGridLayout(values)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setColumnStretch(1, 1)
        self.value_labels = []
        for row, item in enumerate(request.values):
            key = plain_label(item.label + ":", wrap=False)
            key.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
            val = ValueText(item.full)  # whole: a long URL too, which the question's words shorten
            grid.addWidget(key, row, 0)
            grid.addWidget(val, row, 1)
            self.value_labels.append((key, val))
        return values

    def replace(self, entry: Entry) -> None:
        """Show `entry`'s words in place of the ones on screen (the same call asked again with other
        words, which replaced them in the book). The window keeps its geometry, so the buttons do not
        move; the words scroll if they need more room. Arming starts again: nothing answers the new
        words before they have been in front for the whole delay."""
        request = entry.request
        self.key = entry.key
        self.fingerprint = entry.fingerprint
        self._arm_timer.stop()
        was_armed, self._armed = self._armed, False
        self._held = True
        self._set_buttons(False)
        if was_armed:
            self.armed_changed.emit(False)
        self.reworded_label.setVisible(True)
        self.what_label.setText(request.what)
        self.consequence_label.setText(request.consequence)
        rows = self._value_rows(request)
        self._question_layout.replaceWidget(self._values, rows)
        self._values.hide()  # out of the layout, but on screen until it is deleted
        self._values.deleteLater()
        self._values = rows
        self.client_label.setText(asked_by(request.client.name, request.client.version))
        self.set_caller_waiting(entry.waited_on)
        self.body.updateGeometry()  # the layout learns the new words' height (used when shown afresh)
        self.body.verticalScrollBar().setValue(0)  # the line that says it changed, and the words' start
        self._update_arming()

    # --- arming ---
    @property
    def armed(self) -> bool:
        return self._armed

    @property
    def arming(self) -> bool:
        """On screen and active, waiting out the delay."""
        return self._arm_timer.isActive()

    def _set_buttons(self, armed: bool) -> None:
        self.approve_button.setEnabled(armed)
        self.deny_button.setEnabled(armed)
        self.arm_hint.setText(ARMED_HINT if armed else NOT_ARMED_HINT)
        if self.isVisible() and not self._held:
            fit_height(self)  # should the hint wrap differently: it is below the buttons, they stay put
        if armed:
            self.deny_button.setFocus()

    def _in_front(self) -> bool:
        return self.isVisible() and self.isActiveWindow() and not self.isMinimized()

    def _update_arming(self) -> None:
        """Arm after the delay while on screen and active; any loss of that disarms at once."""
        if not self._in_front():
            self._arm_timer.stop()
            if self._armed:
                self._armed = False
                self._set_buttons(False)
                self.armed_changed.emit(False)
        elif not self._armed and not self._arm_timer.isActive():
            self._arm_timer.start()

    def _arm(self) -> None:
        if self._armed or self._done or not self._in_front():
            return
        self._armed = True
        self._set_buttons(True)
        self.armed_changed.emit(True)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.ActivationChange, QEvent.Type.WindowStateChange):
            self._update_arming()

    def set_waiting_after(self, count: int) -> None:
        noun = "question" if count == 1 else "questions"
        self.queue_label.setText(f"{count} more {noun} waiting after this one." if count else "")
        self.queue_label.setVisible(bool(count))

    def set_caller_waiting(self, waiting: bool) -> None:
        """Claude's call gave up waiting: the answer is kept, and Claude must ask again to use it."""
        self.stopped_label.setVisible(not waiting)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._held = False  # shown afresh (it was hidden): it may fit its words again
        fit_height(self)
        self._update_arming()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._update_arming()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Enter/Return anywhere, including on a focused Approve button, means the default: Deny.
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._decide(False)
            return
        super().keyPressEvent(event)

    def reject(self) -> None:  # Escape
        self._decide(False)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._decide(False)  # armed: a deny; not armed: the window only hides, the question stays open
        event.accept()

    def close_silently(self) -> None:
        """Close without deciding (the question was answered elsewhere, cancelled or expired)."""
        self._done = True
        super().done(QDialog.DialogCode.Rejected)

    def _decide(self, approve: bool) -> None:
        """Every answer passes here: nothing counts before the dialog is armed, and only once."""
        if self._done or not self._armed:
            return
        self._done = True
        self.decided.emit(self.key, approve)
        super().done(QDialog.DialogCode.Accepted if approve else QDialog.DialogCode.Rejected)


class ApprovalQueue(QObject):
    """Shows the oldest open question; the next one appears when it is answered or withdrawn.

    A dialog is shown without activating it; only ``bring_forward`` (the person's own click on Review,
    in the tray, the main window or a notification) activates it. A dialog closed before it was armed
    stays the current one, hidden, until Review or until another question arrives.
    """

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
        self._on_answer = on_answer or (lambda key, ok: self.book.answer(key, ok, "dialog"))
        self._reshow = False  # a question arrived that the person has not seen yet
        book.on_change.append(self._book_changed)
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)
        self._ticker.start()

    def _book_changed(self, entry: Entry) -> None:
        if entry.state is State.PENDING and (self.dialog is None or self.dialog.key != entry.key):
            self._reshow = True
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
            entry = self.book.get(current.key)
            if entry is None:
                entry = self._asked_again(current.key)
                if entry is not None:
                    current.replace(entry)
            if entry is None or entry.state is not State.PENDING:
                self.dialog = None
                current.close_silently()
                current.deleteLater()
            else:
                current.set_waiting_after(len(waiting) - 1)
                if self._reshow and not current.isVisible():  # hidden before arming; something new came
                    current.show()
                current.set_caller_waiting(entry.waited_on)
                self._reshow = False
                return
        self._reshow = False
        if waiting:
            self.show(waiting[0], len(waiting) - 1)
        self.current_changed.emit()

    def _asked_again(self, key: str) -> Entry | None:
        """The open question that took the place of the one `key` names (the same fingerprint and
        requester, other words), if any."""
        entry = self.book.get(question_of(key)[0])
        return entry if entry is not None and entry.is_open and entry.replaced else None

    def show(self, entry: Entry, waiting_after: int) -> None:
        dialog = ApprovalDialog(entry, demo=self.demo, waiting_after=waiting_after, arm_delay_ms=self.arm_delay_ms)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        dialog.decided.connect(self._decided)
        self.dialog = dialog
        dialog.show()  # on top, but the keyboard stays where the person is typing
        dialog.raise_()

    def bring_forward(self) -> None:
        """The person asked to see the question: show it and make it the active window (it arms after
        the delay, like any activation)."""
        if self.dialog is None:
            self.refresh()
        dialog = self.dialog
        if dialog is not None:
            # Asked for by the person: this one show may take the keyboard (the window manager sees the
            # click's time on the map, not "do not focus"); later shows go back to leaving it alone.
            dialog.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, False)
            dialog.show()
            dialog.raise_()
            dialog.activateWindow()
            dialog.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)

    def reconsider(self, key: str) -> None:
        """Change my mind about a deny: the question opens again and comes forward, to be answered
        in the dialog once it is armed, like any other. Never an approve."""
        if self.book.reconsider(key) is not None:
            self.bring_forward()

    def _decided(self, key: str, approve: bool) -> None:
        self._on_answer(key, approve)
        self.refresh()
