"""Notifications: desktop-notifier over a real (private) D-Bus with a fake notification server, and
the rules that decide whether a press answers a question."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop.approval.book import ApprovalBook, Entry, State
from searchdesk_desktop.approval.notification_question import (
    DENY,
    FITS,
    REVIEW,
    ApprovalNotifications,
    Fit,
    compose,
    question_text,
)
from searchdesk_desktop.notices.channel import APP_NAME, Channel, Note, SystemNotifications, TrayBalloons
from searchdesk_desktop.notices.notifier_additions import APPROVE
from searchdesk_server.agent.protocol import ApprovalRequest, NotificationForm, Value
from searchdesk_server.approval.question import HOLD_SEVERAL
from tests import REPO
from tests.clock import Clock
from tests.desktop.conftest import PrivateBus
from tests.desktop.fake_notifications import FakeServer, key
from tests.desktop.helpers import DEMO_SERVER
from tests.desktop.helpers import question as bare_question

LINUX = FITS["linux"]
LAST_OWNER = "You are its last verified owner: everyone loses access."


def question(site: str = "https://example.com/", *, held: bool = False, **kw: Any) -> ApprovalRequest:
    """A question as a server of this version sends it, with its notification form: the property (or the
    first value) whole and the consequence; `held`: a form whose question Approve is never offered for."""
    values = kw.get("values")
    target = values[0].value if values else site
    body = f"{target}\n{HOLD_SEVERAL}" if held else f"{target}\n{LAST_OWNER}"
    form = NotificationForm(
        title="Remove a property", subtitle="as a@b", body=body, show_question=HOLD_SEVERAL if held else ""
    )
    return bare_question(site, notification=form, **kw)


@pytest.fixture
def server(private_bus: PrivateBus) -> Iterator[FakeServer]:
    s = FakeServer(private_bus)
    yield s
    s.stop()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def wired(
    qtbot: QtBot, server: FakeServer, asyncio_in_qt: object, clock: Clock
) -> Iterator[tuple[ApprovalBook, ApprovalNotifications, list[int]]]:
    book = ApprovalBook()
    reviews: list[int] = []
    channel = SystemNotifications()
    notes = ApprovalNotifications(book, channel, review=lambda: reviews.append(1), fit=LINUX, clock=clock)
    qtbot.waitUntil(lambda: channel.state == "ready", timeout=10_000)
    yield book, notes, reviews
    notes.close()
    notes.deleteLater()
    channel.deleteLater()


def shown(qtbot: QtBot, notes: ApprovalNotifications, entry: Entry) -> None:
    """Wait until the notification for ``entry`` is on screen (the arming delay counts from then)."""
    qtbot.waitUntil(lambda: any(s.entry is entry and s.shown_at is not None for s in notes._sent.values()))


# --- over D-Bus -----------------------------------------------------------------------------


def test_short_question_offers_approve_and_a_press_after_the_delay_approves(
    qtbot: QtBot, server: FakeServer, wired: tuple, clock: Clock
) -> None:
    book, notes, _ = wired
    entry = book.ask(question(values=(Value("Property", "<b>x</b> & co"),)))
    note = server.wait_for(qtbot, "notify")
    assert note["app"] == "SearchDesk" and note["summary"] == "SearchDesk: Remove a property"
    assert note["icon"].startswith("file://") and note["icon"].endswith("searchdesk-128.png")
    assert note["urgency"] == 2  # critical: stays until answered
    nonce = next(iter(notes._sent))
    assert note["actions"] == ["default", "", f"approve.{nonce}", "Approve", f"deny.{nonce}", "Deny"]
    assert note["body"] == "as a@b\n&lt;b&gt;x&lt;/b&gt; &amp; co\n" + LAST_OWNER  # the form; the server reads markup
    assert entry.request.notification is not None and entry.request.notification.subtitle == "as a@b"
    shown(qtbot, notes, entry)
    clock.now += 1  # the dialog's arming delay (0.8 s) has passed
    server.click(note["id"], key(note, APPROVE))
    qtbot.waitUntil(lambda: entry.state is State.APPROVED)
    assert entry.activity.answered_by == "notification"
    assert notes._sent == {}  # forgotten: the server closed it on the press (the spec's default)


def test_a_press_sooner_than_the_arming_delay_does_nothing(
    qtbot: QtBot, server: FakeServer, wired: tuple, clock: Clock
) -> None:
    book, notes, _ = wired
    entry = book.ask(question())
    note = server.wait_for(qtbot, "notify")
    shown(qtbot, notes, entry)
    clock.now += 0.7
    server.click(note["id"], key(note, APPROVE))
    other = book.ask(question("https://other.example/"))  # a marker: presses are handled in order
    server.wait_for(qtbot, "notify")
    shown(qtbot, notes, other)
    assert entry.state is State.PENDING


def test_long_question_offers_review_and_deny(qtbot: QtBot, server: FakeServer, wired: tuple, clock: Clock) -> None:
    book, notes, reviews = wired
    many = tuple(Value(f"Owner {i}", f"person{i}@example.com") for i in range(12))
    entry = book.ask(question(values=many, held=True))
    note = server.wait_for(qtbot, "notify")
    nonce = next(iter(notes._sent))
    assert note["actions"] == ["default", "", f"review.{nonce}", "Show the question", f"deny.{nonce}", "Deny"]
    assert note["body"].startswith(f"{HOLD_SEVERAL} Show the question to decide.")
    shown(qtbot, notes, entry)
    clock.now += 1
    server.click(note["id"], key(note, DENY))
    qtbot.waitUntil(lambda: entry.state is State.DENIED)
    second = book.ask(question(values=many[:11], held=True))
    note = server.wait_for(qtbot, "notify")
    server.click(note["id"], key(note, REVIEW))
    qtbot.waitUntil(lambda: reviews == [1])
    assert second.state is State.PENDING


def test_answer_in_dialog_withdraws_notification(qtbot: QtBot, server: FakeServer, wired: tuple, clock: Clock) -> None:
    book, notes, _ = wired
    entry = book.ask(question())
    note = server.wait_for(qtbot, "notify")
    shown(qtbot, notes, entry)
    assert book.answer(entry.fingerprint, False, "dialog")
    assert server.wait_for(qtbot, "close") == note["id"]
    clock.now += 1
    server.click(note["id"], key(note, APPROVE))  # too late: the first answer won
    qtbot.wait(200)
    assert entry.state is State.DENIED


def test_a_question_answered_before_its_notification_arrives_is_taken_back(
    qtbot: QtBot, server: FakeServer, wired: tuple
) -> None:
    book, _notes, _ = wired
    first = book.ask(question("https://a.example/"))
    assert book.answer(first.fingerprint, False, "dialog")  # before the notification was even sent
    server.send({"do": "hold"})
    assert server.wait_for(qtbot, "holding")
    second = book.ask(question("https://b.example/"))
    note = server.wait_for(qtbot, "notify")  # the first was never sent: this is the second
    assert "https://b.example/" in note["body"]
    assert book.answer(second.fingerprint, False, "dialog")  # while the service still holds its reply
    server.send({"do": "release"})
    assert server.wait_for(qtbot, "close") == note["id"]


def test_no_notification_server_falls_back_to_the_tray(
    qtbot: QtBot, private_bus: PrivateBus, asyncio_in_qt: object
) -> None:
    from PySide6.QtWidgets import QSystemTrayIcon

    tray = QSystemTrayIcon()
    balloons = TrayBalloons(tray)
    channel = SystemNotifications(balloons)
    book = ApprovalBook()
    reviews: list[int] = []
    notes = ApprovalNotifications(book, channel, review=lambda: reviews.append(1), fit=LINUX)
    entry = book.ask(question())
    with qtbot.waitSignal(balloons.shown, timeout=10_000):
        pass
    assert channel.state == "none" and entry.state is State.PENDING
    tray.messageClicked.emit()  # a click on the balloon brings the dialog forward
    qtbot.waitUntil(lambda: reviews == [1])
    notes.close()
    for obj in (notes, channel, balloons, tray):
        obj.deleteLater()


def test_a_service_that_never_answers_is_given_up(qtbot: QtBot, private_bus: PrivateBus, asyncio_in_qt: object) -> None:
    server = FakeServer(private_bus, "--hang")
    try:
        fallback = Recorder()
        channel = SystemNotifications(fallback, timeout_s=0.5)
        book = ApprovalBook()
        notes = ApprovalNotifications(book, channel, review=lambda: None, fit=LINUX)
        entry = book.ask(question())
        assert server.wait_for(qtbot, "ignored")  # it received the call and said nothing
        qtbot.waitUntil(lambda: channel.state == "none", timeout=10_000)
        assert [n for n, _ in fallback.sent] == [next(iter(notes._sent))]
        assert entry.state is State.PENDING
        notes.close()
        for obj in (notes, channel, fallback):
            obj.deleteLater()
    finally:
        server.stop()


# --- the rules, on a channel the test drives ----------------------------------------------------


class Recorder(Channel):
    """A channel that only records: the test plays the notification service."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[str, Note]] = []
        self.withdrawn: list[str] = []

    def send(self, nonce: str, note: Note) -> None:
        self.sent.append((nonce, note))

    def withdraw(self, nonce: str) -> None:
        self.withdrawn.append(nonce)


