"""Python's cycle collector held off while one answer's objects are built in one synchronous stretch.

Decoding a 25,000-row Search Analytics answer makes about 50,000 containers (a dict and a list per
row) and checking it about 50,000 more (a tuple per entry and per key). Each 700 of them start a
collection, and every tenth of those walks all the older objects too (the server's own modules,
about 90,000). Everything made in the stretch stays alive until it ends, so those collections free
nothing: measured, they were a third of the answer's CPU. One collection afterwards does their work.

Held off process-wide (Python's collector is), for as long as any thread is inside such a stretch:
the server's event loop checking an answer, and a worker thread reading SearchDesk's copy for it (a
month of a report is tens of thousands of rows fetched from SQLite, all kept). A count of holders
turns it back on when the last one leaves, only if it was on when the first came, so a thread never
undoes another's pause; where collection is already off it stays off, and once a program runs
collection itself (`run_by_caller`: the desktop app, on the Qt thread, app.MainThreadGC) no pause ever
turns it back on, even one that began before. Inside a stretch on the event loop nothing awaits, so no other task
runs with collection held off for longer than that code runs.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0
_was_on = False
_run_by_caller = False


def run_by_caller() -> None:
    """The program runs collection itself from now on (the desktop app: on the Qt thread only, so a
    cycle holding a Qt object is never collected on another thread): a pause never turns it back on."""
    global _run_by_caller
    with _lock:
        _run_by_caller = True


@contextmanager
def collection_paused() -> Iterator[None]:
    """Hold off automatic collection for the block; turn it back on when the last holder leaves, only
    if it was on when the first came."""
    global _holders, _was_on
    with _lock:
        if _holders == 0:
            _was_on = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_on and not _run_by_caller:
                gc.enable()
