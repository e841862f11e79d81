"""One system's release build, as release.yml runs it and as a maintainer can run it by hand.

    python packaging/release_build.py macos     # hashed venv, freeze + smoke test, build_macos.py (signed or ad hoc)
    python packaging/release_build.py windows   # hashed venv, then build_windows.py (signed, or unsigned)
    python packaging/release_build.py linux     # hashed venv, freeze + smoke test, the .deb (Debian 12)

Every system's venv comes from packaging/release-lock.txt with --require-hashes (make lock writes it with
constraints.txt, from one resolution), never from the index's newest files.
    python packaging/release_build.py linux --dry-run

Each ends with that system's release files copied to dist/release/<system>/ (what the workflow uploads
and attests): macOS the .dmg and .mcpb, Windows the installer and .mcpb, Linux the tarball, the .deb
and the .mcpb; with the build's signing-*.json, which the release notes read. Nothing here signs: the
per-system scripts do, from the variables their docstrings name.

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
#: The release files of each system, by pattern in dist/.
FILES = {
    "macos": ["SearchDesk-*.dmg", "searchdesk-*-macos-*.mcpb", "signing-darwin.json"],
    "windows": ["SearchDesk-*-setup*.exe", "searchdesk-*-windows-*.mcpb", "signing-win32.json"],
    "linux": ["searchdesk-*-linux-*.tar.gz", "searchdesk_*.deb", "searchdesk-*-linux-*.mcpb"],
}


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


def commands(system: str) -> list[list[str]]:
    """What each system's release runs, in order; the freeze and its smoke test are `make bundle`'s steps."""
    py = str(venv_python())
    freeze = [[py, "packaging/bundle.py"], [py, "packaging/smoke.py", "--write", "build/MEASUREMENTS.md"]]
    if system == "macos":
        return [*install_commands(), *freeze, [py, "packaging/build_macos.py", "--no-freeze"]]
    if system == "linux":
        return [
            ["bash", "scripts/system-packages.sh", "bundle"],
            *install_commands(),
            *freeze,
            [py, "packaging/build_linux.py", "--deb"],
            ["bash", "packaging/smoke_deb.sh", "dist/searchdesk_*.deb"],
        ]
    return [*install_commands(), [py, "packaging/build_windows.py"]]


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


def build(system: str, run: Runner) -> None:
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
    try:
        for cmd in commands(system):
            if cmd[:3] == [str(PYTHON), "-m", "venv"] and venv_python().exists():
                continue  # a maintainer's own venv: the lock is installed into it
            if not run.dry_run:
                cmd = [str(one_match(c)) if "*" in c else c for c in cmd]
            with run.step(" ".join(Path(c).name if i == 0 else c for i, c in enumerate(cmd[:3]))):
                run.run(cmd, cwd=ROOT, env=env or None)
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
    args = parser.parse_args(argv)
    run = Runner(dry_run=args.dry_run)

    def body() -> int:
        build(args.system, run)
        run.summary()
        return 0

    return main_wrapper("release_build", body)


if __name__ == "__main__":
    raise SystemExit(main())
