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
import os
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

from searchdesk_desktop.approval.arming import ARM_DELAY_MS
from searchdesk_server.agent import client as agent_client
from tests import REPO
from tests.desktop.helpers import app_env, question
from tests.desktop.xdisplay import Openbox, Xvfb, require

pytestmark = pytest.mark.xdist_group("xcb_dialog")  # one display, app and editor for the module

DRIVER = REPO / "tests" / "desktop" / "xcb_driver.py"
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

    def move(self, point: list[int]) -> None:
        self.xdo("mousemove", str(point[0]), str(point[1]))

    def click_here(self) -> None:
        self.xdo("click", "1")

    def ask_at(self, since: float, seconds: float) -> None:
        """Wait until `seconds` after `since` (when the dialog was seen on screen)."""
        time.sleep(max(since + seconds - time.monotonic(), 0))

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
        # The code under test, where a run names it (a copy of older code), for the app's process too.
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
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
    # The first click, on Approve of the inactive dialog before it is armed: it lands and answers nothing.
    released = counted(state, "release:approve")
    desk.move(state["dialog"]["words"])
    desk.click(state["dialog"]["approve"])
    state = desk.app.wait(
        lambda s: s["dialog"]["active"] and counted(s, "release:approve") > released, "the click to land"
    )
    assert not state["dialog"]["armed"]
    assert desk.status(fingerprint) == "pending"
    # Active but not armed: keys and clicks reach the dialog and do nothing.
    keys = counted(state, "key:dialog")
    desk.xdo("key", "Return", "KP_Enter", "Escape", "space", "Tab", "Return")
    # Tab moves the focus inside the dialog, onto the list of values (it scrolls by keys on its own, issue
    # 36), and is taken there: the other five reach the dialog itself.
    state = desk.app.wait(lambda s: counted(s, "key:dialog") >= keys + 5, "the keys to land")
    released = counted(state, "release:deny")
    desk.click(state["dialog"]["deny"])
    desk.click(state["dialog"]["approve"])
    state = desk.app.wait(lambda s: counted(s, "release:deny") > released, "the clicks to land")
    assert state["dialog"]["visible"] and desk.status(fingerprint) == "pending"
    # Closing it (the window manager's Alt+F4) before it is armed hides it; the question stays open.
    desk.xdo("key", "alt+F4")
    state = desk.app.wait(lambda s: not s["dialog"]["visible"], "the dialog to hide")
    assert desk.status(fingerprint) == "pending"
    # "Show the question" in the main window brings it back, to be armed again before any answer.
    assert state["review"] is not None
    desk.click(state["review"])
    state = desk.app.wait(lambda s: s["dialog"]["visible"] and s["dialog"]["active"], "Review to bring it back")
    assert state["dialog"]["fingerprint"] == fingerprint and not state["dialog"]["armed"]
    assert desk.status(fingerprint) == "pending"


def _shown(desk: Desk) -> tuple[str, float, Any]:
    """A question asked while the person types in another window (the real arming delay): its fingerprint,
    when its dialog was seen on screen, and the dialog's state then."""
    desk.app.call("arm_delay", ms=ARM_DELAY_MS)
    desk.type_in_editor()
    fingerprint = desk.ask()
    since = time.monotonic()
    return fingerprint, since, desk.app.call("state")["dialog"]


def test_a_rested_click_after_the_delay_approves_without_activating_first(desk: Desk) -> None:
    fingerprint, since, shown = _shown(desk)
    assert not shown["active"]
    # The pointer comes over the dialog's words, then onto Approve, and rests there.
    desk.move(shown["words"])
    desk.move(shown["approve"])
    desk.ask_at(since, 1.2)
    state = desk.app.call("state")
    assert not state["dialog"]["active"] and state["dialog"]["armed"]  # never activated, armed all the same
    assert desk.editor.call("state")["active"]
    # Nothing moved between its appearance and the click.
    assert state["dialog"]["approve"] == shown["approve"] and state["dialog"]["deny"] == shown["deny"]
    assert state["dialog"]["frame"] == shown["frame"]
    desk.click_here()
    desk.app.wait(lambda s: s["dialog"] is None, "the answered dialog to close")
    assert desk.status(fingerprint) == "approve"


def test_a_click_too_early_answers_nothing(desk: Desk) -> None:
    fingerprint, since, shown = _shown(desk)
    desk.move(shown["words"])
    desk.move(shown["approve"])
    desk.ask_at(since, 0.5)
    released = counted(desk.app.call("state"), "release:approve")
    desk.click_here()
    state = desk.app.wait(lambda s: counted(s, "release:approve") > released, "the click to land")
    assert desk.status(fingerprint) == "pending" and state["dialog"]["visible"]


def test_a_click_passing_over_approve_answers_nothing(desk: Desk) -> None:
    fingerprint, since, shown = _shown(desk)
    frame = shown["frame"]
    outside = [frame[0] + frame[2] + 30, frame[1] + frame[3] // 2]
    desk.move(outside)
    desk.ask_at(since, 1.5)
    assert desk.app.call("state")["dialog"]["armed"]
    released = counted(desk.app.call("state"), "release:approve")
    desk.click(shown["approve"])  # on its way: over the dialog for a moment only
    state = desk.app.wait(lambda s: counted(s, "release:approve") > released, "the click to land")
    assert desk.status(fingerprint) == "pending" and state["dialog"]["visible"]


def test_the_dialog_never_opens_with_a_button_under_the_pointer(desk: Desk) -> None:
    fingerprint, since, shown = _shown(desk)
    where = shown["approve"]
    desk.withdraw_all()
    # The pointer rests where Approve appeared; the next question's dialog opens elsewhere.
    desk.move(where)
    fingerprint = desk.ask()
    since = time.monotonic()
    state = desk.app.call("state")
    for name in ("approve", "deny"):
        assert abs(state["dialog"][name][0] - where[0]) > 40 or abs(state["dialog"][name][1] - where[1]) > 20
    # Resting there and clicking, armed: the click is not on a button, and had it been, it would not count.
    desk.ask_at(since, 1.5)
    desk.click_here()
    time.sleep(0.3)
    assert desk.status(fingerprint) == "pending"


def test_a_click_after_coming_back_counts_only_once_rested(desk: Desk) -> None:
    fingerprint, since, shown = _shown(desk)
    desk.move(shown["words"])
    desk.ask_at(since, 1.2)
    # The person clicks back into their own window, then goes straight for Approve: too quick.
    desk.type_in_editor()
    released = counted(desk.app.call("state"), "release:approve")
    desk.click(shown["approve"])
    desk.app.wait(lambda s: counted(s, "release:approve") > released, "the click to land")
    assert desk.status(fingerprint) == "pending"
    # Read, rested, clicked: approved, and the server picks the yes up once.
    desk.move(shown["words"])
    desk.move(shown["approve"])
    time.sleep(0.7)
    desk.click_here()
    desk.app.wait(lambda s: s["dialog"] is None, "the answered dialog to close")
    assert desk.status(fingerprint) == "approve"
    assert desk.status(fingerprint) == "none"
