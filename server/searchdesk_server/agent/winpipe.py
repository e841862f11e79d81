"""Windows: the agent pipe's two trust decisions, and the Win32 calls they are made with.

NOT RUN HERE. CI is Linux: the ctypes calls in `_Win32` have never been executed by this project's
tests. What is tested, on Linux with fake calls, is the logic that uses them: `owner_trusted` and
`PipeAcceptor` take the calls as a parameter (`PipeCalls`), and the tests drive them through every
answer, failure and race the calls can give.

**The server trusts the pipe's owner, or sends nothing.** A pipe name is first come, first served:
while the app is not running, any local user can create `\\\\.\\pipe\\searchdesk-agent-<user>` and
wait for our server to hand it approval questions. So before the first byte, `owner_trusted` asks
two questions of the connected handle and requires both answers to be the current user's SID:

- the pipe's owner (its security descriptor, set by whoever created the first instance and
  unchangeable by another user without admin rights), and
- the token user of the process serving it (`GetNamedPipeServerProcessId` -> `OpenProcess` ->
  `OpenProcessToken`).

Either alone leaves a gap: a process id can be stale (the creator may have exited, its pipe kept
alive by a handle it passed on, and the id since given to one of our own processes), and an owner
says nothing about who holds the serving end now.

Any failure to find out - the process gone, access denied, an API error - is a no, never a fallback.

**The app creates the pipe before anybody else can.** `QLocalServer` cannot pass
`FILE_FLAG_FIRST_PIPE_INSTANCE`, so with it a squatter's pipe of the same name would quietly gain
our instances as extra instances (if its DACL allowed us), and the two would share clients. The
app therefore does what QLocalServer does internally, with the flag: `PipeAcceptor` creates the
first instance with `FILE_FLAG_FIRST_PIPE_INSTANCE` (the name taken -> `paths.AlreadyListening`), an
owner and DACL of the user alone (`O:<sid>D:P(A;;GA;;;<sid>)`) and `PIPE_REJECT_REMOTE_CLIENTS`,
waits for a client on a thread, and hands each connected handle to the listener, which wraps it in a
QLocalSocket (`setSocketDescriptor`, the way QLocalServer hands over its own) - Qt does all reading
and writing. A separate "guard" instance that holds the name but is never served was considered and
rejected: a client can connect to any listening instance, so it would sometimes land on the guard
and hang until its timeout. Here every instance is served. The next instance is created while the
connected one is still open, so the name never lapses while the app runs and nobody can create it
between two instances. Only one instance listens at a time: a client that finds it busy retries
(asyncio's `connect_pipe` does, for up to the client's connect timeout).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import threading
from collections.abc import Callable
from ctypes import wintypes
from typing import Any, Final, Protocol

from .paths import AlreadyListening

log = logging.getLogger(__name__)

#: Consecutive failed waits on fresh instances after which the acceptor gives up rather than spin.
MAX_FAILED_WAITS: Final = 16


class NameTaken(OSError):
    """`create_instance(first=True)` found the pipe name already in use (by anybody)."""


class PipeCalls(Protocol):
    """The seam: the Win32 calls, each raising OSError when Windows says no."""

    # whom the server trusts
    def current_user_sid(self) -> bytes: ...
    def pipe_owner_sid(self, pipe: int) -> bytes: ...
    def server_process_id(self, pipe: int) -> int: ...
    def process_user_sid(self, pid: int) -> bytes: ...

    # the app's pipe
    def create_instance(self, name: str, *, first: bool) -> int: ...
    def wait_for_client(self, pipe: int, stop_event: int) -> bool: ...
    def new_event(self) -> int: ...
    def set_event(self, event: int) -> None: ...
    def close(self, handle: int) -> None: ...


# --------------------------------------------------------------------------------------------------
# The server's side


def owner_trusted(pipe: int, calls: PipeCalls | None = None) -> bool:
    """True only when both the pipe's owner and the process serving it run as the current user."""
    try:
        calls = calls if calls is not None else system_calls()
        me = calls.current_user_sid()
        if not me or calls.pipe_owner_sid(pipe) != me:
            return False
        pid = calls.server_process_id(pipe)
        return pid > 0 and calls.process_user_sid(pid) == me
    except Exception:  # any failure to find out is a no
        return False


# --------------------------------------------------------------------------------------------------
# The app's side


