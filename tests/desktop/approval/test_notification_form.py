"""The notification form of every question, measured against what each system shows while Approve is visible.

The server writes one form beside each question (`approval.question.note_form`); the app offers Approve
where that form fits a system's written figures (`approval.notification_question.FITS`), else "Show the question" and Deny with
why. Measured over a recorded set of targets: property URLs up to 40 characters, sitemap URLs up to 60,
the screenshots' questions among them, as the real app (not the demo) shows them. The table is
`measure()`'s, pinned by `test_measured_table` (tool × system → offered, or why not):

    tool                          win32    darwin      gnome    kde      linux
    delete_sitemap                12/12    10/12 (a)   12/12    12/12    12/12
    delete_site                   12/12    12/12       12/12    12/12    12/12
    unverify_site                 12/12    12/12       12/12    12/12    12/12
    update_site_owners (1 change) 12/12    8/12 (a)    12/12    12/12    12/12
    update_site_owners (several)  0/12 (b) 0/12 (b)    0/12 (b) 0/12 (b) 0/12 (b)

(a) "The details take more lines than this notification shows.": a macOS banner shows a subtitle line and
    two lines of body: a sitemap of 41 to 60 characters on another host than its property's, or a
    replacement (the property, one removed, one added) does not fit it whole; "linux" is any other server.
(b) "Several owner changes.": the form names only a single change whole; the dialog shows them all.

Before issue 36 the macOS column read 0, 8, 0 and 8 of 12, and the screenshots' (the demo's) three
single-target questions offered Approve on macOS for none of the three (`test_the_demo_questions_table`).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from searchdesk_desktop.approval.book import ApprovalBook
from searchdesk_desktop.approval.notification_question import (
    DENY,
    FITS,
    LABELS,
    REVIEW,
    WHY_ACCOUNT_TOO_LONG,
    WHY_REAL_IN_DEMO,
    WHY_TITLE_TOO_LONG,
    WHY_TOO_LONG,
    Fit,
    compose,
    linux_desktop,
    system_fit,
)
from searchdesk_desktop.notices.channel import Note
from searchdesk_desktop.notices.notifier_additions import APPROVE
from searchdesk_desktop.screenshots import ACCOUNT, _questions, as_sent
from searchdesk_server.agent import protocol
from searchdesk_server.approval import question as q

SYSTEMS = ("win32", "darwin", "gnome", "kde", "linux")
#: Property URLs (and Domain properties) up to 40 characters, the screenshots' among them.
PROPERTIES = (
    "https://www.example.com/",
    "https://staging.example.com/",
    "https://shop.example.net/",
    "sc-domain:example.com",
    "sc-domain:client-shop.example",
    "https://blog.example.com/",
    "https://www.kleine-baeckerei-muster.de/",  # 40
    "https://example.org/en/",
    "sc-domain:a-long-domain-name-here.co.uk",
    "https://docs.example.io/",
    "https://www.example-shop-online.com/",
    "https://a.example/",
)
#: Sitemap URLs up to 60 characters, one for each property.
SITEMAPS = (
    "https://www.example.com/old/sitemap.xml",
    "https://staging.example.com/sitemap_index.xml",
    "https://shop.example.net/sitemap-products-2024.xml",
    "https://www.example.com/sitemap.xml",
    "https://client-shop.example/sitemaps/products-1.xml",
    "https://blog.example.com/post-sitemap.xml",
    "https://www.kleine-baeckerei-muster.de/sitemap_index.xml",
    "https://example.org/en/sitemap.xml",
    "https://www.a-rather-long-domain-name.co.uk/sitemap.xml",
    "https://docs.example.io/sitemap-0.xml",
    "https://www.example-shop-online.com/sitemap_products_1.xml",  # 60
    "https://a.example/s.xml",
)
OTHERS = q.OwnerFacts(q.Ownership.OTHERS_REMAIN, 1)
LAST = q.OwnerFacts(q.Ownership.LAST_OWNER)


def _ownerships(i: int) -> q.OwnerFacts:
    return (OTHERS, LAST, q.OwnerFacts(q.Ownership.OTHERS_REMAIN, 12))[i % 3]


def _single_change(site: str, i: int) -> q.Question:
    """One replaced, added or removed, in turn."""
    old, new = "old-agency@example.net", "new-agency@example.net"
    changes = ([ACCOUNT, old], [ACCOUNT, new]), ([ACCOUNT], [ACCOUNT, new]), ([ACCOUNT, old], [ACCOUNT])
    current, wanted = changes[i % 3]
    return q.update_site_owners(site, current, wanted, ACCOUNT)


BUILDERS: dict[str, Callable[[int], q.Question]] = {
    "delete_sitemap": lambda i: q.delete_sitemap(PROPERTIES[i], SITEMAPS[i], ACCOUNT),
    "delete_site": lambda i: q.delete_site(PROPERTIES[i], ACCOUNT, _ownerships(i)),
    "unverify_site": lambda i: q.unverify_site(PROPERTIES[i], ACCOUNT, _ownerships(i)),
    "update_site_owners (1 change)": lambda i: _single_change(PROPERTIES[i], i),
    "update_site_owners (several)": lambda i: q.update_site_owners(
        PROPERTIES[i], [ACCOUNT, "a@example.net"], [ACCOUNT, "b@example.net", "c@example.net"], ACCOUNT
    ),
}


def note(question: q.Question, system: str, *, demo: bool = False, demo_requester: bool = False) -> Note:
    entry = ApprovalBook().ask(as_sent(question, "form", demo=demo_requester))
    return compose(entry, demo=demo, fit=FITS[system])


def measure() -> dict[str, dict[str, tuple[int, set[str]]]]:
    """tool → system → (how many of the recorded targets offer Approve, why the others do not)."""
    table: dict[str, dict[str, tuple[int, set[str]]]] = {}
    for tool, build in BUILDERS.items():
        questions = [build(i) for i in range(len(PROPERTIES))]
        table[tool] = {}
        for system in SYSTEMS:
            notes = [note(x, system) for x in questions]
            offered = sum(1 for n in notes if n.actions == (APPROVE, DENY))
            why = {n.body.split(" Show the question")[0] for n in notes if n.actions != (APPROVE, DENY)}
            table[tool][system] = (offered, why)
    return table


def table_text() -> str:
    rows = [f"{'tool':30}" + "".join(f"{s:13}" for s in SYSTEMS)]
    for tool, cells in measure().items():
        rows.append(f"{tool:30}" + "".join(f"{f'{n}/{len(PROPERTIES)}':13}" for n, _ in cells.values()))
    whys = sorted({w for cells in measure().values() for _, why in cells.values() for w in why})
    rows += [f"why not: {w}" for w in whys]
    return "\n".join(rows)


def test_the_recorded_targets_are_the_issues() -> None:
    assert max(map(len, PROPERTIES)) <= 40 and max(map(len, SITEMAPS)) <= 60
    shots = _questions()
    assert shots["delete_sitemap"].site == "sc-domain:example.com"  # the screenshots' targets are recorded here
    assert "https://www.example.com/old/sitemap.xml" in SITEMAPS and "https://staging.example.com/" in PROPERTIES


def test_measured_table() -> None:
    """Approve offered for a single removal of every kind and a single owner change on Windows and Linux
    (GNOME, KDE and any other server) for every recorded target; on macOS as many as its banner holds."""
    table = measure()
    print("\n" + table_text())
    n = len(PROPERTIES)
    for tool in ("delete_sitemap", "delete_site", "unverify_site", "update_site_owners (1 change)"):
        for system in ("win32", "gnome", "kde", "linux"):
            assert table[tool][system] == (n, set()), (tool, system, table[tool][system])
    mac = {tool: table[tool]["darwin"] for tool in BUILDERS}
    assert mac == {
        "delete_sitemap": (10, {WHY_TOO_LONG}),  # a sitemap of over 40 characters on another host: 2 lines alone
        "delete_site": (n, set()),  # the address and a one-line consequence
        "unverify_site": (n, set()),
        "update_site_owners (1 change)": (8, {WHY_TOO_LONG}),  # a replacement: the property and 2 changes
        "update_site_owners (several)": (0, {q.HOLD_SEVERAL}),
    }
    for system in SYSTEMS:
        assert table["update_site_owners (several)"][system] == (0, {q.HOLD_SEVERAL}), system


#: The demo's (and the screenshots') questions that name a single target, and who may approve them from a
#: notification, per system: every one on every system (issue 36: on macOS none of the three did before,
#: and in the demo app "End verified ownership" was withheld on every Linux desktop for its title).
DEMO_SINGLE = ("delete_sitemap", "delete_site", "unverify_site")


def demo_table(*, demo: bool) -> dict[str, dict[str, str]]:
    """tool → system → "Approve", or why not, for the demo's questions as the demo app (or the real app) shows them."""
    questions = _questions()
    return {
        tool: {
            system: "Approve"
            if (n := note(questions[tool], system, demo=demo, demo_requester=demo)).actions == (APPROVE, DENY)
            else n.body.split(" Show the question")[0]
            for system in SYSTEMS
        }
        for tool in (*DEMO_SINGLE, "update_site_owners")
    }


