"""The site-owner pages quote the app as it is now, and show the pictures `make screenshots` makes.

A site owner looks for the words a page quotes on their screen; a quote the app no longer says leaves
them stuck. So what the pages put in quotes is checked against the app's own strings (its source):

- a heading in quotes (the troubleshooting pages title each section by what the person sees),
- an italic phrase (*…*: what a step or a page says),
- a bold label after click, choose or tick (a button or a box).

Each must be found, in order, in one string of the desktop app; "…" in the page stands for a part
the app fills in, as the app's own placeholders do. The pages about what Claude is told, and about
the approval questions, may also quote the server. Other programs' words (Google's, Apple's,
Microsoft's, Claude Desktop's) are listed below with whose they are.

Pictures: each one a page shows is one `make screenshots` writes, and the page links its dark
version right after it (a picture drawn in fixed colours has none).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from searchdesk_desktop.screenshots import PICTURES, SAME_IN_EVERY_SCHEME, STEP_PICTURES
from tests import REPO
from tests.server.foundation.test_docs_site_owner import SITE_OWNER_PAGES, site_owner_text

DESKTOP = REPO / "desktop" / "searchdesk_desktop"
SERVER = REPO / "server" / "searchdesk_server"
#: Pages that also quote the server: what Claude is told, and the approval questions' words.
QUOTE_THE_SERVER = {"docs/troubleshooting-claude-answers.md", "docs/asking-a-person.md"}

#: Words of other programs' windows that the pages quote: whose they are, and where their maker (or, where the
#: maker's words cannot be read here, a stored copy) shows them. Each source is cited in a page's
#: `<!-- source: … -->` comment, beside the words (test_other_programs_words_carry_their_source).
GOOGLE_UNVERIFIED = "https://support.google.com/accounts/answer/7455163"
APPLE_GATEKEEPER = "https://support.apple.com/en-us/102445"
APPLE_OPEN_ANYWAY = "https://support.apple.com/guide/mac-help/mh40616/mac"
SMARTSCREEN_DIALOG = "github.com/responsively-org/responsively-app/issues/151"
WINDOWS_INSTALLER = "packaging/installer.nsi"
OTHER_PROGRAMS: dict[str, tuple[str, str]] = {
    "Advanced": ("Google's unverified-app warning", GOOGLE_UNVERIFIED),
    "This app isn't verified": ("Google's unverified-app warning, as Google's help names it", GOOGLE_UNVERIFIED),
    "Back to safety": ("Google's unverified-app warning", GOOGLE_UNVERIFIED),
    "Go to … (unsafe)": ("Google's unverified-app warning, after Advanced", GOOGLE_UNVERIFIED),
    "Allow": ("Google's consent page; macOS, asking about notifications", GOOGLE_UNVERIFIED),
    "Continue": ("Google's consent page with a tick box per permission", GOOGLE_UNVERIFIED),
    "Done": ("macOS 15, for an app Apple has not notarised", "nadce.com/?p=124"),
    "Privacy & Security": ("macOS System Settings", APPLE_OPEN_ANYWAY),
    "Open Anyway": ("macOS System Settings › Privacy & Security", APPLE_OPEN_ANYWAY),
    "OK": ("macOS, after the login password for Open Anyway", APPLE_OPEN_ANYWAY),
    "Open": ("macOS, for a notarised app downloaded from the Internet", APPLE_GATEKEEPER),
    "Always Allow": ("macOS, asking about the keychain", "https://support.apple.com/guide/keychain-access/"),
    "Unlock": ("a Linux desktop's keyring prompt", "https://wiki.gnome.org/Projects/GnomeKeyring"),
    "More info": ("Windows SmartScreen", SMARTSCREEN_DIALOG),
    "Windows protected your PC": ("Windows SmartScreen", SMARTSCREEN_DIALOG),
    "Unknown publisher": ("Windows SmartScreen, for a file with no signature", SMARTSCREEN_DIALOG),
    "Run anyway": ("Windows SmartScreen, after More info", SMARTSCREEN_DIALOG),
    "System type": ("Windows Settings › System › About", "isumsoft.com/windows-10/check-windows-10-system-type"),
    "Install": ("the Windows installer (NSIS's components page)", WINDOWS_INSTALLER),
    "Finish": ("the Windows installer (NSIS's finish page)", WINDOWS_INSTALLER),
    "Quit": ("Claude Desktop's icon in the Windows notification area", "https://claude.ai/download"),
    "Quit Claude": ("Claude Desktop's menu on a Mac", "https://claude.ai/download"),
}

QUOTED_HEADING = re.compile(r'^#{1,6}[ \t]+"(.+)"[ \t]*$', re.M)
ITALIC = re.compile(r"(?<![*\w])\*(?!\s)([^*]+?)(?<!\s)\*(?![*\w])")
LABEL = re.compile(r"\b(?:[Cc]lick|[Cc]hoose|[Tt]ick|[Uu]ntick)\s+\*\*([^*]+)\*\*")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?^ {0,3}\1[ \t]*$", re.M | re.S)
CODE = re.compile(r"`[^`]*`")
PICTURE = re.compile(r"!\[[^\]]*\]\((?:\./)?images/([\w.-]+)\.png\)")
LINK = re.compile(r"\[[^\]]*\]\((?:\./)?images/([\w.-]+)\.png\)")
GAP = "…"


def flat(text: str) -> str:
    return " ".join(text.split())


def _texts(node: ast.expr, names: dict[str, set[str]]) -> set[str]:
    """What a string expression can read as: both sides of a condition, a local name as the strings
    assigned to it in the same function, any other placeholder as "…"."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.JoinedStr):
        out = {""}
        for part in node.values:
            value = part.value if isinstance(part, ast.FormattedValue) else part
            out = {a + b for a in out for b in _texts(value, names)}
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return {a + b for a in _texts(node.left, names) for b in _texts(node.right, names)}
    if isinstance(node, ast.IfExp):
        return _texts(node.body, names) | _texts(node.orelse, names)
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    return {GAP}


