"""The queue of questions waiting for the person: one approval dialog on screen at a time, the oldest
question first; the next one appears when it is answered or withdrawn. It watches the book and answers
it with what the person decided in the dialog.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from searchdesk_server.agent.protocol import question_of

from .arming import ARM_DELAY_MS
from .book import ApprovalBook, Entry, State
from .dialog import ApprovalDialog


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
    ) -> None:
        super().__init__()
        self.book = book
        self.demo = demo
        self.arm_delay_ms = arm_delay_ms
        self.dialog: ApprovalDialog | None = None
        #: Dialogs that were answered late and still say what to tell Claude (held until they close).
        self.lingering: list[ApprovalDialog] = []
        self._reshow = False  # a question arrived that the person has not seen yet
        book.on_change.append(self._book_changed)
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)
        self._ticker.start()

    def _book_changed(self, entry: Entry) -> None:
        for late in list(self.lingering):  # a dialog that said what to tell Claude about this yes
            if late.key != entry.key or entry.state is State.APPROVED:
                continue
            if entry.state is State.USED:
                late.collected()  # the server that asked has it: nothing more to tell Claude
            else:  # withdrawn (asked again by a new server: that question is shown now), or expired
                late.close_silently()
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
        """The dialog's ``decided``: the one place a dialog answers the book."""
        self.book.answer(key, approve, "dialog")
        self.refresh()
