"""Every download the pages send a person to is one the release job uploads.

The release job collects each system's files by the patterns in packaging/release_build.py's `FILES` (read from
there, not copied), and the build scripts name them (`dmg_name`, `installer_name`, build_linux's tarball and
package names). So: each kind of download the README promises is one of those patterns; every concrete file or
folder name a page writes matches one; and the parts of a name the pages tell a person to look for (a disk
image ending in "not-notarised", an installer ending in "unsigned", a package ending in "_amd64.deb", the
archive's install.sh and uninstall.sh) are what the scripts make.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import build_linux  # noqa: E402
import build_macos  # noqa: E402
import build_windows  # noqa: E402
import release_build  # noqa: E402
import signing_status  # noqa: E402
from buildlib import version  # noqa: E402

#: Every page that tells a person what to download, install, update or remove.
PAGES = [
    "README.md",
    "docs/getting-started.md",
    "docs/before-you-install.md",
    "docs/setup-macos.md",
    "docs/setup-windows.md",
    "docs/setup-linux.md",
    "docs/other-clients.md",
    "docs/every-day.md",
    "docs/privacy.md",
]
#: The kinds of download the README's "Download" line promises, and the release job's pattern for each.
KINDS = {
    "a\n  disk image for Mac": ("macos", "SearchDesk-*.dmg"),
    "an installer for Windows": ("windows", "SearchDesk-*-setup*.exe"),
    "a `.deb` package": ("linux", "searchdesk_*.deb"),
    "an archive for Linux": ("linux", "searchdesk-*-linux-*.tar.gz"),
}
#: A release file's or folder's name as a page writes it (versioned, with its ending).
FILE_NAME = re.compile(
    r"(?<![\w-])((?:SearchDesk|searchdesk)[-_](?:\d+\.\d+\.\d+|<version>)[\w.<>-]*?"
    r"(?:\.dmg|\.exe|\.deb|\.tar\.gz|\.mcpb|-linux-[\w<>]+))(?![\w.])"
)


def text(page: str) -> str:
    return (ROOT / page).read_text(encoding="utf-8")


def uploaded(name: str) -> bool:
    """Is this the name of a file the release job uploads (a tarball's folder: its archive's name)?"""
    concrete = name.replace("<version>", version()).replace("<arch>", build_linux.machine())
    folder = re.search(r"-linux-\w+$", concrete) is not None  # the folder the archive unpacks to
    candidates = [f"{concrete}.tar.gz"] if folder else [concrete]
    patterns = [p for files in release_build.FILES.values() for p in files]
    return any(fnmatch.fnmatch(c, p) for c in candidates for p in patterns)


def test_each_kind_of_download_the_readme_promises_is_uploaded() -> None:
    readme = text("README.md")
    for words, (system, pattern) in KINDS.items():
        assert words in readme, words
        assert pattern in release_build.FILES[system], (system, pattern)


@pytest.mark.parametrize("page", PAGES)
def test_every_file_name_a_page_writes_is_uploaded(page: str) -> None:
    names = FILE_NAME.findall(text(page))
    assert [n for n in names if not uploaded(n)] == []


def test_the_name_finder_finds_names() -> None:
    sample = "run `sudo apt install ./searchdesk_0.1.0_amd64.deb`, or /opt/searchdesk-0.1.0-linux-x86_64/app"
    assert FILE_NAME.findall(sample) == ["searchdesk_0.1.0_amd64.deb", "searchdesk-0.1.0-linux-x86_64"]
    assert not uploaded("searchdesk-0.1.0-linux-x86_64.AppImage") and not uploaded("SearchDesk-0.1.0.pkg")


def test_the_name_parts_the_pages_point_to_are_the_builds() -> None:
    mac, windows, linux = (text(f"docs/setup-{s}.md") for s in ("macos", "windows", "linux"))
    # macOS: the disk image of a build Apple has not notarised ends in not-notarised.
    assert 'name ends in "not-notarised"' in mac
    ad_hoc = build_macos.dmg_name(build_macos.Identity("-"))
    assert ad_hoc.removesuffix(".dmg").endswith("not-notarised")
    assert fnmatch.fnmatch(ad_hoc, "SearchDesk-*.dmg") and "SearchDesk-*.dmg" in release_build.FILES["macos"]
    # Windows: an unsigned installer's name ends in unsigned.
    assert 'name ends in "unsigned"' in windows
    unsigned = build_windows.installer_name(build_windows.Signer(signing_status.UNSIGNED))
    assert unsigned.removesuffix(".exe").endswith("unsigned")
    assert any(fnmatch.fnmatch(unsigned, p) for p in release_build.FILES["windows"])
    # Linux: the package is named by dpkg's architecture (amd64 on the only machine the release builds on).
    assert "`_amd64.deb`" in linux and f"`sudo apt install ./searchdesk_{version()}_amd64.deb`" in linux
    assert "`sudo apt remove searchdesk`" in linux and "Package: searchdesk\n" in build_linux.DEB_CONTROL
    # The archive carries install.sh and uninstall.sh at its top.
    top = "searchdesk-0-linux-x"
    names = {name for name, _, _ in build_linux.members(ROOT / "no-such-app", top)}
    assert {f"{top}/install.sh", f"{top}/uninstall.sh"} <= names
    assert "`./install.sh`" in linux and "`./uninstall.sh`" in linux