@pytest.fixture
def rules(qtbot: QtBot, clock: Clock) -> Iterator[tuple[ApprovalBook, Recorder, list[int]]]:
    book = ApprovalBook()
    channel = Recorder()
    reviews: list[int] = []
    notes = ApprovalNotifications(book, channel, review=lambda: reviews.append(1), fit=LINUX, clock=clock)
    yield book, channel, reviews
    notes.close()
    notes.deleteLater()


def test_demo_and_older_servers_are_labelled() -> None:
    book = ApprovalBook()
    short = compose(book.ask(question(requester=DEMO_SERVER)), demo=True)
    assert short.summary == "Demo: Remove a property"  # the notification's header names SearchDesk
    older = compose(book.ask(question("https://other.example/")), demo=True)  # an older server: real
    assert older.summary == "SearchDesk (Demo): Remove a property" and older.actions == (REVIEW, DENY)
    assert older.body.startswith("A real Google account, not the demo.")


def show_and_wait(qtbot: QtBot, channel: Recorder, clock: Clock, nonce: str) -> None:
    channel.shown.emit(nonce)
    qtbot.wait(1)  # the binding listens through a queued connection
    clock.now += 1


def press(qtbot: QtBot, channel: Recorder, nonce: str, key: str) -> None:
    channel.pressed.emit(nonce, key)
    qtbot.wait(1)


