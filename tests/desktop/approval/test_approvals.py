"""The approval book's rules, with a fake clock: bound to fingerprints, first answer wins, spent once,
nothing approved by timeout or withdrawal, questions and answers kept 5 minutes."""

from __future__ import annotations

import pytest

from searchdesk_desktop.approval.book import ApprovalBook, QueueFull, RequestIdReused, State
from searchdesk_server.agent.protocol import answer_key
from tests.clock import Clock
from tests.desktop.helpers import REAL_SERVER, question


def book(max_open: int = 32) -> tuple[ApprovalBook, Clock]:
    clock = Clock()
    return ApprovalBook(clock=clock, wall=clock, max_open=max_open), clock


def test_identical_questions_share_one_entry_and_other_targets_do_not() -> None:
    b, _ = book()
    a1 = b.ask(question("https://a.example/", request_id="1"))
    a2 = b.ask(question("https://a.example/", request_id="2"))
    other = b.ask(question("https://b.example/", request_id="3"))
    assert a1 is a2 and a1.request_ids == {"1", "2"}
    assert other is not a1
    assert len(b.open_entries()) == 2


def test_first_answer_wins_and_approve_is_spent_once() -> None:
    b, _ = book()
    e = b.ask(question())
    assert b.take(e.fingerprint) == "pending"
    assert b.answer(e.fingerprint, True, "notification")
    assert not b.answer(e.fingerprint, False, "dialog")
    assert b.take(e.fingerprint) == "approve"
    assert b.take(e.fingerprint) == "none"
    assert e.state is State.USED and e.activity.answered_by == "notification"


def test_deny_is_kept_and_a_new_ask_opens_a_new_question() -> None:
    b, _ = book()
    e = b.ask(question(request_id="1"))
    b.answer(e.fingerprint, False, "dialog")
    assert b.take(e.fingerprint) == "deny"
    assert b.take(e.fingerprint) == "deny"  # not consumed
    again = b.ask(question(request_id="2"))
    assert again is not e and again.state is State.PENDING


def test_nothing_is_approved_by_time() -> None:
    b, clock = book()
    e = b.ask(question())
    clock.now += 299
    assert b.take(e.fingerprint) == "pending"
    clock.now += 2
    assert b.take(e.fingerprint) == "none"
    assert e.state is State.EXPIRED and e.activity.decision == "no answer (expired)"
    assert not b.answer(e.fingerprint, True, "dialog")


def test_an_unused_approve_lapses_after_five_minutes() -> None:
    b, clock = book()
    e = b.ask(question())
    b.answer(e.fingerprint, True, "dialog")
    clock.now += 301
    assert b.take(e.fingerprint) == "none"
    assert e.state is not State.USED


def test_withdrawal_approves_nothing() -> None:
    b, _ = book()
    e = b.ask(question(request_id="r"))
    b.answer(e.fingerprint, True, "dialog")
    assert b.cancel("r")
    assert b.take(e.fingerprint) == "none"
    assert not b.cancel("r") and not b.cancel("unknown")


def test_reopen_for_other_waiting_calls() -> None:
    b, _ = book()
    e = b.ask(question(request_id="a"))
    b.ask(question(request_id="b"))
    b.answer(e.fingerprint, True, "dialog")
    assert b.take(e.fingerprint, served="a", reopen=True) == "approve"
    again = b.get(e.fingerprint)
    assert again is not None and again is not e and again.state is State.PENDING
    assert again.request_ids == {"b"}


def test_bounds_and_request_id_reuse() -> None:
    b, _ = book(max_open=2)
    b.ask(question("https://1.example/"))
    b.ask(question("https://2.example/"))
    with pytest.raises(QueueFull, match="answer some"):
        b.ask(question("https://3.example/"))
    c, _ = book()
    c.ask(question("https://1.example/", request_id="same"))
    with pytest.raises(RequestIdReused):
        c.ask(question("https://2.example/", request_id="same"))


def test_asked_again_is_noted_only_for_a_standing_deny() -> None:
    b, clock = book()
    e = b.ask(question())
    assert not b.note_asked_again(e.fingerprint)  # still open: nothing to note
    b.answer(e.fingerprint, False, "dialog")
    assert b.asked_again_entries() == []  # a deny alone is not news
    assert b.note_asked_again(e.fingerprint) and b.note_asked_again(e.fingerprint)
    assert b.asked_again_entries() == [e] and e.asked_again == 2
    assert e.activity.decision == "denied; Claude asked again 2 times"
    assert b.take(e.fingerprint) == "deny"  # the deny still stands
    clock.now += 300  # kept as long as the deny is
    assert b.asked_again_entries() == [] and not b.note_asked_again(e.fingerprint)


def test_reconsider_reopens_the_question_and_never_approves() -> None:
    b, clock = book(max_open=1)
    e = b.ask(question(request_id="1"))
    b.answer(e.fingerprint, False, "dialog")
    b.note_asked_again(e.fingerprint)
    b.ask(question("https://other.example/", request_id="2"))  # the queue is full now
    clock.now += 100
    reopened = b.reconsider(e.fingerprint)
    assert reopened is not None and reopened is not e
    assert reopened.state is State.PENDING and reopened.opened == clock.now  # a fresh 5 minutes
    assert b.take(e.fingerprint) == "pending"  # open again, not approved
    assert b.asked_again_entries() == []
    assert e.activity.decision == "denied; Claude asked again once, then reopened"
    assert [a.decision for a in b.activity] == [e.activity.decision, "waiting", "waiting"]
    assert b.reconsider(e.fingerprint) is None  # nothing to reconsider while it is open
    assert b.answer(e.fingerprint, True, "dialog") and b.take(e.fingerprint) == "approve"
    assert b.reconsider("0" * 64) is None


