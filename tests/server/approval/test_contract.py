"""One approval contract: the question's times, its words and its wire form each have one definition.

- Every sentence a person or Claude reads that states a number of minutes gets it from `text.phrases.minutes`
  (for a question, an answer or a token: of a protocol constant): a literal "5 minutes" in the code, or a
  number formatted in front of "minutes" by other means, fails here; so does a page of the docs that
  states a time the constants do not give.
- The question goes on the wire one way (`Question.to_request`): the chain, the screenshots and the UI walk.
- Who asked is worded once (`mcp_client.describe_client`): the dialog, the notification and Activity.
- The words are a leaf: importing them does not import the chain.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from searchdesk_server import request_state
from searchdesk_server.agent.protocol import QUESTION_OPEN_S, TOKEN_LIFETIME_S, ClientInfo, Requester, minutes
from searchdesk_server.approval import question as q
from searchdesk_server.mcp_client import describe_client

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = (ROOT / "server" / "searchdesk_server", ROOT / "desktop" / "searchdesk_desktop")
#: A number of minutes written out ("5 minutes", "five minutes"), not "a minute" or "a few minutes".
STATED = re.compile(r"\b(\d+|one|two|three|four|five|six|ten|fifteen|twenty|thirty)\s+minutes?\b", re.IGNORECASE)
#: Where a time is put in front of the word by formatting (f"{n} minutes").
FORMATTED = re.compile(r"^\s*minutes?\b", re.IGNORECASE)


def docstrings(tree: ast.AST) -> set[int]:
    """The ids of every docstring's constant: words for a reader of the code, not for a person."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def stated_minutes(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string in `source` that states a number of minutes not made by `minutes()`."""
    tree = ast.parse(source)
    docs = docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            match = STATED.search(node.value)
            if match:
                found.append((node.lineno, match.group(0)))
        if isinstance(node, ast.JoinedStr):
            for before, after in zip(node.values, node.values[1:], strict=False):
                if (
                    isinstance(before, ast.FormattedValue)
                    and isinstance(after, ast.Constant)
                    and isinstance(after.value, str)
                    and FORMATTED.match(after.value)
                ):
                    found.append((node.lineno, ast.unparse(before) + after.value[:10]))
    return found


def test_no_sentence_states_minutes_of_its_own() -> None:
    found = []
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            if path.name == "phrases.py" and path.parent.name == "text":
                continue  # minutes() itself
            found += [f"{path.relative_to(ROOT)}:{line}: {text}" for line, text in stated_minutes(path.read_text())]
    assert not found, "a number of minutes written by hand; use protocol.minutes(...) of a protocol constant:\n" + (
        "\n".join(found)
    )


def test_the_scan_can_fail() -> None:
    """The two ways a number of minutes was written before the contract had one place."""
    assert stated_minutes('x = "call again within 5 minutes"')
    assert stated_minutes('KEEP = 5\nx = f"{KEEP} minutes after your answer"')
    assert not stated_minutes('x = f"within {minutes(QUESTION_OPEN_S)}"\ny = "wait a few minutes"')


def test_the_docs_state_only_the_protocols_times() -> None:
    allowed = {minutes(QUESTION_OPEN_S), minutes(TOKEN_LIFETIME_S), minutes(request_state.TTL_SECONDS)}
    pages = ("asking-a-person.md", "security.md", "troubleshooting-claude-answers.md", "every-day.md")
    wrong = []
    for name in pages:
        for line_no, line in enumerate((ROOT / "docs" / name).read_text().splitlines(), 1):
            wrong += [f"{name}:{line_no}: {m.group(0)}" for m in STATED.finditer(line) if m.group(0) not in allowed]
    assert not wrong, wrong


def test_minutes_reads_as_a_person_would() -> None:
    assert minutes(300) == "5 minutes"
    assert minutes(60) == "1 minute"


def test_one_wire_form_of_the_question() -> None:
    question = q.delete_sitemap("sc-domain:example.com", "https://www.example.com/old/sitemap.xml", "you@example.com")
    client = ClientInfo(name="claude-ai", version="1")
    requester = Requester(server="s", account="you@example.com", demo=False)
    request = question.to_request("r1", client=client, requester=requester, wait_s=40)
    assert (request.what, request.consequence) == (question.what, question.consequence)
    assert tuple((v.label, v.value) for v in request.values) == question.values
    assert request.fingerprint == question.fingerprint
    from searchdesk_desktop.screenshots import as_sent

    pictured = as_sent(question, "r1", ("claude-ai", "1"), server="s", account="you@example.com")
    assert pictured.to_json() == request.to_json()


def test_who_asked_is_worded_once() -> None:
    from searchdesk_desktop.approval.book import ApprovalBook

    question = q.delete_site("https://www.example.com/", "you@example.com", q.OwnerFacts(q.Ownership.LAST_OWNER))
    request = question.to_request(
        "r1",
        client=ClientInfo(name="claude-ai", version="0.14"),
        requester=Requester(server="s", account="you@example.com", demo=False),
        wait_s=40,
    )
    entry = ApprovalBook().ask(request)
    assert entry.activity.client == describe_client("claude-ai", "0.14")
    assert q.asked_by("claude-ai", "0.14") == f"Asked by {entry.activity.client}."


def test_the_words_are_a_leaf() -> None:
    code = (
        "import sys\n"
        "import searchdesk_server.approval.question\n"
        "print('searchdesk_server.approval.chain' in sys.modules, 'searchdesk_server.handlers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "False"]
