"""The release notes name the publisher each system's prompt will show for these files, as the build recorded
who signed: macOS the Developer ID's name (or "unidentified developer" for an ad-hoc signature), Windows the
certificate's subject name (or "Unknown publisher" unsigned); Linux shows none. The pages send a person to
the release page for exactly this (docs/before-you-install.md, the setup pages)."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import release  # noqa: E402
import signing_status  # noqa: E402

CHANGELOG = "# Changelog\n\n## 0.1.0\n\nThe first release.\n"


def write(folder: Path, status: signing_status.Status) -> None:
    where = folder / f"release-{status.system}"
    where.mkdir(parents=True, exist_ok=True)
    (where / f"signing-{status.system}.json").write_text(json.dumps(asdict(status)))


def test_the_notes_name_each_systems_publisher(tmp_path: Path) -> None:
    mac = signing_status.Status("darwin", signing_status.DEVELOPER_ID, True, ["SearchDesk-0.1.0.dmg"], "Example Ltd")
    win = signing_status.Status("win32", signing_status.ARTIFACT_SIGNING, False, ["x.exe"], "Example Ltd")
    write(tmp_path, mac)
    write(tmp_path, win)
    (tmp_path / "release-linux").mkdir()
    (tmp_path / "release-linux" / "searchdesk_0.1.0_amd64.deb").write_bytes(b"deb")
    text = release.notes("v0.1.0", tmp_path, CHANGELOG)
    line = next(x for x in text.splitlines() if x.startswith("- The publisher your system will name"))
    assert line == (
        "- The publisher your system will name when you open SearchDesk: "
        "macOS: \u201cExample Ltd\u201d; Windows: \u201cExample Ltd\u201d."
    )


def test_without_a_signature_the_notes_use_the_systems_own_words(tmp_path: Path) -> None:
    write(
        tmp_path, signing_status.Status("darwin", signing_status.AD_HOC, False, ["SearchDesk-0.1.0-not-notarised.dmg"])
    )
    write(
        tmp_path,
        signing_status.Status("win32", signing_status.UNSIGNED, False, ["SearchDesk-0.1.0-setup-unsigned.exe"]),
    )
    text = release.notes("v0.1.0", tmp_path, CHANGELOG)
    assert "macOS: \u201cunidentified developer\u201d; Windows: \u201cUnknown publisher\u201d." in text


def test_a_developer_id_is_named_as_macos_names_it() -> None:
    assert signing_status.developer_name("Developer ID Application: Example Ltd (ABCDE12345)") == "Example Ltd"
    assert signing_status.developer_name("Example Ltd") == "Example Ltd"


def test_an_older_status_file_without_a_publisher_still_reads(tmp_path: Path) -> None:
    (tmp_path / "signing-win32.json").write_text(
        json.dumps({"system": "win32", "signature": "code-signing certificate", "notarised": False, "files": []})
    )
    (status,) = signing_status.load_all(tmp_path)
    assert status.shown_publisher() == "the name in the signing certificate"


# What (Get-AuthenticodeSignature <file>).SignerCertificate.Subject prints, as Windows writes a subject: two
# recorded from signed files (Get-AuthenticodeSignature | Format-List, SignerCertificate and
# TimeStamperCertificate subjects, as SOS GmbH's JS7 page on signed scripts shows them:
# http://91.250.101.43:8090/pages/viewpage.action?navigatingVersions=true&pageId=108830309), the rest in the
# same form: a comma or a quote inside a value makes Windows quote it, and doubles a quote inside.
@pytest.mark.parametrize(
    ("subject", "publisher"),
    [
        (
            "CN=SOS Software- und Organisations-Service GmbH, O=SOS Software- und Organisations-Service GmbH, "
            "S=Berlin, C=DE",
            "SOS Software- und Organisations-Service GmbH",
        ),
        (
            'CN="Sectigo RSA Time Stamping Signer #4", O=Sectigo Limited, S=Manchester, C=GB',
            "Sectigo RSA Time Stamping Signer #4",
        ),
        ('CN="Example, Inc.", O="Example, Inc.", L=Seattle, S=Washington, C=US', "Example, Inc."),
        ('CN="The ""Best"" Shop Ltd", O=The Best Shop Ltd, C=GB', 'The "Best" Shop Ltd'),
        ("E=owner@example.org, CN=Jane Doe, O=Jane Doe, C=NZ", "Jane Doe"),
        ("CN=Müller & Söhne GmbH, O=Müller & Söhne GmbH, C=DE", "Müller & Söhne GmbH"),
        (r"CN=Example\, Inc., C=US", "Example, Inc."),
        ("O=No Common Name Ltd, C=GB", ""),
        ("", ""),
    ],
)
def test_the_windows_publisher_is_the_certificates_common_name(subject: str, publisher: str) -> None:
    assert signing_status.windows_publisher(subject) == publisher


def test_the_publisher_comes_back_from_powershell_in_any_script() -> None:
    """PowerShell prints the subject percent-encoded ([Uri]::EscapeDataString), so a name outside the
    console's code page reaches the release notes whole; an unsigned file prints nothing."""
    printed = (
        "CN%3DM%C3%BCller%20%26%20S%C3%B6hne%20GmbH%2C%20O%3DM%C3%BCller%20%26%20S%C3%B6hne%20GmbH%2C%20C%3DDE\r\n"
    )
    assert signing_status.publisher_from_powershell(printed) == "Müller & Söhne GmbH"
    assert signing_status.publisher_from_powershell("") == ""
    assert "EscapeDataString($s.SignerCertificate.Subject)" in signing_status.SIGNER_SUBJECT_PS


def test_the_windows_build_reads_the_publisher_back_from_the_signed_installer(tmp_path: Path) -> None:
    """build_windows asks PowerShell about the installer it signed (the file's path through the environment,
    never inside the script) and turns what it prints into the name the status file records."""
    import build_windows
    from buildlib import Runner

    seen: list[tuple[list[str], dict[str, str]]] = []

    class Recorded(Runner):
        def tool(self, name: str, how: str) -> str:
            return name

        def run(
            self,
            cmd: Sequence[str | Path],
            *,
            cwd: Path | None = None,
            env: Mapping[str, str] | None = None,
            capture: bool = False,
        ) -> str:
            seen.append(([str(c) for c in cmd], dict(env or {})))
            return "CN%3D%22Example%2C%20Inc.%22%2C%20O%3D%22Example%2C%20Inc.%22%2C%20C%3DUS\r\n"

    installer = tmp_path / "SearchDesk-0.1.0-setup.exe"
    assert build_windows.signed_publisher(Recorded(), installer) == "Example, Inc."
    ((cmd, env),) = seen
    assert cmd[:4] == ["powershell", "-NoProfile", "-NonInteractive", "-Command"]
    assert "Get-AuthenticodeSignature -LiteralPath $env:SEARCHDESK_SIGNED_FILE" in cmd[4]
    assert env == {"SEARCHDESK_SIGNED_FILE": str(installer)}
