"""A notification's press while the screen is locked is ignored (issue 24): the lock is read when the
press arrives, from a fake logind on a private system bus (``DBUS_SYSTEM_BUS_ADDRESS``) or a fake
``org.freedesktop.ScreenSaver`` on a private session bus; where nothing answers, the press counts and
the window is told once. Windows' check with ``user32`` faked."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop.approval.book import ApprovalBook, State
from searchdesk_desktop.approval.notification_question import FITS, ApprovalNotifications
from searchdesk_desktop.approval.screen_lock import LockState, read_lock_state, windows_lock_state
from tests.desktop.approval.test_notice_channel import Clock, Recorder, press, show_and_wait
from tests.desktop.conftest import PrivateBus
from tests.desktop.fake_logind import FakeLock
from tests.desktop.helpers import core_args, question


@pytest.fixture
def logind(private_system_bus: PrivateBus) -> Iterator[FakeLock]:
    lock = FakeLock(private_system_bus.env, "logind")
    yield lock
    lock.stop()


def read_now(qtbot: QtBot) -> LockState:
    """``read_lock_state`` on the qasync loop the test spins."""
    task = asyncio.get_running_loop().create_task(read_lock_state("linux"))
    qtbot.waitUntil(task.done, timeout=10_000)
    return task.result()


@pytest.fixture
def wired(qtbot: QtBot, asyncio_in_qt: object) -> Iterator[tuple[ApprovalBook, Recorder, Clock, ApprovalNotifications]]:
    clock = Clock()
    book = ApprovalBook()
    channel = Recorder()
    notes = ApprovalNotifications(book, channel, review=lambda: None, fit=FITS["linux"], clock=clock)
    yield book, channel, clock, notes
    notes.close()
    notes.deleteLater()


def test_logind_locked_hint_is_read_from_the_system_bus(
    qtbot: QtBot, private_bus: PrivateBus, logind: FakeLock, asyncio_in_qt: object
) -> None:
    assert read_now(qtbot) is LockState.UNLOCKED
    logind.set_locked(True)
    assert read_now(qtbot) is LockState.LOCKED


def test_without_logind_the_screensaver_on_the_session_bus_answers(
    qtbot: QtBot, private_bus: PrivateBus, private_system_bus: PrivateBus, asyncio_in_qt: object
) -> None:
    saver = FakeLock(private_bus.env, "screensaver")
    try:
        assert read_now(qtbot) is LockState.UNLOCKED
        saver.set_locked(True)
        assert read_now(qtbot) is LockState.LOCKED
    finally:
        saver.stop()


def test_with_nothing_to_ask_the_state_is_unknown(
    qtbot: QtBot, private_bus: PrivateBus, private_system_bus: PrivateBus, asyncio_in_qt: object
) -> None:
    assert read_now(qtbot) is LockState.UNKNOWN


def test_a_press_while_the_session_is_locked_is_ignored_and_counts_once_unlocked(
    qtbot: QtBot, private_bus: PrivateBus, logind: FakeLock, wired: tuple
) -> None:
    book, channel, clock, _ = wired
    entry = book.ask(question())
    ((nonce, note),) = channel.sent
    assert "approve" in note.actions
    show_and_wait(qtbot, channel, clock, nonce)
    logind.set_locked(True)
    press(qtbot, channel, nonce, f"deny.{nonce}")  # Deny from the lock screen is ignored too
    qtbot.waitUntil(lambda: len(channel.sent) == 2, timeout=5_000)  # and sent again: the press closed it
    assert entry.state is State.PENDING and channel.withdrawn == [nonce]
    ((again, note_again),) = channel.sent[1:]
    assert again != nonce and note_again.actions == note.actions
    show_and_wait(qtbot, channel, clock, again)
    press(qtbot, channel, again, f"approve.{again}")
    qtbot.waitUntil(lambda: len(channel.sent) == 3, timeout=5_000)
    assert entry.state is State.PENDING and entry.is_open
    logind.set_locked(False)
    last = channel.sent[2][0]
    press(qtbot, channel, again, f"approve.{again}")  # the one it replaced answers nothing
    press(qtbot, channel, last, f"approve.{last}")  # not armed: not even shown yet
    qtbot.wait(300)
    assert entry.state is State.PENDING
    show_and_wait(qtbot, channel, clock, last)
    press(qtbot, channel, last, f"approve.{last}")
    qtbot.waitUntil(lambda: entry.state is State.APPROVED, timeout=5_000)
    assert entry.activity.answered_by == "notification"


def test_where_the_lock_cannot_be_read_the_press_counts_and_the_window_is_told_once(
    qtbot: QtBot, private_bus: PrivateBus, private_system_bus: PrivateBus, wired: tuple
) -> None:
    book, channel, clock, notes = wired
    told: list[int] = []
    notes.lock_unknown.connect(lambda: told.append(1))
    first = book.ask(question("https://a.example/"))
    second = book.ask(question("https://b.example/"))
    (n1, _), (n2, _) = channel.sent
    show_and_wait(qtbot, channel, clock, n1)
    show_and_wait(qtbot, channel, clock, n2)
    press(qtbot, channel, n1, f"approve.{n1}")
    qtbot.waitUntil(lambda: first.state is State.APPROVED, timeout=5_000)
    press(qtbot, channel, n2, f"deny.{n2}")
    qtbot.waitUntil(lambda: second.state is State.DENIED, timeout=5_000)
    assert told == [1]


def test_the_book_moving_on_during_the_lock_check_answers_nothing(qtbot: QtBot, asyncio_in_qt: object) -> None:
    """The question is answered in the dialog while the system is still being asked about the lock."""
    clock = Clock()
    book = ApprovalBook()
    channel = Recorder()
    gate: asyncio.Event = asyncio.Event()

    async def slow_unlocked() -> LockState:
        await gate.wait()
        return LockState.UNLOCKED

    notes = ApprovalNotifications(
        book, channel, review=lambda: None, fit=FITS["linux"], clock=clock, lock_state=slow_unlocked
    )
    entry = book.ask(question())
    ((nonce, _),) = channel.sent
    show_and_wait(qtbot, channel, clock, nonce)
    press(qtbot, channel, nonce, f"approve.{nonce}")
    assert book.answer(entry.key, False, "dialog")
    gate.set()
    qtbot.wait(50)
    assert entry.state is State.DENIED
    notes.close()
    notes.deleteLater()


class FakeUser32:
    """The three user32 calls the Windows check makes, recorded."""

    def __init__(self, desktop: int, switches: bool) -> None:
        self.desktop, self.switches = desktop, switches
        self.calls: list[tuple[str, Any]] = []

    def OpenInputDesktop(self, flags: int, inherit: bool, access: int) -> int:
        self.calls.append(("OpenInputDesktop", access))
        return self.desktop

    def SwitchDesktop(self, desktop: int) -> int:
        self.calls.append(("SwitchDesktop", desktop))
        return int(self.switches)

    def CloseDesktop(self, desktop: int) -> int:
        self.calls.append(("CloseDesktop", desktop))
        return 1


def test_windows_reads_a_locked_workstation_from_the_input_desktop() -> None:
    unlocked = FakeUser32(desktop=7, switches=True)
    assert windows_lock_state(unlocked) is LockState.UNLOCKED
    assert unlocked.calls == [("OpenInputDesktop", 0x0100), ("SwitchDesktop", 7), ("CloseDesktop", 7)]
    assert windows_lock_state(FakeUser32(desktop=7, switches=False)) is LockState.LOCKED  # Winlogon's desktop
    assert windows_lock_state(FakeUser32(desktop=0, switches=True)) is LockState.LOCKED  # not ours to open


def test_macos_leaves_the_lock_to_the_system(qtbot: QtBot, asyncio_in_qt: object) -> None:
    """macOS delivers an Approve only from an unlocked device (the action's option, notifier_layer)."""
    task = asyncio.get_running_loop().create_task(read_lock_state("darwin"))
    qtbot.waitUntil(task.done)
    assert task.result() is LockState.SYSTEM_CHECKS


def test_the_main_window_says_once_that_the_lock_cannot_be_read(qtbot: QtBot, qapp: object, place: dict) -> None:
    import gc

    from searchdesk_desktop.app import DesktopApp
    from searchdesk_desktop.approval.screen_lock import UNKNOWN_TEXT
    from searchdesk_desktop.core import Core

    core = Core(**core_args(place))  # type: ignore[arg-type]
    app = DesktopApp(qapp, core, autostart=place["autostart"], tray=False)  # type: ignore[arg-type]
    assert UNKNOWN_TEXT not in app.window.status_line.text()
    app.notes.lock_unknown.emit()  # a press counted without knowing (ApprovalNotifications says so once)
    app.notes.lock_unknown.emit()
    assert app.window.status_line.text().count(UNKNOWN_TEXT) == 1
    app.gc.stop()
    app.dispose()
    gc.collect()
