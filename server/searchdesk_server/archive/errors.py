"""What can go wrong with the archive, as types; every message is for a person."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


class ArchiveError(Exception):
    """The archive cannot do what was asked; the message is for a person."""


class ArchiveDamaged(ArchiveError):
    """The file is not a readable archive (`recover` sets it aside and keeps what is readable)."""


class CannotAnswer(ArchiveError):
    """The archive keeps no table for these dimensions or filters (e.g. by country and device)."""


def damage(path: Path) -> Callable[[], ArchiveDamaged]:
    """The error a damaged archive file raises, in words for the person."""
    return lambda: ArchiveDamaged(f"The archive file {path.name} is damaged.")