def test_each_notification_has_its_own_nonce_in_its_identifier_and_keys(qtbot: QtBot, rules: tuple) -> None:
    book, channel, _ = rules
    book.ask(question("https://a.example/"))
    book.ask(question("https://b.example/"))
    (n1, note1), (n2, _note2) = channel.sent
    assert n1 != n2 and len(n1) == 32
    assert note1.actions == (APPROVE, DENY)


def test_a_press_needs_a_known_nonce_the_same_nonce_in_its_key_and_an_offered_button(
    qtbot: QtBot, rules: tuple, clock: Clock
) -> None:
    book, channel, _ = rules
    entry = book.ask(question())
    ((nonce, _),) = channel.sent
    show_and_wait(qtbot, channel, clock, nonce)
    press(qtbot, channel, "f" * 32, f"approve.{'f' * 32}")  # a notification we never sent
    press(qtbot, channel, nonce, "approve." + "0" * 32)  # the key of another notification
    press(qtbot, channel, nonce, "approve")  # no nonce at all
    press(qtbot, channel, nonce, f"erase.{nonce}")  # not a button of ours
    assert entry.state is State.PENDING
    press(qtbot, channel, nonce, f"approve.{nonce}")
    assert entry.state is State.APPROVED


def test_review_and_deny_notification_cannot_approve(qtbot: QtBot, rules: tuple, clock: Clock) -> None:
    book, channel, reviews = rules
    many = tuple(Value(f"Owner {i}", f"person{i}@example.com") for i in range(12))
    entry = book.ask(question(values=many, held=True))
    ((nonce, note),) = channel.sent
    assert note.actions == (REVIEW, DENY)
    show_and_wait(qtbot, channel, clock, nonce)
    press(qtbot, channel, nonce, f"approve.{nonce}")  # forged: not offered
    assert entry.state is State.PENDING
    press(qtbot, channel, nonce, f"review.{nonce}")
    assert reviews == [1] and entry.state is State.PENDING
    press(qtbot, channel, nonce, f"deny.{nonce}")
    assert entry.state is State.DENIED


