"""The app's one event loop (``app.run``): Qt's, with asyncio inside it through qasync.

Each test runs the real app exactly as ``searchdesk`` does, while a scenario coroutine plays the
person. Modal dialogs (a confirmation, a file picker) must still open, wait and return, with asyncio
and the notification layer working while they are open; and a notification service that never
answers must hold up neither the dialog nor quitting.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from searchdesk_desktop.app import DesktopApp, run
from searchdesk_desktop.approval.book import State
from searchdesk_desktop.approval.dialog import ApprovalDialog
from searchdesk_desktop.approval.notification_question import DENY
from searchdesk_desktop.core import Core
from searchdesk_desktop.notices.channel import SystemNotifications
from tests.desktop.conftest import PrivateBus
from tests.desktop.fake_notifications import FakeServer, key
from tests.desktop.helpers import core_args, question

T = TypeVar("T")


async def until(condition: Callable[[], T | None], timeout: float = 20) -> T:
    """Wait (yielding to the loop) until ``condition()`` is truthy; return it."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {condition}")
        await asyncio.sleep(0.02)
    return value


async def armed_dialog(app: DesktopApp) -> ApprovalDialog:
    """The approval dialog as a person answers it: brought to the front, and armed (before that no
    click counts)."""
    dialog = await until(lambda: app.queue.dialog)
    dialog.activateWindow()
    await until(lambda: dialog.armed)
    return dialog


def drive(app: DesktopApp, scenario: Callable[[], Coroutine[Any, Any, None]]) -> int:
    """Run the app with ``run`` while ``scenario`` plays the person; the app quits when it ends."""
    failures: list[BaseException] = []

    async def play() -> None:
        try:
            await scenario()
        except BaseException as exc:
            failures.append(exc)
        finally:
            QTimer.singleShot(0, app.quit)

    QTimer.singleShot(0, lambda: asyncio.ensure_future(play()))
    code = run(app)
    app.dispose()
    gc.collect()  # the app ran the collector itself (MainThreadGC): what it promoted must die on this thread
    if failures:
        raise failures[0]
    return code


@pytest.fixture
def make_app(qapp: QApplication, place: dict) -> Iterator[Callable[..., DesktopApp]]:
    def make(**kw: Any) -> DesktopApp:
        core = Core(**core_args(place), demo=True)  # type: ignore[arg-type]
        app = DesktopApp(qapp, core, autostart=place["autostart"], tray=False, arm_delay_ms=0, **kw)
        app.start()
        return app

    yield make


class Heartbeat:
    """An asyncio task that counts: proof that the loop goes on turning while something waits."""

    def __init__(self) -> None:
        self.beats = 0
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            self.beats += 1
            await asyncio.sleep(0.01)

    async def goes_on(self) -> None:
        start = self.beats
        await until(lambda: self.beats >= start + 5)


def test_modal_dialogs_work_inside_the_asyncio_loop(
    make_app: Callable[..., DesktopApp], private_bus: PrivateBus
) -> None:
    server = FakeServer(private_bus)
    app = make_app()
    claude_file = Path(app.core.claude_path)
    seen: dict[str, object] = {}

    async def scenario() -> None:
        beat = Heartbeat()
        await until(lambda: app.notes.channel.state == "ready")  # type: ignore[attr-defined]
        entry = app.core.book.ask(question())
        note = await until(lambda: server.poll("notify"))

        # A confirmation box, opened as a click opens it: from Qt's event handling, not from a task.
        QTimer.singleShot(0, app.window.add_via_settings_file)
        box = await until(QApplication.activeModalWidget)
        assert isinstance(box, QMessageBox)
        await beat.goes_on()  # asyncio runs inside the box's own event loop...
        # Deny: this question's form does not offer Approve in the demo app (a real account's question there).
        server.click(note["id"], key(note, DENY))
        await until(lambda: entry.state is State.DENIED)  # ...and so does the notification layer
        box.button(QMessageBox.StandardButton.No).click()
        await until(lambda: QApplication.activeModalWidget() is None)
        seen["added after No"] = claude_file.exists()

        # A file picker (QFileDialog.getOpenFileName runs its own exec()).
        QTimer.singleShot(0, app.window.choose_client_file)
        picker = await until(QApplication.activeModalWidget)
        assert isinstance(picker, QFileDialog)
        await beat.goes_on()
        picker.reject()
        await until(lambda: QApplication.activeModalWidget() is None)
        await beat.goes_on()  # and after both returned
        beat.task.cancel()

    try:
        assert drive(app, scenario) == 0
    finally:
        server.stop()
    assert seen == {"added after No": False}


def test_a_notification_service_that_never_answers_holds_nothing_up(
    make_app: Callable[..., DesktopApp], private_bus: PrivateBus
) -> None:
    server = FakeServer(private_bus, "--hang")
    app = make_app()
    channel = app.notes.channel
    assert isinstance(channel, SystemNotifications)
    channel.timeout_s = 60  # far longer than the test: anything that waited for the service would show
    states: list[str] = []

    async def scenario() -> None:
        beat = Heartbeat()
        entry = app.core.book.ask(question())
        assert await until(lambda: server.poll("ignored"))  # the service got our call and says nothing
        dialog = await armed_dialog(app)
        await beat.goes_on()
        dialog.deny_button.click()
        await until(lambda: entry.state is State.DENIED)
        states.append(channel.state)
        beat.task.cancel()

    try:
        assert drive(app, scenario) == 0
    finally:
        server.stop()
    assert states == ["starting"]  # the dialog was answered while the service still had not answered
    assert channel.state == "starting"  # and the app quit without waiting for it either


def test_a_service_that_stops_answering_mid_way_does_not_delay_quitting(
    make_app: Callable[..., DesktopApp], private_bus: PrivateBus, caplog: pytest.LogCaptureFixture
) -> None:
    server = FakeServer(private_bus)
    app = make_app()
    channel = app.notes.channel
    assert isinstance(channel, SystemNotifications)
    channel.timeout_s = 60

    async def scenario() -> None:
        await until(lambda: channel.state == "ready")
        server.send({"do": "hang"})
        await until(lambda: server.poll("hung"))
        entry = app.core.book.ask(question())
        assert await until(lambda: server.poll("ignored")) == "Notify"  # the send now waits, in vain
        dialog = await armed_dialog(app)
        dialog.deny_button.click()
        await until(lambda: entry.state is State.DENIED)

    caplog.set_level(logging.INFO, logger="searchdesk_desktop.notices.channel")
    try:
        assert drive(app, scenario) == 0
    finally:
        server.stop()
    # The send was given up when the app quit, not waited out to its time limit.
    assert "did not answer" not in caplog.text and "system notifications ready" in caplog.text
