"""Where the journal is, and where the app also looks on Windows: a server Claude Desktop's MSIX package
starts may have its AppData writes redirected into the package's folder. The Windows half is faked here at
its boundary (the platform and %LOCALAPPDATA%); it never ran on Windows."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchdesk_server.journal import paths


def test_the_demo_keeps_its_own_journal_beside_the_real_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    real, demo = paths.journal_path(), paths.journal_path(demo=True)
    assert real == tmp_path / "searchdesk" / "journal.sqlite3"
    assert demo.parent == real.parent and demo != real
    assert paths.seen_path(real) == real.with_name("journal.sqlite3.seen.json")


def test_windows_journals_redirected_into_a_package_are_found(tmp_path: Path) -> None:
    local = tmp_path / "Local"
    claude = local / "Packages" / "Claude_pzs8sxrjxfjjc" / "LocalCache" / "Local" / "searchdesk"
    claude.mkdir(parents=True)
    (claude / "journal.sqlite3").write_bytes(b"")
    (claude / "demo-journal.sqlite3").write_bytes(b"")
    (local / "Packages" / "Other_1" / "LocalCache" / "Local").mkdir(parents=True)  # no journal there
    env = {"LOCALAPPDATA": str(local)}
    assert paths.packaged_journals(env=env, platform="win32") == [claude / "journal.sqlite3"]
    assert paths.packaged_journals(demo=True, env=env, platform="win32") == [claude / "demo-journal.sqlite3"]
    # Nowhere else does a package redirect writes.
    assert paths.packaged_journals(env=env, platform="linux") == []
    assert paths.packaged_journals(env={}, platform="win32") == []
