"""Each fact once: scopes derive from the registered tools, and every time and budget has one definition.

The times live in `searchdesk_server.deadlines` (and a few in the one module that uses them, like the
approval buttons' arming delay). A copy written by hand drifts the day the figure changes, so:

- code: a constant, default or keyword argument named for a time (``*_SECONDS``, ``*_S``, ``*_MS``,
  ``timeout``, ``wait``, …) whose literal value equals a figure of `deadlines` fails, unless it is listed in
  `COINCIDENT` with the reason it is a different fact that happens to share the number; so does a string a
  person reads that states one of those figures in seconds (minutes: tests/server/approval/test_contract.py);
- pages: every "40 seconds", "5 minutes", "60 s" in the docs is claimed by a rule in `PAGE_TIMES` naming the
  figure it states, and the page must state that figure; a time no rule claims fails (`MEASURED` lists
  the ones that are measurements, not facts).

The tool tables' drift test is test_docs.py.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from searchdesk_server import deadlines, scopes
from searchdesk_server.journal import store as journal_store
from tests.server.approval.test_contract import docstrings

REPO = Path(__file__).resolve().parents[3]
PACKAGES = (REPO / "server" / "searchdesk_server", REPO / "desktop" / "searchdesk_desktop")

#: A name that holds a time; its unit is its ending (``_MS`` milliseconds, else seconds).
TIME_NAME = re.compile(
    r"(?:^|_)(S|SECONDS|MS|TIMEOUT|WAIT|LIFETIME|REFRESH|TTL|BUDGET|DELAY|EVERY|IDLE)$", re.IGNORECASE
)
#: A time stated in words or in a page: "40 seconds", "5 minutes", "60 s", "1 second", "500 ms".
STATED = re.compile(r"\b(\d+(?:\.\d+)?)\s?(ms|s|seconds?|minutes?|hours?)\b")
UNIT_SECONDS = {
    "ms": 0.001,
    "s": 1,
    "second": 1,
    "seconds": 1,
    "minute": 60,
    "minutes": 60,
    "hour": 3600,
    "hours": 3600,
}

#: Figures of `deadlines` that a value elsewhere shares by chance, not by copying: (module file's stem,
#: name) -> why it is a fact of its own.
COINCIDENT = {
    ("client", "DEFAULT_TIMEOUT"): "one agent-socket request's limit, not the batch's margin",
    ("client", "TOKEN_TIMEOUT"): "how long a server waits for the app to refresh a token at Google",
    ("paths", "TAKEN_RETRY_S"): "how long a socket path stays taken before it is tried again",
    ("wire", "max_wait"): "the longest retry delay the Google client honours, not the batch's margin",
    ("wire", "request_timeout"): "one HTTP request's limit at Google, not the check's start",
    ("account_sqlite", "timeout"): "SQLite's busy wait for an account's archive file",
    ("grouped", "KEEP_S"): "how long a summed period is kept for its next pages, idle",
    ("uninstall", "REVOKE_TIMEOUT"): "one revocation request at Google while uninstalling",
    ("qt_libraries", "timeout"): "how long the Qt libraries' probe child may take",
    ("listener", "PARTIAL_LINE_TIMEOUT_MS"): "a line started on the agent socket and never finished",
    ("manifest", "TOTAL_S"): "the whole update-manifest download, however slowly it drips",
}

#: Module-level figures that are not times: a demo clock's hours, a zero "no delay" in pictures.
NOT_COPIES = {0.0}


@dataclass(frozen=True)
class Rule:
    """A page states one fact: ``pattern``'s first group is the stated time ("5 minutes"), or a bare
    number read in ``unit`` seconds; ``seconds`` is the figure the code keeps (read when the test runs,
    for one that lives in a module with Qt)."""

    page: str
    pattern: str
    seconds: float | Callable[[], float]
    unit: float | None = None

    def figure(self) -> float:
        return self.seconds() if callable(self.seconds) else self.seconds


def _arm_delay_seconds() -> float:
    from searchdesk_desktop.approval.arming import ARM_DELAY_MS

    return ARM_DELAY_MS / 1000


D = deadlines
PAGE_TIMES = (
    Rule("architecture.md", r"when (\d+ seconds) have gone", D.REPORT_READ_SECONDS),
    Rule("architecture.md", r"Claude Desktop on macOS: (\d+ s)\)", D.CLIENT_WAIT_SECONDS),
    Rule("architecture.md", r"`BATCH_SECONDS`, (\d+ s)\)", D.BATCH_SECONDS),
    Rule("asking-a-person.md", r"a click counts after (\d+ seconds?)", _arm_delay_seconds),
    Rule("asking-a-person.md", r"Claude waits about (\d+ seconds)", D.APPROVAL_WAIT_DEFAULT),
    Rule("asking-a-person.md", r"try again\]\([^)]*\)\s+within (\d+ minutes)", D.QUESTION_OPEN_SECONDS),
    Rule("asking-a-person.md", r"SearchDesk refuses for (\d+ minutes)", D.QUESTION_OPEN_SECONDS),
    Rule("security.md", r"fingerprint and words, valid (\d+ minutes)", D.QUESTION_STATE_SECONDS),
    Rule("security.md", r"seconds \(default (\d+)\)", D.APPROVAL_WAIT_DEFAULT, unit=1),
    Rule("security.md", r"an identical call within (\d+ minutes) picks", D.QUESTION_OPEN_SECONDS),
    Rule("security.md", r"with the same arguments within\s+(\d+ minutes)", D.CONFIRM_TOKEN_SECONDS),
    Rule("security.md", r"A deny stops identical calls for (\d+ minutes)", D.QUESTION_OPEN_SECONDS),
    Rule("security.md", r"holding it for more than (\d+ seconds)", journal_store.BUSY_S),
    Rule("setup-linux.md", r"You have (\d+ minutes)", D.SIGN_IN_SECONDS),
    Rule("setup-macos.md", r"You have (\d+ minutes)", D.SIGN_IN_SECONDS),
    Rule("setup-windows.md", r"You have (\d+ minutes)", D.SIGN_IN_SECONDS),
    Rule("troubleshooting-sign-in.md", r"finished the sign-in within (\d+ minutes)", D.SIGN_IN_SECONDS),
    Rule(
        "troubleshooting-claude-answers.md", r"stopped waiting \(after about (\d+\s+seconds)\)", D.APPROVAL_WAIT_DEFAULT
    ),
    Rule("troubleshooting-claude-answers.md", r"try again within (\d+ minutes)", D.QUESTION_OPEN_SECONDS),
    Rule("troubleshooting-claude-answers.md", r"within those (\d+ minutes)", D.QUESTION_OPEN_SECONDS),
    Rule("tools.md", r"Batches answer within (\d+ seconds)", D.BATCH_SECONDS),
    Rule("tools.md", r"answer within\s+(\d+ seconds) \(a minute less", D.BATCH_SECONDS),
    Rule("tools.md", r"stops waiting for a tool after (a minute)", D.CLIENT_WAIT_SECONDS, unit=60),
    Rule("advanced-setup.md", r"`SEARCHDESK_APPROVAL_WAIT` \| whole seconds, 1–(\d+)", D.APPROVAL_WAIT_MOST, unit=1),
    Rule(
        "advanced-setup.md", r"`SEARCHDESK_APPROVAL_WAIT` \| whole seconds, 1–\d+ \| (\d+)", D.APPROVAL_WAIT_DEFAULT, 1
    ),
)
#: Times in pages that are measurements or targets of their own, not figures the code keeps.
MEASURED = (
    ("architecture.md", r"target: ≤ (0\.5 s) of CPU"),
    ("security.md", r"a laptop found two sitemap URLs that did in (0\.2 s)"),
    ("contributing.md", r"CI run \((\d+ to \d+ minutes) on 2 cores\)"),
    ("contributing.md", r"<!-- suite-times -->(?s:.*?)<!-- /suite-times -->"),
    ("contributing.md", r"took (12 min 34 s) on CI's 2 cores"),
    ("contributing.md", r"and (8 min 23 s) after it"),
    ("contributing.md", r"stay under (10\s+minutes) there"),
)
#: Pages not checked: measurements throughout, and the record of what changed.
UNCHECKED = {"performance.md"}


def seconds_of(stated: str, unit: float | None = None) -> float:
    """ "5 minutes" -> 300.0; "a minute" -> 60.0; a bare number in ``unit`` seconds."""
    if unit is not None:
        number = stated.split()[0]
        return (1.0 if number == "a" else float(number)) * unit
    match = STATED.fullmatch(stated)
    assert match, stated
    return float(match.group(1)) * UNIT_SECONDS[match.group(2)]


def pages() -> list[Path]:
    return [REPO / "README.md", *(p for p in sorted((REPO / "docs").glob("*.md")) if p.name not in UNCHECKED)]


def unclaimed_times(text: str, claims: list[str]) -> list[str]:
    """Each time `text` states that no pattern in `claims` covers."""
    covered: list[tuple[int, int]] = [m.span() for c in claims for m in re.finditer(c, text)]
    return [
        m.group(0) for m in STATED.finditer(text) if not any(lo <= m.start() and m.end() <= hi for lo, hi in covered)
    ]


def test_scopes_derive_from_tools() -> None:
    from searchdesk_server.config import load

    full = load({})
    assert set(full.scopes) == {scopes.SCOPE_WM, scopes.SCOPE_SV, scopes.SCOPE_INDEXING}
    ro = load({"GSC_READ_ONLY": "true"})
    assert ro.scopes == (scopes.SCOPE_WM_RO,)
    no_indexing = load({"GSC_DENY_TOOLS": "indexing"})
    assert scopes.SCOPE_INDEXING not in no_indexing.scopes


# --- the times in code ----------------------------------------------------------------------------


def figures() -> dict[float, list[str]]:
    """Each figure `deadlines` defines, in seconds -> the names that hold it."""
    found: dict[float, list[str]] = {}
    for name, value in vars(deadlines).items():
        if name.isupper() and isinstance(value, int | float) and not isinstance(value, bool):
            found.setdefault(float(value), []).append(name)
    return found


def _literal(node: ast.expr) -> float | None:
    """The number an expression of literals only makes (``15 * 60``), else None."""
    if not all(
        isinstance(n, ast.Constant | ast.BinOp | ast.UnaryOp | ast.operator | ast.unaryop) for n in ast.walk(node)
    ):
        return None
    value = eval(compile(ast.Expression(node), "<literal>", "eval"))
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _named_values(tree: ast.AST) -> Iterator[tuple[str, ast.expr]]:
    """(name, value) of each assignment, parameter default and keyword argument in `tree`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            yield node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            yield node.target.id, node.value
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = [*args.posonlyargs, *args.args]
            defaulted = positional[len(positional) - len(args.defaults) :]
            yield from ((a.arg, d) for a, d in zip(defaulted, args.defaults, strict=True))
            yield from ((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.arg, node.value


def copied_times(source: str, stem: str, known: dict[float, list[str]]) -> list[str]:
    """Each figure of `known` that `source` (the module `stem`) writes out by hand instead of importing."""
    tree = ast.parse(source)
    found = []
    for name, value in _named_values(tree):
        number = _literal(value) if TIME_NAME.search(name) else None
        if number is None:
            continue
        seconds = number / 1000 if name.upper().endswith("MS") else number
        if seconds in known and seconds not in NOT_COPIES and (stem, name) not in COINCIDENT:
            found.append(f"line {value.lineno}: {name} = {ast.unparse(value)} copies {' or '.join(known[seconds])}")
    docs = docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            for match in STATED.finditer(node.value):
                seconds = seconds_of(match.group(0))
                if seconds in known and seconds not in NOT_COPIES:
                    found.append(f"line {node.lineno}: {match.group(0)!r} copies {' or '.join(known[seconds])}")
    return found


def test_no_time_is_written_out_where_deadlines_defines_it() -> None:
    known = figures()
    found = []
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            if path == REPO / "server" / "searchdesk_server" / "deadlines.py":
                continue
            found += [f"{path.relative_to(REPO)}: {c}" for c in copied_times(path.read_text(), path.stem, known)]
    assert not found, "a time written by hand: import it from searchdesk_server.deadlines\n" + "\n".join(found)


def test_every_coincidence_still_exists() -> None:
    """An entry of `COINCIDENT` whose constant is gone or changed is a hole a copy could slip through."""
    known = figures()
    seen = set()
    for package in PACKAGES:
        for path in package.rglob("*.py"):
            for name, value in _named_values(ast.parse(path.read_text())):
                number = _literal(value)
                seconds = None if number is None else number / 1000 if name.upper().endswith("MS") else number
                if (path.stem, name) in COINCIDENT and seconds in known:
                    seen.add((path.stem, name))
    assert seen == set(COINCIDENT), set(COINCIDENT) - seen


def test_the_code_scan_can_fail() -> None:
    known = {60.0: ["CLIENT_WAIT_SECONDS"], 300.0: ["QUESTION_OPEN_SECONDS"]}
    assert copied_times("CALL_TIMEOUT = 60.0\n", "selfcheck", known)
    assert copied_times("MIN_LIFETIME = 5 * 60\n", "tokens", known)
    assert copied_times("LOOK_MS = 300_000\n", "x", known)
    assert copied_times("def wait(timeout: float = 300.0) -> None: ...\n", "x", known)
    assert copied_times("f(x, timeout=60)\n", "x", known)
    assert copied_times('MESSAGE = "clients give up after about 60 s"\n', "x", known)
    assert not copied_times("CALL_TIMEOUT = CLIENT_WAIT_SECONDS\nROWS = 60\n", "selfcheck", known)
    assert not copied_times('"""Waits 60 s, as a client does."""\n', "x", known)


def test_the_figures_keep_their_reasons() -> None:
    """The relations the figures' comments give: a batch answers before a client stops waiting, and so
    on. Each is derived where it can be; these hold the rest."""
    assert D.BATCH_SECONDS == D.CLIENT_WAIT_SECONDS - D.MARGIN_SECONDS
    assert D.REPORT_READ_SECONDS < D.BATCH_SECONDS
    assert D.APPROVAL_WAIT_DEFAULT < D.APPROVAL_WAIT_MOST < D.CLIENT_WAIT_SECONDS
    assert D.QUESTION_STATE_SECONDS > 2 * D.QUESTION_OPEN_SECONDS  # a question, then its answer kept as long
    assert D.TOKEN_USED_SECONDS < D.TOKEN_HANDED_OUT_SECONDS  # a token handed out serves a server for a while
    assert D.CHECK_CALL_SECONDS == D.CLIENT_WAIT_SECONDS


# --- the times in pages ---------------------------------------------------------------------------


@pytest.mark.parametrize("rule", PAGE_TIMES, ids=lambda r: f"{r.page}:{r.pattern[:30]}")
def test_a_page_states_the_figure_the_code_keeps(rule: Rule) -> None:
    text = (REPO / "docs" / rule.page).read_text()
    stated = [m.group(1) for m in re.finditer(rule.pattern, text)]
    assert stated, f"docs/{rule.page} no longer says this; update PAGE_TIMES with the page"
    expected = rule.figure()
    for phrase in stated:
        assert seconds_of(phrase, rule.unit) == expected, (
            f"docs/{rule.page} says {phrase!r}; the code keeps {expected} s"
        )


def test_every_time_in_a_page_is_a_figure_the_code_keeps() -> None:
    wrong = []
    for page in pages():
        claims = [r.pattern for r in PAGE_TIMES if r.page == page.name] + [p for n, p in MEASURED if n == page.name]
        wrong += [f"{page.relative_to(REPO)}: {t}" for t in unclaimed_times(page.read_text(), claims)]
    assert not wrong, "a time written in a page by hand: add a PAGE_TIMES rule naming the figure it states\n" + (
        "\n".join(wrong)
    )


def test_the_page_scan_can_fail() -> None:
    text = "Batches answer within 50 seconds. Claude waits about 45 seconds."
    assert unclaimed_times(text, [r"Batches answer within (\d+ seconds)"]) == ["45 seconds"]
    assert seconds_of("5 minutes") == 300.0
    assert seconds_of("1 second") == 1.0
    rule = Rule("tools.md", r"Batches answer within (\d+ seconds)", D.BATCH_SECONDS)
    changed = re.search(rule.pattern, text.replace("50", "45"))
    assert changed and seconds_of(changed.group(1)) != rule.figure()


# --- words said in more than one place -------------------------------------------------------------


def _adds_s_for_many(node: ast.expr) -> ast.expr | None:
    """The count of ``'' if n == 1 else 's'`` (or ``'s' if n != 1 else ''``): a noun made plural by hand."""
    if not (isinstance(node, ast.IfExp) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1):
        return None
    branches = (node.body, node.orelse)
    if not all(isinstance(b, ast.Constant) for b in branches):
        return None
    body, orelse = (b.value for b in branches if isinstance(b, ast.Constant))
    one = node.test.comparators[0]
    if not (isinstance(one, ast.Constant) and one.value == 1):
        return None
    op = node.test.ops[0]
    many_s = (isinstance(op, ast.Eq) and (body, orelse) == ("", "s")) or (
        isinstance(op, ast.NotEq) and (body, orelse) == ("s", "")
    )
    return node.test.left if many_s else None


def counted_by_hand(source: str) -> list[str]:
    """Each definition of a plural of its own, and each "{n} page{'s' if n != 1 else ''}" in `source`."""
    tree = ast.parse(source)
    found = [
        f"line {node.lineno}: def {node.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and node.name.strip("_") == "plural"
    ]
    for node in ast.walk(tree):
        if not isinstance(node, ast.JoinedStr):
            continue
        counts = [
            ast.dump(v.value)
            for v in node.values
            if isinstance(v, ast.FormattedValue) and (v.format_spec is None or ast.unparse(v.format_spec) == "f','")
        ]
        for part in node.values:
            count = _adds_s_for_many(part.value) if isinstance(part, ast.FormattedValue) else None
            if count is not None and ast.dump(count) in counts:
                found.append(f"line {node.lineno}: {ast.unparse(node)[:60]}")
    return found


def test_one_plural_for_both_programs() -> None:
    """`text.phrases.plural` says "1 page" and "2,000 pages" for the server and the app alike; a second
    definition, or a count made plural inline, drifts from it (the app once wrote 2000 without a comma)."""
    found = []
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            if path == REPO / "server" / "searchdesk_server" / "text" / "phrases.py":
                continue
            found += [f"{path.relative_to(REPO)}: {c}" for c in counted_by_hand(path.read_text())]
    assert not found, "a count worded by hand: use searchdesk_server.text.phrases.plural\n" + "\n".join(found)


def test_the_plural_scan_can_fail() -> None:
    assert counted_by_hand('def plural(n: int, one: str) -> str:\n    return f"{n} {one}"\n')
    assert counted_by_hand("x = f\"{n} change{'s' if n != 1 else ''}\"\n")
    assert counted_by_hand("x = f\"{n:,} other owner{'' if n == 1 else 's'} keep\"\n")
    assert not counted_by_hand("x = f\"{plural(n, 'owner')} keep{'s' if n == 1 else ''}\"\n")  # a verb agrees
    assert not counted_by_hand("x = f\"{t:g} second{'' if t == 1 else 's'}\"\n")  # a float, not a count


def test_the_path_of_one_call_is_in_architecture_alone() -> None:
    """The step-by-step path of a call is a table in docs/architecture.md; another page that restates it
    drifts (contributing.md's copy once named other functions), so it links there instead."""
    tables = [p.name for p in pages() if re.search(r"^\| Step \| Where \|", p.read_text(), re.MULTILINE)]
    assert tables == ["architecture.md"], tables
    assert "architecture.md#the-path-of-one-guarded-call" in (REPO / "docs" / "contributing.md").read_text()


#: Long enough to be a sentence or a title a person reads, not a format or a key.
SAID_CHARS = 30


def said(source: str) -> set[str]:
    """The sentences and titles `source` says (string constants of some length, with a space, one line;
    docstrings left out: they are for whoever reads the code)."""
    tree = ast.parse(source)
    docs = docstrings(tree)
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
        and len(node.value) >= SAID_CHARS
        and " " in node.value.strip()
        and "\n" not in node.value
    }


def said_twice(sources: dict[str, str]) -> dict[str, list[str]]:
    """Each sentence said in more than one of `sources` (name -> text) -> where."""
    where: dict[str, list[str]] = {}
    for name, source in sources.items():
        for text in said(source):
            where.setdefault(text, []).append(name)
    return {text: names for text, names in where.items() if len(names) > 1}


def test_every_sentence_is_written_once() -> None:
    """A sentence or title said in two modules drifts when one is reworded: one module keeps it and the
    other imports it (the coverage watch's question and title, a date range the wrong way round, …)."""
    sources = {
        str(path.relative_to(REPO)): path.read_text()
        for package in PACKAGES
        for path in sorted(package.rglob("*.py"))
        if "demo" not in path.relative_to(package).parts  # the demo's made-up data repeats by design
    }
    twice = said_twice(sources)
    assert not twice, "said in two places; keep it in one module and import it:\n" + "\n".join(
        f"{text!r}: {', '.join(names)}" for text, names in sorted(twice.items())
    )


def test_the_sentence_scan_can_fail() -> None:
    question = 'QUESTION = "Keep track of which of your pages are in Google?"\n'
    assert said_twice({"a.py": question, "b.py": question})
    assert not said_twice({"a.py": question, "b.py": "from a import QUESTION\n"})
    assert not said_twice({"a.py": '"""Keep track of which of your pages are in Google?"""\n', "b.py": question})
