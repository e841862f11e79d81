"""On a real X display: `searchdesk --demo --quit-after 3` under Xvfb with Qt's xcb platform.

Everything else in this suite runs offscreen; this one proves the app starts, shows its first-run
window and quits cleanly where people actually run it (what `make run` does with a display). The X
libraries Qt's xcb plugin needs are in `.ci/run`; when Xvfb is missing the test fails in CI (an
install step went missing) and is skipped elsewhere.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import X_DISPLAY
from tests.desktop.helpers import app_env
from tests.desktop.xdisplay import Xvfb, require


def searchdesk_command() -> list[str]:
    """The installed `searchdesk` script beside this interpreter (what `make run` runs), else `-m`."""
    script = Path(sys.executable).with_name("searchdesk")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "searchdesk_desktop"]


@pytest.mark.linux_only(X_DISPLAY)
def test_demo_starts_on_a_real_display_and_quits(tmp_path: Path) -> None:
    server = Xvfb(require("Xvfb", "xvfb xauth"))
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
