"""Windows release: freeze, sign both executables, build the per-user NSIS installer, build the .mcpb.

Run on Windows from the repository root, in the venv that `make bundle` set up:

    python packaging/build_windows.py               # freeze + sign + installer + .mcpb
    python packaging/build_windows.py --unsigned    # the same without signing (a test build)
    python packaging/build_windows.py --dry-run     # print every step; change nothing (any OS)
    python packaging/build_windows.py --dummy-payload   # compile installer.nsi around placeholder files (any OS)

Signing identity, from the environment only (nothing secret is committed or printed):
    SEARCHDESK_WIN_CERT_SHA1       thumbprint of a code-signing certificate in the user's certificate store
                                   (the usual case for an EV certificate on a hardware token), or
    SEARCHDESK_WIN_CERT_FILE       a .pfx file, with
    SEARCHDESK_WIN_CERT_PASSWORD   its password
    SEARCHDESK_WIN_TIMESTAMP_URL   an RFC 3161 time-stamp server (default: DigiCert's, as in Microsoft's example)
    SEARCHDESK_BUILD_OAUTH_CLIENT_FILE  the Google OAuth "Desktop app" client to build in (see spec_common.py)

Documentation followed:
- SignTool: https://learn.microsoft.com/en-us/windows/win32/seccrypto/signtool
  (sign /fd SHA256 /tr <RFC 3161 URL> /td SHA256; then verify /pa)
- Time stamping: https://learn.microsoft.com/en-us/windows/win32/seccrypto/time-stamping-authenticode-signatures
- NSIS 3 (makensis, !finalize/!uninstfinalize to sign the installer and its uninstaller):
  https://nsis.sourceforge.io/Docs/Chapter5.html
- Per-user installs and the uninstall key: see the header of packaging/installer.nsi.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import bundle
import mcpb_pack
from buildlib import ASSETS, BUILD, DIST, PACKAGING, PYTHON, BuildError, Runner, main_wrapper, require_dir, version

NSI = PACKAGING / "installer.nsi"
DEFAULT_TIMESTAMP = "http://timestamp.digicert.com"
SIGNTOOL_HOW = (
    "Install the Windows SDK with its 'Signing Tools for Desktop Apps' feature, then run from a Developer "
    "Command Prompt or add the SDK's bin folder holding signtool.exe to PATH."
)
MAKENSIS_HOW = (
    "Install NSIS 3.08 or later (https://nsis.sourceforge.io/Download; Debian: apt-get install nsis) "
    "and put makensis on PATH."
)


def version4() -> str:
    """x.y.z -> x.y.z.0: the four numbers a Windows version resource needs."""
    numbers = [int(n) for n in re.findall(r"\d+", version())[:4]]
    return ".".join(str(n) for n in (numbers + [0, 0, 0, 0])[:4])


def sign_args(run: Runner) -> list[str]:
    """signtool's identity and time-stamp options from the environment."""
    url = run.env("SEARCHDESK_WIN_TIMESTAMP_URL", "time-stamp server", secret=False, default=DEFAULT_TIMESTAMP)
    common = ["sign", "/fd", "SHA256", "/tr", url, "/td", "SHA256", "/d", "SearchDesk"]
    thumb = run.env("SEARCHDESK_WIN_CERT_SHA1", "certificate thumbprint", secret=False, default="")
    if thumb:
        return [*common, "/sha1", thumb]
    pfx = run.env(
        "SEARCHDESK_WIN_CERT_FILE",
        "the code-signing .pfx (or set SEARCHDESK_WIN_CERT_SHA1 to use a certificate from the store)",
        secret=False,
    )
    password = run.env("SEARCHDESK_WIN_CERT_PASSWORD", "the .pfx password")
    return [*common, "/f", pfx, "/p", password]


def sign(run: Runner, files: list[Path]) -> None:
    signtool = run.tool("signtool", SIGNTOOL_HOW)
    run.run([signtool, *sign_args(run), *files])
    run.run([signtool, "verify", "/pa", *files])


def makensis_cmd(makensis: str, payload: Path, out: Path, sign_cmd: str | None) -> list[str]:
    cmd = [
        makensis,
        "-V2",
        "-NOCD",
        f"-DVERSION={version()}",
        f"-DVERSION4={version4()}",
        f"-DPAYLOAD={payload}",
        f"-DICON={ASSETS / 'searchdesk.ico'}",
        f"-DOUTFILE={out}",
    ]
    if sign_cmd:
        cmd.append(f"-DSIGN_CMD={sign_cmd}")
    return [*cmd, str(NSI)]


