"""Daily quotas Google enforces, counted locally so a tool can say what is left and refuse politely.

Google allows 200 Indexing API publish requests a day per Google Cloud project (the OAuth client's
or the service account's; every account signed in through one client shares it) and 2,000 URL
inspections a day per property (whichever account asks). Going
past either only earns a 429 and burns trust, so every spend is counted here, in a small JSON file
in the user data folder that survives restarts and is shared by every server process the user runs.

The day is Google's: midnight in America/Los_Angeles. Writes go to a temporary file that replaces
the old one atomically, under an advisory lock (fcntl on POSIX, msvcrt on Windows) so two processes
cannot both spend the last unit. A file that cannot be read or parsed counts as empty and is
logged; a folder that cannot be written keeps counting in memory. Nothing here raises on I/O.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Final

from .tool_spec import QuotaKind

__all__ = [
    "DAILY_LIMITS",
    "WATCH_PER_MINUTE",
    "WATCH_SPARE",
    "QuotaBook",
    "QuotaError",
    "QuotaKind",
    "default_path",
    "google_day",
]

log = logging.getLogger(__name__)


DAILY_LIMITS: Final[Mapping[QuotaKind, int]] = {QuotaKind.INDEXING: 200, QuotaKind.INSPECTION: 2_000}
#: URL inspections of a property's Google day the coverage watch never takes: Claude's own inspect_url
#: always has these (issue 37).
WATCH_SPARE: Final = 500
#: The coverage watch takes at most this many URL inspections a minute per property (Google allows 600).
WATCH_PER_MINUTE: Final = 60
_FORMAT: Final = 1
_KEEP_DAYS: Final = 2  # today and yesterday: a process whose clock lags a little still finds its day


class QuotaError(ValueError):
    """A quota was asked about in a way that cannot be answered (an unknown kind, a negative count)."""


@functools.cache
def _google_zone() -> tzinfo:
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo("America/Los_Angeles")
    except Exception:  # no tz database (Windows without tzdata): Pacific Standard Time is close enough
        log.warning("searchdesk: no time zone data; counting quota days in UTC-8")
        return timezone(timedelta(hours=-8))


def google_day(now: datetime) -> date:
    """The date in Google's quota day (America/Los_Angeles) at the moment ``now``."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(_google_zone()).date()


