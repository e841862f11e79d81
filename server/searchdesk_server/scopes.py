"""Google's OAuth scopes SearchDesk asks for, and Google's token address.

On the start-up path (`config` checks a service-account key's token address at start; `google/grants.py`
owns everything else about grants): stdlib only. Each tool's entry names the scopes it needs
(`catalogue`); `minimal_scopes` asks for the fewest that grant them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

__all__ = [
    "SCOPE_IMPLIES",
    "SCOPE_INDEXING",
    "SCOPE_SV",
    "SCOPE_SV_VERIFY",
    "SCOPE_WM",
    "SCOPE_WM_RO",
    "TOKEN_URL",
    "WRITE_CAPABLE_SCOPES",
    "minimal_scopes",
]

SCOPE_WM: Final = "https://www.googleapis.com/auth/webmasters"
SCOPE_WM_RO: Final = "https://www.googleapis.com/auth/webmasters.readonly"
SCOPE_SV: Final = "https://www.googleapis.com/auth/siteverification"
SCOPE_SV_VERIFY: Final = "https://www.googleapis.com/auth/siteverification.verify_only"
SCOPE_INDEXING: Final = "https://www.googleapis.com/auth/indexing"

#: Google's token endpoint: the address a service-account key must name (`config` refuses another at
#: start) and where every grant goes (`google/grants.py`, which owns everything else about grants).
TOKEN_URL: Final = "https://oauth2.googleapis.com/token"  # noqa: S105 (an address, not a secret)
#: A scope that grants everything the key's scope grants (used to request the fewest scopes).
SCOPE_IMPLIES: Final[Mapping[str, frozenset[str]]] = {
    SCOPE_WM: frozenset({SCOPE_WM_RO}),
    SCOPE_SV: frozenset({SCOPE_SV_VERIFY}),
}
#: Scopes that can change something; read-only mode names them when a tool brings one in.
WRITE_CAPABLE_SCOPES: Final = frozenset({SCOPE_WM, SCOPE_SV, SCOPE_SV_VERIFY, SCOPE_INDEXING})


def minimal_scopes(scopes: Iterable[str]) -> tuple[str, ...]:
    """The fewest scopes granting all of `scopes` (a writer scope covers its read-only twin)."""
    wanted = set(scopes)
    for broad, narrow in SCOPE_IMPLIES.items():
        if broad in wanted:
            wanted -= narrow
    return tuple(sorted(wanted))
