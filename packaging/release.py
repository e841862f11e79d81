"""The release's own files and its draft on GitHub: notes from CHANGELOG.md, SHA256SUMS, the SBOMs checked.

    python packaging/release.py notes v0.1.0                # CHANGELOG.md's section for 0.1.0, to stdout
    python packaging/release.py checksums dist/release      # dist/release/SHA256SUMS
    python packaging/release.py draft v0.1.0 dist/release   # all three, then `gh release create --draft`

release.yml's last job runs `draft` on every system's files; each part is also a function the tests call.
The notes are the tag's CHANGELOG section followed by how each system's files are signed, read from the
signing-*.json the build scripts wrote (signing_status.py): a release built without the signing
secrets says so on its page. Each release file that carries a program has its own CycloneDX SBOM
beside it (`<file>.cdx.json`, written in that system's job by packaging/sbom.py from the frozen folder
itself, and attested there with actions/attest-sbom); the draft refuses a file without one.

"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import signing_status
from buildlib import ROOT, BuildError, main_wrapper, sha256, version

CHANGELOG = ROOT / "CHANGELOG.md"
SUMS = "SHA256SUMS"
#: Files in the release folder that are records for this script, not files for people to download.
NOT_PUBLISHED = re.compile(r"^signing-.*\.json$")


#: The release files that carry a program (and so an SBOM each): installers, packages, archives, bundles.
PROGRAM_SUFFIXES = (".dmg", ".exe", ".deb", ".tar.gz", ".mcpb")
#: Where the Linux files' system packages come from; the image is pinned, its packages are not.
DEBIAN_ARCHIVE_NOTE = (
    "The Linux files are built in Debian 12's container image (pinned by digest in release.yml); the system "
    "packages the build installs in it (Python, Qt's libraries, the compilers and tools) come from Debian's "
    "archive at build time, so a rebuild can pick up Debian's later security updates."
)

#: The signed update manifest (packaging/sign_manifest.py) the app's update check reads.
MANIFEST = "update.json"


def tag_version(tag: str) -> str:
    """v1.2.3 -> 1.2.3; anything else is refused (the workflow runs on tags v*)."""
    match = re.fullmatch(r"v(\d+\.\d+\.\d+(?:[-.]?[0-9A-Za-z.]+)?)", tag)
    if not match:
        raise BuildError(f"{tag!r} is not a version tag (v<major>.<minor>.<patch>).")
    return match.group(1)


def changelog_section(tag: str, text: str | None = None) -> str:
    """The body under CHANGELOG.md's `## <version>` heading (whatever follows the number on that line)."""
    wanted = tag_version(tag)
    text = CHANGELOG.read_text(encoding="utf-8") if text is None else text
    lines = text.splitlines()
    start = next(
        (i for i, line in enumerate(lines) if re.match(rf"^## \[?{re.escape(wanted)}\]?(\s|$)", line)),
        None,
    )
    if start is None:
        raise BuildError(f"CHANGELOG.md has no section for {wanted} (a line '## {wanted} ...'); write it first.")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start + 1 : end]).strip() + "\n"


def notes(tag: str, folder: Path | None = None, text: str | None = None) -> str:
    """The release page: the CHANGELOG section, then how each system's files are signed."""
    body = changelog_section(tag, text)
    statuses = signing_status.load_all(folder) if folder else []
    linux_files = [p for p in folder.rglob("*") if p.name.endswith((".deb", ".tar.gz"))] if folder else []
    if linux_files and not any(s.system == "linux" for s in statuses):
        statuses.append(signing_status.Status("linux", signing_status.UNSIGNED, False, [p.name for p in linux_files]))
    if not statuses:
        return body
    lines = ["", "### How these files are signed", ""]
    lines += [f"- {s.label()}" for s in statuses]
    shown = [(signing_status.SYSTEMS[s.system], s.shown_publisher()) for s in statuses if s.shown_publisher()]
    if shown:
        named = "; ".join(f"{system}: \u201c{who}\u201d" for system, who in shown)
        lines += [f"- The publisher your system will name when you open SearchDesk: {named}."]
    lines += ["- Every file is listed in SHA256SUMS and has a build-provenance attestation (`gh attestation verify`)."]
    lines += [
        "- Each installer, package and archive has a CycloneDX SBOM beside it (`<file>.cdx.json`), listing "
        "what that file's app holds, with its own attestation."
    ]
    if linux_files:
        lines += [f"- {DEBIAN_ARCHIVE_NOTE}"]
    if folder and not any(p.name == MANIFEST for p in folder.rglob(MANIFEST)):
        lines += [
            f"- No {MANIFEST} (the release key was not set): SearchDesk's update check will not hear of this release."
        ]
    return body + "\n".join(lines) + "\n"


