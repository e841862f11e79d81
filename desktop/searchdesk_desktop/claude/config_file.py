"""Add SearchDesk to Claude Desktop by editing ``claude_desktop_config.json`` — carefully.

The file belongs to the person and to Claude Desktop, not to us. So: we change only our own
``mcpServers.searchdesk`` entry; a file we cannot understand (not JSON, not an object, duplicate keys,
``mcpServers`` not an object) is never touched and the error says where it is; every write is atomic
(temp file + ``os.replace``) with a backup of the previous version beside it; and if someone else
changed the file while we worked, we merge again from their version instead of overwriting it.

The entry's shape is claude/entry.py, where the file is claude/paths.py; their names are importable
from here too, as the windows and the tests have always used them (``cc.locate``, ``cc.ServerCommand``).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from .entry import APP_ENTRY_ENV as APP_ENTRY_ENV
from .entry import CREDENTIAL_VARS as CREDENTIAL_VARS
from .entry import DEMO_VAR as DEMO_VAR
from .entry import SERVER_KEY as SERVER_KEY
from .entry import SETTINGS_VARS as SETTINGS_VARS
from .entry import SOCKET_VAR as SOCKET_VAR
from .entry import ServerCommand as ServerCommand
from .entry import ServerSettings as ServerSettings
from .entry import entry_for as entry_for
from .entry import is_demo_entry as is_demo_entry
from .entry import server_command as server_command
from .paths import CONFIG_NAME as CONFIG_NAME
from .paths import candidate_paths as candidate_paths
from .paths import choose as choose
from .paths import display_path as display_path
from .paths import every_location as every_location
from .paths import locate as locate

BACKUP_SUFFIX = ".searchdesk-backup"


class ClaudeConfigError(Exception):
    """Base for this module; ``str()`` tells the person what happened and what to do."""


class InvalidConfig(ClaudeConfigError):
    """The file is not something we can edit safely; it was left exactly as it was."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        super().__init__(
            f"Claude Desktop's settings file is {reason}, so SearchDesk did not change it. "
            f"Fix or remove the file, then try again: {path}"
        )


class ConcurrentChange(ClaudeConfigError):
    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            "Claude Desktop's settings file kept changing while SearchDesk was updating it, so SearchDesk "
            f"left it as it is. Close Claude Desktop's settings and try again: {path}"
        )


class DemoNeedsConsent(ClaudeConfigError):
    def __init__(self) -> None:
        super().__init__(
            "This is the demo. Adding the demo to Claude Desktop needs your explicit go-ahead "
            "(it answers with made-up data, clearly labelled)."
        )


class WouldReplaceRealEntry(ClaudeConfigError):
    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            "Claude Desktop already has your real SearchDesk entry; the demo will not replace it. "
            f"Remove it first if you really want the demo there: {path}"
        )


# --- reading --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    raw: bytes | None  # None: the file does not exist
    signature: tuple[int, int] | None  # (mtime_ns, size)


def _snapshot(path: Path) -> Snapshot:
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            return Snapshot(fh.read(), (st.st_mtime_ns, st.st_size))
    except FileNotFoundError:
        return Snapshot(None, None)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Duplicate()
    return dict(pairs)


class _Duplicate(ValueError):
    pass


