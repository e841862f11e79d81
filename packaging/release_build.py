"""One system's release build, as release.yml runs it and as a maintainer can run it by hand.

    python packaging/release_build.py linux            # the tarball, the .deb, the .mcpb (Debian 12)
    python packaging/release_build.py macos            # the app, an ad hoc .dmg and the .mcpb, smoke-tested
    python packaging/install_check.py macos            # the .dmg mounted, the app copied out and started
    python packaging/release_build.py macos --sign     # signed (Developer ID, notarised) or ad hoc again
    python packaging/release_build.py windows          # the app, an unsigned installer, the .mcpb
    python packaging/install_check.py windows          # installer /S, the app started, uninstaller /S
    python packaging/release_build.py windows --sign   # every .exe/.dll/.pyd and the installer signed
    python packaging/release_build.py linux --dry-run  # any of them: print every step

Every system's venv comes from packaging/release-lock.txt with --require-hashes (make lock writes it with
constraints.txt, from one resolution). Each build freezes and smoke-tests the app (`--check --demo`, as
`make bundle` does) before anything is signed; the release files end up in dist/release/<system>/ (what
the workflow uploads and attests), each with its SBOM (`<file>.cdx.json`, packaging/sbom.py), with the
build's signing-*.json, which the release notes read: macOS the .dmg and .mcpb, Windows the installer
and .mcpb, Linux the tarball, the .deb and the .mcpb. Nothing here signs: the per-system scripts do, from
the variables their docstrings name, in the --sign step.

The Google OAuth client ("Desktop app") may come as text in SEARCHDESK_BUILD_OAUTH_CLIENT_JSON (the
release workflow's secret); it is written to build/oauth_client.json for this run only, named in
SEARCHDESK_BUILD_OAUTH_CLIENT_FILE as spec_common.py reads it, and deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from buildlib import BUILD, DIST, PYTHON, ROOT, BuildError, Runner, main_wrapper
from lock import RELEASE_LOCK
from spec_common import OAUTH_CLIENT_VAR

OUT = DIST / "release"
OAUTH_JSON_VAR = "SEARCHDESK_BUILD_OAUTH_CLIENT_JSON"
#: Each release file's kind (the workflow's step output names it) and the frozen folder it carries, whose
#: contents its SBOM lists (packaging/sbom.py). The signing records carry no program.
CARRIES = {
    "macos": {
        "SearchDesk-*.dmg": ("dmg", "SearchDesk.app"),
        "searchdesk-*-macos-*.mcpb": ("mcpb", "searchdesk-server"),
    },
    "windows": {
        "SearchDesk-*-setup*.exe": ("installer", "SearchDesk"),
        "searchdesk-*-windows-*.mcpb": ("mcpb", "searchdesk-server"),
    },
    "linux": {
        "searchdesk-*-linux-*.tar.gz": ("tarball", "SearchDesk"),
        "searchdesk_*.deb": ("deb", "SearchDesk"),
        "searchdesk-*-linux-*.mcpb": ("mcpb", "searchdesk-server"),
    },
}
#: The signing record each system's build writes (signing_status.py), which the release notes read.
SIGNING_RECORDS = {"macos": ["signing-darwin.json"], "windows": ["signing-win32.json"], "linux": []}
#: The release files of each system, by pattern in dist/.
FILES = {system: [*CARRIES[system], *SIGNING_RECORDS[system]] for system in CARRIES}


def venv_python() -> Path:
    return ROOT / ".venv" / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def install_commands() -> list[list[str]]:
    """The build's venv from the one hashed lock: every dependency by hash (pip refuses any file whose hash
    the lock lacks, and any package it does not name), then the project itself, which adds nothing."""
    py = str(venv_python())
    pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    return [
        [str(PYTHON), "-m", "venv", str(ROOT / ".venv")],
        [*pip, "--require-hashes", "-r", str(RELEASE_LOCK.relative_to(ROOT))],
        [*pip, "--no-deps", "--no-build-isolation", "-e", "."],
    ]


def commands(system: str, *, sign: bool = False) -> list[list[str]]:
    """What each system's release runs, in order. The build: the hashed venv, the freeze and its smoke test
    (`make bundle`'s steps), then the installers, unsigned (macOS: ad hoc, which every arm64 program needs
    to start). release.yml then installs them silently (install_check.py) and only after that runs the
    signing step (`--sign`), which re-signs and rebuilds the installers with the identity the secrets give."""
    py = str(venv_python())
    if sign:
        if system == "linux":
            raise BuildError("nothing is signed on Linux: the build step already made the release files.")
        script = "packaging/build_macos.py" if system == "macos" else "packaging/build_windows.py"
        return [[py, script, "--no-freeze"]]
    # The smoke test's checks; its start-time measurements are make bundle's (MEASUREMENTS.md), not a release's.
    freeze = [[py, "packaging/bundle.py"], [py, "packaging/smoke.py", "--no-measure"]]
    if system == "macos":
        return [*install_commands(), *freeze, [py, "packaging/build_macos.py", "--no-freeze", "--ad-hoc"]]
    if system == "windows":
        return [*install_commands(), *freeze, [py, "packaging/build_windows.py", "--no-freeze", "--unsigned"]]
    return [
        ["bash", "scripts/system-packages.sh", "bundle"],
        *install_commands(),
        *freeze,
        [py, "packaging/build_linux.py", "--deb"],
        ["bash", "packaging/smoke_deb.sh", "dist/searchdesk_*.deb"],
    ]


#: The installers the build step made for the silent-install check; the signing step makes them anew.
CHECKED_INSTALLERS = {"macos": "SearchDesk-*.dmg", "windows": "SearchDesk-*-setup*.exe"}


def sboms(system: str, run: Runner) -> None:
    """One SBOM per release file, from its frozen folder, beside it in dist/release/<system>/; with
    GITHUB_OUTPUT set (the workflow), each file's and its SBOM's path as step outputs for attest-sbom."""
    outputs = []
    for pattern, (kind, folder) in CARRIES[system].items():
        for artifact in sorted((OUT / system).glob(pattern)) or ([OUT / system / pattern] if run.dry_run else []):
            run.run([str(venv_python()), "packaging/sbom.py", str(DIST / folder), str(artifact)], cwd=ROOT)
            rel = artifact.relative_to(ROOT).as_posix()
            outputs += [f"{kind}={rel}", f"{kind}-sbom={rel}.cdx.json"]
    target = os.environ.get("GITHUB_OUTPUT")
    if target and not run.dry_run:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write("".join(f"{line}\n" for line in outputs))


def collect(system: str, run: Runner) -> list[Path]:
    """Copy this system's release files to dist/release/<system>/; every pattern must match."""
    where = OUT / system
    found: list[Path] = []
    for pattern in FILES[system]:
        matches = sorted(DIST.glob(pattern))
        if not matches and not run.dry_run:
            raise BuildError(f"the {system} build made no {pattern} in dist/.")
        found += matches
    run.say(f"collect {', '.join(FILES[system])} -> {where}")
    if not run.dry_run:
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        for path in found:
            shutil.copy2(path, where / path.name)
    return found


