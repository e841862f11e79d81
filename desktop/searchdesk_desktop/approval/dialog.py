"""The native approval dialog: one question, its words as plain text, and Approve and Deny.

Everything a caller or Google supplied is shown as plain text (``widgets.plain_label`` on every label,
``layout.ValueText`` for each value), so no value can format, link or hide anything.

Only a person who looked answers (the rules: ``arming``). The dialog appears without taking the keyboard
from the window the person is typing in (``WA_ShowWithoutActivating``, no ``activateWindow`` on show; it
stays on top), where no button lies under the pointer and away from the screen's right edge, where every
system shows its notifications (top right on GNOME and macOS, bottom right on Windows and KDE), so its
own notification never covers it. Before it is armed no key or click answers, and closing the window
only hides it (the question stays open, reachable from the tray, the main window's "Show the question"
and the notification).

Once armed, today's rules: Deny is the default button; Approve needs a deliberate click or Tab then
Space; Enter, Escape and closing the window all deny.

Nothing moves after it appears: its size is set when it is shown, with room kept for the line that says
Claude stopped waiting, so that line appears without moving the buttons or hiding a value; after a late
yes, what to tell Claude and until when takes that line's place, right above the buttons (the window grows
upwards by what it needs more, so the words above keep their room and the buttons stay put), the footer
no longer says that closing denies, and the dialog closes by itself; once the server that asked collects
the yes, the line says so instead of sending the person to Claude (issue 36).

When the values do not fit the screen, only they scroll (issue 36: thirty owners pushed "Everyone not in
the new list loses…" out of sight): the sentences, the counts and the heading above them and the
consequence below stay in view. Only when those words alone leave less than a few lines for the values
(a very small screen) does everything above the buttons scroll as one, the values right under the
sentence that points to them; the buttons stay at the bottom.

A question whose words are exactly those of a yes the person gave but that the request which asked never
collected (Claude Desktop restarted its server: the book's ``approved_before``) says so at its top, and is
armed and answered as any question: it never acts without this new yes.

A question asked again with other words (the book's ``replaced``: Google's side changed between two
builds of the same call) takes the place of the one on screen in the same window (``replace``): the
window keeps its place and size, so the buttons stay exactly where they were, the new words scroll
if they need more room, a line says the question changed, and arming and the pointer rule start again
from the beginning, so a click meant for the old words can never answer the new ones.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QMargins, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QCursor, QFont, QGuiApplication, QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from searchdesk_server.agent.protocol import QUESTION_OPEN_S, ApprovalRequest, minutes
from searchdesk_server.approval.question import VALUES_HEADING, action_name, asked_by, loss_heading

from ..titles import title
from ..widgets import fit_height, plain_label
from .arming import ARM_DELAY_MS, ArmingDialog
from .book import Entry, Origin, origin
from .dialog_parts import NOTE_STYLE, YES_STYLE, LossWarning, StatusSlot, strip
from .layout import FittingScrollArea, ValueText
from .words import APPROVED_FOOTER, LATE_YES_USED, approved_before_words, late_yes_words

#: Room kept at the screen's right edge, where notifications appear (GNOME's banners are 420 px wide at
#: most, js/ui/messageTray.js; Windows' toasts 364 px; macOS's banners 344 pt; KDE's popups about 360 px).
NOTIFICATION_ROOM = 440
#: After a late yes, how long the dialog stays open with what to tell Claude (the person closes it sooner).
LATE_SHOWN_MS = 20_000
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
#: The least room kept for the values in their own scrolling area, in lines of text: below it, everything
#: above the buttons scrolls as one instead.
VALUES_MIN_LINES = 4
#: Qt's "no maximum" for a widget's size (QWIDGETSIZE_MAX).
NO_MAXIMUM = (1 << 24) - 1


class ApprovalDialog(ArmingDialog):
    """One question. ``decided(key, approve)`` is emitted at most once, and only when armed (`key`: the
    book's entry key: the fingerprint and who asked); ``armed_changed`` comes from ``ArmingDialog``."""

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
        super().__init__(arm_delay_ms=arm_delay_ms, parent=parent)
        self.key = entry.key  # the fingerprint, who asked and the words
        self.fingerprint = entry.fingerprint  # the tool and its targets alone
        self._held = False  # new words in place of old on screen: the window keeps its size (``replace``)
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
        self._add_notes(layout, source, entry)
        self._add_question(layout, request)
        layout.addSpacing(6)
        self.client_label = plain_label(asked_by(request.client.name, request.client.version))
        layout.addWidget(self.client_label)
        self.queue_label = plain_label("", selectable=False)
        layout.addWidget(self.queue_label)  # parented first: a bare label made visible is a window of its own
        self.set_waiting_after(waiting_after)
        layout.addStretch(1)
        self._body_content = body
        self.body = FittingScrollArea(body)
        self.body.resized = self._bound_values
        outer.addWidget(self.body, 1)
        # The status line: room for it is kept from the start (``place``, ``showEvent``), so saying that
        # Claude stopped waiting moves nothing and hides nothing.
        self.status_slot = StatusSlot(STOPPED_WAITING, self._bold())
        self.stopped_label = self.status_slot.stopped
        self.late_label = self.status_slot.late
        outer.addWidget(self.status_slot)
        self.set_caller_waiting(entry.waited_on)
        outer.addSpacing(6)
        self._add_buttons(outer)

    def _bold(self, scale: float = 1.0) -> QFont:
        """The dialog's font in bold, `scale` times its size (the headings)."""
        font = QFont(self.font())
        font.setBold(True)
        if scale != 1.0:
            font.setPointSizeF(font.pointSizeF() * scale)
        return font

    def _add_notes(self, layout: QVBoxLayout, source: Origin, entry: Entry) -> None:
        """The strips above the question: where it comes from (the demo, or a real server in the demo
        app), that these words were approved before, that the question changed while it was open."""
        if source is not Origin.REAL:
            layout.addWidget(strip(BANNERS[source], "demoBanner", NOTE_STYLE))
        # Exactly these words were approved before, by a request that ended before it collected the yes.
        self.approved_before_label = strip("", "approvedBefore", YES_STYLE)
        layout.addWidget(self.approved_before_label)
        self._show_approved_before(entry)
        self.reworded_label = strip(REWORDED, "reworded", NOTE_STYLE)
        self.reworded_label.setVisible(False)
        layout.addWidget(self.reworded_label)

    def _add_question(self, layout: QVBoxLayout, request: ApprovalRequest) -> None:
        """The action's name (or the warning of who loses access), the sentence, the values it points to
        and the consequence."""
        heading = self._bold(1.3)
        self.action_label = plain_label(action_name(request.tool), selectable=False)
        self.action_label.setObjectName("action")
        self.action_label.setFont(heading)
        layout.addWidget(self.action_label)
        self.loss_box = LossWarning(heading)
        self.loss_label = self.loss_box.label
        layout.addWidget(self.loss_box)
        self.what_label = plain_label(request.what)
        self.what_label.setFont(self._bold(1.15))
        self.consequence_label = plain_label(request.consequence)
        layout.addWidget(self.what_label)
        self._show_loss(request)
        # The values right under the sentence that points to them ("the property below"), before the
        # consequence: when the screen is too small for everything, what is acted on is in view first.
        self.values_heading = plain_label(VALUES_HEADING, selectable=False)
        layout.addWidget(self.values_heading)
        self.value_labels: list[tuple[QLabel, ValueText]] = []
        self._values = self._value_rows(request)
        # The values scroll on their own when they need more room than the window leaves them (``_bound_values``).
        self.values_area = FittingScrollArea(self._values)
        self.values_area.setObjectName("values")
        layout.addWidget(self.values_area)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        layout.addWidget(line)
        layout.addWidget(self.consequence_label)

    def _add_buttons(self, outer: QVBoxLayout) -> None:
        """Approve and Deny (Deny the default), and below them the one hint on how they work."""
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.deny_button = QPushButton("Deny")
        self.approve_button = QPushButton("Approve")
        self.deny_button.setDefault(True)
        self.deny_button.setAutoDefault(True)
        self.approve_button.setAutoDefault(False)
        self.approve_button.setDefault(False)
        self.guard(self.approve_button, self.deny_button, default=self.deny_button)
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

    def _show_approved_before(self, entry: Entry) -> None:
        at = entry.approved_before
        self.approved_before_label.setText(approved_before_words(at) if at is not None else "")
        self.approved_before_label.setVisible(at is not None)

    def _bound_values(self) -> None:
        """Give the values the room the words around them leave, so that only the values scroll; when that
        is less than VALUES_MIN_LINES, no bound (everything above the buttons then scrolls as one)."""
        width = self.body.viewport().width()
        room = self.body.viewport().height()
        if width <= 1 or room <= 1:
            return
        area = self.values_area
        full = area.heightForWidth(width)
        around = self._body_content.heightForWidth(width) - min(full, area.maximumHeight())
        least = VALUES_MIN_LINES * self.fontMetrics().lineSpacing()
        left = room - around
        bound = left if full > left >= least else NO_MAXIMUM
        if bound != area.maximumHeight():
            area.setMaximumHeight(bound)

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
        self._held = True
        self._disarm()
        self.reworded_label.setVisible(True)
        self.setWindowTitle(title(self.windowTitle().startswith(title(True)), action_name(request.tool)))
        self.what_label.setText(request.what)
        self.consequence_label.setText(request.consequence)
        self._show_loss(request)
        rows = self._value_rows(request)
        self.values_area.set_content(rows).deleteLater()
        self._values = rows
        self.values_area.setMaximumHeight(NO_MAXIMUM)  # bounded again for the new words (``_bound_values``)
        self._show_approved_before(entry)
        self.client_label.setText(asked_by(request.client.name, request.client.version))
        self.set_caller_waiting(entry.waited_on)
        self.body.updateGeometry()  # the layout learns the new words' height (used when shown afresh)
        layout = self.layout()
        if layout is not None:
            layout.activate()
        self._bound_values()
        self.body.verticalScrollBar().setValue(0)  # the line that says it changed, and the words' start
        self.values_area.verticalScrollBar().setValue(0)
        self._first_value_in_view()
        self._appeared()
        self._update_arming()

    def set_waiting_after(self, count: int) -> None:
        noun = "question" if count == 1 else "questions"
        self.queue_label.setText(f"{count} more {noun} waiting after this one." if count else "")
        self.queue_label.setVisible(bool(count))

    def set_caller_waiting(self, waiting: bool) -> None:
        """Claude's call gave up waiting: the answer is kept, and Claude must ask again to use it."""
        self.stopped_label.setVisible(not waiting and not self.late_answer)

    def collected(self) -> None:
        """The server that asked collected the late yes given here: nothing more to tell Claude."""
        if self.late_answer:
            self.late_label.setText(LATE_YES_USED)

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

    def _grow_for_status(self, before: int) -> None:
        """The status line took more room than was kept for it (`before`: the late-yes words are longer):
        the window grows upwards by that much, where the screen has room, so the words above keep theirs and
        the buttons stay where they are; what the screen cannot give, the values' own area gives
        (``_bound_values``). Called once the line is laid out (with its style's padding)."""
        slot = self.status_slot
        more = slot.height() - before
        if more <= 0:
            return
        slot.setMinimumHeight(slot.height())
        room = self.screen().availableGeometry()
        up = min(more, max(self.frameGeometry().top() - room.top(), 0))
        if up > 0:
            self.setGeometry(self.geometry().adjusted(0, -up, 0, 0))

    def _tell_claude(self) -> None:
        """After a late yes, the dialog says right above its buttons (which stay put) what to tell Claude
        and until when, then closes by itself: the main window, closed to the tray, is not where the
        person is."""
        self.late_answer = True
        self._arm_timer.stop()
        self._armed = False
        self._set_buttons(False)
        self.arm_hint.setMinimumHeight(self.arm_hint.height())  # a shorter footer moves nothing above it
        self.arm_hint.setText(APPROVED_FOOTER)
        self.stopped_label.setVisible(False)
        self.late_label.setText(f"Approved. {late_yes_words(time.time())}")
        before = self.status_slot.height()
        self.late_label.setVisible(True)
        QTimer.singleShot(0, self, lambda: self._grow_for_status(before))
        QTimer.singleShot(LATE_SHOWN_MS, self, lambda: super(ApprovalDialog, self).done(QDialog.DialogCode.Accepted))