class PipeAcceptor:
    """Owns the app's pipe name and hands each connected instance to `on_connected`.

    `on_connected(handle)` runs on the acceptor's thread and takes the handle (the listener passes
    a Qt signal's `emit`, which queues it to the Qt thread). If it raises, the handle is closed here.
    """

    def __init__(self, name: str, on_connected: Callable[[int], None], calls: PipeCalls | None = None) -> None:
        self.name = name
        self._on_connected = on_connected
        self._calls = calls if calls is not None else system_calls()
        self._stop_event: int | None = None
        self._stopping = False
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._stopping

    def start(self) -> None:
        """Create the first instance (refused if the name exists), then accept on a thread."""
        calls = self._calls
        stop_event = calls.new_event()
        try:
            first = calls.create_instance(self.name, first=True)
        except NameTaken:
            calls.close(stop_event)
            raise AlreadyListening(
                "Another program already holds SearchDesk's connection for Claude: another copy of "
                "SearchDesk, or a program of another user of this computer. Quit it (or sign out of "
                "Windows and back in), then start SearchDesk again."
            ) from None
        except BaseException:
            calls.close(stop_event)
            raise
        self._stop_event = stop_event
        self._thread = threading.Thread(target=self._run, args=(first,), name="searchdesk-pipe", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting; connections already handed on are the listener's to close."""
        self._stopping = True
        event, thread = self._stop_event, self._thread
        if event is None or thread is None:
            return
        if thread.is_alive():
            self._calls.set_event(event)
            thread.join(timeout)
        if not thread.is_alive():  # closed only once nothing can wait on it (a stuck thread keeps it)
            self._calls.close(event)
            self._stop_event = None

    def _run(self, listening: int) -> None:
        calls = self._calls
        stop_event = self._stop_event
        assert stop_event is not None
        failures = 0
        try:
            while not self._stopping:
                try:
                    connected = calls.wait_for_client(listening, stop_event)
                except OSError:
                    connected = False  # this instance broke (its client left at once, say): replace it
                    failures += 1
                else:
                    failures = 0
                    if not connected:
                        break  # stopped
                if self._stopping or failures >= MAX_FAILED_WAITS:
                    break
                try:
                    # While `listening` is still open: the name never lapses between two instances.
                    following = calls.create_instance(self.name, first=False)
                except OSError:
                    log.error("the agent pipe could not make its next instance; no new connections")
                    if connected:
                        self._hand_on(listening)
                        listening = 0
                    return
                if connected:
                    self._hand_on(listening)
                else:
                    calls.close(listening)
                listening = following
            if failures >= MAX_FAILED_WAITS:
                log.error("the agent pipe failed %d times in a row; no new connections", failures)
        finally:
            if listening:
                calls.close(listening)

    def _hand_on(self, handle: int) -> None:
        try:
            self._on_connected(handle)
        except Exception:
            log.exception("a connected pipe could not be handed on")
            self._calls.close(handle)


# --------------------------------------------------------------------------------------------------
# The real calls (Windows only; never run on the Linux CI)

_system_calls: PipeCalls | None = None


def system_calls() -> PipeCalls:
    """The Win32 calls, bound on first use. Raises OSError outside Windows."""
    global _system_calls
    if _system_calls is None:
        _system_calls = _Win32()
    return _system_calls


# Win32 constants, from the Windows SDK headers.
_ERROR_ACCESS_DENIED: Final = 5
_ERROR_PIPE_BUSY: Final = 231
_ERROR_PIPE_CONNECTED: Final = 535
_ERROR_IO_PENDING: Final = 997
_PIPE_ACCESS_DUPLEX: Final = 0x00000003
_FILE_FLAG_FIRST_PIPE_INSTANCE: Final = 0x00080000
_FILE_FLAG_OVERLAPPED: Final = 0x40000000
_PIPE_TYPE_BYTE_READMODE_BYTE_WAIT: Final = 0x00000000
_PIPE_REJECT_REMOTE_CLIENTS: Final = 0x00000008
_PIPE_UNLIMITED_INSTANCES: Final = 255
_PIPE_BUFFER: Final = 64 * 1024
_PROCESS_QUERY_LIMITED_INFORMATION: Final = 0x1000
_TOKEN_QUERY: Final = 0x0008
_TOKEN_USER: Final = 1  # TOKEN_INFORMATION_CLASS.TokenUser
_SE_KERNEL_OBJECT: Final = 6
_OWNER_SECURITY_INFORMATION: Final = 0x00000001
_SDDL_REVISION_1: Final = 1
_WAIT_OBJECT_0: Final = 0
_INFINITE: Final = 0xFFFFFFFF


class _SecurityAttributes(ctypes.Structure):
    _fields_ = (
        ("nLength", wintypes.DWORD),
        ("lpSecurityDescriptor", ctypes.c_void_p),
        ("bInheritHandle", wintypes.BOOL),
    )


class _Overlapped(ctypes.Structure):
    _fields_ = (
        ("Internal", ctypes.c_size_t),
        ("InternalHigh", ctypes.c_size_t),
        ("Offset", wintypes.DWORD),
        ("OffsetHigh", wintypes.DWORD),
        ("hEvent", wintypes.HANDLE),
    )


def _bind(dll: Any, name: str, restype: Any, *argtypes: Any) -> Any:
    fn = getattr(dll, name)
    fn.restype, fn.argtypes = restype, argtypes
    return fn


class _Win32:
    """ctypes bindings of exactly the calls `PipeCalls` names. Handles are plain ints."""

    def __init__(self) -> None:
        win_dll = getattr(ctypes, "WinDLL", None)  # WinDLL and get_last_error exist only on Windows
        if win_dll is None:
            raise OSError("Named pipes of this kind exist only on Windows.")
        self._last_error: Callable[[], int] = getattr(ctypes, "get_last_error")  # noqa: B009
        k32, adv = win_dll("kernel32", use_last_error=True), win_dll("advapi32", use_last_error=True)
        handle, pvoid, dword, boolean, ptr = (
            wintypes.HANDLE,
            ctypes.c_void_p,
            wintypes.DWORD,
            wintypes.BOOL,
            ctypes.POINTER,
        )
        self._GetCurrentProcess = _bind(k32, "GetCurrentProcess", handle)
        self._OpenProcess = _bind(k32, "OpenProcess", handle, dword, boolean, dword)
        self._CloseHandle = _bind(k32, "CloseHandle", boolean, handle)
        self._LocalFree = _bind(k32, "LocalFree", pvoid, pvoid)
        self._GetNamedPipeServerProcessId = _bind(
            k32, "GetNamedPipeServerProcessId", boolean, handle, ptr(wintypes.ULONG)
        )
        self._CreateNamedPipeW = _bind(
            k32,
            "CreateNamedPipeW",
            handle,
            wintypes.LPCWSTR,
            *(dword,) * 6,
            ptr(_SecurityAttributes),
        )
        self._ConnectNamedPipe = _bind(k32, "ConnectNamedPipe", boolean, handle, ptr(_Overlapped))
        self._GetOverlappedResult = _bind(
            k32, "GetOverlappedResult", boolean, handle, ptr(_Overlapped), ptr(dword), boolean
        )
        self._CancelIoEx = _bind(k32, "CancelIoEx", boolean, handle, ptr(_Overlapped))
        self._CreateEventW = _bind(k32, "CreateEventW", handle, pvoid, boolean, boolean, wintypes.LPCWSTR)
        self._SetEvent = _bind(k32, "SetEvent", boolean, handle)
        self._WaitForMultipleObjects = _bind(k32, "WaitForMultipleObjects", dword, dword, ptr(handle), boolean, dword)
        self._OpenProcessToken = _bind(adv, "OpenProcessToken", boolean, handle, dword, ptr(handle))
        self._GetTokenInformation = _bind(
            adv, "GetTokenInformation", boolean, handle, ctypes.c_int, pvoid, dword, ptr(dword)
        )
        self._IsValidSid = _bind(adv, "IsValidSid", boolean, pvoid)
        self._GetLengthSid = _bind(adv, "GetLengthSid", dword, pvoid)
        self._ConvertSidToStringSidW = _bind(adv, "ConvertSidToStringSidW", boolean, pvoid, ptr(pvoid))
        self._ConvertSddl = _bind(
            adv,
            "ConvertStringSecurityDescriptorToSecurityDescriptorW",
            boolean,
            wintypes.LPCWSTR,
            dword,
            ptr(pvoid),
            ptr(wintypes.ULONG),
        )
        self._GetSecurityInfo = _bind(adv, "GetSecurityInfo", dword, handle, ctypes.c_int, dword, *(ptr(pvoid),) * 5)
        self._invalid = ctypes.c_void_p(-1).value

    def _error(self, code: int | None = None) -> OSError:
        code = self._last_error() if code is None else code
        return OSError(0, f"Windows error {code}", None, code)

    def _sid_bytes(self, psid: int | None) -> bytes:
        if not psid or not self._IsValidSid(psid):
            raise OSError("Windows gave no valid SID.")
        return ctypes.string_at(psid, self._GetLengthSid(psid))

    def _token_user_sid(self, process: int) -> bytes:
        token = ctypes.c_void_p()
        if not self._OpenProcessToken(process, _TOKEN_QUERY, ctypes.byref(token)):
            raise self._error()
        try:
            size = wintypes.DWORD(0)
            self._GetTokenInformation(token, _TOKEN_USER, None, 0, ctypes.byref(size))  # asks for the size
            if not size.value:
                raise self._error()
            buffer = ctypes.create_string_buffer(size.value)
            if not self._GetTokenInformation(token, _TOKEN_USER, buffer, size, ctypes.byref(size)):
                raise self._error()
            # TOKEN_USER begins with SID_AND_ATTRIBUTES, which begins with the PSID.
            return self._sid_bytes(ctypes.cast(buffer, ctypes.POINTER(ctypes.c_void_p))[0])
        finally:
            self._CloseHandle(token)

    def current_user_sid(self) -> bytes:
        return self._token_user_sid(self._GetCurrentProcess())

    def pipe_owner_sid(self, pipe: int) -> bytes:
        owner, descriptor = ctypes.c_void_p(), ctypes.c_void_p()
        code = self._GetSecurityInfo(
            pipe,
            _SE_KERNEL_OBJECT,
            _OWNER_SECURITY_INFORMATION,
            ctypes.byref(owner),
            None,
            None,
            None,
            ctypes.byref(descriptor),
        )
        if code:
            raise self._error(code)
        try:
            return self._sid_bytes(owner.value)
        finally:
            self._LocalFree(descriptor)

    def server_process_id(self, pipe: int) -> int:
        pid = wintypes.ULONG(0)
        if not self._GetNamedPipeServerProcessId(pipe, ctypes.byref(pid)):
            raise self._error()
        return int(pid.value)

    def process_user_sid(self, pid: int) -> bytes:
        process = self._OpenProcess(_PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
        if not process:
            raise self._error()
        try:
            return self._token_user_sid(process)
        finally:
            self._CloseHandle(process)

    def _user_only_sddl(self) -> str:
        sid = self.current_user_sid()
        raw = ctypes.create_string_buffer(sid, len(sid))
        text = ctypes.c_void_p()
        if not self._ConvertSidToStringSidW(raw, ctypes.byref(text)):
            raise self._error()
        try:
            user = ctypes.wstring_at(text.value or 0)
        finally:
            self._LocalFree(text)
        return f"O:{user}D:P(A;;GA;;;{user})"  # owned by the user; the user alone may open or add instances

    def create_instance(self, name: str, *, first: bool) -> int:
        descriptor = ctypes.c_void_p()
        if not self._ConvertSddl(self._user_only_sddl(), _SDDL_REVISION_1, ctypes.byref(descriptor), None):
            raise self._error()
        try:
            attributes = _SecurityAttributes(ctypes.sizeof(_SecurityAttributes), descriptor.value, False)
            mode = _PIPE_ACCESS_DUPLEX | _FILE_FLAG_OVERLAPPED | (_FILE_FLAG_FIRST_PIPE_INSTANCE if first else 0)
            pipe = self._CreateNamedPipeW(
                name,
                mode,
                _PIPE_TYPE_BYTE_READMODE_BYTE_WAIT | _PIPE_REJECT_REMOTE_CLIENTS,
                _PIPE_UNLIMITED_INSTANCES,
                _PIPE_BUFFER,
                _PIPE_BUFFER,
                0,
                ctypes.byref(attributes),
            )
            code = self._last_error()
        finally:
            self._LocalFree(descriptor)
        if not pipe or pipe == self._invalid:
            if first and code in (_ERROR_ACCESS_DENIED, _ERROR_PIPE_BUSY):
                raise NameTaken(0, "The pipe name is in use.", None, code)
            raise self._error(code)
        return int(pipe)

    def wait_for_client(self, pipe: int, stop_event: int) -> bool:
        event = self.new_event()
        overlapped = _Overlapped()
        overlapped.hEvent = event
        try:
            if self._ConnectNamedPipe(pipe, ctypes.byref(overlapped)):
                return True
            code = self._last_error()
            if code == _ERROR_PIPE_CONNECTED:  # the client came between CreateNamedPipe and now
                return True
            if code != _ERROR_IO_PENDING:
                raise self._error(code)
            handles = (ctypes.c_void_p * 2)(event, stop_event)
            which = self._WaitForMultipleObjects(2, handles, False, _INFINITE)
            code = self._last_error()
            done = wintypes.DWORD(0)
            if which == _WAIT_OBJECT_0:
                if not self._GetOverlappedResult(pipe, ctypes.byref(overlapped), ctypes.byref(done), False):
                    raise self._error()
                return True
            # Stopped (or the wait failed): the kernel must let go of `overlapped` before it is freed.
            self._CancelIoEx(pipe, ctypes.byref(overlapped))
            self._GetOverlappedResult(pipe, ctypes.byref(overlapped), ctypes.byref(done), True)
            if which != _WAIT_OBJECT_0 + 1:
                raise self._error(code)
            return False
        finally:
            self.close(event)

    def new_event(self) -> int:
        event = self._CreateEventW(None, True, False, None)
        if not event:
            raise self._error()
        return int(event)

    def set_event(self, event: int) -> None:
        if not self._SetEvent(event):
            raise self._error()

    def close(self, handle: int) -> None:
        with contextlib.suppress(OSError):
            self._CloseHandle(handle)