def one_match(pattern: str) -> Path:
    """The one file a pattern names (the .deb whose version the build chose)."""
    found = sorted(ROOT.glob(pattern))
    if len(found) != 1:
        raise BuildError(f"expected one {pattern}, found {len(found)}.")
    return found[0]


def build(system: str, run: Runner, *, sign: bool = False) -> None:
    client = os.environ.get(OAUTH_JSON_VAR, "").strip()
    written = BUILD / "oauth_client.json"
    env: dict[str, str] = {}
    if client and not os.environ.get(OAUTH_CLIENT_VAR):
        run.secrets.append(client)
        run.say(f"write {written} from {OAUTH_JSON_VAR} (deleted after the build)")
        if not run.dry_run:
            written.parent.mkdir(parents=True, exist_ok=True)
            written.touch(mode=0o600)
            written.write_text(client, encoding="utf-8")
        env[OAUTH_CLIENT_VAR] = str(written)
    elif not client and not os.environ.get(OAUTH_CLIENT_VAR):
        run.say("no Google OAuth client given: a development build (the app offers the demo or your own client)")
    if sign and not run.dry_run:
        for old in DIST.glob(CHECKED_INSTALLERS.get(system, "")):
            old.unlink()
    try:
        for cmd in commands(system, sign=sign):
            if cmd[:3] == [str(PYTHON), "-m", "venv"] and venv_python().exists():
                continue  # a maintainer's own venv: the lock is installed into it
            if not run.dry_run:
                cmd = [str(one_match(c)) if "*" in c else c for c in cmd]
            with run.step(" ".join(Path(c).name if i == 0 else c for i, c in enumerate(cmd[:3]))):
                run.run(cmd, cwd=ROOT, env=env or None)
        if sign or system == "linux":  # the files to publish exist: copy them out, one SBOM each
            collect(system, run)
            with run.step("sbom"):
                sboms(system, run)
    finally:
        if env and not run.dry_run:
            written.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build one system's release files into dist/release/<system>/.")
    parser.add_argument("system", choices=sorted(FILES))
    parser.add_argument("--dry-run", action="store_true", help="print every step; change nothing")
    parser.add_argument("--sign", action="store_true", help="macOS/Windows: sign and make the files to publish")
    args = parser.parse_args(argv)
    run = Runner(dry_run=args.dry_run)

    def body() -> int:
        build(args.system, run, sign=args.sign)
        run.summary()
        return 0

    return main_wrapper("release_build", body)


if __name__ == "__main__":
    raise SystemExit(main())
