"""Editing claude_desktop_config.json: only our entry changes, anything odd is left untouched."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path, PureWindowsPath

import pytest

from searchdesk_desktop.claude import config_file as cc

OTHER = {"command": "/usr/bin/other-server", "args": ["--x"], "env": {"TOKEN": "keep-me"}}


@pytest.fixture
def server(tmp_path: Path) -> cc.ServerCommand:
    exe = tmp_path / "bin" / "searchdesk-server"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    return cc.ServerCommand(str(exe))


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    return tmp_path / "Claude" / cc.CONFIG_NAME


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_missing_file_is_created(cfg: Path, server: cc.ServerCommand) -> None:
    change = cc.add(cfg, server, cc.ServerSettings(read_only=True, site_url="sc-domain:example.com"))
    assert change.changed and change.backup is None
    entry = load(cfg)["mcpServers"]["searchdesk"]
    assert entry == {
        "command": server.command,
        "args": [],
        "env": {"GSC_READ_ONLY": "true", "SEARCHDESK_ASK_IN_APP": "true", "GSC_SITE_URL": "sc-domain:example.com"},
    }
    assert cc.check(cfg, server).state is cc.EntryState.OK


@pytest.mark.parametrize("content", [b"", b"  \n"])
def test_empty_file_is_treated_as_empty_settings(cfg: Path, server: cc.ServerCommand, content: bytes) -> None:
    cfg.parent.mkdir()
    cfg.write_bytes(content)
    cc.add(cfg, server, cc.ServerSettings())
    assert list(load(cfg)["mcpServers"]) == ["searchdesk"]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"mcpServers": {"a": 1,}', "not valid JSON (line 1"),
        (b"[1, 2]", "not an object (it holds a single value or a list, not settings)"),
        (b'{"mcpServers": []}', '"mcpServers" that is not an object'),
        (b'{"a": 1, "a": 2}', "key written twice"),
        (b"\xff\xfe{}", "not UTF-8"),
    ],
)
def test_invalid_file_is_left_byte_identical(cfg: Path, server: cc.ServerCommand, content: bytes, reason: str) -> None:
    cfg.parent.mkdir()
    cfg.write_bytes(content)
    before = os.stat(cfg).st_mtime_ns
    with pytest.raises(cc.InvalidConfig) as info:
        cc.add(cfg, server, cc.ServerSettings())
    assert reason in str(info.value)
    assert str(cfg) in str(info.value)
    assert cfg.read_bytes() == content
    assert os.stat(cfg).st_mtime_ns == before
    assert sorted(p.name for p in cfg.parent.iterdir()) == [cc.CONFIG_NAME]  # no temp, no backup
    assert cc.check(cfg, server).state is cc.EntryState.INVALID_FILE
    with pytest.raises(cc.InvalidConfig):
        cc.remove(cfg)
    assert cfg.read_bytes() == content


def test_other_servers_and_keys_kept(cfg: Path, server: cc.ServerCommand) -> None:
    cfg.parent.mkdir()
    original = {
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {"other": OTHER, "zeta": {"command": "z", "unknown": [1, 2.5, None, True]}},
        "preferences": {"nested": {"deep": "é ✓"}},
    }
    cfg.write_text(json.dumps(original))
    cfg.chmod(0o640)
    change = cc.add(cfg, server, cc.ServerSettings(groups=("sites", "analytics")))
    after = load(cfg)
    assert after["globalShortcut"] == original["globalShortcut"]
    assert after["preferences"] == original["preferences"]
    assert after["mcpServers"]["other"] == OTHER
    assert after["mcpServers"]["zeta"] == original["mcpServers"]["zeta"]
    assert list(after["mcpServers"]) == ["other", "zeta", "searchdesk"]
    assert after["mcpServers"]["searchdesk"]["env"]["GSC_ALLOW_TOOLS"] == "sites,analytics"
    assert change.backup is not None and json.loads(change.backup.read_text()) == original
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o640
    # Adding again with the same settings writes nothing.
    assert not cc.add(cfg, server, cc.ServerSettings(groups=("sites", "analytics"))).changed
    # Remove takes out only ours.
    assert cc.remove(cfg).changed
    assert load(cfg) == original


def test_concurrent_change_is_merged(cfg: Path, server: cc.ServerCommand) -> None:
    cfg.parent.mkdir()
    cfg.write_text(json.dumps({"mcpServers": {"other": OTHER}}))
    calls = []

    def someone_else_writes() -> None:
        if not calls:
            cfg.write_text(json.dumps({"mcpServers": {"other": OTHER, "late": {"command": "l"}}, "x": 1}))
        calls.append(1)

    cc.add(cfg, server, cc.ServerSettings(), _before_replace=someone_else_writes)
    after = load(cfg)
    assert after["x"] == 1
    assert set(after["mcpServers"]) == {"other", "late", "searchdesk"}
    assert len(calls) == 2


def test_file_that_keeps_changing_is_left_alone(cfg: Path, server: cc.ServerCommand) -> None:
    cfg.parent.mkdir()
    cfg.write_text("{}")
    n = iter(range(100))

    def keeps_writing() -> None:
        cfg.write_text(json.dumps({"n": next(n)}))

    with pytest.raises(cc.ConcurrentChange):
        cc.add(cfg, server, cc.ServerSettings(), _before_replace=keeps_writing)
    assert load(cfg) == {"n": 1}
    assert sorted(p.name for p in cfg.parent.iterdir()) == [cc.CONFIG_NAME]


def test_moved_executable_is_detected_and_repaired(cfg: Path, server: cc.ServerCommand, tmp_path: Path) -> None:
    cc.add(cfg, server, cc.ServerSettings(read_only=True))
    moved = tmp_path / "Applications" / "searchdesk-server"
    moved.parent.mkdir()
    os.replace(server.command, moved)
    check = cc.check(cfg, server)
    assert check.state is cc.EntryState.BROKEN
    new = cc.ServerCommand(str(moved))
    assert cc.check(cfg, new).state is cc.EntryState.BROKEN
    assert cc.repair(cfg, new).changed
    assert cc.check(cfg, new).state is cc.EntryState.OK
    assert load(cfg)["mcpServers"]["searchdesk"]["env"] == {"GSC_READ_ONLY": "true", "SEARCHDESK_ASK_IN_APP": "true"}


def test_other_copy_is_noticed(cfg: Path, server: cc.ServerCommand, tmp_path: Path) -> None:
    cc.add(cfg, server, cc.ServerSettings())
    newer = tmp_path / "v2" / "searchdesk-server"
    newer.parent.mkdir()
    newer.write_text("#!/bin/sh\n")
    newer.chmod(0o755)
    assert cc.check(cfg, cc.ServerCommand(str(newer))).state is cc.EntryState.OTHER_COPY


def test_not_executable_is_broken(cfg: Path, server: cc.ServerCommand) -> None:
    cc.add(cfg, server, cc.ServerSettings())
    Path(server.command).chmod(0o644)
    assert cc.check(cfg, server).state is cc.EntryState.BROKEN


def test_no_file_or_another_servers_entry_reads_absent_and_removes_nothing(cfg: Path, server: cc.ServerCommand) -> None:
    assert cc.check(cfg, server).state is cc.EntryState.ABSENT
    cfg.parent.mkdir()
    cfg.write_text('{"mcpServers": {"other": {}}}')
    assert cc.check(cfg, server).state is cc.EntryState.ABSENT
    assert not cc.remove(cfg).changed


def test_demo_needs_consent_and_never_replaces_real(cfg: Path, server: cc.ServerCommand) -> None:
    demo = cc.ServerSettings(demo=True)
    with pytest.raises(cc.DemoNeedsConsent):
        cc.add(cfg, server, demo)
    assert not cfg.exists()
    cc.add(cfg, server, demo, allow_demo=True)
    assert cc.check(cfg, server).demo
    # A real entry may replace the demo ...
    cc.add(cfg, server, cc.ServerSettings())
    before = cfg.read_bytes()
    # ... but the demo never replaces a real entry.
    with pytest.raises(cc.WouldReplaceRealEntry):
        cc.add(cfg, server, demo, allow_demo=True)
    assert cfg.read_bytes() == before


def test_bom_is_kept(cfg: Path, server: cc.ServerCommand) -> None:
    cfg.parent.mkdir()
    cfg.write_bytes(b"\xef\xbb\xbf{}")
    cc.add(cfg, server, cc.ServerSettings())
    assert cfg.read_bytes().startswith(b"\xef\xbb\xbf{")


def test_windows_paths() -> None:
    env = {"APPDATA": r"C:\Users\Ana\AppData\Roaming", "LOCALAPPDATA": r"C:\Users\Ana\AppData\Local"}
    listing = {
        PureWindowsPath(r"C:\Users\Ana\AppData\Local\Packages"): ["Microsoft.Foo_1", "Claude_pzs8sxrjxfjjc"],
    }
    paths = cc.candidate_paths("win32", env, PureWindowsPath(r"C:\Users\Ana"), lambda p: listing.get(p, []))
    assert paths == [
        PureWindowsPath(
            r"C:\Users\Ana\AppData\Local\Packages\Claude_pzs8sxrjxfjjc\LocalCache\Roaming\Claude"
            r"\claude_desktop_config.json"
        ),
        PureWindowsPath(r"C:\Users\Ana\AppData\Roaming\Claude\claude_desktop_config.json"),
    ]
    # The Store copy wins only when it exists; otherwise the classic file; otherwise the default.
    assert cc.choose(paths, lambda p: p == paths[1]) == paths[1]
    assert cc.choose(paths, lambda p: p in (paths[0], paths[1])) == paths[0]
    assert cc.choose(paths, lambda p: False) == paths[1]
    assert cc.choose(paths, lambda p: p == paths[0].parent) == paths[0]
    # No APPDATA in the environment: derived from the profile folder.
    bare = cc.candidate_paths("win32", {}, PureWindowsPath(r"D:\Profiles\Bo"))
    assert bare == [PureWindowsPath(r"D:\Profiles\Bo\AppData\Roaming\Claude\claude_desktop_config.json")]


def test_mac_and_linux_paths(tmp_path: Path) -> None:
    mac = cc.candidate_paths("darwin", {}, Path("/Users/ana"))
    assert [str(p) for p in mac] == ["/Users/ana/Library/Application Support/Claude/claude_desktop_config.json"]
    lin = cc.candidate_paths("linux", {}, Path("/home/ana"))
    assert [str(p) for p in lin] == ["/home/ana/.config/Claude/claude_desktop_config.json"]
    assert cc.locate({"XDG_CONFIG_HOME": str(tmp_path)}, tmp_path) == tmp_path / "Claude" / cc.CONFIG_NAME


def test_server_command_shapes(tmp_path: Path) -> None:
    exe = tmp_path / "SearchDesk" / "searchdesk.exe"
    frozen = cc.server_command(frozen=True, executable=str(exe), platform="win32")
    assert frozen == cc.ServerCommand(str(exe.parent / "searchdesk-server.exe"))
    dev = cc.server_command(frozen=False, executable=str(tmp_path / "python"), platform="linux")
    assert dev == cc.ServerCommand(str(tmp_path / "python"), ("-m", "searchdesk_server"))
    (tmp_path / "searchdesk-server").write_text("")
    assert cc.server_command(frozen=False, executable=str(tmp_path / "python"), platform="linux").args == ()
