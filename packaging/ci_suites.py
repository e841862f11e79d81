"""The suites that can run on macOS and Windows, from the pinned lock: what ci.yml's macOS and Windows jobs run.

    python packaging/ci_suites.py            # any Python 3.11+; makes .venv, installs, runs, smoke-tests
    python packaging/ci_suites.py --dry-run  # print the commands
    python packaging/ci_suites.py --install desktop,bundle   # only the venv, with those extras (release.yml)

Linux runs `bash .ci/run` (`make test` and the bundle). `make` is not there on Windows, and the Makefile's
Linux steps (system packages, Xvfb) do not apply on either system, so this script is those systems' one
way in, and a person on a Mac or a Windows PC runs the same thing:

1. a venv in .venv with `.[desktop,test]` pinned by constraints.txt (as the Makefile installs it);
2. the whole server suite (tests/server);
3. the desktop suite offscreen (QT_QPA_PLATFORM=offscreen): the system's own keyring
   (test_system_keyring.py), the real named pipe on Windows (test_listener_pipe_windows.py); what needs
   Linux is skipped with its reason (the linux_only mark, tests/conftest.py);
4. packaging/smoke_notifier.py: desktop-notifier's backend for this system, imported and sent through.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def steps(extras: str = "desktop,test", *, suites: bool = True) -> list[tuple[str, list[str], dict[str, str]]]:
    """(title, command, extra environment) for each step, in order."""
    py = str(venv_python())
    offscreen = {"QT_QPA_PLATFORM": "offscreen"}
    pytest = [py, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-q", "-rs"]
    install = [
        ("venv", [sys.executable, "-m", "venv", str(VENV)], {}),
        ("pip", [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--upgrade", "pip>=24"], {}),
        (
            "install (pinned)",
            [
                py,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-c",
                "constraints.txt",
                "-e",
                f".[{extras}]",
            ],
            {"PYTHONWARNINGS": "ignore:Editable installation"},
        ),
    ]
    if not suites:
        return install
    return [
        *install,
        ("server suite", [*pytest, "tests/server"], {}),
        ("desktop suite (offscreen)", [*pytest, "tests/desktop"], offscreen),
        ("notification smoke test", [py, "packaging/smoke_notifier.py"], offscreen),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the macOS/Windows suites from the pinned lock.")
    parser.add_argument("--dry-run", action="store_true", help="print the commands; run nothing")
    parser.add_argument("--install", metavar="EXTRAS", help="only make the venv with these extras (no suites)")
    args = parser.parse_args(argv)
    chosen = steps(args.install, suites=False) if args.install else steps()
    for title, cmd, extra in chosen:
        print(f"\n== {title}\n+ {subprocess.list2cmdline(cmd)}", flush=True)
        if args.dry_run:
            continue
        if title == "venv" and venv_python().exists():
            continue
        done = subprocess.run(cmd, cwd=ROOT, env={**os.environ, **extra}, check=False)
        if done.returncode != 0:
            print(f"ci_suites: {title} failed (exit status {done.returncode})", file=sys.stderr)
            return done.returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
