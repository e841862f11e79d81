"""The pages a site owner reads stay short and free of what only IT and developers need.

A site owner follows the README's first part to Getting started, one setup page, and the pages they
link to. Those pages must not send them into environment variables, API host names or file formats
(that is what Advanced setup is for), and each must be short enough to read in one go.

How words are counted: the Markdown source, without HTML comments and without the target part of
links and images (the ``(…)`` after ``]``), split on whitespace; for README.md only the part above
its "## For developers" heading. The limit is 800 words a page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

#: The site owner's pages.
SITE_OWNER_PAGES = [
    "README.md",
    "docs/asking-a-person.md",
    "docs/getting-started.md",
    "docs/before-you-install.md",
    "docs/setup-macos.md",
    "docs/setup-windows.md",
    "docs/setup-linux.md",
    "docs/every-day.md",
    "docs/privacy.md",
    "docs/troubleshooting.md",
    "docs/troubleshooting-sign-in.md",
    "docs/troubleshooting-claude-desktop.md",
    "docs/troubleshooting-check.md",
    "docs/troubleshooting-claude-answers.md",
]
MAX_WORDS = 800
DEVELOPERS_HEADING = "## For developers"

#: Environment variables (ours, and any written as %NAME% or $NAME), API hosts, file formats.
FORBIDDEN = {
    "an environment variable": re.compile(r"GSC_|SEARCHDESK_|ELICITATION|%[A-Z_]{3,}%|\$[A-Z_]{3,}\b"),
    "a host name": re.compile(r"googleapis\.com|127\.0\.0\.1|localhost|accounts\.google\.com"),
    "a file format name": re.compile(r"\bJSON\b|\bCSV\b|\bPEM\b|\.mcpb\b|\.dmg\b|\.exe\b|\.tar\.gz\b|\.json\b", re.I),
}

LINK_TARGET = re.compile(r"\]\([^)]*\)")
COMMENT = re.compile(r"<!--.*?-->", re.S)


def site_owner_text(name: str, root: Path = REPO) -> str:
    """What a site owner reads of a page: for the README, the part above "For developers"."""
    text = (root / name).read_text(encoding="utf-8")
    if name == "README.md":
        assert DEVELOPERS_HEADING in text, "the README keeps everything for developers under one heading"
        text = text.split(DEVELOPERS_HEADING, 1)[0]
    return text


def prose(text: str) -> str:
    """The words a person reads: no comments, no link or image targets."""
    return LINK_TARGET.sub("]", COMMENT.sub("", text))


def word_count(text: str) -> int:
    return len(prose(text).split())


def problems(text: str) -> list[str]:
    words = word_count(text)
    found = [f"{words} words (at most {MAX_WORDS})"] if words > MAX_WORDS else []
    for kind, pattern in FORBIDDEN.items():
        found += [f"{kind}: {m.group(0)!r}" for m in pattern.finditer(prose(text))]
    return found


@pytest.mark.parametrize("name", SITE_OWNER_PAGES)
def test_site_owner_page_is_short_and_plain(name: str) -> None:
    assert problems(site_owner_text(name)) == [], f"{name} is for site owners; move the rest to advanced-setup.md"


def test_the_checks_find_what_does_not_belong() -> None:
    """Each kind of problem, once, so a check that stopped working would show here."""
    long_text = "word " * (MAX_WORDS + 1)
    assert problems(long_text) == [f"{MAX_WORDS + 1} words (at most {MAX_WORDS})"]
    assert problems("word " * MAX_WORDS) == []
    text = (
        "Set GSC_READ_ONLY, or SEARCHDESK_DEMO, or ELICITATION; open %APPDATA% or $HOME. "
        "Let searchconsole.googleapis.com and 127.0.0.1 through. Edit the JSON file, the .mcpb, a CSV."
    )
    kinds = [p.split(":")[0] for p in problems(text)]
    assert kinds.count("an environment variable") == 5
    assert kinds.count("a host name") == 2
    assert kinds.count("a file format name") == 3
    # Link targets are not read: a link to Google's help page is fine, its address is not prose.
    assert problems("[Google's help](https://developers.google.com/identity/protocols/oauth2#expiration)") == []


def test_the_readme_is_cut_at_for_developers(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text(f"# X\n\nFor site owners.\n\n{DEVELOPERS_HEADING}\n\nGSC_READ_ONLY\n")
    assert problems(site_owner_text("README.md", tmp_path)) == []
    (tmp_path / "README.md").write_text("# X\n\nGSC_READ_ONLY\n")
    with pytest.raises(AssertionError, match="under one heading"):
        site_owner_text("README.md", tmp_path)
