"""What each release build says about its own signature, for the release notes to repeat.

Why a file: the build script is the only one that knows whether it signed with a real identity, signed ad
hoc, or not at all, and a release built without the signing secrets must still be labelled as such. Each
build writes dist/signing-<system>.json beside its files; packaging/release.py reads them all into the
draft release's notes, so no workflow step has to guess.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import asdict, dataclass
from pathlib import Path

from buildlib import DIST, Runner

DEVELOPER_ID = "Developer ID"  # macOS: signed with a Developer ID Application certificate
AD_HOC = "ad hoc"  # macOS: `codesign --sign -`, no identity, never notarised
ARTIFACT_SIGNING = "Azure Artifact Signing"  # Windows
CERTIFICATE = "code-signing certificate"  # Windows: a .pfx or a certificate in the store
UNSIGNED = "unsigned"

SYSTEMS = {"darwin": "macOS", "win32": "Windows", "linux": "Linux"}


#: What each system's prompt names when it cannot name a publisher (the words a person sees there).
UNIDENTIFIED_DEVELOPER = "unidentified developer"  # macOS, for an app without a Developer ID (ad hoc)
UNKNOWN_PUBLISHER = "Unknown publisher"  # Windows SmartScreen, for a file with no signature
#: A Developer ID certificate's common name: "Developer ID Application: <name> (<team id>)".
DEVELOPER_ID_NAME = re.compile(r"^Developer ID Application:\s*(?P<name>.+?)(?:\s*\([A-Z0-9]{10}\))?$")


def developer_name(identity: str) -> str:
    """The name macOS shows for a Developer ID identity: the certificate's name without its kind and team id."""
    match = DEVELOPER_ID_NAME.match(identity.strip())
    return match.group("name") if match else identity.strip()


def subject_fields(subject: str) -> list[tuple[str, str]]:
    """(attribute, value) for each part of a certificate's subject as Windows writes it ("CN=Example Ltd,
    O=Example Ltd, C=GB"): a value holding a comma is quoted, a quote inside one doubled
    ('CN="Example, Inc."'); a backslash escapes the next character (RFC 4514's style) as well."""
    fields: list[tuple[str, str]] = []
    part: list[str] = []
    quoted = False
    chars = iter(subject)
    for ch in chars:
        if ch == "\\":
            part.append(next(chars, ""))
        elif ch == '"':
            part.append("\0")  # a quote mark, taken out below; two in a row inside quotes are one "
            quoted = not quoted
        elif ch in ",;" and not quoted:
            fields.append(_field("".join(part)))
            part = []
        else:
            part.append(ch)
    if "".join(part).strip():
        fields.append(_field("".join(part)))
    return [f for f in fields if f[0]]


def _field(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "\0":  # a quoted value: its own quotes go
        value = value[1:-1]
    value = value.replace("\0\0", '"').replace("\0", "")
    return name.replace("\0", "").strip().upper(), value


def windows_publisher(subject: str) -> str:
    """Who signed, from the signing certificate's subject: its common name (CN=), the name of the holder the
    certificate authority (or Artifact Signing) verified, which Windows' prompts name as the publisher.
    "" when the subject has none (the notes then say "the name in the signing certificate")."""
    return next((value for name, value in subject_fields(subject) if name == "CN"), "")


#: PowerShell's own reading of a file's Authenticode signature (Get-AuthenticodeSignature, in every Windows
#: PowerShell): the signing certificate's subject, percent-encoded so that a name in any script reaches
#: Python intact whatever the console's code page. The file's path comes in through the environment.
#: https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.security/get-authenticodesignature
SIGNER_SUBJECT_PS = (
    "$s = Get-AuthenticodeSignature -LiteralPath $env:SEARCHDESK_SIGNED_FILE; "
    "if ($s.SignerCertificate) { [Uri]::EscapeDataString($s.SignerCertificate.Subject) }"
)


def publisher_from_powershell(output: str) -> str:
    """windows_publisher() of what SIGNER_SUBJECT_PS printed ("" for an unsigned file: it prints nothing)."""
    return windows_publisher(urllib.parse.unquote(output.strip()))


@dataclass(frozen=True)
class Status:
    system: str  # darwin / win32 / linux
    signature: str  # one of the constants above
    notarised: bool  # macOS only: Apple's notary service accepted it and the ticket is stapled
    files: list[str]  # file names in dist/
    #: Who signed, as the build knows it: macOS the Developer ID's name, Windows the certificate's subject
    #: name ("" when the build could not read it). Additive: older status files have none.
    publisher: str = ""

    def shown_publisher(self) -> str:
        """The publisher this system's prompt will name for these files ("" where none is shown: Linux).

        Apple: an app from an "identified developer" carries a Developer ID, one without is from an
        unidentified developer (support.apple.com/guide/mac-help/mh40616). Microsoft: SmartScreen shows the
        signing certificate's publisher, or "Unknown publisher" for an unsigned file."""
        if self.system == "darwin":
            if self.signature == DEVELOPER_ID:
                return self.publisher or "the Developer ID name in the app's signature"
            return UNIDENTIFIED_DEVELOPER
        if self.system == "win32":
            if self.signature == UNSIGNED:
                return UNKNOWN_PUBLISHER
            return self.publisher or "the name in the signing certificate"
        return ""

    def label(self) -> str:
        """One line for a person reading the release page."""
        name = SYSTEMS[self.system]
        if self.system == "darwin":
            if self.notarised:
                return f"{name}: signed with a Developer ID and notarised by Apple."
            return f"{name}: signed ad hoc, not notarised (macOS asks you to allow it in Privacy & Security)."
        if self.signature == UNSIGNED:
            return (
                f"{name}: unsigned (Windows shows \u201cUnknown publisher\u201d)."
                if self.system == "win32"
                else (f"{name}: no signature (Linux packages here carry none; check SHA256SUMS).")
            )
        return f"{name}: signed ({self.signature})."


def path_for(system: str, dist: Path = DIST) -> Path:
    return dist / f"signing-{system}.json"


def record(
    run: Runner, system: str, *, signature: str, notarised: bool, files: list[Path], publisher: str = ""
) -> Status:
    """Write this build's status (not in a dry run) and say it. `publisher`: who signed (`Status.publisher`)."""
    status = Status(system, signature, notarised, [f.name for f in files], publisher)
    run.say(f"signing: {status.label()}")
    if not run.dry_run:
        path = path_for(system)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(status), indent=2) + "\n", encoding="utf-8")
    return status


def load_all(folder: Path) -> list[Status]:
    """Every status file under `folder` (the release job downloads each system's files into one tree)."""
    found = []
    for path in sorted(folder.rglob("signing-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        found.append(
            Status(
                str(data["system"]),
                str(data["signature"]),
                bool(data["notarised"]),
                list(data["files"]),
                str(data.get("publisher", "")),
            )
        )
    return found
