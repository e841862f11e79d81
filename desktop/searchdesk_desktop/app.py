"""The GUI app put together: core, approval dialogs, notifications, main window, tray; and ``run``,
the one place the event loop starts (Qt's, with asyncio inside it through qasync)."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, QProcess, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QSystemTrayIcon

from searchdesk_server import gcpause

from .approval import screen_lock
from .approval.arming import ARM_DELAY_MS
from .approval.notification_question import ApprovalNotifications
from .approval.queue import ApprovalQueue
from .approval.quitting import ask_by_showing, quit_box, unused_yeses
from .core import Core
from .icons import app_icon
from .lifecycle.autostart import Autostart, app_command
from .lifecycle.single_instance import SingleInstance
from .notices.channel import Channel, SystemNotifications, TrayBalloons, refused_text
from .titles import title
from .tray import Tray
from .updates.checker import UpdateCheck, UpdateNotice, UpdateQuestion, news_line
from .windows.archive import ArchiveQuestion
from .windows.coverage import CoverageQuestion
from .windows.main import MainWindow
from .windows.settings_form import RecordNotice

log = logging.getLogger(__name__)


class MainThreadGC(QObject):
    """Run Python's cycle collector on the Qt thread only.

    A cycle holding a Qt object, collected on a worker thread (token minting, sign-in, the check),
    would delete that object from the wrong thread. So automatic collection is off and this timer
    does what it would have done, on the Qt thread (the PyQt/PySide "GarbageCollector" recipe).
    """

    def __init__(self, interval_ms: int = 500) -> None:
        super().__init__()
        gcpause.run_by_caller()  # a worker's pause (reading an answer, writing the archive) never turns it on
        gc.disable()
        self._thresholds = gc.get_threshold()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.check)
        self._timer.start(interval_ms)

    def check(self) -> None:
        counts = gc.get_count()
        for generation in (2, 1, 0):
            if counts[generation] > self._thresholds[generation]:
                gc.collect(generation)
                break

    def stop(self) -> None:
        self._timer.stop()
        gc.enable()


def make_channel(tray: Tray | None) -> Channel:
    """System notifications, with tray balloons where there is no notification service."""
    return SystemNotifications(TrayBalloons(tray) if tray is not None else None)


def run(app: DesktopApp) -> int:
    """Run the app until it quits: Qt's event loop with asyncio inside it (qasync), so the
    notification layer's asyncio calls and every Qt signal, dialog and modal ``exec()`` share one
    thread. Afterwards the notifications still on screen are withdrawn (within a time limit)."""
    import qasync

    loop = qasync.QEventLoop(app.qapp)
    asyncio.set_event_loop(loop)
    try:
        code = loop.run_forever()
        loop.run_until_complete(app.notes.channel.finish())
        return int(code)
    finally:
        asyncio.set_event_loop(None)
        loop.close()
        del loop
        gc.collect()  # the loop's Qt objects (timers, socket notifiers) die here, on the Qt thread


def start_detached(command: Sequence[str]) -> bool:
    """Start a program that outlives us (QProcess.startDetached); False if it could not start."""
    ok, _pid = QProcess.startDetached(command[0], list(command[1:]))
    return bool(ok)


class DesktopApp(QObject):
    def __init__(
        self,
        qapp: QApplication,
        core: Core,
        *,
        arm_delay_ms: int = ARM_DELAY_MS,
        autostart: Autostart | None = None,
        tray: bool | None = None,
        single: SingleInstance | None = None,
        launch: Callable[[Sequence[str]], bool] = start_detached,
        updates: UpdateCheck | None = None,
    ) -> None:
        super().__init__()
        self.qapp = qapp
        self.core = core
        self.single = single
        self._launch = launch
        self.gc = MainThreadGC()
        qapp.setWindowIcon(app_icon())
        qapp.setApplicationName("SearchDesk")
        qapp.setDesktopFileName("searchdesk")  # Linux: our .desktop file, so the desktop names our windows
        has_tray = QSystemTrayIcon.isSystemTrayAvailable() if tray is None else tray
        qapp.setQuitOnLastWindowClosed(False)
        self.autostart = autostart or Autostart(demo=core.demo)  # starts what is running
        self.queue = ApprovalQueue(core.book, demo=core.demo, arm_delay_ms=arm_delay_ms)
        self.window = MainWindow(core, autostart=self.autostart, has_tray=has_tray)
        self.window.review_requested.connect(self.queue.bring_forward)
        self.window.reconsider_requested.connect(self.queue.reconsider)
        self.window.demo_requested.connect(self.restart_in_demo)
        #: How the person is asked before a quit that loses an approval (a test answers as a person would).
        self.confirm_quit: Callable[[QMessageBox], bool] = ask_by_showing
        self.window.quit_requested.connect(self.request_quit)
        self.tray = self._make_tray() if has_tray else None
        channel = make_channel(self.tray)
        self.notes = ApprovalNotifications(
            core.book, channel, review=self.queue.bring_forward, demo=core.demo, arm_delay_ms=arm_delay_ms
        )
        if isinstance(channel, SystemNotifications):
            channel.state_changed.connect(lambda: self.window.show_notice(refused_text(), channel.state == "refused"))
        self.notes.lock_unknown.connect(lambda: self.window.show_lock_notice(screen_lock.UNKNOWN_TEXT))
        self._add_updates(updates)

    def _make_tray(self) -> Tray:
        """The tray icon and its menu: everything the main window offers, one click away."""
        tray = Tray(
            self.core,
            open_window=self.window.bring_forward,
            review=self.queue.bring_forward,
            change_my_mind=self.queue.reconsider,
            show_activity=self.window.show_activity,
            show_settings=self.window.show_settings,
            show_about=self.window.show_about,
            quit_app=self.request_quit,
            autostart=self.autostart,
        )
        self.window.closed_to_tray.connect(tray.closed_to_tray)
        return tray

    def _add_updates(self, updates: UpdateCheck | None) -> None:
        """The update check (updates/checker.py): its question, its notice and its tray line."""
        core = self.core
        self.updates = updates or UpdateCheck(
            core.settings, lambda: core.settings.save(core.settings_path), enabled=not core.demo
        )
        core.updates_offered = self.updates.can_check  # Settings shows the switch only when it can work
        self.update_question: UpdateQuestion | None = None
        self.update_notice = UpdateNotice()
        self.window.add_notice(self.update_notice)  # above the steps: seen without scrolling
        self.updates.changed.connect(self._show_update)
        core.changed.connect(self._show_update)
        core.changed.connect(self.updates.look)  # turned on in Settings: checks now, if a day has passed
        if self.tray is not None:
            self.tray.news_chosen.connect(self._open_newer)

    def start(self, *, show_window: bool = True) -> None:
        self.core.start()
        self.core.start_keeping()  # the record of changes: what is older than Kept for goes, now and daily
        self.record_notice = self._tell_about_the_record()
        self._ask_about_updates()
        self.archive_question: ArchiveQuestion | None = None
        self._ask_about_the_archive()
        self.core.changed.connect(self._ask_about_the_archive)  # after a sign-in
        self.coverage_question: CoverageQuestion | None = None
        self._ask_about_coverage()
        self.core.changed.connect(self._ask_about_coverage)  # after the archive's question is answered
        self._show_update()
        self.updates.start()
        if self.tray is not None:
            self.tray.show()
        first_run = not self.core.settings.first_run_done
        if show_window or self.tray is None:
            self.window.show()
            # The real-display test reads this line: which window, and on which Qt platform.
            log.info("%s window shown on %s", "first-run" if first_run else "main", QApplication.platformName() or "?")
        if first_run:
            self.core.settings.first_run_done = True
            self.core.settings.save(self.core.settings_path)
        log.info("SearchDesk started%s", " (demo)" if self.core.demo else "")

    def _tell_about_the_record(self) -> RecordNotice | None:
        """The first start after the update: a note in the main window (not a notification, which a
        person can miss or have turned off, nor a box over the setup steps) saying that SearchDesk now
        keeps a record of its changes, where, for how long and how to clear it. It stays there, also
        while the window is hidden in the tray, until the person closes it; only then is it remembered.
        The demo keeps a record of its own, and says nothing about the real one."""
        if self.core.demo or self.core.settings.record_notice_done:
            return None
        notice = RecordNotice(self.core)
        notice.open_settings.connect(self.window.show_settings)
        notice.done.connect(self._record_notice_done)
        self.window.add_notice(notice)
        return notice

    def _record_notice_done(self) -> None:
        self.core.settings.record_notice_done = True
        self.core.settings.save(self.core.settings_path)

    def _ask_about_updates(self) -> None:
        """The first start (of this version or later): "Tell me when a new SearchDesk is out?", once, in
        the main window; until it is answered (here or in Settings) nothing is asked of GitHub."""
        if not self.updates.should_ask:
            return
        self.update_question = UpdateQuestion()
        self.update_question.answered.connect(self.updates.set_on)
        self.window.add_notice(self.update_question)

    def _ask_about_the_archive(self) -> None:
        """After a sign-in, once: "Keep your history beyond 16 months on this computer?" in the main window.
        Nothing is copied, or asked of Google for it, before a yes (here or in Settings)."""
        question = self.archive_question
        if question is not None:
            if not self.core.archive.should_ask:
                question.hide()  # answered in Settings
            return
        if not self.core.archive.should_ask:
            return
        self.archive_question = question = ArchiveQuestion()
        question.answered.connect(self.core.archive.set_on)
        question.answered.connect(lambda _yes: self.core.changed.emit())
        self.window.add_notice(question)

    def _ask_about_coverage(self) -> None:
        """After the archive's question, once: "Keep track of which of your pages are in Google?" in the
        main window. Nothing is fetched from a website or inspected before a yes (here or in Settings)."""
        question = self.coverage_question
        if question is not None:
            if not self.core.coverage.should_ask:
                question.hide()  # answered in Settings
            return
        if not self.core.coverage.should_ask:
            return
        self.coverage_question = question = CoverageQuestion()
        question.answered.connect(self.core.coverage.set_on)
        question.answered.connect(lambda _yes: self.core.changed.emit())
        self.window.add_notice(question)

    def _show_update(self) -> None:
        """The notice as the settings are now (Settings' switch may have been turned off or on). Not after
        quitting: a change a worker thread announced just before may still arrive, after the notice went."""
        if self.window.quitting:
            return
        self.update_notice.show_release(self.updates.newer)
        if self.tray is not None:  # the tray menu's line about it
            self.tray.show_news(news_line(self.updates.newer) if self.updates.newer is not None else "")
        if self.update_question is not None and not self.updates.should_ask:
            self.update_question.hide()

    def _open_newer(self) -> None:
        """The tray menu's line about a newer version was chosen: its release page."""
        release = self.updates.newer
        if release is not None:
            self.open_url(release.url)

    def open_url(self, url: str) -> None:
        """Open a page in the browser; when none opens, its address is shown to copy (`open_address`)."""
        from .help import open_address

        open_address(url, demo=self.core.demo)

    def restart_in_demo(self) -> None:
        """Try the demo: start a new copy with ``--demo``, then quit this one.

        This copy lets go of the single-instance name and the agent socket first, so the new one
        finds neither taken (otherwise it would just bring this one forward and exit).
        """
        command = app_command("--demo")
        log.info("restarting on the demo")
        if self.single is not None:
            self.single.release()
        self.window.quitting = True
        self.queue.close()
        self.core.stop()
        if not self._launch(command):
            log.warning("could not start the demo")
            QMessageBox.warning(
                self.window,
                title(self.core.demo, "try the demo"),
                "SearchDesk could not start the demo by itself. Start it yourself with:\n\n    searchdesk --demo",
            )
        self.quit()

    def request_quit(self) -> None:
        """The person's Quit (tray or window): with a yes Claude has not used yet, ask first and say what
        is lost (approval.quitting); otherwise quit."""
        unused = unused_yeses(self.core.book)
        if unused and not self.confirm_quit(quit_box(self.window, unused, demo=self.core.demo)):
            return
        self.quit()

    def quit(self) -> None:
        """Nothing pending is approved by quitting: open questions simply end unanswered."""
        log.info("SearchDesk quitting")
        self.window.quitting = True
        self.notes.close()
        self.queue.close()
        self.updates.stop()
        self.core.stop()
        if self.tray is not None:
            self.tray.hide()
        self.window.hide()
        self.gc.stop()
        self.qapp.quit()

    def dispose(self) -> None:
        """After the event loop ended: delete our Qt objects now, on this thread, in a known order,
        instead of leaving them to PySide's clean-up at interpreter exit."""
        from PySide6.QtCore import QCoreApplication, QEvent

        for obj in (self.notes.channel, self.notes, self.tray, self.window, self.queue, self.core):
            if obj is not None:
                obj.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
