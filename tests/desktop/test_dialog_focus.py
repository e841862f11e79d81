"""Only a person who looked answers: the approval dialog on a real X display, with a window manager.

Xvfb, openbox (click to focus, focus new windows, Alt+F4 closes), the SearchDesk app on Qt's xcb
platform, and another program's window that the person is typing in. Keys and clicks are real X
input (xdotool), routed by the window manager as on a desktop; the app's answers are read on the
agent socket, as a server reads them. Offscreen, Qt activates every window it shows, so only here
can "the dialog does not take the keyboard" be seen. macOS and Windows focus rules are not testable
on this machine.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from searchdesk_server.agent import client as agent_client
from tests.desktop.helpers import app_env, question
from tests.desktop.xdisplay import Openbox, Xvfb, require

pytestmark = pytest.mark.xdist_group("xcb_dialog")  # one display, app and editor for the module

DRIVER = Path(__file__).with_name("xcb_driver.py")
NEVER = 600_000  # an arming delay no test outlasts
SLOW = 1500  # long enough that a click's press and release both land before it ends
WAIT = 20.0
_sites = itertools.count(1)


class Driven:
    """One xcb_driver.py process: a JSON command a line in, a JSON answer a line out."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop())
        self.proc = subprocess.Popen(
            [sys.executable, str(DRIVER), *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put("")

    def call(self, cmd: str, **params: Any) -> Any:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"cmd": cmd, **params}) + "\n")
        self.proc.stdin.flush()
        line = self._lines.get(timeout=WAIT)
        if not line:
            self._stderr.seek(0)
            pytest.fail(f"{DRIVER.name} ended: {self._stderr.read().decode(errors='replace')[-2000:]}")
        answer = json.loads(line)
        if isinstance(answer, dict) and "driver_error" in answer:
            pytest.fail(f"{DRIVER.name} failed on {cmd!r}:\n{answer['driver_error']}")
        return answer

    def wait(self, condition: Callable[[Any], bool], what: str) -> Any:
        """Poll the process's state until ``condition`` holds (a condition, never a fixed sleep)."""
        deadline = time.monotonic() + WAIT
        while True:
            state = self.call("state")
            if condition(state):
                return state
            if time.monotonic() > deadline:
                pytest.fail(f"waited {WAIT:.0f} s for {what}; last state: {state}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call("quit")
                self.proc.wait(timeout=10)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()


class Desk:
    """The desktop the tests work at."""

    def __init__(self, display: str, xdotool: str, app: Driven, editor: Driven, socket_path: str) -> None:
        self.display = display
        self.xdotool = xdotool
        self.app = app
        self.editor = editor
        self.socket_path = socket_path
        self.asked: list[str] = []  # request ids, withdrawn after each test

    def xdo(self, *args: str) -> None:
        subprocess.run([self.xdotool, *args], env={"DISPLAY": self.display}, check=True, timeout=WAIT)

    def click(self, point: list[int]) -> None:
        self.xdo("mousemove", str(point[0]), str(point[1]), "click", "1")

    def type_in_editor(self) -> None:
        """Give the other window the keyboard, as the person would: click it."""
        self.click(self.editor.call("state")["centre"])
        self.editor.wait(lambda s: s["active"], "the editor to be active")

    def ask(self) -> str:
        """A server asks (without waiting for the answer); returns the question's fingerprint."""
        q = question(f"https://site{next(_sites)}.example/", wait_s=0)
        self.asked.append(q.request_id)
        self._agent(lambda c: c.ask(q))
        self.app.wait(
            lambda s: (
                s["dialog"] is not None and s["dialog"]["fingerprint"] == q.fingerprint and s["dialog"]["exposed"]
            ),
            "the dialog on screen",
        )
        return q.fingerprint

    def status(self, fingerprint: str) -> str:
        return str(self._agent(lambda c: c.approval_status(fingerprint)))

    def withdraw_all(self) -> None:
        """The server withdraws what it asked: every dialog closes, nothing is approved."""
        for request_id in self.asked:
            self._agent(lambda c, r=request_id: c.approval_cancel(r))
        self.asked.clear()
        self.app.wait(lambda s: s["dialog"] is None, "the dialogs to close")

    def _agent(self, call: Callable[[agent_client.AgentClient], Any]) -> Any:
        async def go() -> Any:
            async with agent_client.AgentClient(self.socket_path) as c:
                return await call(c)

        return asyncio.run(go())


def counted(state: Any, name: str) -> int:
    """How many clicks ("release:approve", "release:deny") or keys ("key:dialog") reached the dialog."""
    return int(state["counts"].get(name, 0))


@pytest.fixture(scope="module")
def display_desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    xvfb, openbox = require("Xvfb", "xvfb xauth"), require("openbox", "openbox")
    xdotool = require("xdotool", "xdotool")
    home = tmp_path_factory.mktemp("xcb-desk")
    sock_dir = Path(tempfile.mkdtemp(prefix="sdx-"))  # short: a socket path has a length limit
    server = Xvfb(xvfb)
    wm = Openbox(openbox, server.display, home)
    env = app_env(
        home,
        DISPLAY=server.display,
        QT_QPA_PLATFORM="xcb",
        DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent/searchdesk-test-bus",  # no notifications
    )
    started: list[Driven] = []
    try:
        app = Driven(["app", str(sock_dir / "agent.sock")], env)
        started.append(app)
        app.wait(lambda s: s["main_active"], "the main window")
        editor = Driven(["editor"], env)
        started.append(editor)
        editor.wait(lambda s: s["active"], "the editor")
        yield Desk(server.display, xdotool, app, editor, str(sock_dir / "agent.sock"))
    finally:
        for proc in reversed(started):
            proc.stop()
        wm.stop()
        server.stop()
        for p in sock_dir.iterdir():
            p.unlink()
        sock_dir.rmdir()


@pytest.fixture
def desk(display_desk: Desk) -> Iterator[Desk]:
    """The same desk for each test, left with no question open."""
    yield display_desk
    display_desk.withdraw_all()


def test_the_dialog_appears_without_taking_the_keyboard(desk: Desk) -> None:
    desk.app.call("arm_delay", ms=NEVER)
    desk.type_in_editor()
    fingerprint = desk.ask()
    state = desk.app.call("state")
    assert not state["dialog"]["active"]
    assert desk.editor.call("state")["active"]  # the person's window still has the keyboard
    keys_before = counted(state, "key:dialog")
    # The person goes on typing, Enter and Escape and Space included: it all goes to their window.
    desk.xdo("type", "--delay", "20", "still typing")
    desk.xdo("key", "Return", "Escape", "space")
    desk.editor.wait(lambda s: s["text"].endswith("still typing "), "the typed text in the editor")
    state = desk.app.call("state")
    assert counted(state, "key:dialog") == keys_before and state["dialog"]["visible"]
    assert desk.status(fingerprint) == "pending"


def test_no_click_or_key_answers_before_arming_and_closing_only_hides(desk: Desk) -> None:
    desk.app.call("arm_delay", ms=NEVER)
    desk.type_in_editor()
    fingerprint = desk.ask()
    state = desk.app.call("state")
    # The first click, on Approve of the inactive dialog, only activates it.
    released = counted(state, "release:approve")
    desk.click(state["dialog"]["approve"])
    state = desk.app.wait(
        lambda s: s["dialog"]["active"] and counted(s, "release:approve") > released, "the click to land"
    )
    assert not state["dialog"]["armed"]
    assert desk.status(fingerprint) == "pending"
    # Active but not armed: keys and clicks reach the dialog and do nothing.
    keys = counted(state, "key:dialog")
    desk.xdo("key", "Return", "KP_Enter", "Escape", "space", "Tab", "Return")
    state = desk.app.wait(lambda s: counted(s, "key:dialog") >= keys + 6, "the keys to land")
    released = counted(state, "release:deny")
    desk.click(state["dialog"]["deny"])
    desk.click(state["dialog"]["approve"])
    state = desk.app.wait(lambda s: counted(s, "release:deny") > released, "the clicks to land")
    assert state["dialog"]["visible"] and desk.status(fingerprint) == "pending"
    # Closing it (the window manager's Alt+F4) before it is armed hides it; the question stays open.
    desk.xdo("key", "alt+F4")
    state = desk.app.wait(lambda s: not s["dialog"]["visible"], "the dialog to hide")
    assert desk.status(fingerprint) == "pending"
    # Review in the main window brings it back, to be armed again before any answer.
    assert state["review"] is not None
    desk.click(state["review"])
    state = desk.app.wait(lambda s: s["dialog"]["visible"] and s["dialog"]["active"], "Review to bring it back")
    assert state["dialog"]["fingerprint"] == fingerprint and not state["dialog"]["armed"]
    assert desk.status(fingerprint) == "pending"


def test_after_arming_a_deliberate_click_approves(desk: Desk) -> None:
    desk.app.call("arm_delay", ms=SLOW)
    desk.type_in_editor()
    fingerprint = desk.ask()
    state = desk.app.call("state")
    released = counted(state, "release:approve")
    desk.click(state["dialog"]["approve"])  # activates only
    state = desk.app.wait(
        lambda s: s["dialog"]["active"] and counted(s, "release:approve") > released, "the click to land"
    )
    assert desk.status(fingerprint) == "pending"
    desk.app.wait(lambda s: s["dialog"]["armed"], "the dialog to arm")
    # The person clicks back into their own window: the dialog disarms at once.
    desk.type_in_editor()
    state = desk.app.wait(lambda s: not s["dialog"]["armed"], "the dialog to disarm")
    # The click that brings it back to the front does not answer either.
    released = counted(state, "release:approve")
    desk.click(state["dialog"]["approve"])
    desk.app.wait(lambda s: s["dialog"]["active"] and counted(s, "release:approve") > released, "the click to land")
    assert desk.status(fingerprint) == "pending"
    # Read, armed, clicked: approved, and the server picks the yes up once.
    state = desk.app.wait(lambda s: s["dialog"]["armed"], "the dialog to arm again")
    desk.click(state["dialog"]["approve"])
    desk.app.wait(lambda s: s["dialog"] is None, "the answered dialog to close")
    assert desk.status(fingerprint) == "approve"
    assert desk.status(fingerprint) == "none"
