"""Step 2's evidence that Claude Desktop is on this computer: the program where its installer puts it, its
settings folder from before SearchDesk wrote there, or a server it started that connected. A folder
SearchDesk created itself is no evidence. Each system's places, with the file system faked at its
boundary (macOS and Windows never ran here)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

import pytest

from searchdesk_desktop.claude import found as claude_found
from searchdesk_desktop.claude.found import Evidence


def run(system: str, files: Sequence[str] = (), dirs: dict[str, list[str]] | None = None, **kw: object) -> object:
    there = {str(PureWindowsPath(f)) if system == "win32" else f for f in files}
    listing = {str(PureWindowsPath(k)) if system == "win32" else k: v for k, v in (dirs or {}).items()}
    home: PurePath = PureWindowsPath("C:/Users/alex") if system == "win32" else PurePosixPath("/home/alex")
    env = {"LOCALAPPDATA": "C:\\Users\\alex\\AppData\\Local"} if system == "win32" else {}
    args = {"settings_predated": False, "connected": False, "which": lambda name: None, **kw}
    return claude_found.find(
        system=system,
        env=env,
        home=home,
        exists=lambda p: str(p) in there,
        list_dir=lambda p: listing.get(str(p), []),
        **args,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("system", ["darwin", "win32", "linux"])
def test_nothing_found_is_no_tick(system: str) -> None:
    assert run(system) is None


def test_each_systems_program_counts() -> None:
    assert run("darwin", ["/Applications/Claude.app"]).evidence is Evidence.PROGRAM  # type: ignore[attr-defined]
    assert run("darwin", ["/home/alex/Applications/Claude.app"]) is not None
    assert run("win32", ["C:/Users/alex/AppData/Local/AnthropicClaude/claude.exe"]) is not None
    msix = run("win32", dirs={"C:/Users/alex/AppData/Local/Packages": ["Claude_pzs8sxrjxfjjc", "Other_1"]})
    assert msix is not None and "Claude_pzs8sxrjxfjjc" in msix.where  # type: ignore[attr-defined]
    assert run("linux", ["/usr/share/applications/claude-desktop.desktop"]) is not None
    assert run("linux", which=lambda name: "/usr/bin/claude-desktop" if name == "claude-desktop" else None) is not None
    # A Mac's places are not a Linux computer's.
    assert run("linux", ["/Applications/Claude.app"]) is None


def test_a_settings_folder_counts_only_from_before_searchdesk_wrote_there() -> None:
    assert run("linux", settings_predated=True).evidence is Evidence.SETTINGS  # type: ignore[attr-defined]
    assert run("linux", settings_predated=False) is None


def test_a_server_claude_desktop_started_counts_first() -> None:
    assert run("linux", connected=True).evidence is Evidence.CONNECTED  # type: ignore[attr-defined]


def test_on_this_computer_with_nothing_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path / "system"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert claude_found.on_this_computer(settings_predated=False, connected=False, home=tmp_path) is None
    (tmp_path / "share" / "applications").mkdir(parents=True)
    (tmp_path / "share" / "applications" / "claude-desktop.desktop").write_text("[Desktop Entry]\n")
    found = claude_found.on_this_computer(settings_predated=False, connected=False, home=tmp_path)
    assert found is not None and found.evidence is Evidence.PROGRAM
