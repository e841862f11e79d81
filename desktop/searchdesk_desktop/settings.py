"""The app's own settings (nothing secret): a small JSON file in the user's config folder.

Secrets never come here: refresh tokens are in the OS keyring, and a service-account key stays in the
file the person chose (we remember its path, not its contents). The list of Google accounts is here:
their e-mail addresses, kinds and key-file paths. The demo keeps its settings in a file of its own, so
nothing chosen while trying the demo (a made-up default property, say) ever reaches the real entry in
Claude Desktop.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from .claude.entry import ServerSettings
from .keeping.record_keeper import DEFAULT_DAYS


def config_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir("searchdesk", appauthor=False))


def settings_file(demo: bool = False) -> Path:
    return config_dir() / ("demo-settings.json" if demo else "settings.json")


@dataclass
class AppSettings:
    read_only: bool = False
    groups: list[str] = field(default_factory=list)
    site_url: str = ""
    allowed_sites: list[str] = field(default_factory=list)
    #: Before several accounts: the one service-account key file (moved into `accounts` on start).
    service_account_file: str = ""
    first_run_done: bool = False
    #: The Google accounts, in order: {"email", "kind", "key_file"} (accounts.AccountStore reads them).
    accounts: list[dict[str, str]] = field(default_factory=list)
    default_account: str = ""
    #: Accounts Claude may not use (Settings); every other one it may, a newly added one included.
    withheld_accounts: list[str] = field(default_factory=list)
    #: How many days the record of changes keeps a row (keeping.CHOICES; 0: until cleared). A year
    #: unless the person chose otherwise: the record is for their safety, and stays on this computer.
    kept_for_days: int = DEFAULT_DAYS
    #: The person has seen, and closed, the main window's note that SearchDesk now keeps that record.
    record_notice_done: bool = False
    #: Whether Claude Desktop's settings folder was there before SearchDesk first wrote to it ("yes", "no";
    #: "": not known yet). A folder SearchDesk made itself is no evidence that Claude Desktop is installed.
    claude_folder_before: str = ""
    #: When a server Claude Desktop started last connected and said so (0.0: never), and its version.
    claude_seen_at: float = 0.0
    claude_seen_version: str = ""
    #: The update check (updates/checker.py): off until the person turns it on; asked once at first start.
    update_check: bool = False
    update_check_asked: bool = False
    #: When the last check was tried (0.0: never): at most one a day.
    update_checked_at: float = 0.0
    #: The newest version a signed manifest named, and its release page ("" until one was newer).
    newer_version: str = ""
    newer_url: str = ""
    #: What the check has believed (update_manifest.Seen): the highest version and the newest `issued` of a
    #: signed manifest, so an older one played back is refused; and when it last had such a fresh answer.
    update_seen_version: str = ""
    update_seen_issued: float = 0.0
    update_fresh_at: float = 0.0
    #: How the last check ended (update_manifest.Outcome's value; "" before the first), for About.
    update_last_outcome: str = ""
    #: The archive (keeping/archive_sync.py): off until the person says yes, asked once after sign-in and in Settings.
    archive_on: bool = False
    archive_asked: bool = False
    #: Properties whose copy the person paused (what is kept stays; nothing new is asked of Google for them).
    archive_paused: list[str] = field(default_factory=list)
    #: Brand terms per property for the brand report (report_brand_split), as the person keeps them;
    #: a property without a list gets the terms its domain name suggests (searchdesk_server.brand).
    brand_terms: dict[str, list[str]] = field(default_factory=dict)
    #: The coverage watch (keeping/coverage_keeper.py): off until the person says yes, asked once after the
    #: archive's question and in Settings (Pause per property is kept in the watch's own store).
    coverage_on: bool = False
    coverage_asked: bool = False

    def choose(
        self,
        *,
        read_only: bool,
        groups: Sequence[str],
        site_url: str,
        allowed_sites: Sequence[str],
        brand_terms: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        """Settings' choices that reach the server through our entry: the tools offered, the default and
        the allowed properties, and the brand's names per property (None: as they are)."""
        self.read_only = read_only
        self.groups = list(groups)
        self.site_url = site_url
        self.allowed_sites = list(allowed_sites)
        if brand_terms is not None:
            self.brand_terms = {site: list(words) for site, words in brand_terms.items()}

    def server_settings(self, *, demo: bool = False, agent_socket: str = "") -> ServerSettings:
        return ServerSettings(
            read_only=self.read_only,
            groups=tuple(self.groups),
            site_url=self.site_url,
            allowed_sites=tuple(self.allowed_sites),
            brand_terms=self._brand_terms(),
            demo=demo,
            agent_socket=agent_socket,
        )

    def _brand_terms(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The kept brand lists the server accepts: a property it can read and a list of words (a damaged
        entry in the file is left out rather than stop the server at start)."""
        from searchdesk_server.brand import clean_terms
        from searchdesk_server.properties import PropertyError, normalise_property

        out = []
        for site, terms in sorted(self.brand_terms.items()):
            try:
                prop = normalise_property(site)
            except (PropertyError, TypeError, AttributeError):
                continue
            words = clean_terms(terms) if isinstance(terms, list) else ()
            if words:
                out.append((prop, words))
        return tuple(out)

    @classmethod
    def load(cls, path: Path | None = None) -> AppSettings:
        path = path or settings_file()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict):
            return cls()
        known = {f.name: f for f in fields(cls)}
        kept: dict[str, Any] = {}
        defaults = cls()
        for key, value in data.items():
            if key in known and type(value) is type(getattr(defaults, key)):
                kept[key] = value
        return cls(**kept)

    def save(self, path: Path | None = None) -> None:
        path = path or settings_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".settings.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(asdict(self), fh, indent=2)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
