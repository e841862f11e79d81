"""paths.py: where the socket lives, and the folder / peer checks both ends share."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from searchdesk_server.agent import paths
from tests.agentref.testing import NOBODY, needs_root
from tests.clock import Clock

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets and folder modes")


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# --------------------------------------------------------------------------------------------------
# Where


def test_the_variable_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SEARCHDESK_AGENT_SOCKET", str(tmp_path / "a.sock"))
    assert paths.socket_path() == str(tmp_path / "a.sock")
    monkeypatch.setenv("SEARCHDESK_AGENT_SOCKET", "~/x.sock")
    assert paths.socket_path() == os.path.expanduser("~/x.sock")


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS has its own place (the test below)")
def test_default_is_agent_sock_in_the_runtime_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.delenv("SEARCHDESK_AGENT_SOCKET", raising=False)
    assert paths.socket_path() == str(runtime / "searchdesk" / "agent.sock")


MAC_SOCKET = ("Library", "Application Support", "searchdesk", "run", "agent.sock")


def test_macos_keeps_the_socket_in_application_support_not_in_caches(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Both ends, from HOME alone: the app's listener and the server's client resolve one place, out of
    ~/Library/Caches (which cleaners empty); XDG variables Claude Desktop may not pass do not move it."""
    from searchdesk_server import config
    from searchdesk_server.agent.client import AgentClient

    home = Path(tempfile.mkdtemp(prefix="sdmac-"))  # short: socket paths are limited to ~100 bytes
    (home / "Library").mkdir(mode=0o700)
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    monkeypatch.delenv("SEARCHDESK_AGENT_SOCKET", raising=False)
    expected = str(home.joinpath(*MAC_SOCKET))
    assert paths.socket_path() == expected
    assert "Caches" not in expected
    server_config = config.load({"HOME": str(home)})
    assert server_config.agent_socket is None and AgentClient(server_config.agent_socket).path == expected
    bound = paths.listen_unix(paths.socket_path(), 4)  # the app's side: its own folder, made 0700
    try:
        assert mode(Path(expected).parent) == 0o700
        paths.check_folder(Path(expected).parent)  # and the server's check passes
    finally:
        paths.release(bound)
        shutil.rmtree(home, ignore_errors=True)


def test_the_macos_place_fits_a_socket_path_for_a_long_user_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setenv("HOME", "/Users/" + "n" * 42)
    monkeypatch.delenv("SEARCHDESK_AGENT_SOCKET", raising=False)
    assert len(os.fsencode(paths.socket_path())) <= 103  # sockaddr_un.sun_path is 104 bytes with its NUL


