"""What the app folder is made of, and what each cut took out of it.

    python packaging/sizes.py snapshot dist/SearchDesk build/sizes-uncut.json   # after a build with cuts off
    python packaging/sizes.py compare build/sizes-uncut.json dist/SearchDesk     # Markdown, after a normal build

A snapshot lists every file's apparent size and, for each executable, its Python archive's bytes per
top-level package. ``compare`` gives the size of each part before and after, and gives every removed
byte to the cut that removed it (spec_common.CUTS by path, spec_common.PYZ_EXCLUDES by package, and the
libraries no remaining file needs), so each cut is measured, not estimated. `make bundle-sizes` runs the
two builds and writes the result into packaging/MEASUREMENTS.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from buildlib import mib
from spec_common import CUTS, PYZ_EXCLUDES

#: Files a cut makes smaller rather than removes.
SHRUNK = (("libicudata", "ICU data for ICU's own formatting and charset APIs, which nothing here calls"),)

#: Parts of the app folder, by the first matching piece of a file's path.
PARTS = (
    ("Qt translations", ("/Qt/translations/", "PySide6/translations/")),
    ("Qt plugins", ("/Qt/plugins/", "PySide6/plugins/")),
    ("ICU (Unicode data for Qt)", ("libicu",)),
    ("Qt libraries", ("/Qt/lib/", "PySide6/Qt6", "PySide6/lib")),
    ("PySide6 bindings + shiboken6", ("PySide6/", "shiboken6/")),
    ("cryptography", ("cryptography",)),
    ("pydantic", ("pydantic",)),
    ("Python runtime", ("libpython", "python3.", "base_library.zip")),
)
EXECUTABLES = ("searchdesk", "searchdesk-server", "searchdesk.exe", "searchdesk-server.exe")


def part_of(path: str) -> str:
    if path in EXECUTABLES:
        return "the two executables (their Python archives)"
    for name, pieces in PARTS:
        if any(piece in path for piece in pieces):
            return name
    top = path.removeprefix("_internal/")
    return "system libraries copied from the build host" if "/" not in top and ".so" in top else "other Python packages"


def archive_packages(exe: Path) -> dict[str, int]:
    """Compressed bytes per top-level package in an executable's Python archive."""
    from PyInstaller.archive.readers import CArchiveReader, ZlibArchiveReader  # type: ignore[import-untyped]

    reader = CArchiveReader(str(exe))
    name = next(n for n in reader.toc if n.endswith(".pyz"))
    with tempfile.NamedTemporaryFile(suffix=".pyz") as tmp:
        tmp.write(reader.extract(name))
        tmp.flush()
        sizes: Counter[str] = Counter()
        for module, entry in ZlibArchiveReader(tmp.name).toc.items():
            sizes[module.split(".")[0]] += entry[2]
    return dict(sizes)


def snapshot(folder: Path) -> dict[str, object]:
    files = {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*") if p.is_file()}
    files = {k: v for k, v in files.items() if not (folder / k).is_symlink()}
    archives = {name: archive_packages(folder / name) for name in EXECUTABLES if (folder / name).is_file()}
    return {"files": files, "archives": archives}


def by_part(files: dict[str, int]) -> Counter[str]:
    parts: Counter[str] = Counter()
    for path, size in files.items():
        parts[part_of(path)] += size
    return parts


def cut_of(path: str) -> str:
    for cut in CUTS:
        if any(piece in path for piece in cut.parts):
            return cut.what
    return "libraries nothing in the app needs any more (pruned after the cuts above)"


def compare(before: dict[str, object], folder: Path) -> str:
    after = snapshot(folder)
    old: dict[str, int] = before["files"]  # type: ignore[assignment]
    new: dict[str, int] = after["files"]  # type: ignore[assignment]
    removed: Counter[str] = Counter()
    for path, size in old.items():
        if path not in new:
            removed[cut_of(path)] += size
        for piece, what in SHRUNK:
            if piece in path and path in new:
                removed[what] += size - new[path]
    old_archives: dict[str, dict[str, int]] = before["archives"]  # type: ignore[assignment]
    for packages in old_archives.values():
        for package in PYZ_EXCLUDES:
            removed[f"`{package}` left out of the Python archives"] += packages.get(package, 0)
    before_parts, after_parts = by_part(old), by_part(new)
    lines = [
        "| part | before | after |",
        "|---|---|---|",
        *(
            f"| {name} | {mib(before_parts[name])} | {mib(after_parts[name])} |"
            for name, _ in (before_parts + after_parts).most_common()
        ),
        f"| **app folder** | **{mib(sum(old.values()))}** | **{mib(sum(new.values()))}** |",
        "",
        "| cut | saved |",
        "|---|---|",
        *(f"| {what} | {mib(size)} |" for what, size in removed.most_common() if size),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot")
    snap.add_argument("folder", type=Path)
    snap.add_argument("out", type=Path)
    comp = sub.add_parser("compare")
    comp.add_argument("before", type=Path)
    comp.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.command == "snapshot":
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(snapshot(args.folder), indent=1, sort_keys=True), encoding="utf-8")
        return 0
    sys.stdout.write(compare(json.loads(args.before.read_text(encoding="utf-8")), args.folder) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
