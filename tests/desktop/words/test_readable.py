"""Every window, in every state, can be read: on small and large screens, scaled, with larger fonts,
in light and dark colour schemes (issue 15).

Each set-up runs ``tests.desktop.ui_walk`` in a process of its own, since Qt fixes the screen and the
scale factor when it starts:

- layout: the offscreen platform with a screen of 1024×600 or 1400×900 (its ``configfile=`` option),
  at ``QT_SCALE_FACTOR`` 1.0 and 1.5, with the fonts as they come and 1.25× larger;
- contrast: Fusion on a real X server (Xvfb, Qt's xcb platform with the GNOME theme, the one that
  honours ``styleHints().setColorScheme``), light and dark.

The self-check's pass and fail shown in the main window are the real server's, run once here.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
from pathlib import Path

import pytest

from searchdesk_desktop.claude import config_file as cc
from searchdesk_server.stdio_check import CheckReport, run_check
from tests.desktop.conftest import KeyringSession
from tests.desktop.ui_walk import DEFAULT_SITE
from tests.desktop.xdisplay import Xvfb, gnome_on, require, walk_in_a_process

# No xdist group: the ten walks (about half a minute each) are dealt to both workers, and each worker
# that runs one makes the self-checks below once (a few seconds, the three at once).


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real self-check, passing (the demo) and failing (no Google account anywhere); and passing with a
    warning (the walk's default property, which the demo's account cannot see)."""
    home = tmp_path_factory.mktemp("check-home")
    base = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "XDG_RUNTIME_DIR": str(home)}
    command = cc.server_command().argv()

    async def three() -> list[CheckReport]:  # three servers at once: each check waits on its own child
        return await asyncio.gather(
            run_check(command, {**base, "SEARCHDESK_DEMO": "true"}),
            run_check(command, {**base, "SEARCHDESK_AGENT_SOCKET": str(home / "nobody-here.sock")}),
            run_check(command, {**base, "SEARCHDESK_DEMO": "true", "GSC_SITE_URL": DEFAULT_SITE}),
        )

    passed, failed, warned = asyncio.run(three())
    assert passed.ok and not failed.ok, (passed.render(), failed.render())
    assert warned.ok and warned.warning and not passed.warning, warned.render()
    path = home / "reports.pickle"
    path.write_bytes(pickle.dumps({"passed": passed, "failed": failed, "warned": warned}))
    return path


def walk(check: str, env: dict[str, str], reports: Path, *args: str) -> dict[str, object]:
    return walk_in_a_process("tests.desktop.ui_walk", check, env, reports, *args)


def _report(result: dict[str, object]) -> str:
    problems = result["problems"]
    assert isinstance(problems, list)
    shown = "\n".join(problems[:60])
    more = f"\n… and {len(problems) - 60} more" if len(problems) > 60 else ""
    return f"{len(problems)} problems in {result['states']} window states:\n{shown}{more}"


@pytest.mark.parametrize("font", ["1.0", "1.25"])
@pytest.mark.parametrize("scale", ["1", "1.5"])
@pytest.mark.parametrize("screen", [(1024, 600), (1400, 900)], ids=["1024x600", "1400x900"])
def test_every_window_fits_its_text(
    screen: tuple[int, int],
    scale: str,
    font: str,
    reports: Path,
    tmp_path: Path,
    real_keyring: KeyringSession,
) -> None:
    width, height = screen
    config = tmp_path / "screen.json"
    config.write_text(
        json.dumps(
            {
                "screens": [
                    {"name": "walk", "x": 0, "y": 0, "width": width, "height": height, "logicalDpi": 96, "dpr": 1}
                ]
            }
        )
    )
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": f"offscreen:configfile={config}",
        "QT_SCALE_FACTOR": scale,
        "DBUS_SESSION_BUS_ADDRESS": real_keyring.bus_address,
    }
    result = walk("layout", env, reports, "--font-scale", font)
    assert result["states"] and not result["problems"], _report(result)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_is_readable_in_light_and_dark(
    scheme: str, reports: Path, tmp_path: Path, real_keyring: KeyringSession
) -> None:
    server = Xvfb(require("Xvfb", "xvfb xauth"))
    env = gnome_on(server.display, real_keyring.bus_address)
    try:
        result = walk("contrast", env, reports, "--scheme", scheme)
    finally:
        server.stop()
    assert result["states"] and not result["problems"], _report(result)
