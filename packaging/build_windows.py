"""Windows release: freeze, sign every program, DLL and extension module, build the NSIS installer and .mcpb.

Run on Windows from the repository root, in the venv that `make bundle` set up:

    python packaging/build_windows.py               # freeze + sign + installer + .mcpb
    python packaging/build_windows.py --unsigned    # the same without signing (a test build)
    python packaging/build_windows.py --dry-run     # print every step and command; change nothing (any OS)
    python packaging/build_windows.py --dummy-payload   # compile installer.nsi around placeholder files (any OS)

Every .exe, .dll and .pyd in both frozen folders (pe_files), the installer and the uninstaller inside it
are signed by signtool from here (makensis
calls this script back for the installer and its uninstaller), so each way of signing is one set of
signtool options. Which way is read from the environment, first match wins; with none of them set the
build goes on unsigned and says so (the installer's name ends in -unsigned, and dist/signing-win32.json,
which the release notes read):

1. Azure Artifact Signing (the release workflow: azure/login over OIDC, no stored secret; signtool's
   Artifact Signing plug-in authenticates as the Azure CLI's signed-in identity):
    SEARCHDESK_WIN_SIGNING_ENDPOINT   the account's endpoint, e.g. https://weu.codesigning.azure.net/
    SEARCHDESK_WIN_SIGNING_ACCOUNT    the Artifact Signing account's name
    SEARCHDESK_WIN_SIGNING_PROFILE    its certificate profile's name
    SEARCHDESK_WIN_SIGNING_DLIB       Azure.CodeSigning.Dlib.dll; unset: fetched with nuget (SIGNING_CLIENT)
2. A certificate in the user's certificate store (the usual case for an EV certificate on a hardware token):
    SEARCHDESK_WIN_CERT_SHA1          its thumbprint
3. A .pfx file:
    SEARCHDESK_WIN_CERT_FILE          the file, or in CI SEARCHDESK_WIN_CERT_PFX_BASE64 (its bytes, base64,
                                      written to build/windows for this run and deleted after it), with
    SEARCHDESK_WIN_CERT_PASSWORD      its password
and for 2 and 3 SEARCHDESK_WIN_TIMESTAMP_URL, an RFC 3161 time-stamp server (default: DigiCert's, as in
Microsoft's example). SEARCHDESK_BUILD_OAUTH_CLIENT_FILE: the Google OAuth "Desktop app" client to build in.

Notifications: desktop-notifier registers the AppUserModelID "SearchDesk" (name, icon) under
HKCU\\Software\\Classes\\AppUserModelId when the app starts, which is what Windows needs to show an unpackaged
app's toasts; the installer adds the Start-menu shortcut and its uninstaller removes both (installer.nsi).

Documentation followed:
- SignTool: https://learn.microsoft.com/en-us/windows/win32/seccrypto/signtool
  (sign /fd SHA256 /tr <RFC 3161 URL> /td SHA256; then verify /pa)
- Time stamping: https://learn.microsoft.com/en-us/windows/win32/seccrypto/time-stamping-authenticode-signatures
- Artifact Signing with SignTool (/dlib, /dmdf metadata.json, timestamp.acs.microsoft.com):
  https://learn.microsoft.com/en-us/azure/artifact-signing/how-to-signing-integrations
- NSIS 3 (makensis, !finalize/!uninstfinalize to sign the installer and its uninstaller):
  https://nsis.sourceforge.io/Docs/Chapter5.html
- Toasts from an unpackaged app (AppUserModelID):
  https://learn.microsoft.com/en-us/windows/apps/design/shell/tiles-and-notifications/send-local-toast-other-apps
- Per-user installs and the uninstall key: see the header of packaging/installer.nsi.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import bundle
import mcpb_pack
import signing_status
from buildlib import ASSETS, BUILD, DIST, PACKAGING, PYTHON, BuildError, Runner, main_wrapper, require_dir, version

NSI = PACKAGING / "installer.nsi"
WORK = BUILD / "windows"
DEFAULT_TIMESTAMP = "http://timestamp.digicert.com"
#: Artifact Signing's own time-stamp server (Microsoft's SignTool integration page).
ARTIFACT_TIMESTAMP = "http://timestamp.acs.microsoft.com"
#: signtool's Artifact Signing plug-in, from NuGet, pinned (nuget.exe checks the package's repository signature).
SIGNING_CLIENT = ("Microsoft.ArtifactSigning.Client", "1.0.128")
SIGNTOOL_HOW = (
    "Install the Windows SDK with its 'Signing Tools for Desktop Apps' feature, then run from a Developer "
    "Command Prompt or add the SDK's bin folder holding signtool.exe to PATH."
)
MAKENSIS_HOW = (
    "Install NSIS 3.08 or later (https://nsis.sourceforge.io/Download; Debian: apt-get install nsis) "
    "and put makensis on PATH."
)
NUGET_HOW = (
    "Install the NuGet command-line tool (nuget.exe; GitHub's Windows runners have it) "
    "or set SEARCHDESK_WIN_SIGNING_DLIB."
)


@dataclass(frozen=True)
class Signer:
    """One way of signing: its name for the release notes and signtool's options (without the files)."""

    kind: str  # signing_status.ARTIFACT_SIGNING / CERTIFICATE / UNSIGNED
    options: tuple[str, ...] = ()

    @property
    def signs(self) -> bool:
        return self.kind != signing_status.UNSIGNED


