"""The docs' relative links and pictures must lead somewhere.

A site owner who follows a link to a page or a section that is not there is stuck, and a screenshot
that was renamed leaves a hole in a setup page. So every relative link and image in the Markdown
pages (README.md, CHANGELOG.md, docs/*.md, packaging/*.md) must name an existing file, and a
`#section` must name a heading of that file, spelled as GitHub spells its anchors. Links inside code
are not links and are skipped. The code names docs pages too (messages, docstrings, generators):
those must exist as well, and every docs page must be reachable from the README.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[3]
DOCS = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md"))
PACKAGING = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "packaging").glob("*.md"))
PAGES = ["README.md", "CHANGELOG.md", *DOCS, *PACKAGING]
#: Where the code lives; this module is left out, because its checker test names missing pages on purpose.
CODE_DIRS = ("server", "desktop", "packaging", "tests")

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1[ \t]*$", re.M | re.S)
INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
INLINE_LINK = re.compile(r"\]\(\s*<?([^()\s<>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
HTML_LINK = re.compile(r"<(?:img|a)\b[^>]*?\b(?:src|href)\s*=\s*[\"']([^\"']+)[\"']", re.I)
HTML_ANCHOR = re.compile(r"<a\b[^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.M)
SETEXT = re.compile(r"^ {0,3}(\S[^\n|]*?)[ \t]*\n {0,3}(?:=+|-+)[ \t]*$", re.M)
#: A docs page named in code: `docs/name.md` or `README.md`, with an optional `#anchor`.
CODE_REFERENCE = re.compile(r"(?<![\w./-])((?:docs/[\w.-]+|README)\.md)(#[\w-]+)?")
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
    """GitHub's anchor for a heading, made from the heading's rendered text: link and image syntax
    reduced to their text, HTML tags and emphasis markers dropped (code spans kept as written,
    underscores inside words kept), lower case, punctuation dropped (hyphens kept), each space a
    hyphen."""
    parts = re.split(r"(`+)(.+?)\1", heading)
    text = ""
    for i in range(0, len(parts), 3):
        plain = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", parts[i])
        plain = re.sub(r"<[^>]+>", "", plain)
        plain = re.sub(r"\*+|(?<!\w)_+|_+(?!\w)", "", plain)
        text += plain + (parts[i + 2] if i + 2 < len(parts) else "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors a Markdown file offers: its headings (duplicates numbered) and HTML ids."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for heading in [*HEADING.findall(text), *SETEXT.findall(text)]:
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


def linked_pages(page: Path) -> set[Path]:
    """The Markdown files a page links to (relative links only)."""
    out = set()
    for target in targets(page.read_text(encoding="utf-8")):
        where = unquote(target.partition("#")[0])
        if where and not SCHEME.match(where) and where.endswith(".md"):
            out.add((page.parent / where).resolve())
    return out


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    seen, todo = set(), [(REPO / "README.md").resolve()]
    while todo:
        page = todo.pop()
        if page in seen or not page.is_file():
            continue
        seen.add(page)
        todo.extend(linked_pages(page) - seen)
    missing = [d for d in DOCS if (REPO / d).resolve() not in seen]
    assert missing == [], "link these pages from the README, or from a page it links to"


def code_references(root: Path = REPO) -> Iterator[tuple[str, str, str]]:
    """(file, page, anchor) for every docs page the code names, this module aside."""
    for folder in CODE_DIRS:
        for path in sorted((root / folder).rglob("*.py")):
            if path.resolve() == Path(__file__).resolve():
                continue
            for match in CODE_REFERENCE.finditer(path.read_text(encoding="utf-8")):
                yield path.relative_to(root).as_posix(), match.group(1), (match.group(2) or "")[1:]


def broken_code_references(root: Path = REPO) -> list[str]:
    problems = []
    for where, page, anchor in code_references(root):
        target = root / page
        if not target.is_file():
            problems.append(f"{where}: {page}: no such page")
        elif anchor and anchor not in anchors(target):
            problems.append(f"{where}: {page}#{anchor}: no heading with that anchor")
    return problems


def test_docs_pages_named_in_the_code_exist() -> None:
    assert broken_code_references() == []


def test_the_code_reference_checker_finds_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "here.md").write_text("# Here\n\n## A section\n", encoding="utf-8")
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "m.py").write_text(
        '"""See docs/here.md#a-section, docs/here.md#nowhere and docs/gone.md; not mydocs/x.md."""\n',
        encoding="utf-8",
    )
    assert broken_code_references(tmp_path) == [
        "server/m.py: docs/here.md#nowhere: no heading with that anchor",
        "server/m.py: docs/gone.md: no such page",
    ]


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
        ("Claude Desktop's settings file", "claude-desktops-settings-file"),
        ("Step 1: Sign in with Google", "step-1-sign-in-with-google"),
        (
            '"Sign-in timed out: the browser did not come back to SearchDesk."',
            "sign-in-timed-out-the-browser-did-not-come-back-to-searchdesk",
        ),
        ("**Bold** and _emphasis_ with `__init__` and snake_case", "bold-and-emphasis-with-__init__-and-snake_case"),
        ("See [the guide](other.md#x) · now", "see-the-guide--now"),
    ],
)
def test_slug_follows_github(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def test_anchors_number_repeated_headings_and_read_setext_headings(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("# Top\n\n## Notes\n\n## Notes\n\nUnderlined\n----------\n\n| a |\n|---|\n", encoding="utf-8")
    assert anchors(page) == {"top", "notes", "notes-1", "underlined"}