def _local_strings(function: ast.AST) -> dict[str, set[str]]:
    """Names a function assigns string expressions to (``where = "another place" if … else …``)."""
    names: dict[str, set[str]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            texts = _texts(node.value, {})
            if GAP not in texts:
                names.setdefault(node.targets[0].id, set()).update(texts)
    return names


def strings(folder: Path) -> frozenset[str]:
    """Every string the package's source can say, whitespace flattened."""
    found: set[str] = set()
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))]
        for scope in scopes:
            names = _local_strings(scope) if scope is not tree else {}
            for node in ast.walk(scope):
                if isinstance(node, ast.Constant | ast.JoinedStr | ast.BinOp):
                    found |= {flat(t) for t in _texts(node, names) if t.strip(GAP + " ")}
    return frozenset(found)


@cache
def app_strings(with_server: bool) -> frozenset[str]:
    return strings(DESKTOP) | (strings(SERVER) if with_server else frozenset())


def says(quote: str, corpus: frozenset[str]) -> bool:
    """Is the quote, its "…" standing for any text, part of one of these strings?"""
    chunks = [c.strip() for c in flat(quote).split(GAP) if c.strip(" .")]
    for text in corpus:
        at = 0
        for chunk in chunks:
            at = text.find(chunk, at)
            if at < 0:
                break
            at += len(chunk)
        else:
            return True
    return False


def quotes(text: str) -> Iterator[tuple[str, str]]:
    """(kind, quote) for each quoted heading, italic phrase and button label, outside code."""
    text = FENCE.sub("", text)
    yield from (("heading", q) for q in QUOTED_HEADING.findall(text))
    text = CODE.sub("", text)
    yield from (("italic", flat(q)) for q in ITALIC.findall(text))
    yield from (("label", flat(q)) for q in LABEL.findall(text))


def unknown_quotes(text: str, corpus: frozenset[str]) -> list[str]:
    return [
        f"{kind}: {quote!r}" for kind, quote in quotes(text) if quote not in OTHER_PROGRAMS and not says(quote, corpus)
    ]


