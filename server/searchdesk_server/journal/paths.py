"""Where the journal lives: the person's data folder (platformdirs), the demo's file apart.

On Windows a server started by Claude Desktop's MSIX package may have its writes to AppData redirected
into the package's own folder (`%LOCALAPPDATA%\\Packages\\<package>\\LocalCache\\Local\\…`), so the app
reads every journal it finds there as well (`all_journals`). That redirection never happens on macOS or
Linux, and the Windows half never ran on this project's Linux machines.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

APP_NAME = "searchdesk"
FILE = "journal.sqlite3"
DEMO_FILE = "demo-journal.sqlite3"
#: The app's note of the newest row it has seen (`check.Seen`): deleting the newest rows is found
#: against it. Beside the journal, written only by the app.
SEEN_SUFFIX = ".seen.json"


def data_folder() -> Path:
    """The person's data folder for SearchDesk (`platformdirs.user_data_dir`, imported when asked)."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def journal_path(*, demo: bool = False) -> Path:
    """The journal this process writes: the demo keeps its own, never mixed with the person's record."""
    return data_folder() / (DEMO_FILE if demo else FILE)


def seen_path(journal: Path) -> Path:
    """Where the app keeps the last row it saw of `journal`."""
    return journal.with_name(journal.name + SEEN_SUFFIX)


def packaged_journals(
    *, demo: bool = False, env: Mapping[str, str] | None = None, platform: str | None = None
) -> list[Path]:
    """Journals written by servers whose AppData writes an MSIX package redirected (Windows only):
    `%LOCALAPPDATA%\\Packages\\*\\LocalCache\\Local\\searchdesk\\<file>` for every package."""
    env = os.environ if env is None else env
    if (platform or sys.platform) != "win32" or not env.get("LOCALAPPDATA"):
        return []
    packages = Path(env["LOCALAPPDATA"]) / "Packages"
    name = DEMO_FILE if demo else FILE
    try:
        found = sorted(packages.glob(f"*/LocalCache/Local/{APP_NAME}/{name}"))
    except OSError:
        return []
    return [p for p in found if p.is_file()]


def all_journals(*, demo: bool = False) -> list[Path]:
    """Every journal the app shows: its own place first, then any a package redirected."""
    return [journal_path(demo=demo), *packaged_journals(demo=demo)]
