"""What the app holds of a background job the person said yes to (the archive's copy, the coverage
watch): the answer in the settings, the job's thread made only after the yes, and Delete on a
thread of its own.

Why one place: both keepers follow the same rules and must keep doing so: nothing that could reach
Google or a website exists before the yes; a no stops the thread at once; a change of accounts or
allowed properties reaches the thread before its next request; a deletion never runs on the Qt
thread. What each keeps, its scope and its lines stay in keeping/archive_keeper.py and keeping/coverage_keeper.py.
"""

from __future__ import annotations

import glob
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from .archive_copier import Scope
from .archive_sync import AccessTokenFor
from .sync_thread import SyncThread

S = TypeVar("S", bound=SyncThread)


def account_files(path: Path) -> tuple[list[Path], list[Path]]:
    """An account's file on this computer (with SQLite's two side files), and the damaged ones set aside
    beside it (``account_sqlite.set_aside``: ``<name>.damaged-<time>``): what the person is asked to keep
    or delete when the account is withheld or removed, and what an account's Delete removes."""
    kept = [p for p in (Path(f"{path}{s}") for s in ("", "-wal", "-shm")) if p.exists()]
    try:
        aside = sorted(path.parent.glob(f"{glob.escape(path.name)}.damaged-*"))
    except OSError:
        aside = []
    return kept, aside


class Keeper(Generic[S]):
    """The person's yes and the job's thread. A subclass names its two settings (`on_setting`, set by
    the switch; `asked_setting`, set once the question is answered), its delete thread's name, its
    `scope` and how its thread is made (`_new_sync`). Called on the Qt thread."""

    on_setting = ""
    asked_setting = ""
    delete_thread = "searchdesk-delete"

    def __init__(
        self,
        settings: Any,
        save: Callable[[], None],
        tokens: AccessTokenFor,
        scope: Callable[[], Scope],
        *,
        demo: bool,
        accounts: Callable[[], Sequence[str]],
        sync_options: dict[str, Any],
    ) -> None:
        self.settings = settings
        self._save = save
        self._tokens = tokens
        self._scope = scope
        self.demo = demo
        self._accounts = accounts
        self._sync_options = sync_options
        self.sync: S | None = None

    @property
    def on(self) -> bool:
        return bool(getattr(self.settings, self.on_setting)) and not self.demo

    def set_on(self, on: bool) -> None:
        """The person's answer (the question, or Settings' switch): a yes starts the job, a no stops it at once."""
        setattr(self.settings, self.on_setting, bool(on))
        setattr(self.settings, self.asked_setting, True)
        self._save()
        if self.on:
            self.start()
        else:
            self.stop()

    def scope(self) -> Scope:
        raise NotImplementedError

    def _new_sync(self) -> S:
        raise NotImplementedError

    def start(self) -> None:
        if not self.on:
            return  # before the yes nothing is made that could reach Google or a website
        if self.sync is None:
            self.sync = self._new_sync()
        self.sync.update(self.scope())
        self.sync.start()

    def refresh(self) -> None:
        """The accounts, allowed properties or pauses changed: the thread sees it before its next request."""
        if self.sync is not None:
            self.sync.update(self.scope())

    def stop(self, wait: float | None = 5.0) -> None:
        if self.sync is not None:
            self.sync.stop(wait)
            self.sync = None

    def _in_background(self, work: Callable[[], None], done: Callable[[], None]) -> None:
        """The person's Delete on a thread of its own (it may wait on the file's writer); `done` after,
        whatever happened."""

        def run() -> None:
            try:
                work()
            finally:
                done()

        threading.Thread(target=run, name=self.delete_thread, daemon=True).start()
