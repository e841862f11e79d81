"""The docs' relative links and pictures must lead somewhere.

A site owner who follows a link to a page or a section that is not there is stuck, and a screenshot
that was renamed leaves a hole in Getting started. So every relative link and image in README.md,
CHANGELOG.md and docs/*.md must name an existing file, and a `#section` must name a heading of that
file (GitHub's anchors). Links inside code are not links and are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[3]
DOCS = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md"))
PAGES = ["README.md", "CHANGELOG.md", *DOCS]

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1[ \t]*$", re.M | re.S)
INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
INLINE_LINK = re.compile(r"\]\(\s*<?([^()\s<>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
HTML_LINK = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)\s*=\s*[\"']([^\"']+)[\"']", re.I)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
IMAGE_NAME = re.compile(r"(?:docs/)?images/[\w.-]+\.png")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose(text: str) -> str:
    """The text without code: fenced blocks and inline code spans hold examples, not links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def targets(text: str) -> Iterator[str]:
    """Every link and image target written in the prose (inline, reference-style, or HTML)."""
    body = prose(text)
    for pattern in (INLINE_LINK, REFERENCE, HTML_LINK):
        for match in pattern.finditer(body):
            yield match.group(1)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: link syntax reduced to its text, lower case, punctuation
    dropped (underscores and hyphens kept), spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors a Markdown file offers: its headings (duplicates numbered) and HTML ids."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for heading in HEADING.findall(text):
        base = slug(heading)
        name, n = base, 0
        while name in found:
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    found.update(HTML_ANCHOR.findall(text))
    return found


def broken_links(page: Path, root: Path = REPO) -> list[str]:
    """What is wrong with the page's relative links, one line each (empty when all resolve)."""
    problems: list[str] = []
    text = page.read_text(encoding="utf-8")
    for target in targets(text):
        if SCHEME.match(target) or target.startswith("//"):
            continue  # a web address or mailto:; checking those needs the network
        where, _, fragment = target.partition("#")
        where = unquote(where)
        if where:
            base = root if where.startswith("/") else page.parent
            resolved = (base / where.lstrip("/")).resolve()
        else:
            resolved = page.resolve()
        if not resolved.exists():
            problems.append(f"{target}: no such file")
            continue
        if fragment and resolved.suffix == ".md" and unquote(fragment) not in anchors(resolved):
            problems.append(f"{target}: no heading with the anchor #{fragment}")
    for name in sorted(set(IMAGE_NAME.findall(text))):
        image = root / (name if name.startswith("docs/") else f"docs/{name}")
        if not image.is_file():
            problems.append(f"{name}: picture not found (make screenshots writes them)")
    return problems


@pytest.mark.parametrize("name", PAGES)
def test_relative_links_resolve(name: str) -> None:
    page = REPO / name
    if not page.exists():
        pytest.skip(f"{name} does not exist")
    assert broken_links(page) == [], f"broken links in {name}"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(REPO / t.partition("#")[0]).resolve() for t in targets((REPO / "README.md").read_text("utf-8"))}
    missing = [d for d in DOCS if (REPO / d).resolve() not in linked]
    assert missing == [], "link these pages from README.md"


def test_the_checker_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "docs" / "images").mkdir(parents=True)
    (tmp_path / "docs" / "images" / "here.png").write_bytes(b"\x89PNG")
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## Behind a proxy (HTTPS)\n", encoding="utf-8")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Page\n\n"
        "[fine](other.md#behind-a-proxy-https) [self](#page) [web](https://example.com/nowhere)\n"
        "![fine](images/here.png) [gone](missing.md) [no section](other.md#nowhere)\n"
        "![gone](images/gone.png) <img src='images/also-gone.png'>\n"
        "`[in code](ignored.md)`\n\n```\n[in a block](ignored-too.md)\n```\n\n"
        "[ref]: ../docs/absent.md\n",
        encoding="utf-8",
    )
    assert broken_links(page, root=tmp_path) == [
        "missing.md: no such file",
        "other.md#nowhere: no heading with the anchor #nowhere",
        "images/gone.png: no such file",
        "../docs/absent.md: no such file",
        "images/also-gone.png: no such file",
        "images/also-gone.png: picture not found (make screenshots writes them)",
        "images/gone.png: picture not found (make screenshots writes them)",
    ]


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ('"Testing" sign-ins end after 7 days', "testing-sign-ins-end-after-7-days"),
        ("Not an owner (Indexing API)", "not-an-owner-indexing-api"),
        ("5. When Claude wants to change something", "5-when-claude-wants-to-change-something"),
        ("`ELICITATION`", "elicitation"),
        ("What you see with `make run`", "what-you-see-with-make-run"),
    ],
)
def test_slug_follows_github(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor
