"""Approve from a notification is as safe as the dialog (issue 24), end to end on Linux.

The real server as a stdio subprocess against the fake Google (its request log is the judge), the app's
real listener, book and notifier (``AgentListener``, ``ApprovalBook``, ``SystemNotifications`` +
``ApprovalNotifications`` on desktop-notifier over D-Bus) in this Qt thread, the fake
``org.freedesktop.Notifications`` server on a private session bus pressing the buttons as a person
would, and a fake logind on a private system bus (``DBUS_SYSTEM_BUS_ADDRESS``) saying whether the session
is locked. Nobody touches the dialog: the press on the notification is the only answer.

- Approve pressed on the notification of each of the four guarded tools, after the arming delay, with
  the session unlocked → exactly one Google write. ``fit="system"`` uses this system's own figures: where
  the notification form does not offer Approve there (the form is written by the server, issue 24's other
  part), the test says so (xfail) rather than pressing a button nobody was shown; ``fit="whole"`` is a
  notification server that shows every line, so the press path is proven whatever the form.
- A press before arming, after the question was answered in the dialog, after it was replaced by other
  words, after it was withdrawn, and while the session reads as locked → no Google write (the locked
  press sends the notification again; Approve on that one, once unlocked, acts once).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from searchdesk_desktop.accounts.tokens import DemoTokens
from searchdesk_desktop.agent_socket.listener import AgentListener
from searchdesk_desktop.approval.arming import ARM_DELAY_MS
from searchdesk_desktop.approval.book import ApprovalBook, Entry, State
from searchdesk_desktop.approval.notification_question import DENY, ApprovalNotifications, Fit
from searchdesk_desktop.notices.channel import SystemNotifications
from searchdesk_desktop.notices.notifier_additions import APPROVE
from searchdesk_server.demo.state import DEMO_USER
from tests.desktop.agent_helpers import Background
from tests.desktop.conftest import (  # noqa: F401 - fixtures these tests use
    PrivateBus,
    asyncio_in_qt,
    collect_on_main_thread,
    private_bus,
    private_system_bus,
)
from tests.desktop.fake_logind import FakeLock
from tests.desktop.fake_notifications import FakeServer, key
from tests.fakegoogle import FakeGoogle
from tests.security.approval.test_person_approves import WWW, destructive, google_owners, sa_env
from tests.security.conftest import Planted, Witness, serve
from tests.server.approval.conftest import TARGETS, acted
from tests.server.stdio import text_of

ARMED_S = ARM_DELAY_MS / 1000 + 0.3  # the one arming delay (the dialog's), and a margin
#: A notification server that shows every line: Approve offered whatever the form (the press path).
WHOLE = Fit(1_000_000, 10_000)


@dataclass
class Desk:
    """The app's parts under test, and the fakes around them."""

    book: ApprovalBook
    notes: ApprovalNotifications
    server: FakeServer
    logind: FakeLock
    socket: str


def make_desk(qtbot: QtBot, bus: PrivateBus, system_bus: PrivateBus, folder: Path, fit: Fit | None) -> Iterator[Desk]:
    server = FakeServer(bus)
    logind = FakeLock(system_bus.env, "logind")
    book = ApprovalBook()
    listener = AgentListener(book, DemoTokens, path=str(folder / "agent.sock"))
    socket = listener.start()
    channel = SystemNotifications()
    notes = ApprovalNotifications(book, channel, review=lambda: None, **({"fit": fit} if fit else {}))
    qtbot.waitUntil(lambda: channel.state == "ready", timeout=10_000)
    try:
        yield Desk(book, notes, server, logind, socket)
    finally:
        notes.close()
        listener.close()
        for obj in (notes, channel, listener):
            obj.deleteLater()
        logind.stop()
        server.stop()


@pytest.fixture
def desk(
    qtbot: QtBot,
    private_bus: PrivateBus,  # noqa: F811
    private_system_bus: PrivateBus,  # noqa: F811
    asyncio_in_qt: object,  # noqa: F811
    folder: Path,
) -> Iterator[Desk]:
    yield from make_desk(qtbot, private_bus, private_system_bus, folder, WHOLE)


