"""The approval dialog: only a deliberate Approve approves; nothing answers before the dialog is armed
(on screen and active for the arming delay); hostile text stays plain text; queueing.

Offscreen, Qt activates every window it shows, so focus stealing itself is tested on a real X display
with a window manager (test_dialog_focus.py); the arming rules are tested here.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel, QLineEdit
from pytestqt.qtbot import QtBot

from searchdesk_desktop.approval.book import ApprovalBook, State
from searchdesk_desktop.approval.dialog import ARM_HINT, ApprovalDialog
from searchdesk_desktop.approval.queue import ApprovalQueue
from searchdesk_desktop.approval.words import APPROVED_FOOTER, LATE_YES_USED
from searchdesk_server.agent.protocol import Value
from searchdesk_server.approval.question import VALUES_HEADING
from tests.desktop.helpers import REAL_SERVER, arm, question

HOSTILE = '<b>x</b> <a href="https://evil.example/">click</a> <img src=x> &amp;'
NEVER = 600_000  # an arming delay no test outlasts: "before arming" stays before arming


def make(
    qtbot: QtBot, *, delay: int = 50, armed: bool = True, **kw: object
) -> tuple[ApprovalDialog, list[tuple[str, bool]]]:
    book = ApprovalBook()
    entry = book.ask(question(**kw))  # type: ignore[arg-type]
    dialog = ApprovalDialog(entry, arm_delay_ms=delay)
    qtbot.addWidget(dialog)
    got: list[tuple[str, bool]] = []
    dialog.decided.connect(lambda fp, ok: got.append((fp, ok)))
    dialog.show()
    qtbot.waitExposed(dialog)
    if armed:
        arm(qtbot, dialog)
    return dialog, got


def other_window(qtbot: QtBot) -> QLineEdit:
    """The window the person is typing in."""
    editor = QLineEdit()
    qtbot.addWidget(editor)
    editor.show()
    qtbot.waitExposed(editor)
    return editor


def focus(qtbot: QtBot, window: QLineEdit | ApprovalDialog) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)


def test_click_approve(qtbot: QtBot) -> None:
    dialog, got = make(qtbot)
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    assert got == [(dialog.key, True)]
    assert not dialog.isVisible()


def test_a_click_on_deny_answers_no(qtbot: QtBot) -> None:
    dialog, got = make(qtbot)
    qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
    assert got == [(dialog.key, False)]


def test_deny_is_default_and_approve_is_not(qtbot: QtBot) -> None:
    dialog, _ = make(qtbot)
    assert dialog.deny_button.isDefault()
    assert not dialog.approve_button.isDefault() and not dialog.approve_button.autoDefault()
    assert dialog.windowFlags() & Qt.WindowType.WindowStaysOnTopHint


@pytest.mark.parametrize("key", [Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape])
def test_keys_never_approve(qtbot: QtBot, key: Qt.Key) -> None:
    dialog, got = make(qtbot)
    qtbot.keyClick(dialog, key)
    assert got == [(dialog.key, False)]


def test_enter_on_focused_approve_still_denies(qtbot: QtBot) -> None:
    dialog, got = make(qtbot)
    dialog.approve_button.setFocus()
    qtbot.keyClick(dialog.approve_button, Qt.Key.Key_Return)
    assert got == [(dialog.key, False)]


def test_tab_then_space_approves(qtbot: QtBot) -> None:
    dialog, got = make(qtbot)
    assert dialog.deny_button.hasFocus()
    qtbot.keyClick(dialog.deny_button, Qt.Key.Key_Tab)
    assert dialog.approve_button.hasFocus()
    qtbot.keyClick(dialog.approve_button, Qt.Key.Key_Space)
    assert got == [(dialog.key, True)]


def test_closing_denies(qtbot: QtBot) -> None:
    dialog, got = make(qtbot)
    dialog.close()
    assert got == [(dialog.key, False)]


def test_only_one_decision(qtbot: QtBot) -> None:
    dialog, got = make(qtbot)
    qtbot.mouseClick(dialog.deny_button, Qt.MouseButton.LeftButton)
    dialog.approve_button.click()
    dialog.close()
    assert got == [(dialog.key, False)]


def test_nothing_answers_before_the_dialog_is_armed(qtbot: QtBot) -> None:
    dialog, got = make(qtbot, delay=NEVER, armed=False)
    focus(qtbot, dialog)  # on screen and active, but not yet for the arming delay
    assert dialog.arming and not dialog.armed
    assert not dialog.approve_button.isEnabled() and not dialog.deny_button.isEnabled()
    assert dialog.arm_hint.text() == ARM_HINT
    for button in (dialog.approve_button, dialog.deny_button):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        button.click()  # even a programmatic click on the disabled button
    for key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape, Qt.Key.Key_Space, Qt.Key.Key_Tab):
        qtbot.keyClick(dialog, key)
    dialog.reject()
    assert got == [] and dialog.isVisible()


def test_arms_once_on_screen_for_the_delay_whether_or_not_in_front(qtbot: QtBot) -> None:
    editor = other_window(qtbot)
    dialog, got = make(qtbot, delay=100, armed=False)
    changes: list[bool] = []
    dialog.armed_changed.connect(changes.append)
    focus(qtbot, editor)  # the person is typing elsewhere: the dialog arms all the same
    qtbot.waitUntil(lambda: dialog.armed, timeout=5000)
    assert changes == [True] and dialog.approve_button.isEnabled()
    assert dialog.arm_hint.text() == ARM_HINT  # one text: the hint never changes, nothing moves
    # A click without the pointer having moved onto the button answers nothing.
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    assert got == [] and not dialog.keys_ready()  # and keys wait for the keyboard, which it never took
    arm(qtbot, dialog)
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    assert got == [(dialog.key, True)]


def test_hiding_or_minimising_disarms(qtbot: QtBot) -> None:
    dialog, got = make(qtbot, delay=50)
    dialog.showMinimized()
    qtbot.waitUntil(lambda: not dialog.armed)
    dialog.showNormal()
    arm(qtbot, dialog)
    dialog.hide()
    assert not dialog.armed and not dialog.arming
    assert got == []


def test_closing_before_armed_hides_without_answering(qtbot: QtBot) -> None:
    dialog, got = make(qtbot, delay=NEVER, armed=False)
    focus(qtbot, dialog)
    dialog.close()
    assert got == [] and not dialog.isVisible()


def test_hostile_text_is_shown_literally(qtbot: QtBot) -> None:
    dialog, _ = make(
        qtbot,
        what="This will remove " + HOSTILE,
        values=(Value("Property", HOSTILE), Value("<i>label</i>", "plain")),
        client="<b>Evil</b>",
    )
    labels = dialog.findChildren(QLabel)
    assert labels and all(label.textFormat() == Qt.TextFormat.PlainText for label in labels)
    assert not any(label.openExternalLinks() for label in labels)
    assert dialog.what_label.text() == "This will remove " + HOSTILE
    assert dialog.value_labels[0][1].text() == HOSTILE
    assert dialog.value_labels[1][0].text() == "<i>label</i>:"
    assert "<b>Evil</b>" in dialog.client_label.text() and "says it is" in dialog.client_label.text()
    assert dialog.values_heading.text() == VALUES_HEADING
    # Plain text lays out wider than the rendered rich text would: the markup is really on screen.
    rich = QLabel(HOSTILE)
    rich.setTextFormat(Qt.TextFormat.RichText)
    plain = QLabel(HOSTILE)
    plain.setTextFormat(Qt.TextFormat.PlainText)
    assert plain.sizeHint().width() > rich.sizeHint().width()


def test_queue_shows_one_at_a_time(qtbot: QtBot) -> None:
    book = ApprovalBook()
    queue = ApprovalQueue(book, arm_delay_ms=50)
    a = book.ask(question("https://a.example/"))
    b = book.ask(question("https://b.example/"))
    c = book.ask(question("https://c.example/"))
    qtbot.waitUntil(lambda: queue.dialog is not None and queue.dialog.isVisible())
    first = queue.dialog
    assert first is not None and first.key == a.key
    assert "2 more" in first.queue_label.text()
    arm(qtbot, first)
    qtbot.mouseClick(first.approve_button, Qt.MouseButton.LeftButton)
    assert a.state is State.APPROVED
    qtbot.waitUntil(lambda: queue.dialog is not None and queue.dialog.key == b.key)
    # The third is withdrawn by its caller while the second is on screen: the count follows.
    assert book.cancel(next(iter(c.request_ids)))
    qtbot.waitUntil(lambda: queue.dialog is not None and queue.dialog.queue_label.text() == "")
    second = arm(qtbot, queue.dialog)
    second.close()
    assert b.state is State.DENIED and c.state is State.CANCELLED
    qtbot.waitUntil(lambda: queue.dialog is None)
    assert a.state is State.APPROVED  # each question kept its own answer
    queue.close()


def test_answer_elsewhere_closes_dialog(qtbot: QtBot) -> None:
    book = ApprovalBook()
    queue = ApprovalQueue(book, arm_delay_ms=50)
    entry = book.ask(question())
    qtbot.waitUntil(lambda: queue.dialog is not None)
    dialog = queue.dialog
    assert dialog is not None
    closed: list[int] = []
    dialog.finished.connect(closed.append)
    assert book.answer(entry.fingerprint, False, "notification")
    qtbot.waitUntil(lambda: queue.dialog is None)
    assert closed  # closed without a decision of its own
    assert not book.answer(entry.fingerprint, True, "dialog")  # the first answer won
    assert entry.state is State.DENIED
    queue.close()


def test_closed_before_armed_stays_open_and_review_brings_it_back(qtbot: QtBot) -> None:
    book = ApprovalBook()
    queue = ApprovalQueue(book, arm_delay_ms=NEVER)
    entry = book.ask(question("https://a.example/"))
    qtbot.waitUntil(lambda: queue.dialog is not None and queue.dialog.isVisible())
    dialog = queue.dialog
    assert dialog is not None
    dialog.close()  # before it was armed: hidden, not answered
    assert not dialog.isVisible() and entry.state is State.PENDING and queue.dialog is dialog
    queue.bring_forward()  # Review, in the tray or the main window
    qtbot.waitUntil(dialog.isActiveWindow)
    assert dialog.isVisible() and not dialog.armed  # it must arm again before any answer
    # Hidden again, then another question arrives: the dialog comes back to show there is more.
    dialog.close()
    book.ask(question("https://b.example/"))
    qtbot.waitUntil(dialog.isVisible)
    assert queue.dialog is dialog and "1 more" in dialog.queue_label.text()
    assert entry.state is State.PENDING
    queue.close()


def test_queue_line_says_question_or_questions(qtbot: QtBot) -> None:
    dialog, _ = make(qtbot)
    dialog.set_waiting_after(1)
    assert dialog.queue_label.text() == "1 more question waiting after this one."
    dialog.set_waiting_after(3)
    assert dialog.queue_label.text() == "3 more questions waiting after this one."


def test_stopped_waiting_line_shows_only_once_claude_stopped_waiting(qtbot: QtBot) -> None:
    book = ApprovalBook()
    queue = ApprovalQueue(book, arm_delay_ms=0)
    entry = book.ask(question(requester=REAL_SERVER))
    qtbot.waitUntil(lambda: queue.dialog is not None)
    dialog = queue.dialog
    assert dialog is not None and not dialog.stopped_label.isVisibleTo(dialog)
    book.stopped_waiting(entry.key)
    qtbot.waitUntil(lambda: dialog.stopped_label.isVisibleTo(dialog))
    assert dialog.stopped_label.text() == (
        "Claude stopped waiting — answer here, then ask Claude to try again within 5 minutes."
    )
    book.ask(question(requester=REAL_SERVER))  # the same question asked again: a call waits once more
    qtbot.waitUntil(lambda: not dialog.stopped_label.isVisibleTo(dialog))
    queue.close()
    queue.deleteLater()


# --- a yes is bound to the words (issue 23) ------------------------------------------------------


def _corners(dialog: ApprovalDialog) -> tuple[QPoint, QPoint]:
    return dialog.approve_button.mapToGlobal(QPoint(0, 0)), dialog.deny_button.mapToGlobal(QPoint(0, 0))


@pytest.mark.parametrize("longer", [True, False], ids=["longer words", "shorter words"])
def test_other_words_take_the_dialogs_place_with_the_buttons_where_they_were(qtbot: QtBot, longer: bool) -> None:
    book = ApprovalBook()
    queue = ApprovalQueue(book, arm_delay_ms=300)
    site = "https://example.com/"
    owners = tuple(Value("Removed", f"person{i}@example.com") for i in range(40 if longer else 0))
    first = book.ask(question(site, requester=REAL_SERVER))
    qtbot.waitUntil(lambda: queue.dialog is not None and queue.dialog.isVisible())
    dialog = arm(qtbot, queue.dialog)
    geometry, buttons = dialog.geometry(), _corners(dialog)
    changes: list[bool] = []
    dialog.armed_changed.connect(changes.append)

    reworded = "This will remove the property below; Google's side changed since it was first asked."
    values = (Value("Property", site), *owners) if longer else ()
    second = book.ask(question(site, requester=REAL_SERVER, what=reworded, values=values))
    qtbot.waitUntil(lambda: dialog.key == second.key)
    assert queue.dialog is dialog and dialog.isVisible()  # the same window, not a new one
    assert first.state is State.REPLACED
    assert dialog.what_label.text() == reworded and dialog.reworded_label.isVisibleTo(dialog)
    assert [v.text() for _, v in dialog.value_labels] == [v.value for v in values]
    # Arming starts again: a click meant for the old words answers nothing.
    assert changes == [False] and not dialog.armed and dialog.arming
    assert not dialog.approve_button.isEnabled() and not dialog.deny_button.isEnabled()
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    assert second.state is State.PENDING
    qtbot.waitUntil(lambda: dialog.armed, timeout=5000)
    assert changes == [False, True]
    # The pointer rule started again too: the pointer is on Approve from before, and has not moved since.
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    assert second.state is State.PENDING
    # The window kept its place and size, and the buttons never moved.
    assert dialog.geometry() == geometry and _corners(dialog) == buttons
    arm(qtbot, dialog)
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    assert second.state is State.APPROVED and first.state is State.REPLACED
    queue.close()


# --- after the answer, where the person is (issue 24) ----------------------------------------------


def test_a_late_yes_says_in_the_dialog_what_to_tell_claude_with_the_buttons_in_place(qtbot: QtBot) -> None:
    book = ApprovalBook()
    queue = ApprovalQueue(book, arm_delay_ms=50)
    entry = book.ask(question(requester=REAL_SERVER))
    qtbot.waitUntil(lambda: queue.dialog is not None and queue.dialog.isVisible())
    dialog = arm(qtbot, queue.dialog)
    geometry, buttons = dialog.geometry(), _corners(dialog)
    book.stopped_waiting(entry.key)
    qtbot.waitUntil(lambda: dialog.stopped_label.isVisibleTo(dialog))
    assert dialog.geometry() == geometry and _corners(dialog) == buttons  # the line took its kept room
    room, scrolls = dialog.body.viewport().height(), dialog.body.verticalScrollBar().maximum()
    assert "closing it: Deny" in dialog.arm_hint.text()
    qtbot.mouseClick(dialog.approve_button, Qt.MouseButton.LeftButton)
    assert entry.state is State.APPROVED
    qtbot.waitUntil(lambda: queue.dialog is None)
    # Still on screen, where the person is: what to tell Claude and until when.
    assert dialog.isVisible() and dialog.late_label.isVisibleTo(dialog)
    late = dialog.late_label.text()
    assert "tell Claude" in late and "5 minutes" in late and "before Claude Desktop is restarted" in late
    qtbot.wait(50)
    assert _corners(dialog) == buttons  # the buttons never moved
    # The words did not shrink into a smaller scroll box (the window grew upwards for the longer line).
    assert dialog.body.viewport().height() >= room and dialog.body.verticalScrollBar().maximum() <= scrolls
    assert dialog.geometry().bottom() == geometry.bottom() and dialog.geometry().top() <= geometry.top()
    # After Approve, the footer no longer says that closing denies.
    assert dialog.arm_hint.text() == APPROVED_FOOTER and "Deny" not in dialog.arm_hint.text()
    assert not dialog.approve_button.isEnabled()
    # Once the server that asked collected it, the dialog stops sending the person to Claude.
    assert book.take(entry.key) == "approve"
    qtbot.waitUntil(lambda: dialog.late_label.text() == LATE_YES_USED)
    assert "tell Claude" not in dialog.late_label.text()
    dialog.close()  # closing it now answers nothing more
    assert entry.state is State.USED
    queue.close()


def test_the_main_window_keeps_one_late_line_per_target(qtbot: QtBot) -> None:
    from searchdesk_desktop.windows.approvals_section import newest_per_target

    book = ApprovalBook()
    first = book.ask(question("https://a.example/", requester=REAL_SERVER))
    book.stopped_waiting(first.key)
    book.answer(first.key, True, "dialog")
    second = book.ask(question("https://a.example/", requester=REAL_SERVER, what="Asked again, other words."))
    book.stopped_waiting(second.key)
    book.answer(second.key, False, "dialog")
    other = book.ask(question("https://b.example/", requester=REAL_SERVER))
    book.stopped_waiting(other.key)
    book.answer(other.key, True, "dialog")
    # However many answers for one target are kept, the newest alone is said.
    late = [first, second, other]
    first.activity.answered_at, second.activity.answered_at = 100.0, 200.0
    assert newest_per_target(late) == [second, other]
    assert newest_per_target(book.late_answers()) == [e for e in book.late_answers() if e is not first]
