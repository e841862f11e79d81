"""The release scripts say exactly what they would sign, notarise or leave unsigned (their --dry-run, run for
real as subprocesses), and release.py's notes, SHA256SUMS and SBOM come out as documented.

macOS and Windows signing never run here (no codesign, notarytool or signtool on Linux): the dry runs are
what CI can check, and they print the very commands a real run executes (Runner.run prints then runs).
"""

from __future__ import annotations

import hashlib
import json
import os
import plistlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
sys.path.insert(0, str(PACKAGING))

import release  # noqa: E402
import signing_status  # noqa: E402

SECRET_P12_PASSWORD = "p12-password-never-shown"
SECRET_P8 = "-----BEGIN PRIVATE KEY-----never-shown"
SECRET_PFX_PASSWORD = "pfx-password-never-shown"


def dry_run(script: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SEARCHDESK_MAC_", "SEARCHDESK_WIN_"))}
    done = subprocess.run(
        [sys.executable, str(PACKAGING / script), "--dry-run", "--no-freeze"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_macos_without_a_developer_id_is_signed_ad_hoc_and_labelled() -> None:
    out = dry_run("build_macos.py")
    assert "codesign --force --timestamp=none --options runtime --sign - --entitlements" in out
    assert "entitlements-adhoc.plist: com.apple.security.cs.allow-unsigned-executable-memory, " in out
    assert "com.apple.security.cs.disable-library-validation" in out
    assert "SearchDesk-0.1.0-not-notarised.dmg" in out
    assert "signed ad hoc, not notarised" in out
    assert "notarytool" not in out and "stapler" not in out


def test_macos_with_a_developer_id_signs_notarises_and_staples() -> None:
    out = dry_run(
        "build_macos.py",
        SEARCHDESK_MAC_SIGN_IDENTITY="Developer ID Application: Example (TEAM123456)",
        SEARCHDESK_MAC_CERT_P12_BASE64="c2VjcmV0",
        SEARCHDESK_MAC_CERT_PASSWORD=SECRET_P12_PASSWORD,
        SEARCHDESK_MAC_API_KEY=SECRET_P8,
        SEARCHDESK_MAC_API_KEY_ID="KEYID12345",
        SEARCHDESK_MAC_API_ISSUER="issuer-uuid",
    )
    identity = "'Developer ID Application: Example (TEAM123456)'"
    assert (
        f"codesign --force --timestamp --options runtime --sign {identity} --entitlements {PACKAGING / 'entitlements.plist'}"
        in out
    )
    assert "security create-keychain -p ***" in out and "security delete-keychain" in out
    assert "security import" in out and "-P ***" in out
    assert (
        f"xcrun notarytool submit {ROOT / 'build/macos/SearchDesk.app.zip'} --key {ROOT / 'build/macos/AuthKey.p8'}"
        in out
    )
    assert "--key-id KEYID12345 --issuer issuer-uuid --wait" in out
    assert f"xcrun stapler staple {ROOT / 'dist/SearchDesk.app'}" in out
    assert f"xcrun stapler staple {ROOT / 'dist/SearchDesk-0.1.0.dmg'}" in out
    assert "signed with a Developer ID and notarised" in out
    assert SECRET_P12_PASSWORD not in out and SECRET_P8 not in out
    assert "--timestamp=none" not in out and "--sign -" not in out


def test_the_committed_entitlements_relax_only_executable_memory() -> None:
    keys = plistlib.loads((PACKAGING / "entitlements.plist").read_bytes())
    assert keys == {"com.apple.security.cs.allow-unsigned-executable-memory": True}


def test_windows_with_artifact_signing_uses_signtool_and_its_plug_in() -> None:
    out = dry_run(
        "build_windows.py",
        SEARCHDESK_WIN_SIGNING_ENDPOINT="https://weu.codesigning.azure.net/",
        SEARCHDESK_WIN_SIGNING_ACCOUNT="searchdesk",
        SEARCHDESK_WIN_SIGNING_PROFILE="public",
    )
    assert "nuget install Microsoft.ArtifactSigning.Client -Version 1.0.128" in out
    assert "signtool sign /fd SHA256 /td SHA256 /d SearchDesk /tr http://timestamp.acs.microsoft.com /dlib " in out
    assert "/dmdf " in out and '"CertificateProfileName": "public"' in out
    assert "makensis signs the installer and its uninstaller with:" in out
    assert "signtool verify /pa" in out and "SearchDesk-0.1.0-setup.exe" in out
    assert "Get-AuthenticodeSignature -LiteralPath $env:SEARCHDESK_SIGNED_FILE" in out  # who signed, for the notes
    assert "signed (Azure Artifact Signing)" in out


def test_windows_with_a_pfx_from_ci_hides_its_password() -> None:
    out = dry_run(
        "build_windows.py", SEARCHDESK_WIN_CERT_PFX_BASE64="c2VjcmV0", SEARCHDESK_WIN_CERT_PASSWORD=SECRET_PFX_PASSWORD
    )
    assert f"/f {ROOT / 'build/windows/signing.pfx'} /p ***" in out
    assert "/tr http://timestamp.digicert.com" in out
    assert SECRET_PFX_PASSWORD not in out


def test_windows_without_an_identity_is_built_and_labelled_unsigned() -> None:
    out = dry_run("build_windows.py")
    assert "SearchDesk-0.1.0-setup-unsigned.exe" in out and "-DSIGN_CMD" not in out
    assert "signtool sign" not in out and "Get-AuthenticodeSignature" not in out
    assert "Windows: unsigned" in out


CHANGELOG = """# Changelog

## 0.2.0 (2027-01-05)

- Newer.

## 0.1.0 (not yet released)

The first release.

### For site owners

- Something.
"""


def test_the_notes_are_the_tags_changelog_section() -> None:
    assert (
        release.changelog_section("v0.1.0", CHANGELOG) == "The first release.\n\n### For site owners\n\n- Something.\n"
    )
    assert release.changelog_section("v0.2.0", CHANGELOG) == "- Newer.\n"
    with pytest.raises(release.BuildError, match=r"no section for 0\.3\.0"):
        release.changelog_section("v0.3.0", CHANGELOG)
    with pytest.raises(release.BuildError, match="not a version tag"):
        release.changelog_section("0.1.0", CHANGELOG)


def test_the_notes_say_how_each_system_is_signed(tmp_path: Path) -> None:
    (tmp_path / "release-macos").mkdir()
    (tmp_path / "release-linux").mkdir()
    status = signing_status.Status("darwin", signing_status.AD_HOC, False, ["SearchDesk-0.1.0-not-notarised.dmg"])
    (tmp_path / "release-macos" / "signing-darwin.json").write_text(json.dumps(status.__dict__))
    (tmp_path / "release-linux" / "searchdesk_0.1.0_amd64.deb").write_bytes(b"deb")
    text = release.notes("v0.1.0", tmp_path, CHANGELOG)
    assert "- macOS: signed ad hoc, not notarised" in text
    assert "- Linux: no signature" in text
    assert "update check will not hear of this release" in text  # no update.json: the notes say so
    (tmp_path / "release-linux" / "update.json").write_text("{}")
    assert "update check will not hear" not in release.notes("v0.1.0", tmp_path, CHANGELOG)


def test_sha256sums_lists_the_downloads_only(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "SearchDesk-0.1.0.dmg").write_bytes(b"dmg")
    (tmp_path / "a" / "signing-darwin.json").write_text("{}")
    (tmp_path / "b.mcpb").write_bytes(b"mcpb")
    sums = release.checksums(tmp_path).read_text()
    assert sums == (
        f"{hashlib.sha256(b'dmg').hexdigest()}  SearchDesk-0.1.0.dmg\n{hashlib.sha256(b'mcpb').hexdigest()}  b.mcpb\n"
    )


def test_every_program_file_needs_its_own_sbom(tmp_path: Path) -> None:
    """The draft refuses a release file that carries a program without its SBOM beside it (sbom.py)."""
    (tmp_path / "release-linux").mkdir()
    deb = tmp_path / "release-linux" / "searchdesk_0.1.0_amd64.deb"
    deb.write_bytes(b"deb")
    (tmp_path / "release-linux" / "update.json").write_text("{}")
    assert release.missing_sboms(tmp_path) == ["searchdesk_0.1.0_amd64.deb"]
    deb.with_name(deb.name + ".cdx.json").write_text("{}")
    assert release.missing_sboms(tmp_path) == []


def test_the_notes_say_where_debian_packages_come_from(tmp_path: Path) -> None:
    (tmp_path / "release-linux").mkdir()
    (tmp_path / "release-linux" / "searchdesk_0.1.0_amd64.deb").write_bytes(b"deb")
    assert "come from Debian's archive at build time" in release.notes("v0.1.0", tmp_path, CHANGELOG)


def test_the_installer_gives_toasts_what_they_need() -> None:
    """Windows shows an unpackaged app's toasts under the AppUserModelID desktop-notifier registers (its
    app_name, under HKCU's AppUserModelId key, when the app starts); the installer adds the Start-menu
    shortcut, and the uninstaller removes both. The names must stay the app's own."""
    from searchdesk_desktop.notices.channel import APP_NAME

    nsi = (PACKAGING / "installer.nsi").read_text(encoding="utf-8")
    key = f"Software\\Classes\\AppUserModelId\\{APP_NAME}"
    assert f'!define AUMID_KEY "{key}"' in nsi
    assert 'DeleteRegKey HKCU "${AUMID_KEY}"' in nsi
    assert 'CreateShortcut "$SMPROGRAMS\\${APP}.lnk" "$INSTDIR\\searchdesk.exe"' in nsi
    assert 'Delete "$SMPROGRAMS\\${APP}.lnk"' in nsi
    assert '!define APP "SearchDesk"' in nsi and APP_NAME == "SearchDesk"