def in_background(
    fake: FakeGoogle,
    witness: Witness,
    planted: Planted,
    folder: Path,
    socket: str,
    wait_s: int,
    calls: Callable[[Any], Awaitable[list[Any]]],
) -> Background[list[Any]]:
    """The real server subprocess, making ``calls`` (given its client), on a thread of its own."""
    env = sa_env(planted, fake, SEARCHDESK_APPROVAL_WAIT=str(wait_s))

    async def run() -> list[Any]:
        async with serve(fake, witness, folder / "home", env, socket=socket) as served:
            return await calls(served.client)

    return Background(run)


def one_call(tool: str, args: dict[str, Any]) -> Callable[[Any], Awaitable[list[Any]]]:
    async def calls(client: Any) -> list[Any]:
        return [await client.call_tool(tool, args)]

    return calls


def shown(qtbot: QtBot, desk: Desk) -> tuple[dict[str, Any], Entry]:
    """The next notification on the fake server's screen, once the app knows it is shown."""
    note = desk.server.wait_for(qtbot, "notify")
    qtbot.waitUntil(lambda: any(s.shown_at is not None for s in desk.notes._sent.values()), timeout=10_000)
    (entry,) = desk.book.open_entries()
    return note, entry


def offers(note: dict[str, Any], kind: str) -> bool:
    return any(k.startswith(kind + ".") for k in note["actions"][::2])


# --------------------------------------------------------------------------------------------------
# The site owner approves from the notification: one write per yes


@pytest.mark.parametrize("fit", ["system", "whole"])
@pytest.mark.parametrize("tool", sorted(TARGETS))
def test_approve_on_the_notification_acts_once(
    qtbot: QtBot,
    private_bus: PrivateBus,  # noqa: F811
    private_system_bus: PrivateBus,  # noqa: F811
    asyncio_in_qt: object,  # noqa: F811
    folder: Path,
    fake: FakeGoogle,
    witness: Witness,
    planted: Planted,
    tool: str,
    fit: str,
) -> None:
    for d in make_desk(qtbot, private_bus, private_system_bus, folder, None if fit == "system" else WHOLE):
        call = in_background(fake, witness, planted, folder, d.socket, 30, one_call(tool, TARGETS[tool]))
        note, entry = shown(qtbot, d)
        if not offers(note, APPROVE):
            d.server.click(note["id"], key(note, DENY))  # let the call end; nothing is written
            call.wait(qtbot, timeout=60_000)
            assert acted(fake, tool) == 0
            offered = [k.partition(".")[0] for k in note["actions"][::2] if k != "default"]
            pytest.xfail(f"{tool}: this system's notification offers {offered}, not Approve: {note['body']!r}")
        qtbot.wait(int(ARMED_S * 1000))  # the person reads it
        d.server.click(note["id"], key(note, APPROVE))
        (result,) = call.wait(qtbot, timeout=60_000)
        assert not result.is_error, text_of(result)
        assert entry.activity.answered_by == "notification" and entry.state is State.USED
        assert acted(fake, tool) == 1
        assert len(destructive(fake)) == 1


# --------------------------------------------------------------------------------------------------
# Presses that must do nothing


SITEMAP_CALL = ("delete_sitemap", TARGETS["delete_sitemap"])


def test_a_press_before_the_arming_delay_writes_nothing(
    qtbot: QtBot, desk: Desk, folder: Path, fake: FakeGoogle, witness: Witness, planted: Planted
) -> None:
    call = in_background(fake, witness, planted, folder, desk.socket, 3, one_call(*SITEMAP_CALL))
    note, entry = shown(qtbot, desk)
    desk.server.click(note["id"], key(note, APPROVE))  # at once: nobody read it
    (result,) = call.wait(qtbot, timeout=60_000)
    assert result.is_error and (result.structured_content or {}).get("decision") == "pending", text_of(result)
    assert entry.is_open and destructive(fake) == []


