"""`make bundle`: freeze both programs, build this OS's .mcpb (and on Linux the tarball).

Steps, each timed:
1. PyInstaller, packaging/searchdesk.spec   -> dist/SearchDesk/ (the app: searchdesk + searchdesk-server)
   PyInstaller, packaging/server-only.spec  -> dist/searchdesk-server/ (no Qt; for the .mcpb)
   The two run side by side: each analysis is mostly one process, and CI has two cores.
2. mcpb_pack.py: stage, `mcpb validate`, `mcpb pack` -> dist/searchdesk-<version>-<os>-<arch>.mcpb
3. Linux only: build_linux.py -> dist/searchdesk-<version>-linux-<arch>.tar.gz
The smoke test (smoke.py) runs next, from the Makefile.

This is an unsigned build. Releases run build_macos.py / build_windows.py on those systems, which
reuse these steps and add signing, notarisation and the installers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import mcpb_pack
import spec_common
from buildlib import BUILD, DIST, PACKAGING, PYTHON, BuildError, Runner, main_wrapper, os_name

SPECS = {"app": PACKAGING / "searchdesk.spec", "server": PACKAGING / "server-only.spec"}
OUTPUTS = {"app": DIST / "SearchDesk", "server": DIST / "searchdesk-server"}


def pyinstaller_cmd(spec: Path) -> list[str]:
    return [
        str(PYTHON),
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--log-level",
        "WARN",
        "--distpath",
        str(DIST),
        "--workpath",
        str(BUILD / "pyinstaller" / spec.stem),
        str(spec),
    ]


def freeze(run: Runner, which: tuple[str, ...] = ("app", "server")) -> None:
    """Run the PyInstaller builds in parallel; stop with the log of any that failed."""
    check_oauth_client()
    cmds = {name: pyinstaller_cmd(SPECS[name]) for name in which}
    for cmd in cmds.values():
        run.say(f"+ {run.show(cmd)}")
    if run.dry_run:
        return
    (BUILD / "logs").mkdir(parents=True, exist_ok=True)
    procs: dict[str, tuple[subprocess.Popen[bytes], Path, float]] = {}
    for name, cmd in cmds.items():
        # A fresh work folder rather than --clean, which would empty the PyInstaller cache under the other
        # build's feet; and each build gets its own cache folder for the same reason.
        shutil.rmtree(BUILD / "pyinstaller" / SPECS[name].stem, ignore_errors=True)
        env = {
            **os.environ,
            "PYTHONHASHSEED": "0",  # reproducible module order in the archives
            "PYINSTALLER_CONFIG_DIR": str(BUILD / "pyinstaller-cache" / name),
            # macOS: anything compiled during the build targets the oldest macOS the app promises.
            **({"MACOSX_DEPLOYMENT_TARGET": spec_common.MACOS_MINIMUM} if os_name() == "darwin" else {}),
        }
        log = BUILD / "logs" / f"pyinstaller-{name}.log"
        with log.open("wb") as fh:
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
        procs[name] = (proc, log, time.perf_counter())
    failed = []
    while procs:  # poll, so each build's own duration is recorded
        for name, (proc, log, start) in list(procs.items()):
            code = proc.poll()
            if code is None:
                continue
            del procs[name]
            run.timings.append((f"pyinstaller {name}", time.perf_counter() - start))
            if code != 0:
                failed.append(name)
                sys.stderr.write(log.read_text(encoding="utf-8", errors="replace")[-4000:])
        time.sleep(0.2)
    if failed:
        raise BuildError(f"PyInstaller failed for {', '.join(failed)} (log above, full logs in build/logs/).")
    for name in which:
        if not OUTPUTS[name].is_dir():
            raise BuildError(f"PyInstaller finished but {OUTPUTS[name]} is missing.")


def check_oauth_client() -> None:
    """A bad SEARCHDESK_BUILD_OAUTH_CLIENT_FILE stops the build before the slow part, not inside PyInstaller."""
    try:
        spec_common.oauth_client_datas()
    except spec_common.BuildConfigError as exc:
        raise BuildError(str(exc)) from None


def check_icu_tools(run: Runner) -> None:
    """Linux: the ICU data cut (spec_common.slim_icu) needs icupkg and gcc; fail before the slow freeze."""
    if os_name() == "linux" and spec_common.CUTTING:
        for tool in ("icupkg", "gcc", "readelf"):
            run.tool(tool, spec_common.ICU_TOOLS_HOW)


def check_node(run: Runner) -> None:
    """Fail before the slow freeze if the .mcpb step will not be able to run."""
    if not shutil.which("npm") and not (BUILD / "mcpb-cli" / "node_modules").is_dir():
        run.tool(
            "npm", "Install Node.js 18 or later (with npm): the .mcpb is validated and packed by its official CLI."
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dry-run", action="store_true", help="print the steps; change nothing")
    parser.add_argument("--no-freeze", action="store_true", help="reuse dist/ from an earlier run")
    args = parser.parse_args(argv)
    run = Runner(dry_run=args.dry_run)

    def body() -> int:
        check_node(run)
        if not args.no_freeze:
            check_icu_tools(run)
            freeze(run)
        with run.step("mcpb"):
            out = mcpb_pack.build(OUTPUTS["server"], run)
            run.say(f"-> {out}")
        # The .mcpb is a release file of its own; it does not travel inside the app (whose "Add to Claude
        # Desktop" then writes Claude's settings file, as in development).
        if os_name() == "linux":
            import build_linux

            with run.step("linux tarball"):
                tarball = build_linux.build(OUTPUTS["app"], run)
                run.say(f"-> {tarball}")
        run.summary()
        return 0

    return main_wrapper("bundle", body)


if __name__ == "__main__":
    raise SystemExit(main())