@pytest.mark.parametrize("demo", [False, True], ids=["real app", "demo app"])
def test_the_demo_questions_table(demo: bool) -> None:
    """Approve offered per tool and per system for the demo's questions: all three single-target questions
    on every system, macOS included, in the real app and in the demo app alike; the owner change (three
    changes) never, with its reason."""
    table = demo_table(demo=demo)
    print(
        "\n" + "\n".join(f"{tool:20} " + " ".join(f"{c[:12]:13}" for c in row.values()) for tool, row in table.items())
    )
    for tool in DEMO_SINGLE:
        assert table[tool] == dict.fromkeys(SYSTEMS, "Approve"), (tool, table[tool])
    assert table["update_site_owners"] == dict.fromkeys(SYSTEMS, q.HOLD_SEVERAL)


def test_the_reason_named_is_the_part_that_does_not_fit() -> None:
    """Each withheld Approve names what does not fit: the title, the account's line, or the details; never
    "too long" for a short body whose title is what overflows (issue 36: the demo's "End verified ownership")."""
    questions = _questions()
    narrow_title = Fit(1, 6, line_chars=30)  # "SearchDesk: End verified ownership" is 34 characters
    assert note(questions["unverify_site"], "gnome").actions == (APPROVE, DENY)
    withheld = compose(ApprovalBook().ask(as_sent(questions["unverify_site"], "title")), fit=narrow_title)
    assert withheld.actions == (REVIEW, DENY)
    assert withheld.body.startswith(f"{WHY_TITLE_TOO_LONG} Show the question"), withheld.body
    long_account = "someone.with.a.rather.long.name@example-agency.co.uk"  # over the 40 of a macOS subtitle line
    account = compose(
        ApprovalBook().ask(as_sent(q.delete_site(PROPERTIES[0], long_account, OTHERS), "account")), fit=FITS["darwin"]
    )
    assert account.actions == (REVIEW, DENY) and account.body.startswith(WHY_ACCOUNT_TOO_LONG), account.body
    assert note(q.delete_site(PROPERTIES[0], long_account, OTHERS), "win32").actions == (APPROVE, DENY)
    details = note(q.delete_sitemap(PROPERTIES[8], SITEMAPS[8], ACCOUNT), "darwin")  # a 55-character sitemap
    assert details.actions == (REVIEW, DENY) and details.body.startswith(WHY_TOO_LONG), details.body
    assert len({WHY_TITLE_TOO_LONG, WHY_ACCOUNT_TOO_LONG, WHY_TOO_LONG}) == 3