def test_a_press_while_the_session_is_locked_writes_nothing_and_one_after_unlocking_acts(
    qtbot: QtBot, desk: Desk, folder: Path, fake: FakeGoogle, witness: Witness, planted: Planted
) -> None:
    desk.logind.set_locked(True)
    call = in_background(fake, witness, planted, folder, desk.socket, 20, one_call(*SITEMAP_CALL))
    note, entry = shown(qtbot, desk)
    qtbot.wait(int(ARMED_S * 1000))
    desk.server.click(note["id"], key(note, APPROVE))  # from the lock screen
    again = desk.server.wait_for(qtbot, "notify")  # ignored, and sent again (the press closed it)
    assert again["id"] != note["id"] and offers(again, APPROVE)
    assert entry.is_open and destructive(fake) == []
    desk.logind.set_locked(False)  # the person unlocks and answers from the notification
    qtbot.waitUntil(lambda: all(s.shown_at is not None for s in desk.notes._sent.values()), timeout=10_000)
    qtbot.wait(int(ARMED_S * 1000))
    desk.server.click(again["id"], key(again, APPROVE))
    (result,) = call.wait(qtbot, timeout=60_000)
    assert not result.is_error, text_of(result)
    assert len(destructive(fake)) == 1


def test_a_press_after_the_dialog_answered_writes_nothing(
    qtbot: QtBot, desk: Desk, folder: Path, fake: FakeGoogle, witness: Witness, planted: Planted
) -> None:
    async def calls(client: Any) -> list[Any]:
        first = await client.call_tool(*SITEMAP_CALL)
        return [first, await client.call_tool(*SITEMAP_CALL)]  # the deny stands for the same call

    call = in_background(fake, witness, planted, folder, desk.socket, 4, calls)
    note, entry = shown(qtbot, desk)
    qtbot.wait(int(ARMED_S * 1000))
    assert desk.book.answer(entry.key, False, "dialog")
    desk.server.click(note["id"], key(note, APPROVE))  # the old notification, still on some screen
    first, second = call.wait(qtbot, timeout=60_000)
    assert first.is_error and second.is_error, (text_of(first), text_of(second))
    assert entry.state is State.DENIED and destructive(fake) == []


def test_a_press_on_a_replaced_questions_notification_writes_nothing(
    qtbot: QtBot, desk: Desk, folder: Path, fake: FakeGoogle, witness: Witness, planted: Planted
) -> None:
    """Google's side changes between two builds of the same call: the second question replaces the
    first, and the first's notification — its words no longer true — answers nothing."""
    google_owners(fake, [DEMO_USER, "other.owner@example.com"])

    async def calls(client: Any) -> list[Any]:
        first = await client.call_tool("delete_site", {"site": WWW})  # "1 other verified owner remains"
        google_owners(fake, [DEMO_USER])  # the other owner leaves at Google
        return [first, await client.call_tool("delete_site", {"site": WWW})]  # "the last verified owner"

    call = in_background(fake, witness, planted, folder, desk.socket, 4, calls)
    old_note, old = shown(qtbot, desk)
    assert desk.server.wait_for(qtbot, "close") == old_note["id"]  # withdrawn when replaced
    new_note = desk.server.wait_for(qtbot, "notify")
    qtbot.waitUntil(lambda: bool(desk.book.open_entries()) and desk.book.open_entries()[0] is not old)
    (new,) = desk.book.open_entries()
    assert old.state is State.REPLACED and new.digest != old.digest
    assert "last verified owner" in new_note["body"].casefold() or not offers(new_note, APPROVE)
    desk.server.click(old_note["id"], key(old_note, APPROVE))  # armed long ago; the words were other
    first, second = call.wait(qtbot, timeout=60_000)
    assert first.is_error and second.is_error, (text_of(first), text_of(second))
    assert new.is_open and destructive(fake) == []


def test_a_press_after_the_question_was_withdrawn_writes_nothing(
    qtbot: QtBot, desk: Desk, folder: Path, fake: FakeGoogle, witness: Witness, planted: Planted
) -> None:
    call = in_background(fake, witness, planted, folder, desk.socket, 4, one_call(*SITEMAP_CALL))
    note, entry = shown(qtbot, desk)
    qtbot.wait(int(ARMED_S * 1000))
    assert desk.book.cancel(next(iter(entry.request_ids)))  # what the listener does on approval/cancel
    assert desk.server.wait_for(qtbot, "close") == note["id"]
    desk.server.click(note["id"], key(note, APPROVE))
    (result,) = call.wait(qtbot, timeout=60_000)
    assert result.is_error, text_of(result)
    assert entry.state is State.CANCELLED and destructive(fake) == []
