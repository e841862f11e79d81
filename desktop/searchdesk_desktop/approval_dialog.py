"""The native approval dialog, and the queue that shows waiting questions one at a time.

Everything a caller or Google supplied is shown as plain text (``Qt.PlainText`` on every label), so
no value can format, link or hide anything.

Only a person who looked answers. The dialog appears without taking the keyboard from the window the
person is typing in (``WA_ShowWithoutActivating``, no ``activateWindow`` on show; it stays on top), where
no button lies under the pointer and away from the screen's right edge, where every system shows its
notifications (top right on GNOME and macOS, bottom right on Windows and KDE), so its own notification
never covers it. It is *armed* once it has been on screen for ``ARM_DELAY_MS`` (1 s, as browsers' security
dialogs wait), whether or not it was activated: a click on a window that is not in front counts too, so
the person's first click is not lost on waking it. A click counts only when the pointer moved onto that
button after the dialog appeared and has been over the dialog for ``REST_MS``: a pointer that happened to
be where a button appeared, or that passes over one on its way elsewhere, answers nothing. Keys count only
once the dialog has had the keyboard for the arming delay, and it never takes the keyboard by itself.
Before that no key or click answers, and closing the window only hides it (the question stays open,
reachable from the tray, the main window's "Show the question" and the notification). Being hidden or
minimised disarms it; arming starts again when it is shown.

Once armed, today's rules: Deny is the default button; Approve needs a deliberate click or Tab then
Space; Enter, Escape and closing the window all deny.

Nothing moves after it appears: its size is set when it is shown, with room kept for the line that says
Claude stopped waiting, so that line appears without moving the buttons or hiding a value; after a late
yes, what to tell Claude and until when appears at the top of the words, and the dialog closes by
itself. When the words do not fit the screen, everything above the buttons scrolls as one, the values
right under the sentence that points to them; the buttons stay at the bottom.

A question asked again with other words (the book's ``replaced``: Google's side changed between two
builds of the same call) takes the place of the one on screen in the same window (``replace``): the
window keeps its place and size, so the buttons stay exactly where they were, the new words scroll
if they need more room, a line says the question changed, and arming and the pointer rule start again
from the beginning, so a click meant for the old words can never answer the new ones.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QEvent, QMargins, QObject, QPoint, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QCursor,
    QEnterEvent,
    QFont,
    QGuiApplication,
    QHideEvent,
    QHoverEvent,
    QKeyEvent,
    QMouseEvent,
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
    QStyle,
    QVBoxLayout,
    QWidget,
)

from searchdesk_server.agent.protocol import QUESTION_OPEN_S, ApprovalRequest, minutes, question_of
from searchdesk_server.approval.question import VALUES_HEADING, action_name, asked_by, loss_heading

from .approvals import ApprovalBook, Entry, Origin, State, origin
from .titles import title

#: How long the dialog must have been on screen before a click can answer it (and had the keyboard before
#: a key can): at least a second, as browsers' security dialogs wait before their buttons work. The
#: notification's Approve waits the same (notify.py imports it).
ARM_DELAY_MS = 1000
#: How long the pointer must have been over the dialog before a click counts: a click on a pointer's way
#: elsewhere answers nothing.
REST_MS = 500
#: Room kept at the screen's right edge, where notifications appear (GNOME's banners are 420 px wide at
#: most, js/ui/messageTray.js; Windows' toasts 364 px; macOS's banners 344 pt; KDE's popups about 360 px).
NOTIFICATION_ROOM = 440
#: After a late yes, how long the dialog stays open with what to tell Claude (the person closes it sooner).
LATE_SHOWN_MS = 20_000
ASKED_AGAIN = "Claude asked again after you said no"
ARM_HINT = (
    f"The buttons work {ARM_DELAY_MS / 1000:g} second after this window appears, once the pointer is on one; "
    "keys, once you click into it. Enter, Escape or closing it: Deny."
)
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


def late_yes_words(answered: float) -> str:
    """What to do after approving a question Claude stopped waiting for, and until when: the dialog and the
    main window say it alike."""
    by = time.strftime("%H:%M", time.localtime(answered + QUESTION_OPEN_S))
    return (
        "Now tell Claude: “I approved it in SearchDesk, please try again.” Claude must ask again by "
        f"{by} ({minutes(QUESTION_OPEN_S)} after your answer), or the approval lapses and nothing is done."
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
        # Its height is the height for the view's width alone: not the taller minimum its wrapped text would
        # have at its narrowest, which made the words scroll with room to spare.
        policy = content.sizePolicy()
        policy.setVerticalPolicy(QSizePolicy.Policy.Ignored)
        content.setSizePolicy(policy)
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
        self._arm_delay_ms = max(arm_delay_ms, 0)
        self._arm_timer = QTimer(self)
        self._arm_timer.setSingleShot(True)
        self._arm_timer.setInterval(self._arm_delay_ms)
        self._arm_timer.timeout.connect(self._arm)
        self._clock = QElapsedTimer()
        self._clock.start()
        self._over_since: int | None = None  # when the pointer came over the dialog (self._clock ms)
        self._active_since: int | None = None  # when the dialog got the keyboard
        self._appeared_at: QPoint | None = None  # where the pointer was when the words appeared
        self._moved_onto: set[QObject] = set()  # the buttons the pointer moved onto since then
        self.late_answer = False  # a late yes given here: the dialog says what to tell Claude, then closes
        request = entry.request
        source = origin(request, demo_app=demo)
        self.setWindowTitle(title(source is Origin.DEMO, action_name(request.tool)))
        self.setWindowFlag(Qt.WindowType.WindowStaysOnTopHint, True)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
        self.setWindowFlag(Qt.WindowType.WindowContextHelpButtonHint, False)
        self.setModal(False)
        self.setMinimumWidth(480)

        outer = QVBoxLayout(self)
        # Everything above the buttons scrolls as one when the screen is too small for it (the values
        # early in it); the status line and the buttons below it stay in place.
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(0, 0, 0, 0)
        self._question_layout = layout
        if source is not Origin.REAL:
            banner = plain_label(BANNERS[source], selectable=False)
            banner.setObjectName("demoBanner")
            banner.setStyleSheet("background:#fff3c4;color:#5c4400;padding:4px;border-radius:3px;")
            layout.addWidget(banner)

        # After a late yes: what to tell Claude, at the top of the words (which are answered by then).
        self.late_label = plain_label("")
        self.late_label.setObjectName("lateYes")
        self.late_label.setStyleSheet("background:#e3f1e3;color:#1f4d1f;padding:6px;border-radius:3px;")
        self.late_label.setVisible(False)
        layout.addWidget(self.late_label)
        self.reworded_label = plain_label(REWORDED, selectable=False)
        self.reworded_label.setObjectName("reworded")
        self.reworded_label.setStyleSheet("background:#fff3c4;color:#5c4400;padding:4px;border-radius:3px;")
        self.reworded_label.setVisible(False)
        layout.addWidget(self.reworded_label)
        bold = QFont(self.font())
        bold.setBold(True)
        self.action_label = plain_label(action_name(request.tool), selectable=False)
        self.action_label.setObjectName("action")
        heading = QFont(bold)
        heading.setPointSizeF(heading.pointSizeF() * 1.3)
        self.action_label.setFont(heading)
        layout.addWidget(self.action_label)
        # Where people lose access: an icon and a heading of its own, never colour alone.
        self.loss_box = QFrame()
        self.loss_box.setObjectName("lossWarning")
        self.loss_box.setFrameShape(QFrame.Shape.StyledPanel)
        loss = QHBoxLayout(self.loss_box)
        loss.setContentsMargins(6, 4, 6, 4)
        icon = plain_label("", wrap=False, selectable=False)
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning).pixmap(24, 24))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        loss.addWidget(icon, 0)
        self.loss_label = plain_label("", selectable=False)
        self.loss_label.setFont(heading)
        loss.addWidget(self.loss_label, 1)
        layout.addWidget(self.loss_box)
        self.what_label = plain_label(request.what)
        what_font = QFont(bold)
        what_font.setPointSizeF(what_font.pointSizeF() * 1.15)
        self.what_label.setFont(what_font)
        self.consequence_label = plain_label(request.consequence)
        layout.addWidget(self.what_label)
        self._show_loss(request)
        # The values right under the sentence that points to them ("the property below"), before the
        # consequence: when the screen is too small for everything, what is acted on is in view first.
        self.values_heading = plain_label(VALUES_HEADING, selectable=False)
        layout.addWidget(self.values_heading)
        self.value_labels: list[tuple[QLabel, ValueText]] = []
        self._values = self._value_rows(request)
        layout.addWidget(self._values)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        layout.addWidget(line)
        layout.addWidget(self.consequence_label)
        layout.addSpacing(6)

        self.client_label = plain_label(asked_by(request.client.name, request.client.version))
        layout.addWidget(self.client_label)
        self.queue_label = plain_label("", selectable=False)
        layout.addWidget(self.queue_label)  # parented first: a bare label made visible is a window of its own
        self.set_waiting_after(waiting_after)
        layout.addStretch(1)
        self.body = FittingScrollArea(body)
        outer.addWidget(self.body, 1)
        # The status line: room for it is kept from the start (``place``, ``showEvent``), so saying that
        # Claude stopped waiting moves nothing and hides nothing.
        self.status_slot = QWidget()
        status = QVBoxLayout(self.status_slot)
        status.setContentsMargins(0, 0, 0, 0)
        self.stopped_label = plain_label(STOPPED_WAITING, selectable=False)
        self.stopped_label.setObjectName("stoppedWaiting")
        self.stopped_label.setFont(bold)
        status.addWidget(self.stopped_label)
        status.addStretch(1)
        outer.addWidget(self.status_slot)
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
        for button in (self.approve_button, self.deny_button):
            button.setMouseTracking(True)  # moves over it are seen without a button held
            button.installEventFilter(self)
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.deny_button)
        outer.addLayout(buttons)
        # Below the buttons, and one text whatever the state: nothing above it ever moves.
        self.arm_hint = plain_label(ARM_HINT, selectable=False)
        outer.addWidget(self.arm_hint)
        self.deny_button.clicked.connect(lambda: self._decide(False))
        self.approve_button.clicked.connect(lambda: self._decide(True))
        self.setTabOrder(self.deny_button, self.approve_button)
        self._set_buttons(False)

    def _show_loss(self, request: ApprovalRequest) -> None:
        """The action's name as the heading; where people lose access, in the warning box with its icon
        and what is lost (one heading, not two: the values stay high on a small screen)."""
        heading = loss_heading(request.tool, request.consequence, [v.label for v in request.values])
        self.action_label.setText(action_name(request.tool))
        self.loss_label.setText(f"{action_name(request.tool)}: {heading}" if heading else "")
        self.loss_box.setVisible(bool(heading))
        self.action_label.setVisible(not heading)

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
        move; the words scroll if they need more room. Arming and the pointer rule start again: nothing
        answers the new words before they have been on screen for the whole delay and the pointer has
        moved onto a button since."""
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
        self.setWindowTitle(title(self.windowTitle().startswith(title(True)), action_name(request.tool)))
        self.what_label.setText(request.what)
        self.consequence_label.setText(request.consequence)
        self._show_loss(request)
        rows = self._value_rows(request)
        self._question_layout.replaceWidget(self._values, rows)
        self._values.hide()  # out of the layout, but on screen until it is deleted
        self._values.deleteLater()
        self._values = rows
        self.client_label.setText(asked_by(request.client.name, request.client.version))
        self.set_caller_waiting(entry.waited_on)
        self.body.updateGeometry()  # the layout learns the new words' height (used when shown afresh)
        self.body.verticalScrollBar().setValue(0)  # the line that says it changed, and the words' start
        self._first_value_in_view()
        self._appeared()
        self._update_arming()

    # --- arming ---
    @property
    def armed(self) -> bool:
        return self._armed

    @property
    def arming(self) -> bool:
        """On screen, waiting out the delay."""
        return self._arm_timer.isActive()

    def _set_buttons(self, armed: bool) -> None:
        self.approve_button.setEnabled(armed)
        self.deny_button.setEnabled(armed)
        if armed and self.isActiveWindow():
            self.deny_button.setFocus()

    def _on_screen(self) -> bool:
        return self.isVisible() and not self.isMinimized()

    def _update_arming(self) -> None:
        """Arm after the delay while on screen (in front or not); hiding or minimising disarms at once."""
        if not self._on_screen() or self._done:
            self._arm_timer.stop()
            if self._armed:
                self._armed = False
                self._set_buttons(False)
                self.armed_changed.emit(False)
        elif not self._armed and not self._arm_timer.isActive():
            self._arm_timer.start()

    def _arm(self) -> None:
        if self._armed or self._done or not self._on_screen():
            return
        self._armed = True
        self._set_buttons(True)
        self.armed_changed.emit(True)

    def _appeared(self) -> None:
        """The words are on screen from now: the pointer rule starts again (where the pointer is now is
        where it was when they appeared, and no button has been moved onto yet)."""
        self._appeared_at = QCursor.pos()
        self._moved_onto.clear()
        over = self.isVisible() and self.rect().contains(self.mapFromGlobal(QCursor.pos()))
        self._over_since = self._clock.elapsed() if over else None

    def pointer_ready(self, button: QObject) -> bool:
        """A click on `button` counts: the pointer moved onto it after the words appeared and has been over
        the dialog for `REST_MS`."""
        rested = self._over_since is not None and self._clock.elapsed() - self._over_since >= REST_MS
        return button in self._moved_onto and rested

    def keys_ready(self) -> bool:
        """A key counts: the dialog has had the keyboard for the arming delay (it never takes it itself)."""
        return (
            self._armed
            and self.isActiveWindow()
            and self._active_since is not None
            and self._clock.elapsed() - self._active_since >= self._arm_delay_ms
        )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The buttons' mouse and key events: a press counts only by the rules above; one that does not is
        dropped before the button sees it, so it cannot become a click."""
        kind = event.type()
        if kind in (QEvent.Type.MouseMove, QEvent.Type.HoverMove) and isinstance(event, QMouseEvent | QHoverEvent):
            where = event.globalPosition().toPoint() if isinstance(event, QMouseEvent) else QCursor.pos()
            if self._appeared_at is None or where != self._appeared_at:
                self._moved_onto.add(watched)
            if self._over_since is None:  # over a button is over the dialog
                self._over_since = self._clock.elapsed()
        elif kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonDblClick):
            if not (self._armed and self.pointer_ready(watched)):
                return True
        elif kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) and not self.keys_ready():
            return True
        return super().eventFilter(watched, event)

    def enterEvent(self, event: QEnterEvent) -> None:
        super().enterEvent(event)
        if self._over_since is None:
            self._over_since = self._clock.elapsed()

    def leaveEvent(self, event: QEvent) -> None:
        super().leaveEvent(event)
        if not self.rect().contains(self.mapFromGlobal(QCursor.pos())):  # not just onto a child
            self._over_since = None

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() is QEvent.Type.ActivationChange:
            self._active_since = self._clock.elapsed() if self.isActiveWindow() else None
        if event.type() in (QEvent.Type.ActivationChange, QEvent.Type.WindowStateChange):
            self._update_arming()

    def set_waiting_after(self, count: int) -> None:
        noun = "question" if count == 1 else "questions"
        self.queue_label.setText(f"{count} more {noun} waiting after this one." if count else "")
        self.queue_label.setVisible(bool(count))

    def set_caller_waiting(self, waiting: bool) -> None:
        """Claude's call gave up waiting: the answer is kept, and Claude must ask again to use it."""
        self.stopped_label.setVisible(not waiting and not self.late_answer)

    def _keep_status_room(self) -> None:
        """Keep room for the status line's longest text at the dialog's width, so that it changes in place."""
        layout = self.layout()
        margins = layout.contentsMargins() if layout is not None else QMargins()
        width = self.width() - margins.left() - margins.right()
        probe = plain_label("")
        probe.setFont(self.stopped_label.font())
        need = 0
        probe.setText(STOPPED_WAITING)
        need = max(need, probe.heightForWidth(max(width, 1)))
        probe.deleteLater()
        self.status_slot.setMinimumHeight(need)

    def place(self) -> None:
        """Where it opens: on the pointer's screen, left of the screen's right edge where notifications
        appear (NOTIFICATION_ROOM), and where no button lies under the pointer."""
        pointer = QCursor.pos()
        screen = QGuiApplication.screenAt(pointer) or self.screen()
        room = screen.availableGeometry()
        width = min(640, room.width() - NOTIFICATION_ROOM - 40)
        if width < self.minimumWidth():  # a narrow screen: the notification's room cannot be kept clear
            width = min(640, room.width() - 40)
        self.resize(max(min(width, room.width()), 1), self.height())
        self._keep_status_room()
        layout = self.layout()
        for _ in range(3):  # each pass lays the words out at the width the last one settled
            if layout is not None:
                layout.activate()
            fit_height(self)
        wider = min(room.width() - 40, 800)
        if self.height() >= room.height() - 42 and wider > self.width():
            # Taller than the screen allows: wider, so fewer lines, before anything has to scroll (the
            # notifications' room gives way only then).
            self.resize(wider, self.height())
            for _ in range(3):
                if layout is not None:
                    layout.activate()
                fit_height(self)
        # Centred in the part of the screen left of the notifications' room (or at the left edge).
        free = room.width() - NOTIFICATION_ROOM
        x = room.left() + max((free - self.width()) // 2, 20) if free >= self.width() else room.left()
        y = room.top() + max((room.height() - self.height()) // 2, 0)
        if layout is not None:  # the buttons where they will be at this size (not yet shown: laid out now)
            layout.activate()
            layout.setGeometry(self.rect())
        frame = 40  # a title bar and borders the window manager adds, which Qt does not know before mapping
        for y_try in (y, room.top(), room.bottom() - self.height() - frame):
            buttons = self.approve_button.geometry().united(self.deny_button.geometry())
            buttons.translate(x, y_try)
            if not buttons.adjusted(-frame, -frame, frame, frame + frame).contains(pointer):
                y = y_try
                break
        self.move(x, max(y, room.top()))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._held:  # shown afresh (it was hidden, or is new): it may fit its words again
            self._keep_status_room()
            fit_height(self)
            self._first_value_in_view()
        self._held = False
        self._appeared()
        self._update_arming()

    def _first_value_in_view(self) -> None:
        """On a screen too small for all the words above the buttons, the words scroll with the first value
        in view (the least scrolling that shows it): the target is never out of sight."""
        if self.value_labels:
            self.body.ensureWidgetVisible(self.value_labels[0][1], 0, 6)

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._update_arming()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not self.keys_ready():
            return
        # Enter/Return anywhere, including on a focused Approve button, means the default: Deny.
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._decide(False)
            return
        super().keyPressEvent(event)

    def reject(self) -> None:  # Escape
        if self.keys_ready():
            self._decide(False)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.late_answer:  # answered already: closing only closes
            event.accept()
            return
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
        if approve and self.stopped_label.isVisibleTo(self):
            self._tell_claude()  # first: the queue, told of the answer, leaves this dialog on screen
            self.decided.emit(self.key, approve)
            return
        self.decided.emit(self.key, approve)
        super().done(QDialog.DialogCode.Accepted if approve else QDialog.DialogCode.Rejected)

    def _tell_claude(self) -> None:
        """After a late yes, the dialog says at the top of its words (the buttons stay put) what to tell
        Claude and until when, then closes by itself: the main window, closed to the tray, is not where the
        person is."""
        self.late_answer = True
        self._arm_timer.stop()
        self._armed = False
        self._set_buttons(False)
        self.stopped_label.setVisible(False)
        self.late_label.setText(f"Approved. {late_yes_words(time.time())}")
        self.late_label.setVisible(True)
        self.body.verticalScrollBar().setValue(0)
        QTimer.singleShot(LATE_SHOWN_MS, self, lambda: super(ApprovalDialog, self).done(QDialog.DialogCode.Accepted))


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
        #: Dialogs that were answered late and still say what to tell Claude (held until they close).
        self.lingering: list[ApprovalDialog] = []
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
        for dialog in self.lingering:
            dialog.close_silently()
        self.lingering.clear()

    def _gone(self, dialog: ApprovalDialog) -> None:
        if dialog in self.lingering:
            self.lingering.remove(dialog)
            dialog.deleteLater()

    def refresh(self) -> None:
        waiting = self.book.open_entries()
        current = self.dialog
        if current is not None:
            entry = self.book.get(current.key)
            if entry is None:
                entry = self._asked_again(current.key)
                if entry is not None:
                    current.replace(entry)
            if current.late_answer:  # it says what to tell Claude, and closes by itself
                self.dialog = None
                self.lingering.append(current)
                current.finished.connect(lambda _code=0, d=current: self._gone(d))
            elif entry is None or entry.state is not State.PENDING:
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
        dialog.place()  # where no button is under the pointer, and clear of the notifications
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
