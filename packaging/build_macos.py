"""macOS release: SearchDesk.app (both programs in Contents/MacOS), signed, notarised, stapled, in a .dmg.

Run on macOS from the repository root, in the venv that `make bundle` set up:

    python packaging/build_macos.py              # freeze, sign, notarise, staple, .dmg, .mcpb
    python packaging/build_macos.py --ad-hoc     # signed ad hoc, not notarised: a development build
    python packaging/build_macos.py --dry-run    # print every step and command; change nothing (any OS)

One script for releases and development builds. With a Developer ID (SEARCHDESK_MAC_SIGN_IDENTITY) every
Mach-O file is signed inside-out with the hardened runtime and a secure timestamp (no --deep), then the app
is notarised and the ticket stapled; the server-only folder that goes into the .mcpb is signed and
notarised too (a bare executable cannot carry a stapled ticket, so Gatekeeper checks it online). Without
one the same files are signed ad hoc (`codesign --sign -`), because macOS shows desktop-notifier's
notifications only from a signed app, and the build is labelled "not notarised" (the .dmg's name and
dist/signing-darwin.json, which the release notes read).

The .app comes from packaging/searchdesk.spec (its BUNDLE step, on macOS only): Contents/MacOS holds
`searchdesk` (CFBundleExecutable) and `searchdesk-server`; Info.plist sets LSUIElement so SearchDesk
lives in the menu bar without a Dock icon. The hardened runtime's exceptions are in
packaging/entitlements.plist, each with its reason.

Identity and notarisation credentials, from the environment only (nothing secret is committed or printed):
    SEARCHDESK_MAC_SIGN_IDENTITY     "Developer ID Application: <name> (<TEAMID>)"; unset: an ad-hoc build
    SEARCHDESK_MAC_CERT_P12_BASE64 + SEARCHDESK_MAC_CERT_PASSWORD
                                     (CI) that certificate and its key as a base64 .p12, imported into a
                                     throwaway keychain for this run and deleted after it
    and one way to authenticate notarytool:
    SEARCHDESK_MAC_NOTARY_PROFILE    a keychain profile made once with `xcrun notarytool store-credentials`, or
    SEARCHDESK_MAC_API_KEY_FILE + SEARCHDESK_MAC_API_KEY_ID + SEARCHDESK_MAC_API_ISSUER   (App Store Connect key;
                                     in CI SEARCHDESK_MAC_API_KEY holds the .p8's text instead of a file), or
    SEARCHDESK_MAC_APPLE_ID + SEARCHDESK_MAC_TEAM_ID + SEARCHDESK_MAC_APP_PASSWORD       (app-specific password)
    SEARCHDESK_BUILD_OAUTH_CLIENT_FILE  the Google OAuth "Desktop app" client to build in (see spec_common.py)

Documentation followed:
- Notarizing macOS software before distribution:
  https://developer.apple.com/documentation/security/notarizing-macos-software-before-distribution
- Customizing the notarization workflow (notarytool submit --wait, stapler, disk images):
  https://developer.apple.com/documentation/security/customizing-the-notarization-workflow
- Hardened Runtime: https://developer.apple.com/documentation/security/hardened-runtime
- Creating distribution-signed code for macOS (sign inside-out, no --deep):
  https://developer.apple.com/documentation/xcode/creating-distribution-signed-code-for-the-mac
- Ad-hoc signing (`--sign -`): codesign(1), and TN3127 "Inside Code Signing: Requirements"
- Installing a signing certificate on a CI runner (a temporary keychain):
  https://docs.github.com/en/actions/how-tos/deploy/deploy-to-third-party-platforms/sign-xcode-applications
- Placing content in a bundle (executables in Contents/MacOS):
  https://developer.apple.com/documentation/bundleresources/placing-content-in-a-bundle
- LSUIElement: https://developer.apple.com/documentation/bundleresources/information-property-list/lsuielement
- Asking permission to use notifications (UNUserNotificationCenter requestAuthorization):
  https://developer.apple.com/documentation/usernotifications/asking-permission-to-use-notifications
- PyInstaller on macOS (app bundles, code signing):
  https://pyinstaller.org/en/v6.22.3/feature-notes.html#macos-binary-code-signing
"""

from __future__ import annotations

