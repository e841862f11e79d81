"""The desktop app's rooms: few files sit flat at the top of its package, and docs/architecture.md names
every room and every file that does.

Forty-five modules once sat side by side in `desktop/searchdesk_desktop/`, their rooms told only by
name prefixes (`claude_*`, `archive_*`, `update_*`), so a reader could not see which part a change
belonged to. Each room is now a package, named as the architecture's table of rooms names it; at the
top sit only the app, the facade, the tray and what every room shares. Beside the import-circle test,
which holds the arrows between the rooms.
"""

from __future__ import annotations

from pathlib import Path

from tests import REPO

PACKAGE = REPO / "desktop" / "searchdesk_desktop"
#: The app, the facade, the tray, `__init__`/`__main__` and the few pieces every room shares.
MOST_FLAT = 15


def flat_files(package: Path) -> list[str]:
    return sorted(p.name for p in package.glob("*.py"))


def rooms(package: Path) -> list[str]:
    return sorted(p.parent.name for p in package.glob("*/__init__.py"))


def rooms_table() -> str:
    """The section of docs/architecture.md that lays out the desktop app."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## The desktop app's rooms") :]
    return section[: section.index("\n## ")]


def test_at_most_15_files_sit_flat_in_the_desktop_package() -> None:
    flat = flat_files(PACKAGE)
    assert len(flat) <= MOST_FLAT, (
        f"{len(flat)} files at the top of searchdesk_desktop (at most {MOST_FLAT}): put a room's modules in "
        f"its package: {', '.join(flat)}"
    )


def test_the_architecture_names_every_room_and_every_flat_file() -> None:
    table = rooms_table()
    unnamed = [f"{room}/" for room in rooms(PACKAGE) if f"`{room}/" not in table]
    unnamed += [name for name in flat_files(PACKAGE) if name != "__init__.py" and f"`{name}`" not in table]
    assert unnamed == [], "docs/architecture.md's rooms table does not name these"


def test_the_count_sees_a_flat_file_added(tmp_path: Path) -> None:
    """The check itself can fail: one file more than allowed at the top is counted."""
    for n in range(MOST_FLAT + 1):
        (tmp_path / f"m{n}.py").write_text("")
    (tmp_path / "room").mkdir()
    (tmp_path / "room" / "__init__.py").write_text("")
    assert len(flat_files(tmp_path)) == MOST_FLAT + 1 and rooms(tmp_path) == ["room"]
