"""`make lock`: the pinned versions (constraints.txt) and the release's hashed lock, from one resolution.

    python packaging/lock.py             # keep today's pins where they still fit; add what is new
    python packaging/lock.py --upgrade   # re-resolve everything to the newest versions that fit

Three files, from uv (pinned in constraints.txt, the `test` extra):
1. constraints.txt: every extra of pyproject.toml and the build backend, for macOS, Windows and Linux at
   once (`--universal`: a package only one system needs keeps its environment marker). make test, make run
   and CI install with `-c constraints.txt`.
2. packaging/release-lock.txt: what a release builds from (the `desktop` and `bundle` extras and the build
   backend), constrained to exactly those pins, each with the hash of every file PyPI has for it (wheels of
   every system, and the sdist), so all three release jobs install it with `pip install --require-hashes`,
   then the project itself with `--no-deps --no-build-isolation`. uv resolves it as a PEP 751 lock
   (pylock.toml, which names the file behind every hash) and this script writes the requirements file from
   it, leaving out each macOS wheel built for a newer macOS than the app promises (spec_common.MACOS_MINIMUM):
   pip installs only files whose hash is listed, so a newer runner cannot pick google-re2's macOS 14 or 15
   wheel and make the app need that macOS (build_macos.py would then stop the build).
3. packaging/signer-requirements.txt: the update-manifest signer's Python (packaging/signer.sh), i.e.
   cryptography and what it needs at run time, with the same versions and hashes as the release lock,
   wheels only (signer.sh installs with --only-binary :all:).
tests/packaging/test_lock.py fails when these drift apart or when pyproject.toml names a package a lock lacks.

Only PyPI is asked (no GitHub), so this runs wherever pip can install.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from spec_common import MACOS_MINIMUM

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"
RELEASE_LOCK = ROOT / "packaging" / "release-lock.txt"
SIGNER_LOCK = ROOT / "packaging" / "signer-requirements.txt"
#: What packaging/sign_manifest.py imports beyond the standard library; the lock adds what these need.
SIGNER_ROOTS = ("cryptography",)
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
        "# The same pins as constraints.txt; no macOS wheel for a macOS newer than the app's minimum.\n"
        "# Regenerate: make lock (packaging/lock.py)"
    ),
    SIGNER_LOCK: (
        "# The update-manifest signer's own Python (packaging/sign_manifest.py): cryptography and what it needs\n"
        "# at run time, with the versions and hashes of packaging/release-lock.txt (wheels only), installed with\n"
        "# --require-hashes --only-binary :all: into a fresh venv by packaging/signer.sh.\n"
        "# Regenerate: make lock (packaging/lock.py), never by hand.\n"
    ),
}
#: A wheel's macOS platform tag: macosx_<major>_<minor>_<arch> (PEP 425; packaging.tags.mac_platforms).
MACOS_TAG = re.compile(r"^macosx_(?P<major>\d+)_(?P<minor>\d+)_(?P<arch>\w+)$")
#: The architectures a wheel for Apple silicon may carry.
APPLE_SILICON = ("arm64", "universal2")


class LockError(Exception):
    """The resolver could not write a lock; the message says why."""


@dataclass(frozen=True)
class LockedFile:
    name: str  # the file name on PyPI: a wheel (…whl) or the sdist
    sha256: str

    @property
    def is_wheel(self) -> bool:
        return self.name.endswith(".whl")


@dataclass(frozen=True)
class Locked:
    """One package of the release resolution, with every file uv would let pip install for it."""

    name: str
    version: str
    marker: str  # "" when every system needs it
    files: tuple[LockedFile, ...]


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def macos_tags(filename: str) -> list[tuple[tuple[int, int], str]]:
    """((major, minor), arch) for each macOS platform tag of a wheel's file name; [] for any other file.

    A wheel's name ends in -<python>-<abi>-<platform>.whl, where <platform> may join several tags with
    dots (PEP 425's compressed tag sets)."""
    if not filename.endswith(".whl"):
        return []
    platforms = filename[: -len(".whl")].rsplit("-", 1)[-1].split(".")
    found = []
    for tag in platforms:
        match = MACOS_TAG.match(tag)
        if match:
            found.append(((int(match["major"]), int(match["minor"])), match["arch"]))
    return found


def needs_newer_macos(filename: str, minimum: str = MACOS_MINIMUM) -> bool:
    """True for a macOS wheel none of whose tags runs on `minimum`: pip on a newer Mac would choose it, and
    the app built from it would then need that newer macOS. A wheel for any other system, or one with a tag
    for `minimum` or older, is kept."""
    tags = macos_tags(filename)
    floor = version_tuple(minimum)
    return bool(tags) and all(version > floor for version, _ in tags)


def for_minimum_macos(package: Locked, minimum: str = MACOS_MINIMUM) -> Locked:
    """`package` without the macOS wheels built for a newer macOS than `minimum` (the app's own).

    google-re2's Apple-silicon wheels come tagged macosx_13_0, 14_0 and 15_0 for each Python: only the
    13.0 one may be installable, or pip on a macos-15 runner takes the 15.0 one. A package left with no
    Apple-silicon wheel at all stops the lock: pip would build its sdist, or fail."""
    kept = tuple(f for f in package.files if not needs_newer_macos(f.name, minimum))

    def silicon(files: Iterable[LockedFile]) -> bool:
        return any(arch in APPLE_SILICON for f in files for _, arch in macos_tags(f.name))

    if silicon(package.files) and not silicon(kept):
        raise LockError(
            f"{package.name} {package.version} has no wheel for Apple silicon that runs on macOS {minimum}: "
            "hold it back in HOLDS, or raise spec_common.MACOS_MINIMUM (and the pages' promise) with reason."
        )
    return Locked(package.name, package.version, package.marker, kept)


def read_pylock(path: Path) -> list[Locked]:
    """The packages of a PEP 751 lock (uv's pylock.toml), each with its files' names and SHA-256 hashes."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    packages = []
    for entry in data.get("packages", []):
        entries = ([entry["sdist"]] if "sdist" in entry else []) + list(entry.get("wheels", []))
        files = []
        for item in entries:
            name = str(item.get("name") or str(item["url"]).rsplit("/", 1)[-1])
            files.append(LockedFile(name, str(item["hashes"]["sha256"])))
        if not files:
            raise LockError(f"{entry['name']} has no file with a hash in the resolution (a path or a VCS source?).")
        packages.append(Locked(str(entry["name"]), str(entry["version"]), str(entry.get("marker", "")), tuple(files)))
    return packages


def requirements(packages: Iterable[Locked], *, wheels_only: bool = False) -> str:
    """pip's hashed requirements format, as `uv pip compile --generate-hashes` writes it."""
    blocks = []
    for package in sorted(packages, key=lambda p: p.name):
        hashes = sorted({f.sha256 for f in package.files if f.is_wheel or not wheels_only})
        if not hashes:
            raise LockError(f"{package.name} {package.version} has no wheel; the signer installs wheels only.")
        head = f"{package.name}=={package.version}" + (f" ; {package.marker}" if package.marker else "")
        blocks.append(" \\\n".join([head] + [f"    --hash=sha256:{h}" for h in hashes]))
    return "\n".join(blocks) + "\n"


def signer_packages(release: list[Locked], names: Iterable[str]) -> list[Locked]:
    """The release resolution's entries for `names` (the signer's packages), which it must hold."""
    by_name = {p.name: p for p in release}
    missing = sorted(set(names) - set(by_name))
    if missing:
        raise LockError(f"the signer needs {missing}, which the release lock does not hold.")
    return [by_name[name] for name in sorted(set(names))]


def requirement_names(path: Path) -> list[str]:
    """The package names in a requirements file uv wrote (`name==version ; marker`, one a line)."""
    names = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith(("#", " ", "-")):
            names.append(re.split(r"[=\s;]", line, maxsplit=1)[0].lower())
    return names


def build_requires() -> list[str]:
    """The build backend pyproject.toml names: --no-build-isolation needs it installed, so it is locked too."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(data["build-system"]["requires"])


def uv() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if not found:
        raise LockError("uv is not installed: run `make .venv/.installed` (it is in the test extra).")
    return found


def compile_cmd(
    out: Path, inputs: list[Path], extras: list[str] | None, *, hashes: bool, upgrade: bool, pylock: bool = False
) -> list[str]:
    """One `uv pip compile` for all three systems; `extras=None` means every extra; `pylock`: PEP 751's format."""
    cmd = [uv(), "pip", "compile", "--quiet", "--universal", "--python-version", PYTHON_VERSION]
    cmd += ["--no-header", "--no-annotate", "--index-url", "https://pypi.org/simple", "--output-file", str(out)]
    if pylock:
        cmd += ["--format", "pylock.toml"]
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


def with_header(path: Path, body: str | None = None) -> None:
    """Write `body` (default: the file's own lines but uv's comments) under this file's header."""
    if body is None:
        body = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("# "))
    path.write_text(HEADERS[path] + "\n" + body.strip("\n") + "\n", encoding="utf-8")


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
        pylock = Path(tmp) / "pylock.release.toml"
        run(compile_cmd(pylock, [project, build, pins], list(RELEASE_EXTRAS), hashes=True, upgrade=False, pylock=True))
        release = [for_minimum_macos(p) for p in read_pylock(pylock)]
        # The signer's packages: what SIGNER_ROOTS need on every system at these pins; their files are
        # taken from the release resolution, so both files carry one set of hashes.
        roots = Path(tmp) / "signer.in"
        roots.write_text("\n".join(SIGNER_ROOTS) + "\n", encoding="utf-8")
        signer_names = Path(tmp) / "signer.txt"
        run(compile_cmd(signer_names, [roots, pins], [], hashes=False, upgrade=False))
        signer = signer_packages(release, requirement_names(signer_names))
        with_header(RELEASE_LOCK, requirements(release))
        with_header(SIGNER_LOCK, requirements(signer, wheels_only=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--upgrade", action="store_true", help="newest versions that fit, not today's pins")
    args = parser.parse_args(argv)
    try:
        lock(upgrade=args.upgrade)
    except LockError as exc:
        print(f"lock: error: {exc}", file=sys.stderr)
        return 2
    written = ", ".join(str(p.relative_to(ROOT)) for p in (CONSTRAINTS, RELEASE_LOCK, SIGNER_LOCK))
    print(f"lock: wrote {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
