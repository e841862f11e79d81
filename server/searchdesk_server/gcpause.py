"""Python's cycle collector held off while one answer's objects are built in one synchronous stretch.

Decoding a 25,000-row Search Analytics answer makes about 50,000 containers (a dict and a list per
row) and checking it about 50,000 more (a tuple per entry and per key). Each 700 of them start a
collection, and every tenth of those walks all the older objects too (the server's own modules,
about 90,000). Everything made in the stretch stays alive until it ends, so those collections free
nothing: measured, they were a third of the answer's CPU. One collection afterwards does their work.

Only on the main thread (the server's event loop) and only around code that does not await, so no
other task runs with collection held off; elsewhere (an export's worker thread, the desktop app's
threads) it does nothing, so it can never undo another thread's choice. Where collection is already
off (the desktop app runs it on the Qt thread, app.MainThreadGC), it stays off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """Hold off automatic collection for the block; turn it back on afterwards only if it was on."""
    if not gc.isenabled() or threading.current_thread() is not threading.main_thread():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