def test_too_soon_or_never_shown_does_nothing(qtbot: QtBot, rules: tuple, clock: Clock) -> None:
    book, channel, reviews = rules
    entry = book.ask(question())
    ((nonce, _),) = channel.sent
    press(qtbot, channel, nonce, f"approve.{nonce}")  # the service never said it showed it
    channel.shown.emit(nonce)
    qtbot.wait(1)
    clock.now += 0.5
    press(qtbot, channel, nonce, f"deny.{nonce}")
    press(qtbot, channel, nonce, f"approve.{nonce}")
    assert entry.state is State.PENDING
    press(qtbot, channel, nonce, f"review.{nonce}")  # Review only brings the dialog forward, even now
    assert reviews == [1]
    clock.now += 0.5
    press(qtbot, channel, nonce, f"approve.{nonce}")
    assert entry.state is State.APPROVED


def test_a_press_is_bound_to_the_question_instance_not_its_fingerprint(
    qtbot: QtBot, rules: tuple, clock: Clock
) -> None:
    """The same question asked again (after a deny, or reopened for a second waiting call) is a new
    instance: the first one's notification must not answer it."""
    book, channel, _ = rules
    first = book.ask(question())
    ((old, _),) = channel.sent
    show_and_wait(qtbot, channel, clock, old)
    assert book.answer(first.fingerprint, False, "dialog")
    assert channel.withdrawn == [old]
    again = book.ask(question())
    assert again is not first and again.fingerprint == first.fingerprint
    (new, _) = channel.sent[1]
    show_and_wait(qtbot, channel, clock, new)
    press(qtbot, channel, old, f"approve.{old}")  # the stale notification
    assert again.state is State.PENDING
    press(qtbot, channel, new, f"approve.{new}")
    assert again.state is State.APPROVED


def test_a_press_never_answers_another_instance_even_if_a_change_notice_was_missed(qtbot: QtBot, clock: Clock) -> None:
    """Defence in depth: the Entry a notification was sent for must still be the book's open
    question, even when the binding missed the book's word that it ended (say, a re-keyed book)."""
    book = ApprovalBook()
    channel = Recorder()
    notes = ApprovalNotifications(book, channel, review=lambda: None, fit=LINUX, clock=clock)
    first = book.ask(question())
    ((old, _),) = channel.sent
    show_and_wait(qtbot, channel, clock, old)
    book.on_change.remove(notes._changed)  # the notice of this answer and of the next question is lost
    assert book.answer(first.fingerprint, False, "dialog")
    again = book.ask(question())
    book.on_change.append(notes._changed)
    press(qtbot, channel, old, f"approve.{old}")
    assert again.state is State.PENDING and first.state is State.DENIED
    notes.close()
    notes.deleteLater()


def test_expired_and_cancelled_questions_withdraw_their_notification(qtbot: QtBot, clock: Clock) -> None:
    now = [0.0]
    book = ApprovalBook(clock=lambda: now[0], keep=10)
    channel = Recorder()
    notes = ApprovalNotifications(book, channel, review=lambda: None, fit=LINUX, clock=clock)
    expiring = book.ask(question("https://a.example/"))
    cancelled = book.ask(question("https://b.example/", request_id="cancel-me"))
    (n1, _), (n2, _) = channel.sent
    assert book.cancel("cancel-me")
    now[0] = 11
    book.expire()
    assert channel.withdrawn == [n2, n1]
    assert expiring.state is State.EXPIRED and cancelled.state is State.CANCELLED
    show_and_wait(qtbot, channel, clock, n1)
    press(qtbot, channel, n1, f"approve.{n1}")
    assert expiring.state is State.EXPIRED
    notes.close()
    notes.deleteLater()