@pytest.mark.parametrize("name", SITE_OWNER_PAGES)
def test_what_a_page_quotes_the_app_says(name: str) -> None:
    corpus = app_strings(name in QUOTE_THE_SERVER)
    assert unknown_quotes(site_owner_text(name), corpus) == [], f"{name} quotes words the app does not say"


def test_every_word_of_other_programs_is_quoted_somewhere() -> None:
    """The list above holds only words the pages quote, so it cannot hide a stale quote of the app's."""
    quoted = {quote for name in SITE_OWNER_PAGES for _, quote in quotes(site_owner_text(name))}
    assert set(OTHER_PROGRAMS) - quoted == set()


SOURCE_COMMENT = re.compile(r"<!--\s*source:(.*?)-->", re.S)
#: Sources that are this repository's own files or the vendor's own product page: not cited in a comment.
CITED_ELSEWHERE = {
    WINDOWS_INSTALLER,
    "https://claude.ai/download",
    "https://support.apple.com/guide/keychain-access/",
    "https://wiki.gnome.org/Projects/GnomeKeyring",
}


def test_other_programs_words_carry_their_source() -> None:
    """Each other program's words a page quotes rest on a source a page cites beside them (`<!-- source: -->`):
    a quote added without its source, or a source dropped from the pages, fails here."""
    cited = " ".join(
        " ".join(SOURCE_COMMENT.findall((REPO / name).read_text(encoding="utf-8"))) for name in SITE_OWNER_PAGES
    )
    missing = {
        w: src for w, (_, src) in OTHER_PROGRAMS.items() if src not in CITED_ELSEWHERE and src not in flat(cited)
    }
    assert missing == {}


#: The Windows installer's own words, as installer.nsi defines them (`${APP}` is SearchDesk).
INSTALLER_WORDS = ("Start SearchDesk when you sign in to Windows", "Start SearchDesk now")


def installer_strings() -> set[str]:
    text = (REPO / WINDOWS_INSTALLER).read_text(encoding="utf-8").replace("${APP}", "SearchDesk")
    return {q for line in text.splitlines() for q in re.findall(r'"([^"\n]*)"', line)}


def test_the_windows_page_quotes_the_installer_as_it_is_built() -> None:
    """What the Windows page tells a person to tick or leave ticked is the installer's own wording."""
    page = site_owner_text("docs/setup-windows.md")
    bold = set(re.findall(r"\*\*([^*]+)\*\*", page))
    assert set(INSTALLER_WORDS) <= bold
    assert set(INSTALLER_WORDS) <= installer_strings()


def test_quotes_are_checked_against_the_app() -> None:
    corpus = frozenset({"Added to Claude Desktop (the demo)", f"Needs repair: {GAP}", "Sign in with Google"})
    page = (
        '## "Needs repair: …"\n\n## "Added to Claude Desktop"\n\nClick **Sign in with\nGoogle**, then *Needs '
        "repair:*. Click **Advanced**.\n\n"
        '## "Signed in as you"\n\nClick **Sign in again** and see *Added to the demo*. `*not a quote*`\n'
    )
    assert unknown_quotes(page, corpus) == [
        "heading: 'Signed in as you'",
        "italic: 'Added to the demo'",
        "label: 'Sign in again'",
    ]


def test_app_strings_read_placeholders_and_conditions(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        'x = f"Needs repair: {detail}"\ny = "Added to Claude Desktop" + (" (the demo)" if demo else "")\n'
        "def f(n):\n    where = 'another place' if n else 'no place'\n    return f'it names {where} to reach {n}'\n"
    )
    corpus = strings(tmp_path)
    assert says("Needs repair: …", corpus)
    assert says("Added to Claude Desktop (the demo)", corpus)
    assert says("it names no place to reach …", corpus)
    assert not says("Needs repair: the server is gone", corpus)
    assert not says("it names a place to reach", corpus)


