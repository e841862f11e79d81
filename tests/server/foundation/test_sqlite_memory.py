"""The server's process keeps no SQLite memory statistics (one lock for every allocation, process-wide:
`sqlite_memory.py`), and turning them off never touches a SQLite that has something open.

Each case runs in a Python of its own: SQLite's settings are the whole process's, and this one has
files open. What is observed is SQLite's own count of the memory it holds while a file is open: with
the statistics off, SQLite counts nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from searchdesk_server.sqlite_memory import mapped_library

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="turned off on Linux only")

#: Opens a file (after `BEFORE` has run), then prints what `sqlite_memory` returned and SQLite's count.
_PROBE = """
import ctypes, sqlite3, sys
from searchdesk_server import cli, sqlite_memory
done = None
{before}
conn = sqlite3.connect(sys.argv[1])
conn.execute("CREATE TABLE IF NOT EXISTS t(x)")
conn.execute("INSERT INTO t VALUES (1)")
lib = ctypes.CDLL(sqlite_memory.mapped_library(open("/proc/self/maps").read()))
lib.sqlite3_memory_used.restype = ctypes.c_int64
print(done, lib.sqlite3_memory_used(), conn.execute("SELECT count(*) FROM t").fetchone()[0])
"""


def probe(tmp_path: Path, before: str) -> tuple[str, int, int]:
    out = (
        subprocess.run(
            [sys.executable, "-c", _PROBE.format(before=before), str(tmp_path / "probe.sqlite3")],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        .stdout.splitlines()[-1]
        .split()
    )  # the last line: `--version` prints one before it
    return out[0], int(out[1]), int(out[2])


def test_the_servers_main_turns_the_statistics_off_before_anything_is_opened(tmp_path: Path) -> None:
    """Fails when `cli.main` does not call `statistics_off` first (the control shows SQLite counting)."""
    assert probe(tmp_path, "")[1] > 0  # the control: a file open, SQLite counting its memory
    _, used, _ = probe(tmp_path, "try:\n    cli.main(['--version'])\nexcept SystemExit:\n    pass")
    assert used == 0


def test_statistics_off_says_so_and_sqlite_still_works(tmp_path: Path) -> None:
    done, used, rows = probe(tmp_path, "done = sqlite_memory.statistics_off()")
    assert (done, used, rows) == ("True", 0, 1)


def test_a_sqlite_with_a_file_open_is_never_shut_down(tmp_path: Path) -> None:
    """Fails without the check that SQLite holds no memory: the open connection would be shut under."""
    before = (
        "held = sqlite3.connect(sys.argv[1]); held.execute('CREATE TABLE IF NOT EXISTS h(x)')\n"
        "done = sqlite_memory.statistics_off()\n"
        "assert held.execute('SELECT count(*) FROM h').fetchone() == (0,)"
    )
    done, used, rows = probe(tmp_path, before)
    assert (done, rows) == ("False", 1)
    assert used > 0


def test_other_systems_are_left_as_they_are(tmp_path: Path) -> None:
    done, used, _ = probe(tmp_path, "done = sqlite_memory.statistics_off(platform='darwin')")
    assert done == "False"
    assert used > 0


def test_the_library_is_the_one_mapped_into_the_process() -> None:
    maps = (
        "7f1c-7f1d r--p 00000000 08:01 1234  /usr/lib/python3.11/lib-dynload/_sqlite3.so\n"
        "7f2c-7f2d r-xp 00000000 08:01 5678  /opt/app/_internal/libsqlite3.so.0\n"
        "7f3c-7f3d rw-p 00000000 00:00 0 \n"
    )
    assert mapped_library(maps) == "/opt/app/_internal/libsqlite3.so.0"
    assert mapped_library(maps.splitlines()[0]) is None  # SQLite linked into Python: nothing to call
