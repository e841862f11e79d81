"""Windows: every file the app loads as code is signed, listed from the frozen folders (issue 35).

Smart App Control blocks an unsigned DLL or .pyd even inside a signed app, and the release used to sign
three .exe files. build_windows.pe_files lists what signtool signs; here it is given a real folder laid
out as PyInstaller lays out a Windows build (upper-case suffixes included, as Windows' own DLLs have).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import build_windows  # noqa: E402


def touch(root: Path, *names: str) -> None:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"MZ")


def test_every_exe_dll_and_pyd_in_both_folders_is_listed(tmp_path: Path) -> None:
    app, server = tmp_path / "SearchDesk", tmp_path / "searchdesk-server"
    code = [
        "SearchDesk/searchdesk.exe",
        "SearchDesk/searchdesk-server.exe",
        "SearchDesk/_internal/python311.dll",
        "SearchDesk/_internal/VCRUNTIME140.DLL",
        "SearchDesk/_internal/PySide6/QtCore.pyd",
        "SearchDesk/_internal/PySide6/Qt6Core.dll",
        "SearchDesk/_internal/PySide6/plugins/platforms/qwindows.dll",
        "SearchDesk/_internal/pydantic_core/_pydantic_core.cp311-win_amd64.pyd",
        "SearchDesk/_internal/_ssl.PYD",
        "searchdesk-server/searchdesk-server.exe",
        "searchdesk-server/_internal/python311.dll",
    ]
    data = [
        "SearchDesk/_internal/base_library.zip",
        "SearchDesk/_internal/PySide6/qt.conf",
        "SearchDesk/_internal/certifi/cacert.pem",
        "SearchDesk/_internal/searchdesk_desktop/resources/icon.png",
        "SearchDesk/_internal/dll-notes.txt",
    ]
    touch(tmp_path, *code, *data)
    listed = build_windows.pe_files(app, server)
    assert [p.relative_to(tmp_path).as_posix() for p in listed] == sorted(code)


def test_signing_is_batched_under_windows_command_line_limit(tmp_path: Path) -> None:
    """signtool gets the files in batches, each followed by its verification; none is left out."""
    from buildlib import Runner

    said: list[str] = []

    class Recording(Runner):
        def say(self, text: str) -> None:
            said.append(text)

    touch(tmp_path, *(f"_internal/m{i:03}.pyd" for i in range(95)))
    files = build_windows.pe_files(tmp_path)
    how = build_windows.Signer("certificate", ("sign", "/fd", "SHA256"))
    build_windows.sign(Recording(dry_run=True), how, files)
    signed = [line for line in said if " sign /fd SHA256 " in line]
    assert len(signed) == 3 and all(len(line) < 32_000 for line in said)
    assert sum(line.count(".pyd") for line in signed) == 95