def default_path() -> Path:
    """``quota.json`` in the user data folder (imports platformdirs only when asked)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("searchdesk", appauthor=False)) / "quota.json"


def _utc_now() -> datetime:
    return datetime.now(UTC)


Counts = dict[str, dict[str, dict[str, int]]]  # day -> kind -> key -> used


def _parse(raw: object) -> Counts:
    """Keep only well-formed counts; anything else in the file is ignored, not fatal."""
    if not isinstance(raw, dict) or not isinstance(raw.get("days"), dict):
        raise ValueError("not a quota file")
    days: Counts = {}
    for day, kinds in raw["days"].items():
        if not isinstance(day, str) or not isinstance(kinds, dict):
            continue
        try:
            date.fromisoformat(day)
        except ValueError:
            continue
        for kind, keys in kinds.items():
            if not isinstance(kind, str) or not isinstance(keys, dict):
                continue
            for key, used in keys.items():
                if isinstance(key, str) and isinstance(used, int) and not isinstance(used, bool) and used > 0:
                    days.setdefault(day, {}).setdefault(kind, {})[key] = used
    return days


class QuotaBook:
    """Counts quota spends per (kind, key) per Google day in one file shared across processes.

    Every call reads the file afresh, so two books (or two processes) on the same file see each
    other's spends. ``clock`` returns the current time (aware, or naive UTC); tests pass their own.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], datetime] = _utc_now,
        limits: Mapping[QuotaKind, int] | None = None,
    ) -> None:
        self._path = Path(path) if path is not None else None
        self._clock = clock
        self._limits = dict(DAILY_LIMITS if limits is None else limits)
        self._memory: Counts = {}  # used only while the file cannot be written
        self._warned: set[str] = set()
        self._watch_minute: dict[str, collections.deque[datetime]] = {}  # the watch's spends in the last minute

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = default_path()
        return self._path

    def today(self) -> date:
        """Google's current day (pass it back to :meth:`refund` to refund the right day)."""
        return google_day(self._clock())

    def limit(self, kind: QuotaKind | str) -> int:
        return self._limits[self._kind(kind)]

    def used(self, kind: QuotaKind | str, key: str) -> int:
        kind = self._kind(kind)
        with self._locked():
            counts = self._load()
        return counts.get(self.today().isoformat(), {}).get(kind.value, {}).get(key, 0)

    def remaining(self, kind: QuotaKind | str, key: str) -> int:
        """How many more spends today allows (never negative)."""
        return max(0, self.limit(kind) - self.used(kind, key))

    def try_spend(self, kind: QuotaKind | str, key: str, n: int = 1, *, spare: int = 0) -> bool:
        """Spend ``n`` if all of them fit in today's quota with ``spare`` still left after them;
        otherwise spend nothing and say False."""
        kind = self._kind(kind)
        if n < 0:
            raise QuotaError(f"A quota spend must be zero or more, not {n}.")
        day = self.today().isoformat()
        with self._locked():
            counts = self._load()
            keys = counts.setdefault(day, {}).setdefault(kind.value, {})
            if keys.get(key, 0) + n > self._limits[kind] - spare:
                return False
            if n:
                keys[key] = keys.get(key, 0) + n
                self._store(counts)
        return True

    def try_spend_watch(self, site: str) -> bool:
        """Take one URL inspection of ``site``'s count for the coverage watch — the same count
        inspect_url spends from — only if it leaves the property's last `WATCH_SPARE` of Google's day
        and the watch has taken fewer than `WATCH_PER_MINUTE` for it in the last minute (counted by
        this book: the one watcher in the app). False: not now; nothing was taken."""
        now = self._clock()
        recent = self._watch_minute.setdefault(site, collections.deque())
        while recent and (now - recent[0]).total_seconds() >= 60:
            recent.popleft()
        if len(recent) >= WATCH_PER_MINUTE:
            return False
        if not self.try_spend(QuotaKind.INSPECTION, site, spare=WATCH_SPARE):
            return False
        recent.append(now)
        return True

    def refund(self, kind: QuotaKind | str, key: str, n: int = 1, *, day: date | None = None) -> None:
        """Give back ``n`` spends that never reached Google (never below zero).

        ``day`` is the day the spend was made (from :meth:`today` before spending); a refund for a
        day that has passed changes nothing today.
        """
        kind = self._kind(kind)
        if n < 0:
            raise QuotaError(f"A quota refund must be zero or more, not {n}.")
        with self._locked():
            counts = self._load()
            keys = counts.get((day or self.today()).isoformat(), {}).get(kind.value, {})
            if n and key in keys:
                left = keys[key] - n
                if left > 0:
                    keys[key] = left
                else:
                    del keys[key]
                self._store(counts)

    # --- storage ---------------------------------------------------------------------------

    def _warn(self, what: str, message: str, *args: object) -> None:
        """Log each kind of trouble once per book: a broken folder must not flood stderr."""
        if what not in self._warned:
            self._warned.add(what)
            log.warning(message, *args)

    def _kind(self, kind: QuotaKind | str) -> QuotaKind:
        try:
            resolved = QuotaKind(kind)
        except ValueError:
            raise QuotaError(f"There is no quota called {kind!r}.") from None
        if resolved not in self._limits:
            raise QuotaError(f"There is no limit set for the {resolved.value} quota.")
        return resolved

    def _load(self) -> Counts:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            counts: Counts = {}
        except (OSError, UnicodeDecodeError) as err:
            self._warn("read", "searchdesk: cannot read the quota file %s (%s); counting in memory", self.path, err)
            return self._prune(self._memory)
        else:
            try:
                counts = _parse(json.loads(text))
            except (ValueError, RecursionError) as err:
                self._warn("damaged", "searchdesk: the quota file %s is damaged (%s); starting afresh", self.path, err)
                counts = {}
        # What this process counted while the file could not be written still counts.
        for day, kinds in self._memory.items():
            for kind, keys in kinds.items():
                for key, used in keys.items():
                    slot = counts.setdefault(day, {}).setdefault(kind, {})
                    slot[key] = max(slot.get(key, 0), used)
        return self._prune(counts)

    def _prune(self, counts: Counts) -> Counts:
        today = self.today()
        oldest = today - timedelta(days=_KEEP_DAYS - 1)
        return {day: kinds for day, kinds in counts.items() if oldest <= date.fromisoformat(day) <= today}

    def _store(self, counts: Counts) -> None:
        import tempfile

        data = json.dumps({"format": _FORMAT, "days": counts}, sort_keys=True, indent=1)
        path = self.path
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".quota-", suffix=".tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(data)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as err:
            self._warn("write", "searchdesk: cannot write the quota file %s (%s); counting in memory", path, err)
            self._memory = counts
        else:
            self._memory = {}

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the advisory lock on ``<file>.lock`` (a separate file: the data file is replaced)."""
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            lock_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as err:
            self._warn("lock", "searchdesk: cannot open the quota lock %s (%s); counting unlocked", lock_path, err)
            yield
            return
        try:
            try:
                _lock(fd)
            except OSError as err:  # e.g. ENOLCK on a network file system
                self._warn("lock", "searchdesk: cannot lock %s (%s); counting unlocked", lock_path, err)
                yield
                return
            try:
                yield
            finally:
                _unlock(fd)
        finally:
            os.close(fd)


if sys.platform == "win32":  # pragma: no cover - CI runs on Linux only; the Windows lock is not run there
    import msvcrt

    def _lock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        for _ in range(5):  # LK_LOCK itself retries for about 10 s before it raises
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return
            except OSError:
                continue
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)

    def _unlock(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