def test_other_words_withdraw_the_notification_and_send_a_new_one_with_a_new_nonce(
    qtbot: QtBot, rules: tuple, clock: Clock
) -> None:
    """The same question asked again with other words (issue 23): the old notification is taken back,
    a new one with a new nonce shows the new words, and a press on the old one answers nothing."""
    book, channel, _ = rules
    old = book.ask(question(requester=DEMO_SERVER))
    ((n1, _),) = channel.sent
    show_and_wait(qtbot, channel, clock, n1)
    changed = (Value("Property", "https://example.com/ (its owners changed)"),)  # other words, in the form too
    new = book.ask(question(requester=DEMO_SERVER, what="This will remove the property below.", values=changed))
    assert channel.withdrawn == [n1]
    (_, _), (n2, note2) = channel.sent
    assert n2 != n1 and "its owners changed" in note2.body
    press(qtbot, channel, n1, f"approve.{n1}")  # the old words, still on some screen
    assert old.state is State.REPLACED and new.state is State.PENDING
    show_and_wait(qtbot, channel, clock, n2)
    press(qtbot, channel, n2, f"approve.{n2}")
    assert new.state is State.APPROVED


# --- what fits ------------------------------------------------------------------------------


def test_fit_counts_the_title_and_the_lines_below_it_wrapped() -> None:
    win = Fit(2, 4, 40)
    assert win.holds("t" * 80, "s", "a" * 79 + "\n" + "b" * 40)  # 2 title lines; 1 + 2 + 1 below
    assert not win.holds("t" * 81, "", "a")  # 3 title lines
    assert not win.holds("t", "s", "a" * 81 + "\n" + "b")  # 1 + 3 + 1
    assert not win.holds("t", "", "a\nb\nc\nd\ne")
    mac = Fit(1, 2, 40, subtitle=True)
    assert mac.holds("t", "s" * 40, "a" * 80)  # a subtitle line of its own, and two of body
    assert not mac.holds("t", "s" * 41, "a")
    assert not mac.holds("t", "s", "a" * 81)


def test_without_a_form_no_system_offers_approve() -> None:
    """A question from a server that sends no notification form (before issue 24): Show the question."""
    entry = ApprovalBook().ask(
        bare_question(what="Remove it?", values=(Value("Property", "https://a.example/"),), notification=None)
    )
    for fit in FITS.values():
        assert compose(entry, fit=fit).actions == (REVIEW, DENY)
    assert compose(entry, fit=Fit(10_000, 10_000)).body.startswith("The program that asked sent no short form.")
    assert question_text(entry).startswith("Remove it?")


def test_compose_labels_the_demo() -> None:
    short = compose(ApprovalBook().ask(question(requester=DEMO_SERVER)), demo=True, fit=LINUX)
    assert short.summary == "Demo: Remove a property"
    assert short.actions == (APPROVE, DENY)


# --- how each system knows the app -------------------------------------------------------------


def test_every_system_knows_the_app_by_one_name() -> None:
    """Linux: the notification's app name is the .desktop file's Name; Windows: the AppUserModelID
    desktop-notifier registers is the one the uninstaller removes; macOS: permission is kept per bundle
    identifier, which must never change."""
    import sys

    packaging = REPO / "packaging"
    sys.path.insert(0, str(packaging))
    try:
        import build_linux
        import spec_common
    finally:
        sys.path.remove(str(packaging))
    entry = dict(line.split("=", 1) for line in build_linux.DESKTOP_ENTRY.splitlines() if "=" in line)
    assert entry["Name"] == APP_NAME and entry["X-GNOME-UsesNotifications"] == "true"
    nsi = (packaging / "installer.nsi").read_text(encoding="utf-8")
    assert f'!define AUMID_KEY "Software\\Classes\\AppUserModelId\\{APP_NAME}"' in nsi
    assert 'DeleteRegKey HKCU "${AUMID_KEY}"' in nsi
    assert spec_common.BUNDLE_ID == "com.searchdesk.app"
