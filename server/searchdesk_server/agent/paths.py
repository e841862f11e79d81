"""Where the agent socket lives, and the trust checks both ends run before they say anything.

The socket hands out Google access tokens and carries a person's yes, so whoever can reach it can act
as the user. On Linux/macOS the defence is the folder: it must be ours, mode 0700, not a symlink, and
below parents nobody else can swap out. A folder that fails is refused, never chmod-ed into use:
a folder somebody else created first (platformdirs falls back to the guessable /tmp/runtime-<uid>
when XDG_RUNTIME_DIR is unset) may already hold their listener. Then each end asks the kernel who is
on the other side (SO_PEERCRED / LOCAL_PEERCRED) and talks only to its own user.

On Windows the socket is the named pipe `\\\\.\\pipe\\searchdesk-agent-<user>`. The app creates it
first (`FILE_FLAG_FIRST_PIPE_INSTANCE`) with an owner and DACL of the user alone, and the server
talks only to a pipe whose owner and serving process run as the current user (`UntrustedPeer`
otherwise). How, and why that way, is in `winpipe`; it is unit-tested with fakes but not run on this
Linux CI.
"""

from __future__ import annotations

import os
import re
import socket
import stat
import struct
import sys
import warnings
from pathlib import Path
from typing import Final, Protocol

from ..config import PIPE_PREFIX, Var, agent_socket_setting
from .protocol import AgentError

APP_NAME: Final = "searchdesk"
SOCKET_NAME: Final = "agent.sock"
FOLDER_MODE: Final = 0o700

# macOS / BSD: <sys/un.h> SOL_LOCAL = 0, LOCAL_PEERCRED = 1 (what getpeereid() itself reads).
_SOL_LOCAL: Final = 0
_LOCAL_PEERCRED: Final = 1


class UntrustedFolder(AgentError):
    """The socket's folder (or one of its parents) could be controlled by another user."""


class UntrustedPeer(AgentError):
    """The other end of the socket runs as another user."""


class AlreadyListening(AgentError):
    """Another listener already answers at the socket path (a second app instance)."""


class _SockOpts(Protocol):
    def getsockopt(self, level: int, optname: int, buflen: int, /) -> bytes: ...


# --------------------------------------------------------------------------------------------------
# Where


def _uid() -> int:
    if sys.platform == "win32":
        raise AgentError("User ids and folder modes are Unix checks; on Windows winpipe checks the pipe's owner.")
    return os.geteuid()


def pipe_name(user: str | None = None) -> str:
    """Windows: the named pipe for this user (the variable, when set, names the pipe instead)."""
    import getpass

    name = re.sub(r"[^A-Za-z0-9._-]", "_", user if user is not None else getpass.getuser()) or "user"
    return f"{PIPE_PREFIX}searchdesk-agent-{name[:64]}"


def runtime_folder() -> str:
    """`platformdirs.user_runtime_dir("searchdesk")`, without its warning on stderr (our checks follow)."""
    import platformdirs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return platformdirs.user_runtime_dir(APP_NAME)
        except PermissionError as err:  # platformdirs >= 4.14 refuses a fallback another user owns
            raise UntrustedFolder(
                f"The runtime folder for SearchDesk is not safe to use ({err}). Set XDG_RUNTIME_DIR to a "
                "folder only you can open (mode 0700), or remove the folder if you did not create it."
            ) from None


def default_socket_path() -> str:
    """agent.sock in the runtime folder (Windows: the named pipe of this user)."""
    if sys.platform == "win32":
        return pipe_name()
    return os.path.join(runtime_folder(), SOCKET_NAME)


def socket_path() -> str:
    """For a program without a server Config (the desktop app, tools): SEARCHDESK_AGENT_SOCKET as
    `config.agent_socket_setting` resolves it, else the default place. The server uses its Config's."""
    return agent_socket_setting(os.environ) or default_socket_path()


# --------------------------------------------------------------------------------------------------
# Folder trust


