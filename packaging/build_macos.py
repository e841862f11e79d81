"""macOS release: SearchDesk.app (both programs in Contents/MacOS), signed, notarised, stapled, in a .dmg.

Run on macOS from the repository root, in the venv that `make bundle` set up:

    python packaging/build_macos.py              # freeze, sign, notarise, staple, .dmg, .mcpb
    python packaging/build_macos.py --unsigned   # an unsigned .app/.dmg for local testing
    python packaging/build_macos.py --dry-run    # print every step; change nothing (any OS)

The .app comes from packaging/searchdesk.spec (its BUNDLE step, on macOS only): Contents/MacOS holds
`searchdesk` (CFBundleExecutable) and `searchdesk-server`; Info.plist sets LSUIElement so SearchDesk
lives in the menu bar without a Dock icon. Every Mach-O file is signed inside-out with the hardened
runtime and a secure timestamp (no --deep), then the app is notarised and the ticket stapled; the
server-only folder that goes into the .mcpb is signed and notarised too (a bare executable cannot
carry a stapled ticket, so Gatekeeper checks it online).

Identity and notarisation credentials, from the environment only (nothing secret is committed or printed):
    SEARCHDESK_MAC_SIGN_IDENTITY     "Developer ID Application: <name> (<TEAMID>)" in the login keychain
    and one way to authenticate notarytool:
    SEARCHDESK_MAC_NOTARY_PROFILE    a keychain profile made once with `xcrun notarytool store-credentials`, or
    SEARCHDESK_MAC_API_KEY_FILE + SEARCHDESK_MAC_API_KEY_ID + SEARCHDESK_MAC_API_ISSUER   (App Store Connect key), or
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
import os
import plistlib
import shutil
import sys
from pathlib import Path

import bundle
import mcpb_pack
from buildlib import APP_NAME, BUILD, DIST, BuildError, Runner, main_wrapper, require_dir, version
from spec_common import BUNDLE_ID, info_plist

APP = DIST / f"{APP_NAME}.app"
ENTITLEMENTS = BUILD / "macos" / "entitlements.plist"
XCODE_HOW = "Install Xcode or its Command Line Tools (xcode-select --install)."

#: Hardened-runtime exceptions, each with its reason. Nothing else is relaxed: every library is signed with
#: our own Team ID, so library validation stays on.
#: allow-unsigned-executable-memory: libffi (ctypes callbacks, used by the Qt/keyring bridges) writes
#: closures into memory it then executes.
ENTITLEMENT_KEYS = {"com.apple.security.cs.allow-unsigned-executable-memory": True}

MACHO_MAGIC = {bytes.fromhex(m) for m in ("feedface", "feedfacf", "cefaedfe", "cffaedfe", "cafebabe", "bebafeca")}


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


def codesign_cmd(identity: str, path: Path, *, entitlements: bool) -> list[str | Path]:
    cmd: list[str | Path] = ["codesign", "--force", "--timestamp", "--options", "runtime", "--sign", identity]
    if entitlements:
        cmd += ["--entitlements", ENTITLEMENTS]
    return [*cmd, path]


def write_entitlements(run: Runner) -> None:
    run.say(f"write {ENTITLEMENTS}: {', '.join(ENTITLEMENT_KEYS)}")
    data = plistlib.dumps(ENTITLEMENT_KEYS)
    if not run.dry_run:
        ENTITLEMENTS.parent.mkdir(parents=True, exist_ok=True)
        ENTITLEMENTS.write_bytes(data)


def sign_tree(run: Runner, identity: str, root: Path) -> None:
    if run.dry_run and not root.exists():
        run.say(f"+ codesign --force --timestamp --options runtime --sign {identity} <each Mach-O/framework in {root}>")
        run.say(f"+ codesign ... --entitlements {ENTITLEMENTS} <{root}/…/searchdesk-server, searchdesk>")
    else:
        items = sign_order(root)
        run.say(f"signing {len(items)} items in {root.name}, inside-out")
        for item in items:
            is_main = item.name in ("searchdesk", "searchdesk-server") and item.parent.name in ("MacOS", root.name)
            run.run(codesign_cmd(identity, item, entitlements=is_main))
    if root.suffix == ".app":
        run.run(codesign_cmd(identity, root, entitlements=True))
        run.run(["codesign", "--verify", "--deep", "--strict", "--verbose=2", root])


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


def make_dmg(run: Runner, identity: str | None) -> Path:
    """A compressed disk image with the app and a link to /Applications to drag it onto."""
    out = DIST / f"{APP_NAME}-{version()}.dmg"
    stage = BUILD / "macos" / "dmg"
    run.say(f"stage {APP} and an /Applications link in {stage}")
    if not run.dry_run:
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        run.run(["ditto", APP, stage / APP.name])
        os.symlink("/Applications", stage / "Applications")
        out.unlink(missing_ok=True)
    run.run(["hdiutil", "create", "-volname", APP_NAME, "-srcfolder", stage, "-fs", "HFS+", "-format", "UDZO", out])
    if identity:
        run.run(["codesign", "--force", "--timestamp", "--sign", identity, out])
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


def release(run: Runner, *, signed: bool, freeze: bool) -> None:
    if sys.platform != "darwin" and not run.dry_run:
        raise BuildError("Build the macOS release on macOS (use --dry-run elsewhere).")
    for tool in ("codesign", "xcrun", "hdiutil", "ditto"):
        run.tool(tool, XCODE_HOW)
    identity = auth = None
    if signed:  # every credential checked before the long freeze
        identity = run.env("SEARCHDESK_MAC_SIGN_IDENTITY", '"Developer ID Application: <name> (<TEAMID>)"')
        auth = notary_auth(run)
    bundle.check_node(run)
    if freeze:
        with run.step("freeze (PyInstaller)"):
            bundle.freeze(run)
    require_dir(APP, "run without --no-freeze (the spec builds the .app on macOS).", dry_run=run.dry_run)
    check_app(run)
    server_only = bundle.OUTPUTS["server"]
    if identity and auth:
        write_entitlements(run)
        with run.step("codesign (hardened runtime)"):
            sign_tree(run, identity, APP)
            sign_tree(run, identity, server_only)
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
        run.say(f"-> {mcpb_pack.build(server_only, run, platform_name='darwin')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the signed, notarised macOS app, .dmg and .mcpb.")
    parser.add_argument("--dry-run", action="store_true", help="print every step; change nothing")
    parser.add_argument("--unsigned", action="store_true", help="skip signing and notarisation (a test build)")
    parser.add_argument("--no-freeze", action="store_true", help="reuse dist/ from an earlier build")
    args = parser.parse_args(argv)
    run = Runner(dry_run=args.dry_run)

    def body() -> int:
        release(run, signed=not args.unsigned, freeze=not args.no_freeze)
        run.summary()
        return 0

    return main_wrapper("build_macos", body)


if __name__ == "__main__":
    raise SystemExit(main())