import argparse
import base64
import os
import plistlib
import re
import secrets
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import bundle
import mcpb_pack
import signing_status
from buildlib import APP_NAME, BUILD, DIST, PACKAGING, BuildError, Runner, main_wrapper, require_dir, version
from spec_common import BUNDLE_ID, MACOS_MINIMUM, info_plist

APP = DIST / f"{APP_NAME}.app"
WORK = BUILD / "macos"
#: The hardened runtime's exceptions for a Developer ID build, each with its reason in the file.
ENTITLEMENTS = PACKAGING / "entitlements.plist"
#: An ad-hoc build has no Team ID, and with library validation on dyld refuses every library without one.
ADHOC_ENTITLEMENTS = WORK / "entitlements-adhoc.plist"
ADHOC_EXTRA = {"com.apple.security.cs.disable-library-validation": True}
KEYCHAIN = WORK / "signing.keychain-db"
XCODE_HOW = "Install Xcode or its Command Line Tools (xcode-select --install)."

MACHO_MAGIC = {bytes.fromhex(m) for m in ("feedface", "feedfacf", "cefaedfe", "cffaedfe", "cafebabe", "bebafeca")}


@dataclass(frozen=True)
class Identity:
    """Who signs: a Developer ID certificate's name, or "-" for an ad-hoc signature (no certificate)."""

    name: str

    @property
    def ad_hoc(self) -> bool:
        return self.name == "-"

    @property
    def entitlements(self) -> Path:
        return ADHOC_ENTITLEMENTS if self.ad_hoc else ENTITLEMENTS


AD_HOC = Identity("-")


