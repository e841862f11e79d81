"""On a real X display: `searchdesk --demo --quit-after 3` under Xvfb with Qt's xcb platform.

Everything else in this suite runs offscreen; this one proves the app starts, shows its first-run
window and quits cleanly where people actually run it (what `make run` does with a display). The X
libraries Qt's xcb plugin needs are in `.ci/run`; when Xvfb is missing the test fails in CI (an
install step went missing) and is skipped elsewhere.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.desktop.helpers import app_env

XVFB_START_TIMEOUT = 20.0


def _require_xvfb() -> str:
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        msg = "Xvfb is missing: apt-get install -y --no-install-recommends xvfb xauth"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return xvfb


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


def searchdesk_command() -> list[str]:
    """The installed `searchdesk` script beside this interpreter (what `make run` runs), else `-m`."""
    script = Path(sys.executable).with_name("searchdesk")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "searchdesk_desktop"]


def test_demo_starts_on_a_real_display_and_quits(tmp_path: Path) -> None:
    xvfb = _require_xvfb()
    server = Xvfb(xvfb)
    env = app_env(tmp_path, DISPLAY=server.display, QT_QPA_PLATFORM="xcb")
    try:
        done = subprocess.run(
            [*searchdesk_command(), "--demo", "--quit-after", "3"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr[-2000:] + server.errors()
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    log = (tmp_path / "state" / "searchdesk" / "log" / "searchdesk.log").read_text()
    assert "first-run window shown on xcb" in log, log
    assert "SearchDesk started (demo)" in log and "SearchDesk quitting" in log
