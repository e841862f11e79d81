"""When a press or a key may answer a question: the rules the approval dialog's buttons keep.

Only a person who looked answers. A dialog is *armed* once it has been on screen for ``ARM_DELAY_MS``
(1 s, as browsers' security dialogs wait), whether or not it was activated: a click on a window that is
not in front counts too, so the person's first click is not lost on waking it. A click counts only when
the pointer moved onto that button after the words appeared and has been over the dialog for
``REST_MS``: a pointer that happened to be where a button appeared, or that passes over one on its way
elsewhere, answers nothing. Keys count only once the dialog has had the keyboard for the arming delay,
and it never takes the keyboard by itself. Before that no key or click answers. Being hidden or
minimised disarms it; arming starts again when it is shown.

``ArmingDialog`` keeps these rules for the buttons it guards; ``dialog.ApprovalDialog`` builds on it.
"""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, QPoint, QTimer, Signal
from PySide6.QtGui import QCursor, QEnterEvent, QHideEvent, QHoverEvent, QMouseEvent
from PySide6.QtWidgets import QDialog, QPushButton, QWidget

#: How long the dialog must have been on screen before a click can answer it (and had the keyboard before
#: a key can): at least a second, as browsers' security dialogs wait before their buttons work. The
#: notification's Approve waits the same (``approval.notification_question`` imports it).
ARM_DELAY_MS = 1000
#: How long the pointer must have been over the dialog before a click counts: a click on a pointer's way
#: elsewhere answers nothing.
REST_MS = 500


class ArmingDialog(QDialog):
    """A dialog whose guarded buttons (``guard``) answer only by the rules above. ``armed_changed(armed)``
    is emitted each time it arms or disarms."""

    armed_changed = Signal(bool)

    def __init__(self, *, arm_delay_ms: int = ARM_DELAY_MS, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._done = False  # answered or closed: it never arms again
        self._armed = False
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
        self._guarded: tuple[QPushButton, ...] = ()
        self._default: QPushButton | None = None

    def guard(self, *buttons: QPushButton, default: QPushButton) -> None:
        """Keep the rules for these buttons: their presses and keys pass the checks below first; `default`
        takes the focus when the dialog arms while it has the keyboard."""
        self._guarded = buttons
        self._default = default
        for button in buttons:
            button.setMouseTracking(True)  # moves over it are seen without a button held
            button.installEventFilter(self)

    @property
    def armed(self) -> bool:
        return self._armed

    @property
    def arming(self) -> bool:
        """On screen, waiting out the delay."""
        return self._arm_timer.isActive()

    def _set_buttons(self, armed: bool) -> None:
        for button in self._guarded:
            button.setEnabled(armed)
        if armed and self.isActiveWindow() and self._default is not None:
            self._default.setFocus()

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

    def _disarm(self) -> None:
        """Start again from the beginning (new words on screen): nothing answers until armed anew."""
        self._arm_timer.stop()
        was_armed, self._armed = self._armed, False
        self._set_buttons(False)
        if was_armed:
            self.armed_changed.emit(False)

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

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._update_arming()
