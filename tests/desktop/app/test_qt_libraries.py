"""Before the first window: the libraries Qt's X11 platform needs, named with the command that installs
them (instead of Qt's "Reinstalling the application may fix this problem", which does not), and one list
of system packages for `make run`, `make test`, `make bundle` and CI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from searchdesk_desktop.lifecycle import qt_libraries
from tests import REPO as ROOT
from tests.desktop.xdisplay import Xvfb, require

SCRIPT = ROOT / "scripts" / "system-packages.sh"

LDD = """\
\tlinux-vdso.so.1 (0x00007ffc)
\tlibGL.so.1 => /lib/x86_64-linux-gnu/libGL.so.1 (0x00007f)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibunheard-of.so.7 => not found
"""


def test_what_ldd_could_not_find_is_named_with_its_package() -> None:
    missing = qt_libraries.not_found(LDD)
    assert missing == ["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libunheard-of.so.7"]
    text = qt_libraries.explain(missing)
    assert "libxcb-icccm.so.4" in text and "Reinstalling SearchDesk will not help." in text
    assert "sudo apt-get install -y libxcb-icccm4 libxcb-keysyms1" in text


def test_the_real_plugin_finds_everything_here() -> None:
    # This machine has the packages (make test installed them): nothing is reported missing.
    plugin = qt_libraries.xcb_plugin()
    assert plugin is not None
    assert qt_libraries.missing_libraries(plugin) == []


def test_a_library_the_linker_cannot_find_is_reported_for_real(tmp_path: Path) -> None:
    # The real ldd on a real plugin, with one library it needs hidden: a copy of the plugin whose
    # needed name is changed to one nobody has (same length, so the file stays valid).
    plugin = qt_libraries.xcb_plugin()
    assert plugin is not None
    data = plugin.read_bytes()
    assert b"libxcb-icccm.so.4" in data
    (tmp_path / "plugins" / "platforms").mkdir(parents=True)
    (tmp_path / "lib").symlink_to(plugin.parents[2] / "lib")  # its RUNPATH is $ORIGIN/../../lib
    broken = tmp_path / "plugins" / "platforms" / "libqxcb.so"
    broken.write_bytes(data.replace(b"libxcb-icccm.so.4", b"libxcb-iccXm.so.4"))
    assert qt_libraries.missing_libraries(broken) == ["libxcb-iccXm.so.4"]


def test_a_display_nobody_answers_is_named_before_qt_starts(tmp_path: Path) -> None:
    # Qt's own words for a display it cannot open blame a library that is there ("xcb-cursor0 or
    # libxcb-cursor0 is needed") and say reinstalling may help. The real app, the real libxcb: it says
    # which display did not answer instead, and exits 1 before Qt tries.
    nobody = next(f":{n}" for n in range(917, 1017) if not Path(f"/tmp/.X11-unix/X{n}").exists())
    code = "import sys; from searchdesk_desktop.__main__ import main; sys.exit(main(['--demo']))\n"
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": nobody, "HOME": str(tmp_path)}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")  # the log the app writes it to, too
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1, done.stderr
    assert f"it was given the display {nobody}, and no X server there lets it in" in done.stderr, done.stderr
    assert "Reinstalling SearchDesk will not help." in done.stderr
    assert "Could not load the Qt platform plugin" not in done.stderr
    server = Xvfb(require("Xvfb", "xvfb xauth"))  # a display that answers is no problem
    try:
        assert qt_libraries.display_answers(server.display) is True
        assert qt_libraries.check({"QT_QPA_PLATFORM": "xcb", "DISPLAY": server.display}) is None
    finally:
        server.stop()


def test_only_x11_on_linux_is_checked() -> None:
    assert qt_libraries.uses_xcb({"DISPLAY": ":1"}, "linux")
    assert qt_libraries.uses_xcb({"QT_QPA_PLATFORM": "xcb"}, "linux")
    assert not qt_libraries.uses_xcb({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":1"}, "linux")
    assert not qt_libraries.uses_xcb({"DISPLAY": ":1", "XDG_SESSION_TYPE": "wayland"}, "linux")
    assert not qt_libraries.uses_xcb({"DISPLAY": ":1"}, "darwin")


def _packages(kind: str) -> set[str]:
    text = SCRIPT.read_text()
    block = re.search(rf"^{kind}=\((.*?)^\)", text, re.S | re.M)
    assert block, kind
    return set(re.findall(r"[a-z0-9][a-z0-9.+-]+", re.sub(r"#.*", "", block.group(1)))) - {"run"}


def test_one_list_of_system_packages() -> None:
    run = _packages("run")
    assert set(qt_libraries.PACKAGES.values()) <= run, "a library the app names is not what make run installs"
    # .ci/run installs nothing itself: make test does, from the same list.
    ci = (ROOT / ".ci" / "run").read_text()
    assert "apt-get install" not in ci.replace("apt-get install -y -qq make", "")
    assert "system-packages" in (ROOT / "Makefile").read_text()


def test_the_script_says_the_one_command_when_it_cannot_install(tmp_path: Path) -> None:
    # Not root and no sudo: it stops at once with the command. (Faked at its boundary: `id` says 1000,
    # `dpkg-query` says nothing is installed, there is no sudo.)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fakes = {"id": "echo 1000", "dpkg-query": "exit 1", "dpkg": "exit 0", "uname": "echo Linux", "sudo": "exit 1"}
    for name, body in fakes.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin".replace(":/usr/bin", ""), "HOME": str(tmp_path)}
    done = subprocess.run(["/bin/bash", str(SCRIPT), "run"], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "sudo apt-get install -y --no-install-recommends libegl1" in done.stderr
    assert "libxcb-icccm4" in done.stderr


def test_make_run_names_what_is_missing_before_qt_starts() -> None:
    # The app itself: with the check finding a library missing, it exits 1 with the explanation (the
    # check is the real one; only the plugin it is pointed at is broken, through a tiny wrapper).
    code = (
        "import sys; from pathlib import Path; from searchdesk_desktop.lifecycle import qt_libraries as q\n"
        "q.missing_libraries = lambda plugin=None: ['libxcb-icccm.so.4']\n"
        "from searchdesk_desktop.__main__ import main\n"
        "sys.exit(main(['--demo']))\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "DISPLAY": ":99"}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1, done.stderr
    assert "sudo apt-get install -y libxcb-icccm4" in done.stderr
    assert "Could not load the Qt platform plugin" not in done.stderr