def self_sign_command() -> str:
    """What makensis runs to sign the installer and uninstaller: this script, so no secret passes through NSIS."""
    return subprocess.list2cmdline([str(PYTHON), str(Path(__file__).resolve()), "--sign-one"])


def build_installer(run: Runner, payload: Path, out: Path, *, signed: bool) -> Path:
    makensis = run.tool("makensis", MAKENSIS_HOW)
    for name in ("searchdesk.exe", "searchdesk-server.exe"):
        if not run.dry_run and not (payload / name).is_file():
            raise BuildError(f"{payload / name} is missing; the installer needs the Windows build of both programs.")
    if not run.dry_run:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.unlink(missing_ok=True)
    run.run(makensis_cmd(makensis, payload, out, self_sign_command() if signed else None))
    if not run.dry_run and (not out.is_file() or out.read_bytes()[:2] != b"MZ"):
        raise BuildError(f"makensis reported success but {out} is not a Windows executable.")
    return out


def dummy_payload(where: Path) -> Path:
    """Placeholder files with the real names, so CI can compile installer.nsi without a Windows build."""
    (where / "_internal").mkdir(parents=True, exist_ok=True)
    for name in ("searchdesk.exe", "searchdesk-server.exe"):
        (where / name).write_bytes(b"MZ placeholder: not a program\n")
    (where / "_internal" / "README.txt").write_text("placeholder runtime\n", encoding="utf-8")
    return where


def release(run: Runner, *, signed: bool, freeze: bool) -> None:
    if sys.platform != "win32" and not run.dry_run:
        raise BuildError("Build the Windows release on Windows (use --dry-run or --dummy-payload elsewhere).")
    app, server_only = bundle.OUTPUTS["app"], bundle.OUTPUTS["server"]
    if signed:  # stop before the long freeze if signing cannot happen
        run.tool("signtool", SIGNTOOL_HOW)
        sign_args(run)
    run.tool("makensis", MAKENSIS_HOW)
    bundle.check_node(run)
    if freeze:
        with run.step("freeze (PyInstaller)"):
            bundle.freeze(run)
    require_dir(app, "run without --no-freeze, or `make bundle` first.", dry_run=run.dry_run)
    exes = [app / "searchdesk.exe", app / "searchdesk-server.exe", server_only / "searchdesk-server.exe"]
    if signed:
        with run.step("sign executables (signtool)"):
            sign(run, exes)
    run.say(
        "notifications: desktop-notifier registers AppUserModelID 'SearchDesk' (display name, icon) under "
        r"HKCU\Software\Classes\AppUserModelId\SearchDesk when the app starts; the uninstaller removes it"
    )
    with run.step("installer (makensis)"):
        out = build_installer(run, app, DIST / f"SearchDesk-{version()}-setup.exe", signed=signed)
        run.say(f"-> {out}")
    if signed:
        with run.step("verify installer signature"):
            run.run([run.tool("signtool", SIGNTOOL_HOW), "verify", "/pa", out])
    with run.step(".mcpb (win32)"):
        run.say(f"-> {mcpb_pack.build(server_only, run, platform_name='win32')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the signed Windows installer and .mcpb.")
    parser.add_argument("--dry-run", action="store_true", help="print every step; change nothing")
    parser.add_argument("--unsigned", action="store_true", help="skip signing (a test build)")
    parser.add_argument("--no-freeze", action="store_true", help="reuse dist/ from an earlier build")
    parser.add_argument("--dummy-payload", action="store_true", help="compile installer.nsi around placeholders")
    parser.add_argument("--sign-one", type=Path, metavar="FILE", help=argparse.SUPPRESS)  # called by makensis
    args = parser.parse_args(argv)
    run = Runner(dry_run=args.dry_run)

    def body() -> int:
        if args.sign_one:
            sign(run, [args.sign_one])
            return 0
        if args.dummy_payload:
            with run.step("installer around a dummy payload (makensis)"):
                where = BUILD / "nsis-dummy"
                payload = dummy_payload(where / "payload") if not run.dry_run else where / "payload"
                out = build_installer(run, payload, where / f"SearchDesk-{version()}-dummy-setup.exe", signed=False)
                run.say(f"-> {out}" + ("" if run.dry_run else f" ({out.stat().st_size} bytes)"))
        else:
            release(run, signed=not args.unsigned, freeze=not args.no_freeze)
        run.summary()
        return 0

    return main_wrapper("build_windows", body)


if __name__ == "__main__":
    raise SystemExit(main())