def test_a_sitemap_reads_whole_from_its_two_lines() -> None:
    """The sitemap named by its path beside its URL-prefix property still reads as the whole address; on
    another host (a Domain property's), the whole address."""
    assert q.sitemap_in("https://www.example.com/", "https://www.example.com/old/sitemap.xml") == "/old/sitemap.xml"
    assert q.sitemap_in("https://example.org/en/", "https://example.org/en/sitemap.xml") == "/en/sitemap.xml"
    assert q.sitemap_in("https://example.org/", "https://www.example.org/s.xml") == "https://www.example.org/s.xml"
    assert q.sitemap_in("sc-domain:example.com", "https://example.com/s.xml") == "https://example.com/s.xml"
    assert q.sitemap_in("http://example.org/", "https://example.org/s.xml") == "https://example.org/s.xml"


def _shown_whole(whole: str, shown: str, prop: str) -> bool:
    """`whole` is in the form as it is, or as its path under the property's origin (`question.sitemap_in`)."""
    return whole in shown or (
        q.sitemap_in(prop, whole) in shown.split("\n") and whole.endswith(q.sitemap_in(prop, whole))
    )


def test_every_target_is_whole_in_the_form() -> None:
    """A notification never shortens a target: each value of the question is in its form whole."""
    for build in BUILDERS.values():
        for i in range(len(PROPERTIES)):
            question = build(i)
            form = question.notification
            assert form is not None
            shown = f"{form.subtitle}\n{form.body}"
            assert ACCOUNT in form.subtitle
            for (label, _), whole in zip(
                question.values, question.wholes or [v for _, v in question.values], strict=True
            ):
                if label.startswith(("Removed", "Added", q.PROPERTY, q.SITEMAP, q.DOMAIN)) and not form.show_question:
                    assert _shown_whole(whole, shown, question.values[0][1]), (label, whole, shown)