def test_windows_uses_a_named_pipe_per_user(monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the naming can be checked here; the pipe itself (and its DACL) is the app's, on Windows.
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.delenv("SEARCHDESK_AGENT_SOCKET", raising=False)
    assert paths.pipe_name("Ana María") == r"\\.\pipe\searchdesk-agent-Ana_Mar_a"
    assert paths.socket_path().startswith(r"\\.\pipe\searchdesk-agent-")
    monkeypatch.setenv("SEARCHDESK_AGENT_SOCKET", "my-pipe")
    assert paths.socket_path() == r"\\.\pipe\my-pipe"


# --------------------------------------------------------------------------------------------------
# The folder


def test_ensure_folder_creates_0700_whatever_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    old = os.umask(0o022)
    try:
        paths.ensure_folder(target)
    finally:
        os.umask(old)
    assert mode(target) == 0o700 and mode(tmp_path / "a") == 0o700
    paths.check_folder(target)


def test_a_missing_folder_is_not_an_error_of_trust(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        paths.check_folder(tmp_path / "nope")


@pytest.mark.parametrize("bad_mode", [0o755, 0o750, 0o701, 0o710, 0o600, 0o777])
def test_only_mode_0700_is_trusted_and_nothing_is_chmod_ed(tmp_path: Path, bad_mode: int) -> None:
    folder = tmp_path / "sd"
    folder.mkdir()
    os.chmod(folder, bad_mode)
    with pytest.raises(paths.UntrustedFolder, match=f"{bad_mode:04o}"):
        paths.check_folder(folder)
    with pytest.raises(paths.UntrustedFolder):
        paths.ensure_folder(folder)
    assert mode(folder) == bad_mode


def test_a_symlink_is_refused_even_to_a_good_folder(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(paths.UntrustedFolder, match="symbolic link"):
        paths.check_folder(tmp_path / "link")


def test_a_file_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(paths.UntrustedFolder, match="not a folder"):
        paths.check_folder(tmp_path / "f")


@needs_root
def test_another_users_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "sd"
    folder.mkdir(mode=0o700)
    os.chown(folder, NOBODY, NOBODY)
    with pytest.raises(paths.UntrustedFolder, match="belongs to user id 65534"):
        paths.check_folder(folder)


def test_a_parent_others_may_write_is_refused_unless_sticky(tmp_path: Path) -> None:
    parent = tmp_path / "shared"
    parent.mkdir()
    folder = parent / "sd"
    folder.mkdir(mode=0o700)
    os.chmod(parent, 0o777)
    with pytest.raises(paths.UntrustedFolder, match="other users may write"):
        paths.check_folder(folder)
    os.chmod(parent, 0o1777)  # like /tmp: nobody may rename what is ours
    paths.check_folder(folder)


@needs_root
def test_a_parent_of_another_user_is_refused(tmp_path: Path) -> None:
    parent = tmp_path / "theirs"
    parent.mkdir(mode=0o755)
    folder = parent / "sd"
    folder.mkdir(mode=0o700)
    os.chown(parent, NOBODY, NOBODY)
    with pytest.raises(paths.UntrustedFolder, match="belongs to another user"):
        paths.check_folder(folder)


@needs_root
def test_a_link_on_the_way_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "sd").mkdir(parents=True, mode=0o700)
    os.chmod(real, 0o755)
    link = tmp_path / "via"
    link.symlink_to(real)
    os.lchown(link, NOBODY, NOBODY)
    with pytest.raises(paths.UntrustedFolder, match="link"):
        paths.check_folder(link / "sd")


@pytest.fixture
def no_xdg(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """XDG_RUNTIME_DIR unset and the temp folder a private one, so platformdirs falls back into it."""
    if os.path.exists(f"/run/user/{os.geteuid()}"):
        pytest.skip("/run/user/<uid> exists here, so platformdirs would not fall back to the temp folder")
    temp = Path(tempfile.mkdtemp(prefix="sdtmp-"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv("SEARCHDESK_AGENT_SOCKET", raising=False)
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    yield temp
    shutil.rmtree(temp, ignore_errors=True)


def test_the_temp_fallback_is_created_private(no_xdg: Path) -> None:
    path = Path(paths.socket_path())
    assert path == no_xdg / f"runtime-{os.geteuid()}" / "searchdesk" / "agent.sock"
    paths.prepare_listener(path)
    assert mode(path.parent) == 0o700 and mode(path.parent.parent) == 0o700


@needs_root
def test_a_temp_fallback_somebody_else_created_first_is_refused(no_xdg: Path) -> None:
    squatted = no_xdg / f"runtime-{os.geteuid()}"
    squatted.mkdir(mode=0o777)
    os.chmod(squatted, 0o777)
    os.chown(squatted, NOBODY, NOBODY)
    with pytest.raises(paths.UntrustedFolder):
        paths.prepare_listener(paths.socket_path())
    assert not (squatted / "searchdesk").exists()
    assert mode(squatted) == 0o777


# --------------------------------------------------------------------------------------------------
# The socket file


def test_a_stale_socket_is_removed(tmp_path: Path) -> None:
    folder = tmp_path / "sd"
    folder.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(folder / "agent.sock"))
    stale.close()
    paths.prepare_listener(folder / "agent.sock")
    assert not (folder / "agent.sock").exists()


def test_a_live_listener_is_not_displaced(tmp_path: Path) -> None:
    folder = tmp_path / "sd"
    folder.mkdir(mode=0o700)
    live = socket.socket(socket.AF_UNIX)
    live.bind(str(folder / "agent.sock"))
    live.listen()
    try:
        with pytest.raises(paths.AlreadyListening):
            paths.prepare_listener(folder / "agent.sock")
        assert (folder / "agent.sock").exists()
    finally:
        live.close()


def test_something_else_at_the_socket_path_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "sd"
    folder.mkdir(mode=0o700)
    (folder / "agent.sock").write_text("mine")
    with pytest.raises(paths.UntrustedFolder, match="not a socket"):
        paths.prepare_listener(folder / "agent.sock")
    assert (folder / "agent.sock").read_text() == "mine"


# --------------------------------------------------------------------------------------------------
# The peer


def test_peer_uid_of_our_own_socket_is_ours() -> None:
    left, right = socket.socketpair(socket.AF_UNIX)
    try:
        assert paths.peer_supported()
        assert paths.peer_uid(left) == os.geteuid()
        assert paths.trusted_peer(right)
    finally:
        left.close()
        right.close()


def test_an_unknown_peer_is_not_trusted_where_the_os_could_say() -> None:
    class Broken:
        def getsockopt(self, level: int, optname: int, buflen: int, /) -> bytes:
            raise OSError("not a socket")

    assert paths.peer_uid(Broken()) is None
    assert not paths.trusted_peer(Broken())


# --------------------------------------------------------------------------------------------------
# Keeping the socket at its path (the listener runs Keeper.check every KEEP_EVERY_S)


@pytest.fixture
def kept(tmp_path: Path) -> Iterator[tuple[paths.Keeper, Path, Clock]]:
    path = tmp_path / "sd" / "agent.sock"
    clock = Clock()
    keeper = paths.Keeper(paths.listen_unix(path, 4), 4, clock)
    first = keeper.bound
    yield keeper, path, clock
    if keeper.bound is not first:
        first.sock.close()
    paths.release(keeper.bound)


def accepts(path: Path) -> bool:
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(1)
            s.connect(str(path))
        return True
    except OSError:
        return False


def file_id(path: Path) -> tuple[int, int]:
    info = os.lstat(path)
    return (info.st_dev, info.st_ino)


def test_the_keeper_holds_its_own_socket(kept: tuple[paths.Keeper, Path, Clock]) -> None:
    keeper, path, _ = kept
    before = keeper.bound
    assert keeper.check() is paths.Kept.HELD and keeper.bound is before
    assert mode(path) == 0o600 and file_id(path) == before.file


def test_a_removed_socket_is_bound_again_at_the_same_path(kept: tuple[paths.Keeper, Path, Clock]) -> None:
    keeper, path, _ = kept
    old = keeper.bound
    path.unlink()
    assert not paths.holds(old)
    assert keeper.check() is paths.Kept.RESTORED
    assert keeper.bound.path == str(path) and keeper.bound is not old and paths.holds(keeper.bound)
    assert accepts(path)
    assert keeper.check() is paths.Kept.HELD


def test_a_removed_folder_is_made_again_0700(kept: tuple[paths.Keeper, Path, Clock]) -> None:
    keeper, path, _ = kept
    shutil.rmtree(path.parent)
    old = os.umask(0o022)
    try:
        assert keeper.check() is paths.Kept.RESTORED
    finally:
        os.umask(old)
    assert mode(path.parent) == 0o700 and accepts(path)


def test_a_folder_made_again_by_somebody_else_with_another_mode_is_not_chmod_ed_into_use(
    kept: tuple[paths.Keeper, Path, Clock],
) -> None:
    keeper, path, _ = kept
    shutil.rmtree(path.parent)
    path.parent.mkdir()
    os.chmod(path.parent, 0o755)
    assert keeper.check() is paths.Kept.BLOCKED
    assert mode(path.parent) == 0o755 and not path.exists()


def test_a_file_in_the_sockets_place_is_left_alone_until_it_is_gone(kept: tuple[paths.Keeper, Path, Clock]) -> None:
    keeper, path, _ = kept
    other = path.with_name("other")
    other.write_text("theirs")
    os.rename(other, path)
    assert keeper.check() is paths.Kept.BLOCKED
    assert keeper.check() is paths.Kept.BLOCKED
    assert path.read_text() == "theirs"
    path.unlink()
    assert keeper.check() is paths.Kept.RESTORED and accepts(path)


def test_a_live_listener_in_the_sockets_place_keeps_it_and_is_asked_only_now_and_then(
    kept: tuple[paths.Keeper, Path, Clock],
) -> None:
    keeper, path, clock = kept
    live = socket.socket(socket.AF_UNIX)
    live.bind(str(path.with_name("other")))
    live.listen(8)
    live.setblocking(False)
    os.rename(path.with_name("other"), path)
    theirs = file_id(path)

    def probes() -> int:
        count = 0
        with contextlib.suppress(BlockingIOError):
            while True:
                live.accept()[0].close()
                count += 1
        return count

    try:
        assert keeper.check() is paths.Kept.TAKEN and probes() == 1
        for _ in range(5):  # every second, for a while: not one more connection to it
            clock.now += paths.KEEP_EVERY_S
            assert keeper.check() is paths.Kept.TAKEN
        assert probes() == 0
        clock.now += paths.TAKEN_RETRY_S
        assert keeper.check() is paths.Kept.TAKEN and probes() == 1
        assert file_id(path) == theirs
    finally:
        live.close()  # it crashed: its socket file stays, and nobody answers there
    clock.now += paths.TAKEN_RETRY_S
    assert keeper.check() is paths.Kept.RESTORED and paths.holds(keeper.bound) and accepts(path)


def test_a_stale_socket_of_ours_in_the_place_is_replaced(kept: tuple[paths.Keeper, Path, Clock]) -> None:
    keeper, path, _ = kept
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path.with_name("other")))
    stale.close()
    os.rename(path.with_name("other"), path)
    assert keeper.check() is paths.Kept.RESTORED and accepts(path)


def test_release_removes_only_the_socket_file_it_made(tmp_path: Path) -> None:
    path = tmp_path / "sd" / "agent.sock"
    paths.release(paths.listen_unix(path, 4))
    assert not path.exists()
    bound = paths.listen_unix(path, 4)
    other = path.with_name("other")
    other.write_text("theirs")
    os.rename(other, path)
    paths.release(bound)
    assert path.read_text() == "theirs"


def test_binding_never_replaces_what_appeared_after_the_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sd" / "agent.sock"
    checked = paths.prepare_listener

    def then_somebody_is_faster(socket_file: str | os.PathLike[str]) -> None:
        checked(socket_file)
        path.write_text("theirs")

    monkeypatch.setattr(paths, "prepare_listener", then_somebody_is_faster)
    with pytest.raises(OSError):
        paths.listen_unix(path, 4)
    assert path.read_text() == "theirs"
