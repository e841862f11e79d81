"""The thread the archive's copier and the coverage watch each run on: its own thread and event loop,
told the scope by the app, woken early by it, stopped by the switch.

Why one place: every request of either is made on a thread of its own, never the Qt thread's, so the
agent socket keeps answering and the approval dialog keeps time; both wait between rounds on the
wall clock (a computer asleep overnight looks again when it wakes) and wake at once when the app
changes what they may work on. What each does in a round stays in keeping/archive_sync.py and
keeping/coverage_sync.py (their ``_loop``).
"""

from __future__ import annotations

import logging
import threading
import time

from searchdesk_server.deadlines import IDLE_WAKE_SECONDS

from .archive_copier import Scope

#: The longest one blocking wait between rounds (seconds): how late a woken computer looks again.
MAX_WAIT = IDLE_WAKE_SECONDS


class SyncThread:
    """A loop on a thread of its own: `start` after the person's yes, `update` from the Qt thread,
    `stop` from the switch. A subclass names its thread, its log, the `Stopped` its work raises when
    told to stop, and its `_loop`."""

    thread_name = "searchdesk-sync"
    #: What the log says when the loop ends by a bug ("archive: the copier stopped").
    ended = "the loop stopped"
    log = logging.getLogger(__name__)
    #: What the work raises when it notices the stop (not a failure).
    stopped: tuple[type[Exception], ...] = ()

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scope = Scope()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        #: The last round's outcome, for the person ("" while all is well).
        self.problem = ""

    def update(self, scope: Scope) -> None:
        """From the Qt thread: the accounts Claude may use and the allowed properties now (takes effect
        before the next request)."""
        with self._lock:
            self._scope = scope
        self._wake.set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._main, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self, wait: float | None = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None and wait is not None:
            self._thread.join(wait)

    def _main(self) -> None:
        import anyio

        try:
            anyio.run(self._loop)
        except self.stopped:
            pass
        except Exception:  # a bug must not take the app down; the next start tries again
            self.log.exception(self.ended)

    async def _loop(self) -> None:
        raise NotImplementedError

    async def _idle(self, seconds: float) -> None:
        """Wait ``seconds`` by the wall clock, or until the app wakes the thread or stops it (``stop`` sets
        the wake too). Blocking waits on a worker thread, never a poll (a poll every 50 ms woke the thread
        1,200 times a minute with nothing to do), each at most a minute long, so a computer asleep
        overnight — when the monotonic clock the wait runs on stands still — looks again within a minute
        of waking."""
        import anyio

        end = time.time() + seconds
        # threading.Events, set from the Qt thread: an anyio.Event could not be set from there
        while not self._stop.is_set() and not self._wake.is_set():
            left = end - time.time()
            if left <= 0:
                return
            await anyio.to_thread.run_sync(self._wake.wait, min(left, MAX_WAIT))
