"""Every value reads true: addresses as safe as owners, no digest a machine can collide, the app given
every value whole (issue 23).

Each test runs the real server as a stdio subprocess against the fake Google and reads the question in
the three places a person reads it: the client's own dialog (the elicitation message), the request to
the app (the reference agent, or the app's real listener, records `approval/request` as sent) and the
token text (nobody listening, credentials given to the server directly). The fake Google's request log
is the judge that nothing was changed while nobody said yes.

- Look-alike and international hosts: shown in ASCII (an IDN as `xn--`), the Unicode form beside only
  for a one-script host that reads like no ASCII one, a look-alike marked "looks like …, but is not" with
  a warning in the consequence, every other non-ASCII character escaped.
- Long values: pairs that share their start and end (one differing after character 200, one in the
  middle of a 465-character URL, one found by brute force to share the old 8-hex-digit digest) read
  differently everywhere, in at most 240 characters, with a 128-bit digest of the whole value in groups.
- `values[].whole`: the whole value reaches the app's real listener, and its dialog shows it whole,
  wrapped and selectable.

On the code before issue 23 every test here fails: hosts were shown raw, the digest was 8 hex digits (the
pair below reads the same), and there was no `whole`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp_types import ElicitResult
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from searchdesk_desktop.approval.dialog import ApprovalDialog
from searchdesk_server.agent import protocol
from searchdesk_server.demo.state import DEMO_USER, WebResource
from tests.fakegoogle import FakeGoogle
from tests.security.approval.test_person_approves import (
    WWW,
    app_listener,
    asked,
    destructive,
    reference,
    sa_env,
    structured,
)
from tests.security.conftest import Planted, Witness, serve
from tests.server.stdio import text_of

pytestmark = pytest.mark.anyio

WARNING = "An address marked “looks like”"
DOTS = "…"


# --------------------------------------------------------------------------------------------------
# The three places a person reads a question


@dataclass(frozen=True)
class Seen:
    """One guarded call's question where a person reads it."""

    elicited: str  # the client's own dialog
    request: dict[str, Any]  # approval/request as the app received it
    token_text: str  # the result that offers the two-call token

    def app_values(self) -> dict[str, dict[str, Any]]:
        """The app's values by label (without marks: "Sitemap (looks like …)" is "Sitemap")."""
        return {v["label"].split(" (")[0]: v for v in self.request["values"]}


async def seen_everywhere(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, tool: str, args: dict[str, Any]
) -> Seen:
    """Make the call twice through the real server: once with a client dialog (which the test does not
    answer: cancel, as Claude Desktop does) and the app (the reference agent) behind it, once with nobody
    to ask, which earns the token. Nothing is approved, so Google is never asked to change anything."""
    (seen,) = await all_seen_everywhere(fake, witness, planted, folder, tool, [args])
    return seen


async def all_seen_everywhere(
    fake: FakeGoogle, witness: Witness, planted: Planted, folder: Path, tool: str, calls: list[dict[str, Any]]
) -> list[Seen]:
    """`seen_everywhere` for several calls, one after another through the same two servers: each call is
    a question of its own (its own fingerprint), and the servers start once, not once a call."""
    shown: list[str] = []

    async def elicit(ctx: Any, params: Any) -> ElicitResult:
        shown.append(params.message)
        return ElicitResult(action="cancel")

    socket = str(folder / "agent.sock")
    with reference(folder) as agent:
        async with serve(
            fake, witness, folder / "asked", sa_env(planted, fake), socket=socket, elicitation_callback=elicit
        ) as served:
            pending = [await served.client.call_tool(tool, args) for args in calls]
        requests = asked(agent)
    for answer in pending:
        assert structured(answer).get("decision") == "pending", text_of(answer)
    async with serve(fake, witness, folder / "token", sa_env(planted, fake), socket=socket) as served:
        tokens = [await served.client.call_tool(tool, args) for args in calls]
    for token in tokens:
        assert "confirm_token" in structured(token), text_of(token)
    assert len(shown) == len(calls) and len(requests) == len(calls)  # one question a call, each asked once
    assert destructive(fake) == []
    return [Seen(*seen, text_of(token)) for seen, token in zip(zip(shown, requests, strict=True), tokens, strict=True)]


