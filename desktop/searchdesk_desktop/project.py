"""Where SearchDesk lives on the web: one address for its help pages and its releases.

Help links and the update check (issues 26 and 27) both point here, so a fork or a move changes one
line. The help pages are the docs of the version that is running (the tag `v<version>`), so what a
person reads matches the app in front of them.
"""

from __future__ import annotations

from . import __version__

REPOSITORY = "https://github.com/searchdesk/searchdesk"
"""The project's home on GitHub: its docs, its releases and its issue tracker."""

RELEASES = f"{REPOSITORY}/releases"
"""The release page a person can open to download a new SearchDesk."""


def docs_url(page: str, anchor: str = "", version: str = __version__) -> str:
    """The address of one help page (a file in docs/, e.g. "troubleshooting.md") of this version.

    Why a tag and not `main`: the page must describe the app the person has, not a later one.
    """
    url = f"{REPOSITORY}/blob/v{version}/docs/{page}"
    return f"{url}#{anchor}" if anchor else url
