"""`make lock`: the pinned versions (constraints.txt) and the release's hashed lock, from one resolution.

    python packaging/lock.py             # keep today's pins where they still fit; add what is new
    python packaging/lock.py --upgrade   # re-resolve everything to the newest versions that fit

Two files, written in this order by uv (pinned in constraints.txt, the `test` extra):
1. constraints.txt: every extra of pyproject.toml and the build backend, for macOS, Windows and Linux at
   once (`--universal`: a package only one system needs keeps its environment marker). make test, make run
   and CI install with `-c constraints.txt`.
2. packaging/release-lock.txt: what a release builds from (the `desktop` and `bundle` extras and the build
   backend), constrained to exactly those pins, each with the hash of every file PyPI has for it (wheels of
   every system, and the sdist), so all three release jobs install it with `pip install --require-hashes`,
   then the project itself with `--no-deps --no-build-isolation`. tests/packaging/test_lock.py fails when
   the two drift apart or when pyproject.toml names a package the lock lacks.

Only PyPI is asked (no GitHub), so this runs wherever pip can install.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"
RELEASE_LOCK = ROOT / "packaging" / "release-lock.txt"
#: The extras a release installs (the app, its notifications' backends, PyInstaller).
RELEASE_EXTRAS = ("desktop", "bundle")
#: The oldest Python every build uses (release.yml's setup-python, Debian 12's python3).
PYTHON_VERSION = "3.11"
#: Versions held back on purpose, with why; passed to the resolver as constraints.
HOLDS = {
    # The 4.x line came after desktop-notifier 6.2.0 and is not verified with it.
    "winrt-runtime": "<4",
    "winrt-Windows.ApplicationModel.Core": "<4",
    "winrt-Windows.Data.Xml.Dom": "<4",
    "winrt-Windows.Foundation": "<4",
    "winrt-Windows.Foundation.Collections": "<4",
    "winrt-Windows.UI.Notifications": "<4",
}
HEADERS = {
    CONSTRAINTS: (
        "# Pinned versions for make test, CI and the bundle (pip install -c constraints.txt). Regenerate: make lock"
    ),
    RELEASE_LOCK: (
        "# What a release builds from, for macOS, Windows and Linux, every file by hash: pip install\n"
        "# --require-hashes -r packaging/release-lock.txt, then the project with --no-deps --no-build-isolation.\n"
        "# The same pins as constraints.txt. Regenerate both: make lock (packaging/lock.py)"
    ),
}


class LockError(Exception):
    """The resolver could not write a lock; the message says why."""


def build_requires() -> list[str]:
    """The build backend pyproject.toml names: --no-build-isolation needs it installed, so it is locked too."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(data["build-system"]["requires"])


def uv() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if not found:
        raise LockError("uv is not installed: run `make .venv/.installed` (it is in the test extra).")
    return found


def compile_cmd(out: Path, inputs: list[Path], extras: list[str] | None, *, hashes: bool, upgrade: bool) -> list[str]:
    """One `uv pip compile` for all three systems; `extras=None` means every extra."""
    cmd = [uv(), "pip", "compile", "--quiet", "--universal", "--python-version", PYTHON_VERSION]
    cmd += ["--no-header", "--no-annotate", "--index-url", "https://pypi.org/simple", "--output-file", str(out)]
    cmd += ["--all-extras"] if extras is None else [f"--extra={e}" for e in extras]
    if hashes:
        cmd.append("--generate-hashes")
    if upgrade:
        cmd.append("--upgrade")
    for path in inputs:
        cmd += ["--constraint", str(path)] if path.suffix == ".constraints" else [str(path)]
    return cmd


def run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, cwd=ROOT, check=False, text=True, capture_output=True)
    if done.returncode != 0:
        raise LockError(f"uv pip compile failed:\n{done.stderr.strip()}")


def with_header(path: Path) -> None:
    body = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("# ")]
    path.write_text(HEADERS[path] + "\n" + "\n".join(body).strip("\n") + "\n", encoding="utf-8")


def lock(*, upgrade: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        build = Path(tmp) / "build-requires.txt"
        build.write_text("\n".join(build_requires()) + "\n", encoding="utf-8")
        holds = Path(tmp) / "holds.constraints"
        holds.write_text("".join(f"{name}{spec}\n" for name, spec in HOLDS.items()), encoding="utf-8")
        pins = Path(tmp) / "pins.constraints"
        project = ROOT / "pyproject.toml"
        run(compile_cmd(CONSTRAINTS, [project, build, holds], None, hashes=False, upgrade=upgrade))
        with_header(CONSTRAINTS)
        shutil.copy2(CONSTRAINTS, pins)
        # The release lock is re-resolved from the pins just written (never from its own old copy).
        RELEASE_LOCK.unlink(missing_ok=True)
        run(compile_cmd(RELEASE_LOCK, [project, build, pins], list(RELEASE_EXTRAS), hashes=True, upgrade=False))
        with_header(RELEASE_LOCK)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--upgrade", action="store_true", help="newest versions that fit, not today's pins")
    args = parser.parse_args(argv)
    try:
        lock(upgrade=args.upgrade)
    except LockError as exc:
        print(f"lock: error: {exc}", file=sys.stderr)
        return 2
    print(f"lock: wrote {CONSTRAINTS.relative_to(ROOT)} and {RELEASE_LOCK.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