def _refuse(path: str | Path, problem: str) -> UntrustedFolder:
    return UntrustedFolder(
        f"The agent socket folder {path} {problem}. SearchDesk will not use it: another user could read "
        f"or replace the socket. Remove it (or set {Var.SEARCHDESK_AGENT_SOCKET} to a path in a folder only you "
        "can open, mode 0700), then start SearchDesk again."
    )


def check_folder(path: str | os.PathLike[str]) -> None:
    """The folder must be ours, mode exactly 0700, a real directory, and every parent safe.

    Raises FileNotFoundError when it does not exist (the app is then simply not running) and
    UntrustedFolder when it exists but is not safe.
    """
    folder = Path(os.path.abspath(path))
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        raise _refuse(folder, "is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise _refuse(folder, "is not a folder")
    if info.st_uid != _uid():
        raise _refuse(folder, f"belongs to user id {info.st_uid}, not to you (user id {_uid()})")
    mode = stat.S_IMODE(info.st_mode)
    if mode != FOLDER_MODE:
        raise _refuse(folder, f"has mode {mode:04o}; it must be 0700")
    _check_parents(folder)


def _check_parents(folder: Path) -> None:
    """Nobody but us or root may rename or replace anything on the way to the folder.

    A parent writable by others is acceptable only with the sticky bit (like /tmp): then nobody can
    move our entries. Symlinks on the way (macOS /var -> /private/var) must belong to us or root.
    """
    me = _uid()
    for parent in folder.parents:
        info = os.lstat(parent)
        if stat.S_ISLNK(info.st_mode) and info.st_uid not in (0, me):
            raise _refuse(folder, f"is reached through a link in {parent} that belongs to another user")
    for parent in Path(os.path.realpath(folder.parent), "x").parents:
        info = os.stat(parent)
        if info.st_uid not in (0, me):
            raise _refuse(folder, f"is inside {parent}, which belongs to another user")
        if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
            raise _refuse(folder, f"is inside {parent}, which other users may write to")


def ensure_folder(path: str | os.PathLike[str]) -> None:
    """The listener's side: create the folder (and missing parents) as 0700, then check it like the client."""
    folder = Path(os.path.abspath(path))
    missing: list[Path] = []
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate):
            break
        missing.append(candidate)
    for candidate in reversed(missing):
        try:
            os.mkdir(candidate, FOLDER_MODE)
        except FileExistsError:
            pass  # somebody was faster; check_folder below decides whether it is ours
    check_folder(folder)


def prepare_listener(socket_file: str | os.PathLike[str]) -> None:
    """Before bind(): a trusted folder, and no stale socket of ours in the way (never someone else's)."""
    if sys.platform == "win32":
        raise AgentError("On Windows the listener is a named pipe (winpipe.PipeAcceptor).")
    path = Path(os.path.abspath(socket_file))
    ensure_folder(path.parent)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != _uid():
        raise UntrustedFolder(f"{path} exists and is not a socket of yours; remove it, then start SearchDesk again.")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(str(path))
    except OSError:
        os.unlink(path)  # nobody is listening: a leftover from a crash
        return
    finally:
        probe.close()
    raise AlreadyListening(f"Another SearchDesk app is already listening at {path}.")


# --------------------------------------------------------------------------------------------------
# Peer trust


def peer_supported() -> bool:
    """Whether this OS tells a Unix socket who is on the other end."""
    return sys.platform.startswith("linux") or sys.platform == "darwin" or "bsd" in sys.platform


def peer_uid(sock: _SockOpts) -> int | None:
    """The user id at the other end of a connected Unix socket, or None when the OS cannot say."""
    try:
        if sys.platform.startswith("linux"):
            creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            _pid, uid, _gid = struct.unpack("3i", creds)
            return int(uid)
        if peer_supported():
            # struct xucred { u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]; }
            creds = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, 4 + 4 + 2 + 2 + 16 * 4)
            _version, uid = struct.unpack_from("=II", creds)
            return int(uid)
    except (OSError, struct.error):
        return None
    return None


def trusted_peer(sock: _SockOpts) -> bool:
    """True when the other end is our own user; where the OS cannot say, the folder check stands alone."""
    if not peer_supported():
        return True
    return peer_uid(sock) == _uid()
