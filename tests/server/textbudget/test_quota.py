"""searchdesk_server.quota: daily counts shared through one file, Google's day, damage tolerated."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from searchdesk_server.quota import DAILY_LIMITS, QuotaBook, QuotaError, QuotaKind, default_path, google_day

from .conftest import Clock

SITE = "sc-domain:example.com"
ACCOUNT = "robot@project.iam.gserviceaccount.com"


def test_limits_are_googles() -> None:
    assert DAILY_LIMITS[QuotaKind.INDEXING] == 200
    assert DAILY_LIMITS[QuotaKind.INSPECTION] == 2_000


def test_google_day_is_los_angeles() -> None:
    # 07:59 UTC on 30 Nov is still 29 Nov in Los Angeles (PST, UTC-8); 08:00 is the 30th.
    assert google_day(datetime(2026, 11, 30, 7, 59, tzinfo=UTC)) == date(2026, 11, 29)
    assert google_day(datetime(2026, 11, 30, 8, 0, tzinfo=UTC)) == date(2026, 11, 30)
    # In summer (PDT, UTC-7) the day turns an hour earlier in UTC.
    assert google_day(datetime(2026, 7, 1, 6, 59, tzinfo=UTC)) == date(2026, 6, 30)
    assert google_day(datetime(2026, 7, 1, 7, 0, tzinfo=UTC)) == date(2026, 7, 1)
    # A naive time is taken as UTC.
    assert google_day(datetime(2026, 11, 30, 7, 59)) == date(2026, 11, 29)


def test_spend_and_remaining(quota_path: Path, clock: Clock) -> None:
    book = QuotaBook(quota_path, clock=clock)
    assert book.remaining("inspection", SITE) == 2_000
    assert book.try_spend("inspection", SITE)
    assert book.try_spend(QuotaKind.INSPECTION, SITE, 9)
    assert book.remaining("inspection", SITE) == 1_990
    assert book.remaining("inspection", "sc-domain:other.example") == 2_000  # per property
    assert book.remaining("indexing", ACCOUNT) == 200  # a separate kind
    assert book.used("inspection", SITE) == 10


def test_refuses_past_the_limit_and_spends_nothing(quota_path: Path, clock: Clock) -> None:
    book = QuotaBook(quota_path, clock=clock)
    assert book.try_spend("indexing", ACCOUNT, 199)
    assert not book.try_spend("indexing", ACCOUNT, 2)  # all or nothing
    assert book.remaining("indexing", ACCOUNT) == 1
    assert book.try_spend("indexing", ACCOUNT)
    assert not book.try_spend("indexing", ACCOUNT)
    assert book.remaining("indexing", ACCOUNT) == 0
    assert book.try_spend("indexing", ACCOUNT, 0)  # nothing asked, nothing refused


def test_a_refund_gives_back_what_was_spent_never_more(quota_path: Path, clock: Clock) -> None:
    book = QuotaBook(quota_path, clock=clock)
    book.try_spend("indexing", ACCOUNT, 5)
    book.refund("indexing", ACCOUNT)
    assert book.remaining("indexing", ACCOUNT) == 196
    book.refund("indexing", ACCOUNT, 100)  # never below zero
    assert book.remaining("indexing", ACCOUNT) == 200
    book.refund("indexing", "never-spent")
    assert book.remaining("indexing", "never-spent") == 200


def test_refund_for_a_day_that_has_passed_changes_nothing_today(quota_path: Path, clock: Clock) -> None:
    book = QuotaBook(quota_path, clock=clock)
    spent_on = book.today()
    book.try_spend("indexing", ACCOUNT, 3)
    clock.now += timedelta(days=1)
    book.try_spend("indexing", ACCOUNT, 7)
    book.refund("indexing", ACCOUNT, 3, day=spent_on)
    assert book.remaining("indexing", ACCOUNT) == 193


def test_two_books_share_one_file(quota_path: Path, clock: Clock) -> None:
    first = QuotaBook(quota_path, clock=clock)
    second = QuotaBook(quota_path, clock=clock)
    assert first.try_spend("indexing", ACCOUNT, 150)
    assert second.remaining("indexing", ACCOUNT) == 50
    assert not second.try_spend("indexing", ACCOUNT, 51)
    assert second.try_spend("indexing", ACCOUNT, 50)
    assert not first.try_spend("indexing", ACCOUNT)
    first.refund("indexing", ACCOUNT, 10)
    assert second.remaining("indexing", ACCOUNT) == 10


def test_a_restart_keeps_the_count(quota_path: Path, clock: Clock) -> None:
    QuotaBook(quota_path, clock=clock).try_spend("inspection", SITE, 1_234)
    assert QuotaBook(quota_path, clock=clock).remaining("inspection", SITE) == 766


def test_day_rollover_at_midnight_in_los_angeles(quota_path: Path, clock: Clock) -> None:
    clock.now = datetime(2026, 11, 30, 7, 59, 59, tzinfo=UTC)  # 23:59:59 on the 29th in LA
    book = QuotaBook(quota_path, clock=clock)
    assert book.try_spend("indexing", ACCOUNT, 200)
    assert not book.try_spend("indexing", ACCOUNT)
    clock.now = datetime(2026, 11, 30, 8, 0, 0, tzinfo=UTC)  # midnight in LA: a new day
    assert book.remaining("indexing", ACCOUNT) == 200
    assert book.try_spend("indexing", ACCOUNT)
    assert book.today() == date(2026, 11, 30)


def test_old_days_are_pruned_from_the_file(quota_path: Path, clock: Clock) -> None:
    book = QuotaBook(quota_path, clock=clock)
    for _ in range(5):
        book.try_spend("inspection", SITE)
        clock.now += timedelta(days=1)
    book.try_spend("inspection", SITE)
    days = json.loads(quota_path.read_text())["days"]
    assert sorted(days) == [(book.today() - timedelta(days=1)).isoformat(), book.today().isoformat()]


def test_a_corrupt_file_counts_as_empty_and_is_logged(
    quota_path: Path, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    quota_path.parent.mkdir(parents=True)
    quota_path.write_bytes(b"\x00{not json at all\xff")
    book = QuotaBook(quota_path, clock=clock)
    with caplog.at_level(logging.WARNING, logger="searchdesk_server.quota"):
        assert book.remaining("inspection", SITE) == 2_000
    assert any("damaged" in r.getMessage() or "cannot read" in r.getMessage() for r in caplog.records)
    assert book.try_spend("inspection", SITE)
    assert json.loads(quota_path.read_text())["days"][book.today().isoformat()]["inspection"][SITE] == 1


@pytest.mark.parametrize(
    "content",
    [
        "[]",
        '{"days": []}',
        '{"days": {"not-a-date": {"inspection": {"x": 5}}}}',
        "null",
        "[" * 100_000,
    ],
)
def test_wrong_shapes_count_as_empty(quota_path: Path, clock: Clock, content: str) -> None:
    quota_path.parent.mkdir(parents=True)
    quota_path.write_text(content)
    book = QuotaBook(quota_path, clock=clock)
    assert book.remaining("inspection", "x") == 2_000
    assert book.try_spend("inspection", "x")
    assert book.remaining("inspection", "x") == 1_999


def test_bad_entries_are_ignored_good_ones_kept(quota_path: Path, clock: Clock) -> None:
    today = google_day(clock.now).isoformat()
    quota_path.parent.mkdir(parents=True)
    quota_path.write_text(
        json.dumps(
            {
                "format": 1,
                "days": {
                    today: {
                        "inspection": {"good": 7, "negative": -5, "bool": True, "text": "9", "float": 1.5},
                        "indexing": ["not", "a", "map"],
                    }
                },
            }
        )
    )
    book = QuotaBook(quota_path, clock=clock)
    assert book.remaining("inspection", "good") == 1_993
    for key in ("negative", "bool", "text", "float"):
        assert book.remaining("inspection", key) == 2_000
    assert book.remaining("indexing", "good") == 200


def test_unknown_kind_and_negative_counts_are_refused(quota_path: Path, clock: Clock) -> None:
    book = QuotaBook(quota_path, clock=clock)
    with pytest.raises(QuotaError):
        book.remaining("pagespeed", SITE)
    with pytest.raises(QuotaError):
        book.try_spend("indexing", ACCOUNT, -1)
    with pytest.raises(QuotaError):
        book.refund("indexing", ACCOUNT, -1)


def test_an_unwritable_folder_counts_in_memory(tmp_path: Path, clock: Clock, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("")
    book = QuotaBook(blocker / "quota.json", clock=clock)  # its parent is a file: nothing can be created
    with caplog.at_level(logging.WARNING, logger="searchdesk_server.quota"):
        assert book.try_spend("indexing", ACCOUNT, 150)
        assert book.remaining("indexing", ACCOUNT) == 50
        assert not book.try_spend("indexing", ACCOUNT, 60)
    assert any("cannot" in r.getMessage() for r in caplog.records)


def test_writes_are_atomic_and_private(quota_path: Path, clock: Clock) -> None:
    book = QuotaBook(quota_path, clock=clock)
    book.try_spend("inspection", SITE)
    leftovers = [p.name for p in quota_path.parent.iterdir() if p.name not in {"quota.json", "quota.json.lock"}]
    assert leftovers == []
    if os.name == "posix":
        assert quota_path.stat().st_mode & 0o077 == 0


def test_limits_can_be_set_for_tests(quota_path: Path, clock: Clock) -> None:
    book = QuotaBook(quota_path, clock=clock, limits={QuotaKind.INDEXING: 2})
    assert book.limit("indexing") == 2
    assert book.try_spend("indexing", ACCOUNT, 2)
    assert not book.try_spend("indexing", ACCOUNT)
    with pytest.raises(QuotaError):
        book.remaining("inspection", SITE)


def test_default_path_is_in_the_user_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert default_path() == tmp_path / "xdg" / "searchdesk" / "quota.json"
    assert default_path().name == "quota.json"


def test_importing_quota_does_not_import_platformdirs() -> None:
    code = "import sys, searchdesk_server.quota; print('platformdirs' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


WORKER = textwrap.dedent(
    """
    import sys
    from datetime import UTC, datetime
    from searchdesk_server.quota import QuotaBook

    book = QuotaBook(sys.argv[1], clock=lambda: datetime(2026, 11, 29, 20, 0, tzinfo=UTC))
    print(sum(book.try_spend("indexing", "robot") for _ in range(int(sys.argv[2]))))
    """
)


def test_processes_spending_at_once_never_overspend(quota_path: Path) -> None:
    """Four real processes race for 200 units, 100 attempts each: exactly 200 are granted."""
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(quota_path), "100"], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    granted = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        granted.append(int(out))
    assert sum(granted) == 200
    assert json.loads(quota_path.read_text())["days"]["2026-11-29"]["indexing"]["robot"] == 200
