"""The app's side of the archive: its files (``Archives``), the person's yes, the switch, pause and delete
(``ArchiveKeeper``), and the words Settings shows for them.

Google deletes Search Console's performance data after 16 months. Once the person has said yes
(``AppSettings.archive_on``, asked once after sign-in and in Settings), the copier (keeping/archive_sync.py)
copies what Google still has; nothing is requested before the yes: no copier exists until then. Only
the accounts Claude may use and the allowed properties are copied; whether a withheld or removed
account's archive is kept is the person's choice (``ArchiveKeeper.delete``).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .archive_copier import Scope, Table
from .archive_sync import AccessTokenFor, ArchiveSync
from .keeper import Keeper, account_files

log = logging.getLogger(__name__)


class Archives:
    """The app's side of the store: one archive file per account (the store's ``path_for``), opened to
    write on the copier's thread only; the windows read with connections of their own (``kept``), so
    a read never sees a day half written and never waits on the copier."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._open: dict[str, Any] = {}
        self._lock = threading.Lock()

    def path(self, account: str) -> Path:
        from searchdesk_server.archive import store

        return (self.folder / store.account_file(account)) if self.folder else store.path_for(account)

    def _writer(self, account: str) -> Any:
        from searchdesk_server.archive import store

        with self._lock:
            archive = self._open.get(account.casefold())
            if archive is None:
                path = self.path(account)
                try:
                    archive = _open_writer(path)
                except store.ArchiveDamaged:
                    recovery = store.recover(path)  # set aside, never deleted; the loss is recorded in the new file
                    log.warning("archive: a damaged file was set aside; %d days lost", len(recovery.lost))
                    archive = store.Archive.open(path)
                self._open[account.casefold()] = archive
            return archive

    def copied_days(self, account: str, site: str, search_type: str) -> set[dt.date]:
        return set(self._writer(account).days(site, search_type))

    def put_day(
        self, account: str, site: str, search_type: str, day: dt.date, tables: Mapping[str, Table], copied_at: float
    ) -> None:
        from searchdesk_server.archive import store

        # Discover and Google News have no queries: their query tables are kept, empty, as Google has them.
        rows = {name: list(tables[name].rows) if name in tables else [] for name in store.TABLES}
        cut = {name: tables[name].cut if name in tables else False for name in store.TABLES}
        when = dt.datetime.fromtimestamp(copied_at, dt.UTC)
        self._writer(account).write_day(site, day, search_type, rows, copied_at=when, truncated=cut)

    def roll_up(self, account: str, site: str, search_type: str, before: dt.date) -> int:
        """Sum the whole months before `before` once (the store's ``roll_up``): the months Google no
        longer has, which the copier never writes again, read whole by the content-decay report."""
        return int(self._writer(account).roll_up(site, search_type, before))

    def kept(self, account: str, site: str) -> Any:
        """For the windows: the store's ``Kept`` for a property (None: nothing kept)."""
        from searchdesk_server.archive import store

        try:
            archive = store.Archive.open_readonly(self.path(account))
        except store.ArchiveError:
            return None
        if archive is None:
            return None
        with archive:
            kept = archive.kept(site)
        return kept if kept.days else None

    def accounts(self) -> list[str]:
        """The accounts with an archive file here, a removed account's included (to keep or delete)."""
        import urllib.parse

        from searchdesk_server.archive import store

        folder = self.folder or store.folder()
        try:
            names = sorted(p.name for p in folder.glob("*.sqlite3") if p.name != store.DEMO_FILE)
        except OSError:
            return []
        return [urllib.parse.unquote(name.removesuffix(".sqlite3")) for name in names]

    def properties(self, account: str) -> list[str]:
        """The properties with kept days in an account's archive."""
        from searchdesk_server.archive import store

        try:
            archive = store.Archive.open_readonly(self.path(account))
        except store.ArchiveError:
            return []
        if archive is None:
            return []
        with archive:
            return list(archive.sites())

    def files(self, account: str) -> tuple[list[Path], list[Path]]:
        """An account's files on this computer: its archive (with SQLite's two side files), and the
        damaged ones set aside beside it (``store.recover``: ``<name>.damaged-<time>``). What the person
        is asked to keep or delete when the account is withheld or removed, and what Delete removes."""
        return account_files(self.path(account))

    def delete(self, account: str, site: str | None = None) -> None:
        """The person's Delete: one property's days, or (``site`` None) every file the account has here,
        the damaged ones set aside included. Runs on a worker thread: it takes the file's write lock."""
        from searchdesk_server.archive import store

        with self._lock:
            archive = self._open.pop(account.casefold(), None)
        if archive is not None:
            archive.close()
        path = self.path(account)
        if site is None:
            kept, aside = self.files(account)
            for file in (*kept, *aside):
                file.unlink(missing_ok=True)
            return
        if path.exists():
            with store.Archive.open(path) as writer:
                writer.delete_site(site)
                writer.vacuum()

    def close(self) -> None:
        with self._lock:
            for archive in self._open.values():
                archive.close()
            self._open.clear()


