"""`searchdesk --check` from the windowed Windows build, where sys.stdout is None: the parent's
console when there is one, else a message box (exercised here offscreen)."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from searchdesk_desktop.__main__ import headless_check
from searchdesk_desktop.check import console
from searchdesk_server.stdio_check import CheckReport


@dataclass
class FakeKernel32:
    attach_ok: bool
    calls: list[int] = field(default_factory=list)

    def AttachConsole(self, pid: int) -> int:
        self.calls.append(pid)
        return 1 if self.attach_ok else 0


def test_attach_parent_console_opens_conout_when_attached() -> None:
    opened: list[tuple[Any, ...]] = []
    stream = io.StringIO()

    def opener(*args: Any, **kw: Any) -> io.StringIO:
        opened.append(args)
        return stream

    kernel = FakeKernel32(attach_ok=True)
    assert console.attach_parent_console(platform="win32", kernel32=kernel, opener=opener) is stream
    assert kernel.calls == [0xFFFFFFFF] and opened[0][:2] == ("CONOUT$", "w")


def test_attach_parent_console_without_a_parent_console() -> None:
    kernel = FakeKernel32(attach_ok=False)
    assert console.attach_parent_console(platform="win32", kernel32=kernel, opener=open) is None
    assert console.attach_parent_console(platform="linux", kernel32=kernel) is None
    assert kernel.calls == [0xFFFFFFFF]  # not called off Windows


def test_stdout_is_used_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    route, stream = console.output_stream(attach=lambda: pytest.fail("must not attach"))  # type: ignore[arg-type,return-value]
    console.deliver("PASS: SearchDesk works: it can read 5 properties for Claude.", True, route, stream)
    assert route == "stdout" and out.getvalue() == "PASS: SearchDesk works: it can read 5 properties for Claude.\n"


def test_no_stdout_attaches_to_the_parent_console(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    conout = io.StringIO()
    route, stream = console.output_stream(attach=lambda: conout)
    console.deliver("PASS: ok", True, route, stream)
    assert route == "console" and conout.getvalue() == "PASS: ok\n"


def close_next_box(seen: list[tuple[str, str, str]], details: list[str] | None = None) -> None:
    """Answer the message box the code under test is about to show (modal: it blocks until then)."""
    details = [] if details is None else details

    def poll() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(10, poll)
            return
        seen.append((box.windowTitle(), box.text(), box.informativeText()))
        details.append(box.detailedText())
        box.button(QMessageBox.StandardButton.Ok).click()

    QTimer.singleShot(0, poll)


def test_no_stdout_and_no_console_shows_a_message_box(monkeypatch: pytest.MonkeyPatch, qtbot: QtBot) -> None:
    monkeypatch.setattr(sys, "stdout", None)
    route, stream = console.output_stream(attach=lambda: None)
    assert route == "box" and stream is None
    seen: list[tuple[str, str, str]] = []
    close_next_box(seen)
    console.deliver("FAIL: the server did not start.", False, route, stream, demo=True)
    assert seen == [
        ("SearchDesk (Demo): check it works", "SearchDesk found a problem.", "FAIL: the server did not start.")
    ]


class FakeCore(QObject):
    """Stands in for Core in headless_check: the check "runs" and reports at the next turn of the loop."""

    check_done = Signal(object)

    def __init__(self, demo: bool = False) -> None:
        super().__init__()

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def run_check(self) -> None:
        QTimer.singleShot(0, lambda: self.check_done.emit(Report()))


def Report() -> CheckReport:
    lines = ["Started; it offers 25 tools.", "", "list_sites:", "    5 properties"]
    return CheckReport(ok=True, verdict="SearchDesk works: it can read 5 properties for Claude.", lines=lines)


def test_headless_check_with_no_stdout_ends_in_a_message_box(monkeypatch: pytest.MonkeyPatch, qtbot: QtBot) -> None:
    """The whole command path as the windowed exe runs it when started from Explorer."""
    import searchdesk_desktop.core

    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(console, "attach_parent_console", lambda: None)
    monkeypatch.setattr(searchdesk_desktop.core, "Core", FakeCore)
    seen: list[tuple[str, str, str]] = []
    details: list[str] = []
    close_next_box(seen, details)
    assert headless_check(demo=True) == 0
    assert seen == [
        (
            "SearchDesk (Demo): check it works",
            "SearchDesk works.",
            "PASS: SearchDesk works: it can read 5 properties for Claude.",
        )
    ]
    assert details == [Report().render()]  # the whole report, behind "Show Details..."


def test_a_failed_headless_check_speaks_the_apps_words(monkeypatch: pytest.MonkeyPatch, qtbot: QtBot) -> None:
    """`searchdesk --check` is the app: its verdict is the window's, not the server's command-line words."""
    import searchdesk_desktop.core
    from searchdesk_desktop.check.run import CHECK_WORDS

    class FailingCore(FakeCore):
        def run_check(self) -> None:
            failed = CheckReport(ok=False, kind="not_configured", verdict="Not configured: … (see docs).")
            QTimer.singleShot(0, lambda: self.check_done.emit(failed))

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(searchdesk_desktop.core, "Core", FailingCore)
    assert headless_check(demo=False) == 1
    assert out.getvalue().splitlines()[-1] == "FAIL: " + CHECK_WORDS["not_configured"]
    assert "see docs" not in out.getvalue()
