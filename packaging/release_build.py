"""One system's release build, as release.yml runs it and as a maintainer can run it by hand.

    python packaging/release_build.py macos     # make bundle, then build_macos.py (signed, or ad hoc)
    python packaging/release_build.py windows   # pinned venv, then build_windows.py (signed, or unsigned)
    python packaging/release_build.py linux     # make bundle, then build_linux.py --deb (Debian 12)
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


def commands(system: str) -> list[list[str]]:
    """What each system's release runs, in order: the same make targets and scripts CI runs."""
    py = str(venv_python())
    if system == "macos":
        return [["make", "bundle"], [py, "packaging/build_macos.py", "--no-freeze"]]
    if system == "linux":
        return [["make", "bundle"], [py, "packaging/build_linux.py", "--deb"]]
    return [
        [str(PYTHON), "packaging/ci_suites.py", "--install", "desktop,bundle"],
        [py, "packaging/build_windows.py"],
    ]


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
            with run.step(" ".join(Path(c).name if i == 0 else c for i, c in enumerate(cmd[:3]))):
                run.run(cmd, cwd=ROOT, env=env or None)
        collect(system, run)
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
