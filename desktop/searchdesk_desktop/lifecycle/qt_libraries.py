"""Before the first window on Linux: are the system libraries Qt's X11 platform needs there, and does the
display answer?

Without them Qt stops with 'Could not load the Qt platform plugin "xcb" … Reinstalling the application
may fix this problem', which sends a person the wrong way (reinstalling SearchDesk does not help). So
the app asks the dynamic linker first (`ldd` on the plugin; nothing is loaded) and, when a library is
missing, names it, the package that has it and the one command to install it. No kept library answers
"which shared libraries would this plugin fail to find", so this is the small part written by hand.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

#: The libraries Qt's xcb plugin links against that a desktop may lack, and Debian's package for each
#: (the same names `scripts/system-packages.sh run` installs).
PACKAGES: Mapping[str, str] = {
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-util.so.1": "libxcb-util1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb.so.1": "libxcb1",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3",
}


def uses_xcb(env: Mapping[str, str], platform: str = sys.platform) -> bool:
    """Whether Qt will open its windows through X11 here (Linux, xcb asked for or Qt's default choice)."""
    if not platform.startswith("linux"):
        return False
    chosen = env.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(":")[0].split(";")[0] == "xcb"
    return env.get("XDG_SESSION_TYPE") != "wayland" and bool(env.get("DISPLAY"))


def xcb_plugin() -> Path | None:
    """Qt's xcb platform plugin of the PySide6 this app runs with (None when there is none to check)."""
    from PySide6.QtCore import QLibraryInfo

    folder = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms"
    plugin = folder / "libqxcb.so"
    return plugin if plugin.is_file() else None


def not_found(ldd_output: str) -> list[str]:
    """The libraries `ldd` reported it could not find, in its order."""
    missing = []
    for line in ldd_output.splitlines():
        name, arrow, where = line.strip().partition("=>")
        if arrow and where.strip() == "not found":
            missing.append(name.strip())
    return missing


def missing_libraries(plugin: Path | None = None) -> list[str]:
    """What the dynamic linker would not find for the xcb plugin; [] when nothing is missing or it cannot
    be asked (no `ldd`, no plugin): then Qt's own message is all there is."""
    plugin = plugin or xcb_plugin()
    ldd = shutil.which("ldd")
    if plugin is None or ldd is None:
        return []
    try:
        done = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return not_found(done.stdout)


def explain(missing: list[str]) -> str:
    """What the person reads: what is missing, and the one command that installs it."""
    packages = sorted({PACKAGES[name] for name in missing if name in PACKAGES})
    lines = [
        "SearchDesk cannot open its window: this computer lacks system libraries that Qt, the toolkit "
        "SearchDesk's windows are made with, needs on X11: " + ", ".join(missing) + ".",
        "Reinstalling SearchDesk will not help.",
    ]
    if packages:
        lines.append("On Debian or Ubuntu, install them with:")
        lines.append("  sudo apt-get install -y " + " ".join(packages))
    else:
        lines.append("Install them with your system's package manager.")
    return "\n".join(lines)


def display_answers(display: str) -> bool | None:
    """Whether the X server `display` names lets this program in: one `xcb_connect` through libxcb (the
    library the plugin opens the display with; nothing of Qt is loaded). None: libxcb cannot be loaded,
    which the libraries' check names."""
    import ctypes

    try:
        xcb = ctypes.CDLL("libxcb.so.1")
    except OSError:
        return None
    xcb.xcb_connect.restype = ctypes.c_void_p
    xcb.xcb_connect.argtypes = (ctypes.c_char_p, ctypes.c_void_p)
    xcb.xcb_connection_has_error.argtypes = (ctypes.c_void_p,)
    xcb.xcb_disconnect.argtypes = (ctypes.c_void_p,)
    connection = xcb.xcb_connect(display.encode(), None)  # never NULL: an error connection at worst
    try:
        return bool(xcb.xcb_connection_has_error(connection) == 0)
    finally:
        xcb.xcb_disconnect(connection)


def explain_display(display: str) -> str:
    """What the person reads when the display cannot be opened: Qt's own words blame a missing library
    (xcb-cursor0, even when it is there) and say reinstalling may help; neither is so."""
    shown = f"the display {display}" if display else "no display (DISPLAY is empty)"
    return "\n".join(
        [
            f"SearchDesk cannot open its window: it was given {shown}, and no X server there lets it in "
            "(none runs there, or this user may not use it).",
            "Reinstalling SearchDesk will not help. Start SearchDesk from your desktop session, or check the "
            "DISPLAY (and XAUTHORITY) it was started with.",
        ]
    )


def check(env: Mapping[str, str] | None = None) -> str | None:
    """The explanation when Qt's X11 platform would fail to load here, or could not open the display;
    None when it can (or it is not the platform Qt will use)."""
    env = os.environ if env is None else env
    if not uses_xcb(env):
        return None
    missing = missing_libraries()
    if missing:
        return explain(missing)
    display = env.get("DISPLAY", "")
    return explain_display(display) if display_answers(display) is False else None