def is_macho(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    with path.open("rb") as fh:
        return fh.read(4) in MACHO_MAGIC


def sign_order(root: Path) -> list[Path]:
    """Every Mach-O file and framework under `root`, deepest first; the main executables last."""
    macos = root / "Contents" / "MacOS" if root.suffix == ".app" else root
    mains = [macos / "searchdesk-server", macos / "searchdesk"]
    nested = [p for p in root.rglob("*") if is_macho(p) and p not in mains]
    frameworks = [p for p in root.rglob("*.framework") if p.is_dir() and not p.is_symlink()]
    items = sorted([*nested, *frameworks], key=lambda p: (-len(p.parts), str(p)))
    return [*items, *(m for m in mains if m.exists())]


def codesign_cmd(identity: Identity, path: Path, *, entitlements: bool) -> list[str | Path]:
    """One codesign call: the hardened runtime always (so a development build meets it too); a secure
    timestamp for a Developer ID signature (an ad-hoc signature cannot have one)."""
    stamp = "--timestamp=none" if identity.ad_hoc else "--timestamp"
    cmd: list[str | Path] = ["codesign", "--force", stamp, "--options", "runtime", "--sign", identity.name]
    if entitlements:
        cmd += ["--entitlements", identity.entitlements]
    return [*cmd, path]


def write_entitlements(run: Runner, identity: Identity) -> None:
    """The ad-hoc entitlements: the committed ones plus disable-library-validation (see ADHOC_EXTRA)."""
    keys = plistlib.loads(ENTITLEMENTS.read_bytes())
    if not identity.ad_hoc:
        run.say(f"entitlements {ENTITLEMENTS.relative_to(PACKAGING.parent)}: {', '.join(keys)}")
        return
    keys.update(ADHOC_EXTRA)
    run.say(f"write {ADHOC_ENTITLEMENTS}: {', '.join(keys)}")
    if not run.dry_run:
        ADHOC_ENTITLEMENTS.parent.mkdir(parents=True, exist_ok=True)
        ADHOC_ENTITLEMENTS.write_bytes(plistlib.dumps(keys))


def sign_tree(run: Runner, identity: Identity, root: Path) -> None:
    if run.dry_run and not root.exists():
        shown = run.show(
            codesign_cmd(identity, Path(f"<each Mach-O/framework in {root}, deepest first>"), entitlements=False)
        )
        run.say(f"+ {shown}")
        main = Path(f"<{root}/…/searchdesk-server, searchdesk>")
        run.say(f"+ {run.show(codesign_cmd(identity, main, entitlements=True))}")
    else:
        items = sign_order(root)
        run.say(f"signing {len(items)} items in {root.name}, inside-out")
        for item in items:
            is_main = item.name in ("searchdesk", "searchdesk-server") and item.parent.name in ("MacOS", root.name)
            run.run(codesign_cmd(identity, item, entitlements=is_main))
    if root.suffix == ".app":
        run.run(codesign_cmd(identity, root, entitlements=True))
        run.run(["codesign", "--verify", "--deep", "--strict", "--verbose=2", root])


def developer_id(run: Runner, *, ad_hoc: bool) -> Identity:
    """The Developer ID from the environment; none (or --ad-hoc) means an ad-hoc signature."""
    if ad_hoc:
        return AD_HOC
    name = run.env("SEARCHDESK_MAC_SIGN_IDENTITY", "Developer ID", secret=False, default="")
    if not name:
        run.say("no SEARCHDESK_MAC_SIGN_IDENTITY: signing ad hoc; this build is NOT NOTARISED")
        return AD_HOC
    return Identity(name)


def _secret_file(run: Runner, path: Path, data: bytes) -> Path:
    """Write a credential the environment carried to a file only this user can read (not in a dry run)."""
    run.say(f"write {path} (from the environment; deleted after the build)")
    if not run.dry_run:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_bytes(data)
    return path


@contextmanager
def ci_credentials(run: Runner, identity: Identity) -> Iterator[None]:
    """On a CI runner: the certificate in a throwaway keychain, the notary key in a file; both gone after.

    A person's Mac already has the certificate in the login keychain and needs neither variable."""
    p12_text = run.env("SEARCHDESK_MAC_CERT_P12_BASE64", "the Developer ID certificate (.p12, base64)", default="")
    key_text = run.env("SEARCHDESK_MAC_API_KEY", "the App Store Connect API key (.p8 text)", default="")
    made: list[Path] = []
    keychain = False
    try:
        if key_text and not os.environ.get("SEARCHDESK_MAC_API_KEY_FILE"):
            made.append(_secret_file(run, WORK / "AuthKey.p8", key_text.encode()))
            os.environ["SEARCHDESK_MAC_API_KEY_FILE"] = str(made[-1])
        if p12_text and not identity.ad_hoc:
            cert_password = run.env("SEARCHDESK_MAC_CERT_PASSWORD", "the .p12's password")
            kc_password = secrets.token_urlsafe(24)
            run.secrets.append(kc_password)
            p12 = _secret_file(run, WORK / "developer-id.p12", base64.b64decode(p12_text) if not run.dry_run else b"")
            made.append(p12)
            run.tool("security", XCODE_HOW)
            if KEYCHAIN.exists():  # left by a run that was killed before its clean-up
                run.run(["security", "delete-keychain", KEYCHAIN])
            run.run(["security", "create-keychain", "-p", kc_password, KEYCHAIN])
            keychain = True
            run.run(["security", "set-keychain-settings", "-lut", "21600", KEYCHAIN])
            run.run(["security", "unlock-keychain", "-p", kc_password, KEYCHAIN])
            run.run(
                [
                    "security",
                    "import",
                    p12,
                    "-k",
                    KEYCHAIN,
                    "-P",
                    cert_password,
                    "-f",
                    "pkcs12",
                    "-T",
                    "/usr/bin/codesign",
                ]
            )
            run.run(
                [
                    "security",
                    "set-key-partition-list",
                    "-S",
                    "apple-tool:,apple:,codesign:",
                    "-s",
                    "-k",
                    kc_password,
                    KEYCHAIN,
                ]
            )
            listed = run.run(["security", "list-keychains", "-d", "user"], capture=True)
            others = re.findall(r'"([^"]+)"', listed)
            run.run(["security", "list-keychains", "-d", "user", "-s", KEYCHAIN, *others])
        yield
    finally:
        if keychain:
            run.run(["security", "delete-keychain", KEYCHAIN])
        for path in made:
            if not run.dry_run:
                path.unlink(missing_ok=True)


def notary_auth(run: Runner) -> list[str]:
    """notarytool's credentials: a keychain profile, an API key, or an Apple ID with app password."""
    profile = run.env("SEARCHDESK_MAC_NOTARY_PROFILE", "notarytool keychain profile", secret=False, default="")
    if profile:
        return ["--keychain-profile", profile]
    key_file = run.env("SEARCHDESK_MAC_API_KEY_FILE", "App Store Connect API key (.p8)", secret=False, default="")
    if key_file:
        key_id = run.env("SEARCHDESK_MAC_API_KEY_ID", "the API key's ID", secret=False)
        issuer = run.env("SEARCHDESK_MAC_API_ISSUER", "the API key's issuer ID", secret=False)
        return ["--key", key_file, "--key-id", key_id, "--issuer", issuer]
    apple_id = run.env(
        "SEARCHDESK_MAC_APPLE_ID",
        "an Apple ID for notarisation (or set SEARCHDESK_MAC_NOTARY_PROFILE or SEARCHDESK_MAC_API_KEY_FILE)",
        secret=False,
    )
    team = run.env("SEARCHDESK_MAC_TEAM_ID", "your Apple Developer Team ID", secret=False)
    password = run.env("SEARCHDESK_MAC_APP_PASSWORD", "an app-specific password for that Apple ID")
    return ["--apple-id", apple_id, "--team-id", team, "--password", password]


def notarise(run: Runner, path: Path, auth: list[str], *, staple: bool) -> None:
    """Submit (zipping folders with ditto, as Apple's docs show), wait for the verdict, staple if possible."""
    upload = path
    if path.is_dir() or path.suffix == ".app":
        upload = BUILD / "macos" / f"{path.name}.zip"
        run.run(["ditto", "-c", "-k", "--keepParent", path, upload])
    run.run(["xcrun", "notarytool", "submit", upload, *auth, "--wait"])
    if staple:
        run.run(["xcrun", "stapler", "staple", path])
        run.run(["xcrun", "stapler", "validate", path])


def dmg_name(identity: Identity) -> str:
    """The disk image's file name; an ad-hoc build says so in it."""
    label = "-not-notarised" if identity.ad_hoc else ""
    return f"{APP_NAME}-{version()}{label}.dmg"


def make_dmg(run: Runner, identity: Identity) -> Path:
    """A compressed disk image with the app and a link to /Applications to drag it onto."""
    out = DIST / dmg_name(identity)
    stage = WORK / "dmg"
    run.say(f"stage {APP} and an /Applications link in {stage}")
    if not run.dry_run:
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        run.run(["ditto", APP, stage / APP.name])
        os.symlink("/Applications", stage / "Applications")
        out.unlink(missing_ok=True)
    run.run(["hdiutil", "create", "-volname", APP_NAME, "-srcfolder", stage, "-fs", "HFS+", "-format", "UDZO", out])
    stamp = "--timestamp=none" if identity.ad_hoc else "--timestamp"
    run.run(["codesign", "--force", stamp, "--sign", identity.name, out])
    return out


def check_app(run: Runner) -> None:
    """The bundle's shape: both executables in Contents/MacOS, LSUIElement set, the stable bundle identifier.

    Notifications (UNUserNotificationCenter, through desktop-notifier) work only from a signed bundle, and
    macOS keeps the person's "allow notifications" answer per CFBundleIdentifier: it must never change.
    The app asks for permission on its first run; the main window says so when it was refused.
    """
    wanted = info_plist()
    if not wanted.get("LSUIElement"):
        raise BuildError("spec_common.info_plist() must set LSUIElement (SearchDesk is a menu-bar app).")
    run.say(
        f"notifications: bundle identifier {BUNDLE_ID} (permission is kept per identifier; never change it); "
        "asked for on first run; a signed bundle is required"
    )
    if run.dry_run and not APP.exists():
        run.say(f"check {APP}: Contents/MacOS/searchdesk + searchdesk-server, Info.plist LSUIElement=true")
        return
    for name in ("searchdesk", "searchdesk-server"):
        if not (APP / "Contents" / "MacOS" / name).is_file():
            raise BuildError(f"{APP.name}/Contents/MacOS/{name} is missing; the spec's BUNDLE step did not run.")
    plist = plistlib.loads((APP / "Contents" / "Info.plist").read_bytes())
    if plist.get("LSUIElement") is not True or plist.get("CFBundleExecutable") != "searchdesk":
        raise BuildError("Info.plist lacks LSUIElement=true or CFBundleExecutable=searchdesk; see spec_common.py.")
    if plist.get("CFBundleIdentifier") != BUNDLE_ID:
        raise BuildError(f"Info.plist's CFBundleIdentifier is not {BUNDLE_ID}: notification permission would be lost.")
    if plist.get("LSMinimumSystemVersion") != MACOS_MINIMUM:
        raise BuildError(f"Info.plist's LSMinimumSystemVersion is not {MACOS_MINIMUM} (spec_common.MACOS_MINIMUM).")
    too_new = newer_than_minimum(run, APP)
    if too_new:
        raise BuildError(
            f"these need a macOS newer than {MACOS_MINIMUM}, which the app promises: {'; '.join(too_new[:5])}. "
            "Install the wheel built for the oldest macOS (pip prefers the one for the build machine's)."
        )


def newer_than_minimum(run: Runner, root: Path) -> list[str]:
    """Each Mach-O file under `root` whose LC_BUILD_VERSION minos is above MACOS_MINIMUM (otool -l, part of
    the Xcode Command Line Tools on GitHub's macOS runner): a wheel built for the build machine's macOS
    would load only there and later."""
    floor = tuple(int(n) for n in MACOS_MINIMUM.split("."))
    found = []
    for path in sorted(p for p in root.rglob("*") if is_macho(p)):
        text = run.run(["otool", "-l", str(path)], capture=True)
        for minos in re.findall(r"^\s*minos (\d+(?:\.\d+)*)$", text, re.M):
            if tuple(int(n) for n in minos.split(".")) > floor:
                found.append(f"{path.relative_to(root)} (macOS {minos})")
                break
    return found


def release(run: Runner, *, ad_hoc: bool, freeze: bool) -> None:
    if sys.platform != "darwin" and not run.dry_run:
        raise BuildError("Build the macOS release on macOS (use --dry-run elsewhere).")
    for tool in ("codesign", "xcrun", "hdiutil", "ditto"):
        run.tool(tool, XCODE_HOW)
    identity = developer_id(run, ad_hoc=ad_hoc)
    with ci_credentials(run, identity):
        # every credential checked before the long freeze; an ad-hoc build is never notarised
        auth = None if identity.ad_hoc else notary_auth(run)
        bundle.check_node(run)
        if freeze:
            with run.step("freeze (PyInstaller)"):
                bundle.freeze(run)
        require_dir(APP, "run without --no-freeze (the spec builds the .app on macOS).", dry_run=run.dry_run)
        check_app(run)
        server_only = bundle.OUTPUTS["server"]
        write_entitlements(run, identity)
        kind = "ad hoc" if identity.ad_hoc else "Developer ID"
        with run.step(f"codesign ({kind}, hardened runtime)"):
            sign_tree(run, identity, APP)
            sign_tree(run, identity, server_only)
        if auth:
            with run.step("notarise + staple the app"):
                notarise(run, APP, auth, staple=True)
            with run.step("notarise the .mcpb's server"):
                notarise(run, server_only, auth, staple=False)
        with run.step("disk image"):
            dmg = make_dmg(run, identity)
            if auth:
                notarise(run, dmg, auth, staple=True)
            run.say(f"-> {dmg}")
        with run.step(".mcpb (darwin)"):
            mcpb = mcpb_pack.build(server_only, run, platform_name="darwin")
            run.say(f"-> {mcpb}")
    signing_status.record(
        run,
        "darwin",
        signature=signing_status.DEVELOPER_ID if auth else signing_status.AD_HOC,
        notarised=auth is not None,
        files=[dmg, mcpb],
        publisher="" if identity.ad_hoc else signing_status.developer_name(identity.name),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the signed (notarised, or ad hoc) macOS app, .dmg and .mcpb.")
    parser.add_argument("--dry-run", action="store_true", help="print every step; change nothing")
    parser.add_argument("--ad-hoc", action="store_true", help="sign ad hoc, do not notarise (a development build)")
    parser.add_argument("--unsigned", dest="ad_hoc", action="store_true", help=argparse.SUPPRESS)  # the old name
    parser.add_argument("--no-freeze", action="store_true", help="reuse dist/ from an earlier build")
    args = parser.parse_args(argv)
    run = Runner(dry_run=args.dry_run)

    def body() -> int:
        release(run, ad_hoc=args.ad_hoc, freeze=not args.no_freeze)
        run.summary()
        return 0

    return main_wrapper("build_macos", body)


if __name__ == "__main__":
    raise SystemExit(main())
