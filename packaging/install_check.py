"""The installer a person downloads, installed silently, the installed app started, then removed silently.

    python packaging/install_check.py windows   # NSIS: installer /S, the app's --check --demo, uninstall /S
    python packaging/install_check.py macos     # the .dmg: hdiutil attach, copy the app, --check --demo, detach
    python packaging/install_check.py windows --dry-run   # print the commands (any system)

release.yml runs this after the build and its smoke test and BEFORE the step that signs anything, so a
release never signs (or uploads) an installer that does not install, start and uninstall. The build
step makes the installer unsigned (Windows) or ad hoc signed (macOS; every arm64 program must carry at
least an ad hoc signature to start); the signing step then makes the files that are published.

NSIS's silent switches (/S; the uninstaller's `_?=<folder>`, which makes it run in place and wait, and
leaves uninstall.exe and the folder for the caller to delete): https://nsis.sourceforge.io/Docs/Chapter3.html
(3.2 Installer Usage, 3.2.1 Common Options; 3.2.2 Uninstaller Specific Options).
hdiutil attach/detach: `man hdiutil` on macOS (-nobrowse -readonly -mountpoint).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path, PurePath, PureWindowsPath

from buildlib import APP_NAME, DIST, BuildError, Runner, main_wrapper


def windows_commands(installer: PurePath, install_dir: PureWindowsPath) -> list[list[str]]:
    """Install silently, start the installed app's self-check, uninstall silently and in place."""
    return [
        [str(installer), "/S"],
        [str(install_dir / "searchdesk.exe"), "--check", "--demo"],
        [str(install_dir / "searchdesk-server.exe"), "--check", "--demo"],
        # `_?=` must come last and unquoted, even with spaces (NSIS 3.2.2).
        [str(install_dir / "uninstall.exe"), "/S", f"_?={install_dir}"],
    ]


def macos_commands(dmg: PurePath, mount: PurePath, applications: PurePath) -> list[list[str]]:
    """Mount the disk image, copy the app out as a person drags it, start its self-check, detach."""
    app = applications / f"{APP_NAME}.app"
    return [
        ["hdiutil", "attach", "-nobrowse", "-readonly", "-noautoopen", "-mountpoint", str(mount), str(dmg)],
        ["ditto", str(mount / f"{APP_NAME}.app"), str(app)],
        ["hdiutil", "detach", str(mount)],
        [str(app / "Contents" / "MacOS" / "searchdesk"), "--check", "--demo"],
        [str(app / "Contents" / "MacOS" / "searchdesk-server"), "--check", "--demo"],
    ]


def one(pattern: str, run: Runner) -> Path:
    found = sorted(DIST.glob(pattern))
    if run.dry_run and not found:
        return DIST / pattern
    if len(found) != 1:
        raise BuildError(f"expected one {pattern} in dist/ (the build step makes it), found {len(found)}.")
    return found[0]


def check_windows(run: Runner) -> None:
    installer = one("SearchDesk-*-setup*.exe", run)
    local = os.environ.get("LOCALAPPDATA", r"C:\Users\runneradmin\AppData\Local")
    install_dir = PureWindowsPath(local) / "Programs" / APP_NAME  # installer.nsi's InstallDir
    for cmd in windows_commands(installer, install_dir):
        with run.step(Path(cmd[0]).name):
            run.run(cmd)
    if not run.dry_run:
        left = Path(install_dir)
        (left / "uninstall.exe").unlink(missing_ok=True)  # `_?=` leaves the uninstaller itself
        remains = [p.name for p in left.iterdir()] if left.is_dir() else []
        if remains:
            raise BuildError(f"the uninstaller left files in {left}: {', '.join(sorted(remains)[:10])}")
        if left.is_dir():
            left.rmdir()
    run.say(f"installed silently into {install_dir}, both programs started, uninstalled silently")


def check_macos(run: Runner) -> None:
    dmg = one("SearchDesk-*.dmg", run)
    with tempfile.TemporaryDirectory() as tmp:
        mount, applications = Path(tmp) / "volume", Path(tmp) / "Applications"
        if not run.dry_run:
            mount.mkdir()
            applications.mkdir()
        try:
            for cmd in macos_commands(dmg, mount, applications):
                with run.step(Path(cmd[0]).name):
                    run.run(cmd)
        finally:
            if not run.dry_run and os.path.ismount(mount):
                run.run(["hdiutil", "detach", "-force", str(mount)])
            shutil.rmtree(applications, ignore_errors=True)
    run.say("the .dmg mounted, the app copied out and started, the image detached")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install the built installer silently, start the app, remove it.")
    parser.add_argument("system", choices=["macos", "windows"])
    parser.add_argument("--dry-run", action="store_true", help="print the commands; change nothing")
    args = parser.parse_args(argv)
    run = Runner(dry_run=args.dry_run)

    def body() -> int:
        wanted = {"macos": "darwin", "windows": "win32"}[args.system]
        if sys.platform != wanted and not run.dry_run:
            raise BuildError(f"run this on {args.system} (or with --dry-run).")
        (check_macos if args.system == "macos" else check_windows)(run)
        run.summary()
        return 0

    return main_wrapper("install_check", body)


if __name__ == "__main__":
    raise SystemExit(main())
