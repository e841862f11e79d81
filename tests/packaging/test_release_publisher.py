"""The release notes name the publisher each system's prompt will show for these files, as the build recorded
who signed: macOS the Developer ID's name (or "unidentified developer" for an ad-hoc signature), Windows the
certificate's subject name (or "Unknown publisher" unsigned); Linux shows none. The pages send a person to
the release page for exactly this (docs/before-you-install.md, the setup pages)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

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
