"""A real X display for the tests that need one: Xvfb, and a window manager on it (openbox).

The X programs come from `.ci/run`; when one is missing the test fails in CI (an install step went
missing) and is skipped elsewhere.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

XVFB_START_TIMEOUT = 20.0
WALK_TIMEOUT = 240


def gnome_on(display: str, bus_address: str) -> dict[str, str]:
    """This process's environment as a GNOME session on `display` (Qt's xcb), with the test keyring's
    bus, and the screen's own scale."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "xcb",
        "DISPLAY": display,
        "XDG_CURRENT_DESKTOP": "GNOME",
        "DBUS_SESSION_BUS_ADDRESS": bus_address,
    }
    env.pop("QT_SCALE_FACTOR", None)
    return env


def walk_in_a_process(module: str, check: str, env: dict[str, str], reports: Path, *args: str) -> dict[str, object]:
    """A walk (`tests.desktop.ui_walk`, `tests.desktop.keeping_walk`) in a process of its own, since Qt
    fixes the screen when it starts: its last line of output, as JSON."""
    from tests import REPO

    done = subprocess.run(
        [sys.executable, "-m", module, "--check", check, "--reports", str(reports), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=WALK_TIMEOUT,
    )
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    result: dict[str, object] = json.loads(lines[-1])
    return result


def require(program: str, package: str) -> str:
    """The program's path; fails in CI, skips elsewhere, when it is not installed."""
    path = shutil.which(program)
    if path is None:
        msg = f"{program} is missing: apt-get install -y --no-install-recommends {package}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return path


class Xvfb:
    """`Xvfb :N -nolisten tcp`, with N chosen by Xvfb itself (``-displayfd``): a free number, no race
    between parallel test workers, and written only once the server accepts connections."""

    def __init__(self, xvfb: str) -> None:
        # Xvfb treats a failed write to the display fd as fatal, so the read end stays open while it runs.
        self._read, write_end = os.pipe()
        # A file, not a pipe: a chatty server must never block on it. Closed in stop().
        self._log = tempfile.TemporaryFile()  # noqa: SIM115
        self.proc = subprocess.Popen(
            [xvfb, "-displayfd", str(write_end), "-nolisten", "tcp", "-screen", "0", "1280x800x24"],
            pass_fds=(write_end,),
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        os.close(write_end)
        self.display = ""
        self._errors = ""
        number = b""
        while not number.endswith(b"\n"):
            ready, _, _ = select.select([self._read], [], [], XVFB_START_TIMEOUT)
            chunk = os.read(self._read, 16) if ready else b""
            if not chunk:
                break
            number += chunk
        if not number.strip().isdigit():
            self.stop()
            pytest.fail(f"Xvfb did not start: {self.errors()}")
        self.display = f":{number.decode().strip()}"

    def errors(self) -> str:
        if not self._log.closed:
            self._log.seek(0)
            self._errors = self._log.read().decode(errors="replace")[-500:]
        return self._errors

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._read)
        self.errors()
        self._log.close()


class Openbox:
    """openbox on ``display``, ready once its ``--startup`` command has run (it runs it after taking
    over the screen). Its own settings: click to focus, focus new windows, Alt+F4 closes."""

    def __init__(self, openbox: str, display: str, home: Path) -> None:
        ready = home / "openbox-ready"
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "DISPLAY": display}
        self._log = tempfile.TemporaryFile()  # noqa: SIM115
        self.proc = subprocess.Popen(
            [openbox, "--sm-disable", "--startup", f"touch {ready}"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        deadline = time.monotonic() + XVFB_START_TIMEOUT
        while not ready.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                errors = self.errors()
                self.stop()
                pytest.fail(f"openbox did not start: {errors}")
            time.sleep(0.05)

    def errors(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-500:]

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