def value_lines(text: str) -> list[str]:
    """The `label: value` lines of a question's text (after the heading that says where they come from)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("From the program that asked"))
    return [line for line in lines[start + 1 :] if ": " in line]


def groups(whole: str) -> str:
    """The digest a shortened value ends with: the first 128 bits of SHA-256 of the value shown whole."""
    digits = hashlib.sha256(whole.encode("utf-8")).hexdigest()[:32]
    return " ".join(digits[i : i + 4] for i in range(0, 32, 4))


# --------------------------------------------------------------------------------------------------
# 1. Addresses as safe as owners

CYRILLIC_A = "\u0430"
LOOKALIKE = f"https://www.ex{CYRILLIC_A}mple.com/"
LOOKALIKE_ASCII = "https://www.xn--exmple-4nf.com/"


@pytest.mark.parametrize(
    ("site", "feedpath", "property_line", "sitemap_line", "warned"),
    [
        pytest.param(
            "https://bücher.de/",
            "https://bücher.de/sitemap.xml",
            "Property: https://xn--bcher-kva.de/ (bücher.de)",
            "Sitemap: https://xn--bcher-kva.de/sitemap.xml (bücher.de)",
            False,
            id="idn-one-script",
        ),
        pytest.param(
            LOOKALIKE,
            f"{LOOKALIKE}sitemap.xml",
            f"Property (looks like www.example.com, but is not): {LOOKALIKE_ASCII}",
            f"Sitemap (looks like www.example.com, but is not): {LOOKALIKE_ASCII}sitemap.xml",
            True,
            id="cyrillic-a",
        ),
        pytest.param(
            "https://bücherдом.de/",  # Latin and Cyrillic in one label: reads like no ASCII host, still a mix
            "https://bücherдом.de/sitemap.xml",
            "Property (looks like another address, but is not): https://xn--bcher-kva688c3br.de/",
            "Sitemap (looks like another address, but is not): https://xn--bcher-kva688c3br.de/sitemap.xml",
            True,
            id="mixed-scripts",
        ),
        pytest.param(
            "sc-domain:ex\u0430mple.com",
            "https://www.ex\u0430mple.com/sitemap.xml",
            "Property (looks like example.com, but is not): sc-domain:xn--exmple-4nf.com",
            f"Sitemap (looks like www.example.com, but is not): {LOOKALIKE_ASCII}sitemap.xml",
            True,
            id="domain-property",
        ),
        pytest.param(
            WWW,
            f"{WWW}каталог/sitemap-ü.xml",
            f"Property: {WWW}",
            f"Sitemap: {WWW}\\u043a\\u0430\\u0442\\u0430\\u043b\\u043e\\u0433/sitemap-\\u00fc.xml",
            False,
            id="non-ascii-path",
        ),
    ],
)
async def test_hosts_are_shown_in_ascii_and_look_alikes_flagged(
    fake: FakeGoogle,
    witness: Witness,
    planted: Planted,
    folder: Path,
    site: str,
    feedpath: str,
    property_line: str,
    sitemap_line: str,
    warned: bool,
) -> None:
    seen = await seen_everywhere(fake, witness, planted, folder, "delete_sitemap", {"site": site, "feedpath": feedpath})
    app_lines = [protocol_line(v) for v in seen.request["values"]]
    for lines in (value_lines(seen.elicited), value_lines(seen.token_text), app_lines):
        assert lines == [property_line, sitemap_line]
    for value in seen.request["values"]:
        assert "whole" not in value  # short values: whole is the value
        assert value["value"].split(" (")[0].isascii()  # the address itself; the Unicode form beside it
    consequence = seen.request["consequence"]
    assert (WARNING in consequence) is warned
    assert (WARNING in seen.elicited) is warned and (WARNING in seen.token_text) is warned


def protocol_line(value: dict[str, Any]) -> str:
    return f"{value['label']}: {value['value']}"


async def test_a_website_that_looks_like_another_is_marked_where_owners_change(
    fake: FakeGoogle,
    witness: Witness,
    planted: Planted,
    folder: Path,
) -> None:
    """The fourth question: the website line of an owner change is an address like the others."""
    state = fake.backend.api.state  # type: ignore[attr-defined]
    state.sites[LOOKALIKE] = "siteUnverifiedUser"
    state.resources[LOOKALIKE] = WebResource(LOOKALIKE, "SITE", LOOKALIKE, [DEMO_USER])
    with reference(folder) as agent:
        async with serve(
            fake, witness, folder / "home", sa_env(planted, fake), socket=str(folder / "agent.sock")
        ) as served:
            result = await served.client.call_tool(
                "update_site_owners", {"site": LOOKALIKE, "owners": [DEMO_USER, "someone@example.com"]}
            )
        questions = asked(agent)
    assert structured(result)["decision"] == "pending", text_of(result)
    assert destructive(fake) == [] and len(questions) == 1
    first = questions[0]["values"][0]
    assert first["label"].endswith("(looks like www.example.com, but is not)") and first["value"] == LOOKALIKE_ASCII
    assert WARNING in questions[0]["consequence"]


# --------------------------------------------------------------------------------------------------
# 2. No digest a machine can collide


def old_shown(value: str) -> str:
    """How the code before issue 23 shortened an ASCII value over 200 characters: the first 120 and the
    last 60 characters, the count left out, and the first 8 hex digits of SHA-256."""
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:8]
    return f"{value[:120]}…({len(value) - 180:,} characters left out)…{value[-60:]} [sha256 {digest}]"


def old_digest_pair() -> tuple[str, str]:
    """Two sitemap URLs of one length, the same start and end, that the old shortening showed alike.
    Found by a birthday search over the 32-bit digest (about 25,000 candidates, well under a second);
    the search is deterministic, so the pair is the same on every run."""
    pre, post = f"{WWW}archive/{'x' * 100}/", f"/{'y' * 60}/sitemap.xml"
    seen: dict[str, int] = {}
    for n in range(1 << 20):
        url = f"{pre}{n:08x}{post}"
        digest = hashlib.sha256(url.encode()).hexdigest()[:8]
        if digest in seen:
            return f"{pre}{seen[digest]:08x}{post}", url
        seen[digest] = n
    raise AssertionError("no pair in 2**20 candidates")  # pragma: no cover (one in ~2**-120)


OLD_PAIR = old_digest_pair()
LATE = tuple(f"{WWW}{'a' * 190}{x}{'b' * 100}/sitemap.xml" for x in ("1", "2"))  # differ at character 215
MIDDLE = tuple(f"{WWW}{'m' * 208}{x}{'n' * 214}/sitemap-index.xml" for x in ("L", "R"))  # 465, differ at 232


def test_the_pairs_are_what_they_claim() -> None:
    assert OLD_PAIR[0] != OLD_PAIR[1] and old_shown(OLD_PAIR[0]) == old_shown(OLD_PAIR[1])
    assert len(LATE[0]) > 300 and LATE[0][:200] == LATE[1][:200] and LATE[0] != LATE[1]
    assert len(MIDDLE[0]) == 465 and MIDDLE[0][:232] == MIDDLE[1][:232] and MIDDLE[0][233:] == MIDDLE[1][233:]


@pytest.mark.parametrize("pair", [LATE, MIDDLE, OLD_PAIR], ids=["differ-after-200", "middle-of-465", "old-digest"])
async def test_long_sitemaps_that_share_start_and_end_read_differently_everywhere(
    fake: FakeGoogle,
    witness: Witness,
    planted: Planted,
    folder: Path,
    pair: tuple[str, str],
) -> None:
    calls = [{"site": WWW, "feedpath": f} for f in pair]
    seen = await all_seen_everywhere(fake, witness, planted, folder, "delete_sitemap", calls)
    for place in ("elicited", "token_text", "app"):
        shown = [
            s.app_values()["Sitemap"]["value"] if place == "app" else _sitemap_line(getattr(s, place)) for s in seen
        ]
        assert shown[0] != shown[1], place
        for url, value in zip(pair, shown, strict=True):
            assert len(value) <= protocol.MAX_VALUE_CHARS and DOTS in value, (place, value)
            assert value.endswith(f" [sha256 {groups(url)}]"), (place, value)  # 128 bits, in groups
            assert value.startswith(url[:100]) and f"/sitemap{url.rsplit('/sitemap', 1)[1]} [sha256" in value
    for url, s in zip(pair, seen, strict=True):
        assert s.app_values()["Sitemap"]["whole"] == url  # the app is given it whole
        assert s.request["values"][0] == {"label": "Property", "value": WWW}  # short: no whole
    assert seen[0].elicited.replace(_sitemap_line(seen[0].elicited), "") == seen[1].elicited.replace(
        _sitemap_line(seen[1].elicited), ""
    )  # only the sitemap's line differs


def _sitemap_line(text: str) -> str:
    return next(line for line in value_lines(text) if line.startswith("Sitemap: ")).removeprefix("Sitemap: ")


# --------------------------------------------------------------------------------------------------
# 3. The app is given every value whole, and shows it


LONG_IDN = f"https://bücher.de/{'katalog/' * 40}über-uns/sitemap.xml"
LONG_IDN_WHOLE = (
    f"https://xn--bcher-kva.de/{'katalog/' * 40}\\u00fcber-uns/sitemap.xml (bücher.de)"  # as `value` is escaped
)


async def test_whole_values_reach_the_apps_listener_and_its_dialog_shows_them_whole(
    fake: FakeGoogle,
    witness: Witness,
    planted: Planted,
    folder: Path,
    qtbot: QtBot,
) -> None:
    args = {"site": "https://bücher.de/", "feedpath": LONG_IDN}
    with app_listener(folder) as app:
        async with serve(
            fake, witness, folder / "home", sa_env(planted, fake), socket=str(folder / "agent.sock")
        ) as served:
            result = await served.client.call_tool("delete_sitemap", args)
        sent = asked(app)
        assert app.book is not None
        entries = app.book.open_entries()
    assert structured(result)["decision"] == "pending", text_of(result)
    sitemap = sent[0]["values"][1]
    assert sitemap["whole"] == LONG_IDN_WHOLE and len(LONG_IDN_WHOLE) > 360
    assert sitemap["value"].endswith(f" [sha256 {groups(LONG_IDN_WHOLE)}]") and len(sitemap["value"]) <= 240
    assert [e.request.values[1].whole for e in entries] == [LONG_IDN_WHOLE]  # the listener kept it, checked

    dialog = ApprovalDialog(entries[0], arm_delay_ms=600_000)
    qtbot.addWidget(dialog)
    dialog.resize(640, 480)
    dialog.show()
    qtbot.waitExposed(dialog)
    shown = dialog.value_labels[1][1]
    assert shown.text() == LONG_IDN_WHOLE  # whole: nothing left out, no digest
    assert shown.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse
    qtbot.waitUntil(lambda: shown.height() > 3 * shown.fontMetrics().lineSpacing())  # wrapped onto lines
    assert shown.width() <= dialog.width() and shown.verticalScrollBar().maximum() == 0  # no line hidden
    shown.selectAll()
    shown.copy()
    board = QGuiApplication.clipboard()
    assert board is not None and board.text() == LONG_IDN_WHOLE  # what a person copies: the value, no break marks
