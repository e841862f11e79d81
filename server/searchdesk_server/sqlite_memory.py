"""SQLite's memory statistics turned off in the server's process, once, before any file is opened.

Why: SQLite counts every allocation under one lock for the whole process (its memory statistics,
``SQLITE_CONFIG_MEMSTATUS``, on unless built otherwise), and Debian's SQLite is built without
lookaside memory, so every row a statement groups or sorts takes that lock. A report reads several
periods at once, each on a connection and thread of its own (`archive.reader.fetch`): two of new
queries' passes over 588,000 pairs took 0.74 s side by side against 0.41 s for one alone, and
0.39 s side by side with the statistics off. In `make bench` new queries went from 1.01 s to
0.87 s. SearchDesk never reads the statistics.

Hand-written because Python's `sqlite3` has no call for ``sqlite3_config``: it is called through
`ctypes` on the very library the `sqlite3` module loaded, found among the files mapped into this
process (never by name alone, which could load a second copy). A Python with SQLite linked into it
maps no such library and is left as it is.

``sqlite3_config`` works only while SQLite is shut down, and shutting it down under an open
connection would break that connection. So this runs first thing in the server's `main`, and only
when SQLite holds no memory at all: with the statistics on, that is true exactly when nothing of
SQLite's is open. Linux only: measured there (macOS's and Windows' Python builds keep lookaside
memory, and were not measured), and there a variadic C call takes an int as a plain one does.
"""

from __future__ import annotations

import os
import sqlite3  # maps the library this turns the statistics off in
import sys
from pathlib import Path
from typing import Final

#: ``SQLITE_CONFIG_MEMSTATUS`` and ``SQLITE_OK`` (sqlite3.h).
_MEMSTATUS: Final = 9
_OK: Final = 0


def mapped_library(maps: str) -> str | None:
    """The SQLite library among a process's mapped files (Linux's /proc/self/maps), or None."""
    for line in maps.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and os.path.basename(fields[5]).startswith("libsqlite3.so"):
            return fields[5]
    return None


def statistics_off(maps: Path = Path("/proc/self/maps"), platform: str = sys.platform) -> bool:
    """Turn SQLite's memory statistics off for this process; True when they are now off. Anything
    unexpected (another system, no library of its own, a version other than the `sqlite3` module's,
    memory already held, a call refused) leaves SQLite exactly as it was and gives False."""
    if not platform.startswith("linux"):
        return False
    import ctypes  # only where it is used: no other server start pays for it

    try:
        path = mapped_library(maps.read_text())
        lib = ctypes.CDLL(path) if path else None
    except OSError:
        return False
    major, minor, patch = sqlite3.sqlite_version_info
    if lib is None or lib.sqlite3_libversion_number() != major * 1_000_000 + minor * 1_000 + patch:
        return False
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    if lib.sqlite3_memory_used() != 0 or lib.sqlite3_shutdown() != _OK:
        return False
    done: bool = lib.sqlite3_config(_MEMSTATUS, ctypes.c_int(0)) == _OK
    lib.sqlite3_initialize()  # as every connection would on opening; never left shut down
    return done