def parse(path: Path, raw: bytes | None) -> dict[str, Any]:
    """The file as a dict we may edit, or :class:`InvalidConfig` (and the file stays untouched)."""
    if raw is None:
        return {}
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidConfig(path, "not UTF-8 text") from None
    if text.strip() == "":
        return {}
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate:
        raise InvalidConfig(path, "JSON with a key written twice (which one Claude uses is unclear)") from None
    except json.JSONDecodeError as exc:
        raise InvalidConfig(path, f"not valid JSON (line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise InvalidConfig(path, "JSON but not an object (it holds a single value or a list, not settings)")
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise InvalidConfig(path, '"mcpServers" that is not an object')
    return data


def read_entry(path: Path) -> dict[str, Any] | None:
    data = parse(path, _snapshot(path).raw)
    entry = data.get("mcpServers", {}).get(SERVER_KEY)
    return entry if isinstance(entry, dict) else None


# --- writing --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    path: Path
    changed: bool
    backup: Path | None = None


Mutation = Callable[[dict[str, Any]], bool]


def _dump(data: Mapping[str, Any], had_bom: bool) -> bytes:
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return ("\ufeff" if had_bom else "").encode("utf-8") + text.encode("utf-8")


def _write_temp(path: Path, data: bytes, like: Path | None) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        mode = stat.S_IMODE(like.stat().st_mode) if like is not None and like.exists() else 0o600
        os.chmod(tmp, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def update(path: Path, mutate: Mutation, *, _before_replace: Callable[[], None] | None = None) -> Change:
    """Apply ``mutate`` to the parsed file and write it back atomically.

    Just before the replace the file is read again; if it changed under us the mutation is applied
    once more to the new content (a second change in that window gives up: :class:`ConcurrentChange`).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    snap = _snapshot(path)
    for _attempt in range(2):
        data = parse(path, snap.raw)
        if not mutate(data):
            return Change(path, False)
        had_bom = snap.raw is not None and snap.raw.startswith(b"\xef\xbb\xbf")
        tmp = _write_temp(path, _dump(data, had_bom), path if snap.raw is not None else None)
        try:
            if _before_replace is not None:
                _before_replace()
            now = _snapshot(path)
            if now != snap:
                snap = now
                continue
            backup = _backup(path, snap.raw)
            os.replace(tmp, path)
            return Change(path, True, backup)
        finally:
            tmp.unlink(missing_ok=True)
    raise ConcurrentChange(path)


def _backup(path: Path, raw: bytes | None) -> Path | None:
    if raw is None:
        return None
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    tmp = _write_temp(backup, raw, path)
    try:
        os.replace(tmp, backup)
    finally:
        tmp.unlink(missing_ok=True)
    return backup


def _servers(data: dict[str, Any]) -> dict[str, Any]:
    servers = data.setdefault("mcpServers", {})
    assert isinstance(servers, dict)  # parse() refused anything else
    return servers


def add(
    path: Path,
    command: ServerCommand,
    settings: ServerSettings,
    *,
    allow_demo: bool = False,
    replace_real: bool = False,
    _before_replace: Callable[[], None] | None = None,
) -> Change:
    """Add or replace our entry with exactly this one (its settings are this app's, never the entry's).

    The demo is added only with ``allow_demo``, and over a real entry only with ``replace_real`` too
    (the person asked to switch Claude Desktop to the demo).
    """
    if settings.demo and not allow_demo:
        raise DemoNeedsConsent()
    wanted = entry_for(command, settings)

    def mutate(data: dict[str, Any]) -> bool:
        servers = _servers(data)
        current = servers.get(SERVER_KEY)
        if settings.demo and not replace_real and isinstance(current, dict) and not is_demo_entry(current):
            raise WouldReplaceRealEntry(path)
        if current == wanted:
            return False
        servers[SERVER_KEY] = wanted
        return True

    return update(path, mutate, _before_replace=_before_replace)


def update_settings(path: Path, settings: ServerSettings) -> Change:
    """Re-write the settings variables in our existing entry's ``env``; every other key stays as it is.

    No entry (not added yet, or added as a Claude Desktop extension), or an entry of the other mode
    (the demo's settings never go into a real entry, nor the reverse): nothing is written; the
    settings are used when SearchDesk is added.
    """
    if not path.exists():
        return Change(path, False)
    wanted = settings.env()

    def mutate(data: dict[str, Any]) -> bool:
        servers = data.get("mcpServers")
        entry = servers.get(SERVER_KEY) if isinstance(servers, dict) else None
        if not isinstance(servers, dict) or not isinstance(entry, dict) or is_demo_entry(entry) != settings.demo:
            return False
        env = dict(entry["env"]) if isinstance(entry.get("env"), dict) else {}
        new = {k: v for k, v in env.items() if k not in SETTINGS_VARS}
        new.update({k: wanted[k] for k in SETTINGS_VARS if k in wanted})
        new.update(APP_ENTRY_ENV)  # an entry this app writes to carries it, an older one included
        if new == env:
            return False
        servers[SERVER_KEY] = {**entry, "env": new}
        return True

    return update(path, mutate)


def remove(path: Path) -> Change:
    if not path.exists():
        return Change(path, False)

    def mutate(data: dict[str, Any]) -> bool:
        servers = data.get("mcpServers")
        if not isinstance(servers, dict) or SERVER_KEY not in servers:
            return False
        del servers[SERVER_KEY]
        return True

    return update(path, mutate)


# --- check and repair ------------------------------------------------------------------------


class EntryState(Enum):
    ABSENT = "absent"  # no entry (or no file)
    OK = "ok"  # this app's own: this copy of the server, this mode, this socket, no credentials, APP_ENTRY_ENV
    OTHER_MODE = "other_mode"  # the demo's entry in the real app, or the real one in the demo: switch
    OTHER_COPY = "other_copy"  # points at another existing server (an older install, say)
    BROKEN = "broken"  # the command is gone or cannot be run: offer repair
    OWN_CREDENTIALS = "own_credentials"  # Google credentials of its own: it does not use this app's sign-in
    INVALID_FILE = "invalid_file"  # the file cannot be read safely; we will not touch it


@dataclass(frozen=True)
class EntryCheck:
    state: EntryState
    path: Path
    demo: bool = False
    detail: str = ""
    #: The entry as it is (None: no entry), so a check's result can say which entry it was for.
    entry: dict[str, Any] | None = None


def runnable(command: str) -> bool:
    p = Path(command)
    return p.is_absolute() and p.is_file() and os.access(p, os.X_OK)


def check(path: Path, current: ServerCommand, agent_socket: str = "", *, demo: bool = False) -> EntryCheck:
    """Is Claude Desktop's entry this app's own — what Claude will use is what this app serves?

    Only then is it OK: the same server program, the same mode (``demo``), the same socket, no
    Google credentials of its own, and what every entry of this app carries (``APP_ENTRY_ENV``; an
    entry an older SearchDesk wrote lacks it and reads as one to repair, which adds it). Anything
    else says what differs, so the window can offer the one action that fixes it.
    """
    try:
        entry = read_entry(path)
    except InvalidConfig as exc:
        return EntryCheck(EntryState.INVALID_FILE, path, detail=str(exc))
    if entry is None:
        return EntryCheck(EntryState.ABSENT, path)
    is_demo = is_demo_entry(entry)

    def found(state: EntryState, detail: str = "") -> EntryCheck:
        return EntryCheck(state, path, is_demo, detail, entry)

    if is_demo != demo:
        return found(EntryState.OTHER_MODE, "it is the demo's" if is_demo else "it uses a real Google account")
    command = entry.get("command")
    args = entry.get("args", [])
    args = args if isinstance(args, list) else [args]
    if not isinstance(command, str) or not runnable(command):
        return found(EntryState.BROKEN, "the server program it names is missing")
    if command != current.command or list(args) != list(current.args):
        return found(EntryState.OTHER_COPY, "it names another copy of the server")
    raw_env = entry.get("env")
    env: dict[str, Any] = raw_env if isinstance(raw_env, dict) else {}
    own = [name for name in CREDENTIAL_VARS if name in env]
    if own:
        return found(EntryState.OWN_CREDENTIALS, "it carries Google credentials of its own (" + ", ".join(own) + ")")
    if agent_socket and env.get(SOCKET_VAR) != agent_socket:
        where = "another place" if SOCKET_VAR in env else "no place"
        return found(EntryState.OTHER_COPY, f"it names {where} to reach this app")
    if any(env.get(name) != value for name, value in APP_ENTRY_ENV.items()):
        return found(EntryState.OTHER_COPY, "it was written by an older version of SearchDesk")
    return found(EntryState.OK)


def repair(path: Path, current: ServerCommand, agent_socket: str = "") -> Change:
    """Point our entry at this copy of the server, keeping its settings (env) as they are, with what
    every entry of this app carries (``APP_ENTRY_ENV``) added."""

    def mutate(data: dict[str, Any]) -> bool:
        servers = _servers(data)
        entry = servers.get(SERVER_KEY)
        if not isinstance(entry, dict):
            return False
        fixed = dict(entry)
        fixed["command"] = current.command
        fixed["args"] = list(current.args)
        env = dict(entry["env"]) if isinstance(entry.get("env"), dict) else {}
        if agent_socket:
            env[SOCKET_VAR] = agent_socket
        env.update(APP_ENTRY_ENV)
        fixed["env"] = env
        if fixed == entry:
            return False
        servers[SERVER_KEY] = fixed
        return True

    return update(path, mutate)


def entry_env(path: Path) -> dict[str, str]:
    """The env our entry gives the server (what "Check it works" must run with)."""
    with contextlib.suppress(InvalidConfig):
        entry = read_entry(path)
        if entry and isinstance(entry.get("env"), dict):
            return {str(k): str(v) for k, v in entry["env"].items()}
    return {}