#: Every picture `make screenshots` writes in the light scheme, by file name without ".png".
MADE = {name for name, _ in PICTURES} | {p.removesuffix(".png") for p in STEP_PICTURES}


def picture_problems(text: str) -> list[str]:
    problems = []
    for match in PICTURE.finditer(text):
        name = match.group(1)
        if name not in MADE:
            problems.append(f"{name}: not a picture `make screenshots` makes")
        elif name not in SAME_IN_EVERY_SCHEME:
            after = LINK.search(text, match.end())
            between = text[match.end() : after.start()] if after else ""
            if after is None or after.group(1) != f"{name}-dark" or PICTURE.search(between):
                problems.append(f"{name}: no link to {name}-dark.png after it")
    return problems


@pytest.mark.parametrize("name", SITE_OWNER_PAGES)
def test_pages_show_the_apps_pictures_and_link_the_dark_ones(name: str) -> None:
    assert picture_problems(site_owner_text(name)) == []


def test_picture_problems_are_found() -> None:
    text = (
        "![a](images/first-run.png)\n\n[Dark version](images/first-run-dark.png)\n\n"
        "![b](images/settings.png)\n\n![c](images/notification-forms.png)\n\n![d](images/old-window.png)\n"
    )
    assert picture_problems(text) == [
        "settings: no link to settings-dark.png after it",
        "old-window: not a picture `make screenshots` makes",
    ]


def test_the_page_says_how_to_undo_each_change_in_activitys_words() -> None:
    """The page's "If you approved by mistake" lists, word for word, what Activity's How to undo this says
    for each guarded action (`journal.undo`, the one place for that advice): a change to either fails here."""
    from searchdesk_server.journal.undo import page_lines

    page = site_owner_text("docs/asking-a-person.md")
    section = page.split("## If you approved by mistake", 1)[1].split("\n## ", 1)[0]
    assert [line for line in section.splitlines() if line.startswith("- ")] == page_lines()
    assert "**Activity** shows *How to undo this*" in section


DOCS = REPO / "docs"
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def anchors(page: str) -> set[str]:
    """The anchors GitHub makes of a page's headings (outside code blocks)."""
    from searchdesk_desktop.help import github_anchor

    text = FENCE.sub("", (DOCS / page).read_text(encoding="utf-8"))
    return {github_anchor(heading) for heading in HEADING.findall(text)}


def test_every_help_link_opens_a_page_and_heading_that_exist() -> None:
    """Each Help in the app (`help.TOPICS`) names a page in docs/ and, if any, an anchor of one of its
    headings: a heading reworded or a page moved fails here, not on a person's click."""
    from searchdesk_desktop.help import TOPICS

    wrong = [
        f"{topic}: {page}#{anchor}"
        for topic, (page, anchor) in TOPICS.items()
        if not (DOCS / page).is_file() or (anchor and anchor not in anchors(page))
    ]
    assert wrong == []


def test_anchors_follow_githubs_rules() -> None:
    from searchdesk_desktop.help import github_anchor

    assert github_anchor('"Needs repair: …"') == "needs-repair-"
    assert github_anchor('"Claude Desktop\'s settings file cannot be read"') == (
        "claude-desktops-settings-file-cannot-be-read"
    )
    assert github_anchor("Step 1: Sign in with Google") == "step-1-sign-in-with-google"
    assert github_anchor('"This copy … (a development build)"') == "this-copy--a-development-build"


def test_the_pages_link_the_project_where_the_app_does() -> None:
    """One address for the project (project.py): a page that names another would send people elsewhere."""
    import re

    from searchdesk_desktop.project import REPOSITORY

    pages = [*DOCS.glob("*.md"), DOCS.parent / "README.md", DOCS.parent / "CHANGELOG.md"]
    links = [(p.name, m) for p in pages for m in re.findall(r"https://github\.com/searchdesk[\w./#-]*", p.read_text())]
    assert links, "the pages link the project's release page and issue list"
    assert all(link.startswith(REPOSITORY + "/") or link == REPOSITORY for _, link in links), links