# --- each warning the full question carries, carried by the form or Approve not offered -----------------


def _offered_anywhere(question: q.Question, **kw: bool) -> bool:
    return any(note(question, s, **kw).actions == (APPROVE, DENY) for s in SYSTEMS)


def test_last_owner_is_the_forms_consequence() -> None:
    for question in (q.delete_site(PROPERTIES[0], ACCOUNT, LAST), q.unverify_site(PROPERTIES[0], ACCOUNT, LAST)):
        assert "last verified owner" in question.consequence
        assert question.notification is not None
        body = question.notification.body
        assert "last verified owner" in body.casefold()
        assert "all lose access" in body or "nobody can use it" in body
    unknown = q.delete_site(PROPERTIES[0], ACCOUNT, q.OwnerFacts(q.Ownership.UNKNOWN))
    assert unknown.notification is not None and unknown.notification.body.endswith(q.NOTE_UNKNOWN)


def test_this_account_losing_ownership_is_carried_or_held() -> None:
    ends = q.unverify_site(PROPERTIES[0], ACCOUNT, OTHERS)
    assert ends.notification is not None and ends.notification.title == q.action_name("unverify_site")
    assert ACCOUNT in ends.notification.subtitle  # "End verified ownership … as <this account>"
    removes_self = q.update_site_owners(PROPERTIES[0], [ACCOUNT, "x@example.net"], ["x@example.net"], ACCOUNT)
    assert removes_self.notification is not None and removes_self.notification.show_question == q.HOLD_SELF
    assert not _offered_anywhere(removes_self)


def test_reads_like_owner_is_held() -> None:
    look = q.update_site_owners(
        PROPERTIES[0], [ACCOUNT, "agency@example.com"], [ACCOUNT, "agency@examp1e.com"], ACCOUNT
    )
    assert any("reads like" in label for label, _ in look.values)
    assert look.notification is not None and look.notification.show_question == q.HOLD_READS_LIKE
    assert not _offered_anywhere(look)
    shown = note(look, "kde")
    assert shown.actions == (REVIEW, DENY) and shown.body.startswith(q.HOLD_READS_LIKE)


def test_looks_like_host_is_held() -> None:
    for question in (
        q.delete_site("https://www.exаmple.com/", ACCOUNT, OTHERS),  # a Cyrillic а
        q.delete_sitemap("https://www.example.com/", "https://www.exаmple.com/sitemap.xml", ACCOUNT),
        q.unverify_site("https://www.exаmple.com/", ACCOUNT, OTHERS),
    ):
        assert q.LOOKS_LIKE_WARNING in question.consequence
        assert question.notification is not None and question.notification.show_question == q.HOLD_LOOKS_LIKE
        assert not _offered_anywhere(question)


def test_shortened_value_is_held() -> None:
    long_sitemap = "https://www.example.com/" + "a" * 300 + ".xml"
    question = q.delete_sitemap("https://www.example.com/", long_sitemap, ACCOUNT)
    assert question.values[1][1] != long_sitemap  # the question shortens it
    assert question.notification is not None and question.notification.show_question == q.HOLD_TOO_LONG
    assert long_sitemap not in question.notification.body  # too long for the wire's form: never shortened, left out
    assert not _offered_anywhere(question)