def version4() -> str:
    """x.y.z -> x.y.z.0: the four numbers a Windows version resource needs."""
    numbers = [int(n) for n in re.findall(r"\d+", version())[:4]]
    return ".".join(str(n) for n in (numbers + [0, 0, 0, 0])[:4])


def signing_client(run: Runner) -> str:
    """Azure.CodeSigning.Dlib.dll: from SEARCHDESK_WIN_SIGNING_DLIB, else the pinned NuGet package."""
    given = run.env("SEARCHDESK_WIN_SIGNING_DLIB", "Azure.CodeSigning.Dlib.dll", secret=False, default="")
    if given:
        return given
    name, pinned = SIGNING_CLIENT
    where = WORK / "nuget"
    found = sorted(where.glob(f"{name}.{pinned}/**/x64/Azure.CodeSigning.Dlib.dll"))
    if found:
        return str(found[0])
    nuget = run.tool("nuget", NUGET_HOW)
    run.run([nuget, "install", name, "-Version", pinned, "-OutputDirectory", where, "-NonInteractive"])
    found = sorted(where.glob(f"{name}.{pinned}/**/x64/Azure.CodeSigning.Dlib.dll"))
    if run.dry_run:
        return str(where / f"{name}.{pinned}" / "bin" / "x64" / "Azure.CodeSigning.Dlib.dll")
    if not found:
        raise BuildError(f"{name} {pinned} holds no x64 Azure.CodeSigning.Dlib.dll; set SEARCHDESK_WIN_SIGNING_DLIB.")
    return str(found[0])


def artifact_metadata(run: Runner, endpoint: str) -> Path:
    """The plug-in's metadata.json: which account and certificate profile sign (names, not secrets)."""
    account = run.env("SEARCHDESK_WIN_SIGNING_ACCOUNT", "the Artifact Signing account's name", secret=False)
    profile = run.env("SEARCHDESK_WIN_SIGNING_PROFILE", "its certificate profile's name", secret=False)
    path = WORK / "artifact-signing.json"
    data = {"Endpoint": endpoint, "CodeSigningAccountName": account, "CertificateProfileName": profile}
    run.say(f"write {path}: {json.dumps(data)}")
    if not run.dry_run:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def signer(run: Runner, *, unsigned: bool = False) -> Signer:
    """signtool's identity and time-stamp options from the environment (the module docstring's order)."""
    if unsigned:
        return Signer(signing_status.UNSIGNED)
    common = ["sign", "/fd", "SHA256", "/td", "SHA256", "/d", "SearchDesk"]
    endpoint = run.env("SEARCHDESK_WIN_SIGNING_ENDPOINT", "Artifact Signing endpoint", secret=False, default="")
    if endpoint:
        dlib = signing_client(run)
        metadata = artifact_metadata(run, endpoint)
        options = [*common, "/tr", ARTIFACT_TIMESTAMP, "/dlib", dlib, "/dmdf", str(metadata)]
        return Signer(signing_status.ARTIFACT_SIGNING, tuple(options))
    url = run.env("SEARCHDESK_WIN_TIMESTAMP_URL", "time-stamp server", secret=False, default=DEFAULT_TIMESTAMP)
    thumb = run.env("SEARCHDESK_WIN_CERT_SHA1", "certificate thumbprint", secret=False, default="")
    if thumb:
        return Signer(signing_status.CERTIFICATE, (*common, "/tr", url, "/sha1", thumb))
    pfx = run.env("SEARCHDESK_WIN_CERT_FILE", "the code-signing .pfx", secret=False, default="")
    if not pfx:
        run.say("no signing identity in the environment: this build is UNSIGNED (Windows will say Unknown publisher)")
        return Signer(signing_status.UNSIGNED)
    password = run.env("SEARCHDESK_WIN_CERT_PASSWORD", "the .pfx password")
    return Signer(signing_status.CERTIFICATE, (*common, "/tr", url, "/f", pfx, "/p", password))