def test_an_answer_after_the_caller_stopped_waiting_is_marked_late() -> None:
    b, clock = book()
    on_time = b.ask(question("https://a.example/", request_id="a", requester=REAL_SERVER))
    b.answer(on_time.key, True, "dialog")
    late = b.ask(question("https://b.example/", request_id="b", requester=REAL_SERVER))
    b.stopped_waiting(late.key)
    b.answer(late.key, False, "notification")
    assert not on_time.activity.late and late.activity.late
    assert late.activity.answered_at == clock.now and late.activity.values == (("Property", "https://b.example/"),)
    assert b.late_answers() == [late]
    clock.now += 301
    assert b.late_answers() == []  # kept 5 minutes, like every answer


# --- a yes is bound to the words (issue 23) ------------------------------------------------------

REWORDED = "This will remove the property below, whose owners changed at Google since it was first asked."


def test_other_words_for_the_same_question_replace_it_and_never_join() -> None:
    b, _ = book()
    changes: list[tuple[str, State]] = []
    b.on_change.append(lambda e: changes.append((e.request.what, e.state)))
    old = b.ask(question(request_id="1", requester=REAL_SERVER))
    new = b.ask(question(request_id="2", requester=REAL_SERVER, what=REWORDED))
    assert new is not old and old.fingerprint == new.fingerprint and old.key != new.key
    assert old.state is State.REPLACED and new.replaced and new.request_ids == {"2"}
    assert b.open_entries() == [new]
    assert changes[-2:] == [(old.request.what, State.REPLACED), (REWORDED, State.PENDING)]
    assert "asked again with other words" in old.activity.decision
    assert not b.answer(old.key, True, "dialog")  # a click meant for the old words answers nothing
    assert b.get(old.key) is None and b.get(new.key) is new and b.get(new.slot) is new
    assert b.answer(new.key, True, "dialog")
    assert b.take(old.key) == "none" and b.take(new.key) == "approve"
    # The same words again join, as before.
    again = b.ask(question(request_id="3", requester=REAL_SERVER, what=REWORDED))
    assert again.key == new.key and again is not old


def test_an_unspent_yes_to_other_words_is_dropped_not_used() -> None:
    b, _ = book()
    old = b.ask(question(request_id="1", requester=REAL_SERVER))
    assert b.answer(old.key, True, "dialog")
    new = b.ask(question(request_id="2", requester=REAL_SERVER, what=REWORDED))
    assert new.state is State.PENDING and old.state is State.REPLACED
    assert old.activity.decision == "approved, then asked again with other words (not used)"
    assert b.take(new.slot) == "pending"  # even asked without the words' digest
    assert b.take(old.key) == "none"


def test_status_with_a_digest_answers_only_from_a_question_with_those_words() -> None:
    b, _ = book()
    shown = b.ask(question(request_id="1", requester=REAL_SERVER))
    other = question(request_id="2", requester=REAL_SERVER, what=REWORDED)
    assert b.answer(shown.key, True, "dialog")
    assert b.take(answer_key(other.fingerprint, other.requester, other.digest)) == "none"
    assert shown.state is State.APPROVED  # not spent by a status for other words
    assert b.take(answer_key(shown.fingerprint, REAL_SERVER, shown.digest)) == "approve"
    assert b.take(shown.key) == "none"


def test_an_older_server_without_digest_is_answered_from_its_one_question() -> None:
    """No requester and no digest: the question of that fingerprint answers, whatever its words, as
    before. Other words from it still replace the open question: it never collects a yes to words
    that were replaced."""
    b, _ = book()
    first = b.ask(question(request_id="1"))
    second = b.ask(question(request_id="2", what=REWORDED))
    assert first.state is State.REPLACED and b.take(first.fingerprint) == "pending"
    assert b.answer(second.fingerprint, True, "dialog")
    assert b.take(second.fingerprint) == "approve" and b.take(second.fingerprint) == "none"


def test_replacing_an_open_question_leaves_the_queue_as_full_as_it_was() -> None:
    b, _ = book(max_open=1)
    b.ask(question(request_id="1", requester=REAL_SERVER))
    reworded = b.ask(question(request_id="2", requester=REAL_SERVER, what=REWORDED))  # one open, as before
    assert reworded.is_open and b.answer(reworded.key, True, "dialog")
    other = b.ask(question("https://b.example/", request_id="3", requester=REAL_SERVER))
    with pytest.raises(QueueFull):  # an approved question asked with other words opens one more
        b.ask(question(request_id="4", requester=REAL_SERVER))
    assert other.is_open and reworded.state is State.APPROVED


def test_a_request_id_names_one_wording() -> None:
    b, _ = book()
    b.ask(question(request_id="1", requester=REAL_SERVER))
    with pytest.raises(RequestIdReused):
        b.ask(question(request_id="1", requester=REAL_SERVER, what=REWORDED))