def test_real_account_in_the_demo_app_is_not_approvable() -> None:
    """The demo app refuses a real account's server (DEMO_APP); a request that names no requester (an
    older server) is taken as a real account's there, and its form never offers Approve."""
    wire = as_sent(BUILDERS["delete_sitemap"](0), "unnamed").to_json()
    del wire["requester"]
    for system in SYSTEMS:
        shown = compose(ApprovalBook().ask(protocol.ApprovalRequest.from_json(wire)), demo=True, fit=FITS[system])
        assert shown.actions == (REVIEW, DENY) and shown.body.startswith(WHY_REAL_IN_DEMO), system
        assert shown.summary.startswith("SearchDesk (Demo): ")
    demo = note(BUILDERS["delete_sitemap"](0), "gnome", demo=True, demo_requester=True)
    assert demo.actions == (APPROVE, DENY) and demo.summary == "Demo: Remove a sitemap"


def test_the_app_adds_only_its_origin_label() -> None:
    question = BUILDERS["delete_site"](0)
    form = question.notification
    assert form is not None
    shown = note(question, "win32")
    assert shown.summary == f"SearchDesk: {form.title}"
    assert shown.body == f"{form.subtitle}\n{form.body}"
    mac = note(question, "darwin")
    assert (mac.subtitle, mac.body) == (form.subtitle, form.body)


# --- the form on the wire, and the digest a yes is bound to ------------------------------------------


def test_the_form_travels_and_the_digest_covers_it() -> None:
    question = BUILDERS["delete_site"](0)
    request = as_sent(question, "digest")
    wire = request.to_json()
    assert wire["notification"] == question.notification.to_json()  # type: ignore[union-attr]
    received = protocol.ApprovalRequest.from_json(wire)
    assert received.digest == question.digest == request.digest
    assert question.digest != protocol.words_digest(question.what, question.consequence, question.values)
    other = protocol.NotificationForm(title="Remove a property", body=question.notification.body + "!")  # type: ignore[union-attr]
    changed = protocol.ApprovalRequest.from_json({**wire, "notification": other.to_json()})
    assert changed.digest != received.digest  # other words in the form: a yes to one is never the other's
    older = {k: v for k, v in wire.items() if k != "notification"}
    assert protocol.ApprovalRequest.from_json(older).digest != received.digest


@pytest.mark.parametrize(
    "form",
    [
        {"title": "", "body": "x"},
        {"title": "t", "body": "a\u202eb"},
        {"title": "t", "body": "a\n\nb"},
        {"title": "t", "body": "\n".join("x" * 9)},
        {"title": "t\n2", "body": "x"},
        {"title": "t", "body": "x" * 2000},
        {"title": "t", "subtitle": None, "body": "x"},
    ],
)
def test_a_form_is_plain_text_and_bounded(form: dict[str, object]) -> None:
    wire = as_sent(BUILDERS["delete_site"](0), "bad").to_json()
    with pytest.raises(protocol.InvalidParams):
        protocol.ApprovalRequest.from_json({**wire, "notification": form})


def test_an_older_server_gets_show_the_question() -> None:
    wire = as_sent(BUILDERS["delete_site"](0), "old").to_json()
    del wire["notification"]
    entry = ApprovalBook().ask(protocol.ApprovalRequest.from_json(wire))
    assert compose(entry, fit=FITS["kde"]).actions == (REVIEW, DENY)
    assert LABELS[REVIEW] == "Show the question"


def test_linux_servers_are_told_apart() -> None:
    assert linux_desktop("ubuntu:GNOME") == "gnome" and linux_desktop("KDE") == "kde"
    assert linux_desktop("XFCE") == linux_desktop("") == "linux"
    assert system_fit("linux", "KDE") == FITS["kde"] and system_fit("linux", "sway") == FITS["linux"]
    strictest = min((FITS["gnome"], FITS["kde"]), key=lambda f: (f.lines, f.title_lines))
    assert FITS["linux"] == strictest
    assert system_fit("sunos5") == FITS["darwin"]