@contextmanager
def ci_certificate(run: Runner) -> Iterator[None]:
    """A .pfx carried in the environment (CI) written to a file for this run, and deleted after it.

    The path goes into this process's environment, so makensis's call back (--sign-one) finds it too."""
    text = run.env("SEARCHDESK_WIN_CERT_PFX_BASE64", "the code-signing .pfx, base64", default="")
    path = WORK / "signing.pfx"
    if not text or os.environ.get("SEARCHDESK_WIN_CERT_FILE"):
        yield
        return
    run.say(f"write {path} (from the environment; deleted after the build)")
    if not run.dry_run:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_bytes(base64.b64decode(text))
    os.environ["SEARCHDESK_WIN_CERT_FILE"] = str(path)
    try:
        yield
    finally:
        os.environ.pop("SEARCHDESK_WIN_CERT_FILE", None)
        path.unlink(missing_ok=True)


#: What Windows loads as code from the app's folders. Smart App Control (Windows 11) blocks an unsigned DLL
#: or .pyd even inside a signed app, so every one is signed, not only the programs:
#: https://learn.microsoft.com/windows/apps/develop/smart-app-control/code-signing-for-smart-app-control
#: (which also says Smart App Control accepts RSA signatures only, not ECC: the certificate must be RSA).
PE_SUFFIXES = (".exe", ".dll", ".pyd")
#: signtool takes many files at once; a Windows command line stops at 32,767 characters.
SIGN_BATCH = 40


def pe_files(*folders: Path) -> list[Path]:
    """Every .exe, .dll and .pyd under the folders (any case, at any depth), sorted: the programs, Python's
    and Qt's DLLs and every extension module the app loads. Listed from the folders themselves, so a file
    a new dependency brings is signed without anyone naming it."""
    found = {p for folder in folders for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in PE_SUFFIXES}
    return sorted(found)


def sign(run: Runner, how: Signer, files: list[Path]) -> None:
    signtool = run.tool("signtool", SIGNTOOL_HOW)
    for start in range(0, len(files), SIGN_BATCH):
        batch = files[start : start + SIGN_BATCH]
        run.run([signtool, *how.options, *batch])
        run.run([signtool, "verify", "/pa", *batch])


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


def tools_on_path() -> None:
    """Put where NSIS and the Windows SDK install themselves on PATH (neither does; GitHub's runners have both).

    The newest SDK's x64 signtool comes first; a signtool or makensis already on PATH still wins."""
    if sys.platform != "win32":
        return
    found: list[str] = []
    for base in filter(None, (os.environ.get("PROGRAMFILES(X86)"), os.environ.get("PROGRAMFILES"))):
        kits = sorted(Path(base, "Windows Kits", "10", "bin").glob("10.*/x64/signtool.exe"), reverse=True)
        found += [str(kits[0].parent)] if kits else []
        found += [str(Path(base, "NSIS"))] if Path(base, "NSIS", "makensis.exe").is_file() else []
    os.environ["PATH"] = os.pathsep.join([os.environ.get("PATH", ""), *found])


POWERSHELL_HOW = "Windows PowerShell is part of Windows; put %SystemRoot%\\System32\\WindowsPowerShell\\v1.0 on PATH."