def published(folder: Path) -> list[Path]:
    """The files people download, sorted by name (the records and SHA256SUMS itself left out)."""
    return sorted(
        (p for p in folder.rglob("*") if p.is_file() and p.name != SUMS and not NOT_PUBLISHED.match(p.name)),
        key=lambda p: p.name,
    )


def checksums(folder: Path) -> Path:
    """SHA256SUMS in `sha256sum -c` format (two spaces, file name only): checked where it is downloaded."""
    files = published(folder)
    if not files:
        raise BuildError(f"{folder} holds no release files.")
    names = [p.name for p in files]
    if len(set(names)) != len(names):
        raise BuildError(f"two release files share a name in {folder}: {sorted(names)}")
    out = folder / SUMS
    out.write_text("".join(f"{sha256(p)}  {p.name}\n" for p in files), encoding="utf-8")
    return out


def missing_sboms(folder: Path) -> list[str]:
    """Release files that carry a program but have no `<file>.cdx.json` beside them (sbom.py writes one
    per file in each system's job, from the frozen folder that file carries)."""
    programs = [p for p in published(folder) if p.name.endswith(PROGRAM_SUFFIXES)]
    return [p.name for p in programs if not p.with_name(p.name + ".cdx.json").is_file()]


def draft_command(tag: str, notes_file: Path, files: list[Path]) -> list[str]:
    """`gh release create` as a draft: nothing is public until a person has checked it and published it."""
    title = f"SearchDesk {tag_version(tag)}"
    return [
        "gh",
        "release",
        "create",
        tag,
        "--draft",
        "--verify-tag",
        "--title",
        title,
        "--notes-file",
        str(notes_file),
        *map(str, files),
    ]


def draft(tag: str, folder: Path, *, dry_run: bool) -> int:
    if tag_version(tag) != version():
        raise BuildError(f"the tag says {tag_version(tag)} but pyproject.toml says {version()}; tag the right commit.")
    lacking = missing_sboms(folder)
    if lacking:
        raise BuildError(f"no SBOM for {', '.join(lacking)}: each system's job writes one (packaging/sbom.py).")
    sums = checksums(folder)
    notes_file = folder.parent / "release-notes.md"
    notes_file.write_text(notes(tag, folder), encoding="utf-8")
    cmd = draft_command(tag, notes_file, [*published(folder), sums])
    print("+ " + subprocess.list2cmdline(cmd), flush=True)
    if dry_run:
        print(notes_file.read_text(encoding="utf-8"))
        return 0
    if shutil.which("gh") is None:
        raise BuildError("gh (GitHub's command-line tool) is needed to create the draft release.")
    return subprocess.run(cmd, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Release notes, SHA256SUMS, the SBOM, and the draft release.")
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("notes").add_argument("tag")
    sub.add_parser("checksums").add_argument("folder", type=Path)
    d = sub.add_parser("draft")
    d.add_argument("tag")
    d.add_argument("folder", type=Path)
    d.add_argument("--dry-run", action="store_true", help="write the files, print the command; create nothing")
    args = parser.parse_args(argv)

    def body() -> int:
        if args.what == "notes":
            sys.stdout.write(notes(args.tag))
        elif args.what == "checksums":
            print(checksums(args.folder))
        else:
            return draft(args.tag, args.folder, dry_run=args.dry_run)
        return 0

    return main_wrapper("release", body)


if __name__ == "__main__":
    raise SystemExit(main())
