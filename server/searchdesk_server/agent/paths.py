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

**The app keeps its socket** (`Keeper`). A socket file is an entry in a folder, and folders are what
cache cleaners and logout scripts empty; a server that then finds nothing at the path reads it as
"the app is not running". So the listener checks every `KEEP_EVERY_S` that the path still names the
very socket file it bound (same device and inode; the inode cannot be reused while our socket holds
it) and, when the path is empty, binds again there through the same checks (`prepare_listener`: the
folder created 0700 or refused, never chmod-ed into use). It never takes what is not plainly its
own: a live listener at the path is left to it (`AlreadyListening`; probed again only now and then,
so a listener that crashed is eventually replaced); anything that is not a socket of this user, and a
folder that fails the checks, stays as it is until somebody removes it. Binding never replaces a file
(bind() fails on an existing name), and closing removes the socket file only while the path still
names ours; `QLocalServer` could do neither, which is why the app binds with `socket` itself. Windows
needs none of this: a named pipe is no file in any folder; it lives as long as the app holds an
instance of it open, and no cleaner or script can delete it from outside.

**macOS: the socket lives in Application Support, not in Caches.** platformdirs places the runtime
folder in `~/Library/Caches/TemporaryItems/`, the very place cache cleaners empty (Apple's rule for
Caches: whatever is there may go at any time). `~/Library/Application Support/searchdesk/run/` is not
a cache, is derived from the home folder alone (a server started by Claude Desktop gets HOME, but not
necessarily TMPDIR or XDG variables, so `$TMPDIR`'s per-user folder could differ between the two ends),
and its parents are the user's own. Its own `run` folder, because the data folder above it is made
with the usual mode, not 0700 (and is the same folder as "SearchDesk" on a case-insensitive disk).
The path is `/Users/<name>/Library/Application Support/searchdesk/run/agent.sock`: 61 bytes plus the
name, within macOS's 104-byte limit for socket paths for any name up to 42 characters (two bytes
more than the old place); a longer home folder needs SEARCHDESK_AGENT_SOCKET. Both ends call `runtime_folder`.
"""

from __future__ import annotations

import contextlib
import enum
import os
import re
import socket
import stat
import struct
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from ..variables import PIPE_PREFIX, Var, agent_socket_setting
from .protocol import AgentError

APP_NAME: Final = "searchdesk"
SOCKET_NAME: Final = "agent.sock"
FOLDER_MODE: Final = 0o700
SOCKET_MODE: Final = 0o600  # the folder is the defence; the file says the same
#: macOS: the sockets' folder below the home folder (not platformdirs' runtime folder in Caches).
MAC_FOLDER: Final = ("Library", "Application Support", APP_NAME, "run")
#: How often the app checks that its socket is still at its path (the promise: back within 5 s).
KEEP_EVERY_S: Final = 1.0
#: How often a live listener that took the path is asked again whether it is still there.
TAKEN_RETRY_S: Final = 30.0

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
    """The folder of the app's sockets: on macOS `MAC_FOLDER` in the home folder (why: the module's
    docstring); elsewhere `platformdirs.user_runtime_dir("searchdesk")`, without its warning on stderr
    (our checks follow)."""
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~"), *MAC_FOLDER)
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
# Listening, and keeping the socket at its path

#: A file's identity: (st_dev, st_ino).
FileId = tuple[int, int]


@dataclass(frozen=True)
class Bound:
    """A listening Unix socket of this process, and the socket file its bind() made."""

    sock: socket.socket
    path: str
    file: FileId


class Kept(enum.Enum):
    """What one check of the socket's path found, and did."""

    HELD = "held"  # the path still names our socket
    RESTORED = "restored"  # it was gone (or a stale socket of ours): listening again at the same path
    TAKEN = "taken"  # another listener answers there now: left to it
    BLOCKED = "blocked"  # not a socket of ours, or a folder that fails the checks: left as it is


def listen_unix(socket_file: str | os.PathLike[str], backlog: int) -> Bound:
    """`prepare_listener`, then bind and listen (non-blocking). bind() never replaces an existing
    name, so something that appeared after the checks is an OSError here, never overwritten."""
    path = os.path.abspath(socket_file)
    prepare_listener(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    made: FileId | None = None
    try:
        sock.bind(path)
        info = os.lstat(path)
        made = (info.st_dev, info.st_ino)
        os.chmod(path, SOCKET_MODE)
        sock.listen(backlog)
        sock.setblocking(False)
    except BaseException:
        if made is not None:
            _unlink_if(path, made)
        sock.close()
        raise
    return Bound(sock, path, made)


def holds(bound: Bound) -> bool:
    """Whether the path still names the socket file `bound` made."""
    try:
        info = os.lstat(bound.path)
    except OSError:
        return False
    return stat.S_ISSOCK(info.st_mode) and (info.st_dev, info.st_ino) == bound.file


def release(bound: Bound) -> None:
    """Stop listening; the socket file goes only while the path still names ours (never another's)."""
    _unlink_if(bound.path, bound.file)  # before close(): until then the inode cannot be reused
    bound.sock.close()


def _unlink_if(path: str, file: FileId) -> None:
    with contextlib.suppress(OSError):
        info = os.lstat(path)
        if stat.S_ISSOCK(info.st_mode) and (info.st_dev, info.st_ino) == file:
            os.unlink(path)


class Keeper:
    """Keeps a listener's socket at its path (the module's docstring says why and what it leaves alone).

    `check()` runs every `KEEP_EVERY_S` on the listener's own loop. On `Kept.RESTORED`, `bound` is the
    new socket; the old one is the caller's to close (`release`) once it no longer watches it.
    Connections already accepted are separate sockets and go on as they were.
    """

    def __init__(self, bound: Bound, backlog: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.bound = bound
        self.backlog = backlog
        self._clock = clock
        self._taken: tuple[FileId, float] | None = None  # the live listener at the path, when last asked

    def check(self) -> Kept:
        if holds(self.bound):
            self._taken = None
            return Kept.HELD
        there = _file_at(self.bound.path)
        if self._taken is not None and there == self._taken[0] and self._clock() < self._taken[1]:
            return Kept.TAKEN  # not asked again every second: each probe is a connection to it
        try:
            self.bound = listen_unix(self.bound.path, self.backlog)
        except AlreadyListening:
            if there is not None:
                self._taken = (there, self._clock() + TAKEN_RETRY_S)
            return Kept.TAKEN
        except (UntrustedFolder, OSError):
            return Kept.BLOCKED
        self._taken = None
        return Kept.RESTORED


def _file_at(path: str) -> FileId | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


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