def signed_publisher(run: Runner, signed: Path) -> str:
    """Who signed `signed`, as Windows will name them (the certificate's CN), read back from the file itself
    by PowerShell's Get-AuthenticodeSignature, so the release notes repeat the name a person will see rather
    than a guess from the settings. "" in a dry run, or when it cannot be read (the notes then say "the name
    in the signing certificate"): the file is signed and verified by then, so this never stops a release."""
    powershell = run.tool("powershell", POWERSHELL_HOW)
    cmd = [powershell, "-NoProfile", "-NonInteractive", "-Command", signing_status.SIGNER_SUBJECT_PS]
    try:
        output = run.run(cmd, env={"SEARCHDESK_SIGNED_FILE": str(signed)}, capture=True)
    except BuildError as exc:
        run.say(f"could not read the installer's publisher ({exc}); the release notes will not name it")
        return ""
    publisher = signing_status.publisher_from_powershell(output)
    if not run.dry_run:
        run.say(f"publisher Windows will show: {publisher or '(no common name in the certificate)'}")
    return publisher


def installer_name(how: Signer) -> str:
    """The installer's file name; an unsigned build says so in it."""
    return f"SearchDesk-{version()}-setup{'' if how.signs else '-unsigned'}.exe"


def release(run: Runner, *, unsigned: bool, freeze: bool) -> None:
    if sys.platform != "win32" and not run.dry_run:
        raise BuildError("Build the Windows release on Windows (use --dry-run or --dummy-payload elsewhere).")
    app, server_only = bundle.OUTPUTS["app"], bundle.OUTPUTS["server"]
    tools_on_path()
    with ci_certificate(run):
        how = signer(run, unsigned=unsigned)  # stop before the long freeze if signing cannot happen
        if how.signs:
            run.tool("signtool", SIGNTOOL_HOW)
        run.tool("makensis", MAKENSIS_HOW)
        bundle.check_node(run)
        if freeze:
            with run.step("freeze (PyInstaller)"):
                bundle.freeze(run)
        require_dir(app, "run without --no-freeze, or `make bundle` first.", dry_run=run.dry_run)
        if how.signs:
            code = pe_files(app, server_only)
            with run.step(f"sign {len(code)} programs, DLLs and extension modules (signtool, {how.kind})"):
                if run.dry_run and not code:
                    run.say(
                        f"+ {run.show(['signtool', *how.options, '<every .exe, .dll and .pyd in', app, server_only])}>"
                    )
                sign(run, how, code)
        run.say(
            "notifications: desktop-notifier registers AppUserModelID 'SearchDesk' (display name, icon) under "
            r"HKCU\Software\Classes\AppUserModelId\SearchDesk when the app starts; the installer adds the "
            "Start-menu shortcut; the uninstaller removes both"
        )
        with run.step("installer (makensis)"):
            if how.signs:
                run.say(
                    f"makensis signs the installer and its uninstaller with: {self_sign_command()} <file>, which runs"
                )
                run.say(f"+ {run.show(['signtool', *how.options, '<file>'])}")
            out = build_installer(run, app, DIST / installer_name(how), signed=how.signs)
            run.say(f"-> {out}")
        publisher = ""
        if how.signs:
            with run.step("verify installer signature"):
                run.run([run.tool("signtool", SIGNTOOL_HOW), "verify", "/pa", out])
                publisher = signed_publisher(run, out)
        with run.step(".mcpb (win32)"):
            mcpb = mcpb_pack.build(server_only, run, platform_name="win32")
            run.say(f"-> {mcpb}")
    signing_status.record(run, "win32", signature=how.kind, notarised=False, files=[out, mcpb], publisher=publisher)


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
            tools_on_path()
            sign(run, signer(run), [args.sign_one])
            return 0
        if args.dummy_payload:
            with run.step("installer around a dummy payload (makensis)"):
                where = BUILD / "nsis-dummy"
                payload = dummy_payload(where / "payload") if not run.dry_run else where / "payload"
                out = build_installer(run, payload, where / f"SearchDesk-{version()}-dummy-setup.exe", signed=False)
                run.say(f"-> {out}" + ("" if run.dry_run else f" ({out.stat().st_size} bytes)"))
        else:
            release(run, unsigned=args.unsigned, freeze=not args.no_freeze)
        run.summary()
        return 0

    return main_wrapper("build_windows", body)


if __name__ == "__main__":
    raise SystemExit(main())