def _open_writer(path: Path) -> Any:
    """The store's writer, checked for damage; a file a reader is just opening (the server recovering a
    killed copier's write-ahead log) is tried again for a few seconds rather than given up on."""
    import sqlite3

    from searchdesk_server.archive import store

    for attempt in range(10):
        try:
            return store.Archive.open(path, check=path.exists())
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == 9:
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable")


QUESTION = "Keep your history beyond 16 months on this computer?"
EXPLAINED = (
    "Google keeps your search performance for 16 months, then deletes it. SearchDesk can keep a copy on this "
    "computer — each property's clicks, impressions, pages and the searches people made — so that Claude can "
    "compare with earlier years. It copies in the background, a little at a time, and sends nothing anywhere "
    "but to Google, to ask for your own data."
)


@dataclass(frozen=True)
class PropertyLine:
    """One property's line in Settings: "Kept since <date> · <size> on this computer · last copied <time>"."""

    account: str
    site: str
    text: str
    paused: bool
    copied: bool  # still being copied (an account Claude may use); False: kept only until deleted


def size_text(size: int) -> str:
    """Bytes as a person reads them (decimal units, as file managers show them)."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{size} bytes"


def kept_text(kept: Any) -> str:
    since = f"{kept.since.day} {kept.since:%B %Y}" if kept.since else "—"
    when = kept.last_copied.astimezone() if kept.last_copied else None
    copied = f"{when.day} {when:%B} at {when:%H:%M}" if when else "never"
    return f"Kept since {since} · {size_text(kept.size_bytes)} on this computer · last copied {copied}"


class ArchiveKeeper(Keeper[ArchiveSync]):
    """What the app holds of the archive: the person's answer (``AppSettings.archive_on``), the copier
    (made only after the yes), and the controls Settings offers. Called on the Qt thread; the copy and
    deletions run on threads of their own."""

    on_setting = "archive_on"
    asked_setting = "archive_asked"
    delete_thread = "searchdesk-archive-delete"

    def __init__(
        self,
        settings: Any,
        save: Callable[[], None],
        tokens: AccessTokenFor,
        scope: Callable[[], Scope],
        *,
        demo: bool = False,
        archives: Archives | None = None,
        accounts: Callable[[], Sequence[str]] = lambda: (),
        on_copied: Callable[[], None] = lambda: None,
        **sync_options: Any,
    ) -> None:
        super().__init__(settings, save, tokens, scope, demo=demo, accounts=accounts, sync_options=sync_options)
        self.archives = archives or Archives()
        self._on_copied = on_copied

    @property
    def should_ask(self) -> bool:
        """Asked once, after a sign-in: never in the demo (its server has an archive of its own)."""
        return not self.demo and not self.settings.archive_asked and bool(self._accounts())

    def scope(self) -> Scope:
        scope = self._scope()
        return Scope(scope.accounts, scope.allowed_sites, tuple(self.settings.archive_paused))

    def _new_sync(self) -> ArchiveSync:
        return ArchiveSync(self.archives, self._tokens, on_copied=self._on_copied, **self._sync_options)

    def pause(self, site: str, paused: bool) -> None:
        kept = [s for s in self.settings.archive_paused if s != site]
        self.settings.archive_paused = [*kept, site] if paused else kept
        self._save()
        self.refresh()

    def lines(self) -> list[PropertyLine]:
        """Every kept property of every account the app knows (a withheld one's too, to keep or delete)."""
        scope = self.scope()
        out = []
        known = list(self._accounts())
        folded = {a.casefold() for a in known}
        for account in [*known, *(a for a in self.archives.accounts() if a.casefold() not in folded)]:
            for site in self.archives.properties(account):
                kept = self.archives.kept(account, site)
                if kept is None:
                    continue
                copied = self.on and account in scope.accounts and scope.site_ok(site)
                out.append(PropertyLine(account, site, kept_text(kept), site in scope.paused, copied))
        return out

    def has_copy(self, account: str) -> bool:
        """Whether the account has archive files here (its copy, or a damaged one set aside): only then
        is the person asked, when it is withheld or removed, whether to keep or delete them."""
        kept, aside = self.archives.files(account)
        return bool(kept or aside) and not self.demo

    def delete(self, account: str, site: str | None, done: Callable[[], None] = lambda: None) -> None:
        """The person's Delete, on a thread of its own (it takes the file's write lock)."""
        self._in_background(lambda: self.archives.delete(account, site), done)
