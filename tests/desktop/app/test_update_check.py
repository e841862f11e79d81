"""The update check (issue 27), against a local HTTPS server playing GitHub's release page and file host.

The app reaches it as a person behind a company proxy reaches GitHub: HTTPS_PROXY names a loopback
CONNECT proxy and SSL_CERT_FILE a test CA whose certificate names github.com and the file host. No
address in the app is changed for the test; what is injected is the test's own key pair (the app's
public key has a private half no test has) and the clock. The server's log is the judge of what was
sent, and of whether anything was sent at all; About's "Updates" line, of what the person is told.
"""

from __future__ import annotations

import base64
import gc
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from searchdesk_desktop import __version__
from searchdesk_desktop.core import Core
from searchdesk_desktop.project import RELEASES
from searchdesk_desktop.settings import AppSettings
from searchdesk_desktop.updates.checker import NO_CHECK, QUESTION, UpdateCheck, day
from searchdesk_desktop.updates.manifest import DAY_S, HOSTS, VALID_DAYS, Outcome
from tests import REPO as ROOT
from tests.desktop.helpers import core_args
from tests.fakegoogle.backend import FakeRequest, FakeResponse
from tests.fakegoogle.certs import make_pki
from tests.fakegoogle.servers import ConnectProxy, TLSServer, serve_in_thread

sys.path.insert(0, str(ROOT / "packaging"))
import sign_manifest

REPO_PATH = RELEASES.removeprefix("https://github.com")
LATEST = f"{REPO_PATH}/latest/download/update.json"
TAGGED = f"{REPO_PATH}/download/v9.9.9/update.json"
ASSET = "/github-production-release-asset/123456/0f3c?sp=r&sig=test"
OTHER_HOST = "downloads.example.net"
NEWER = "9.9.9"


def _bump(version: str, by: int) -> str:
    major, *rest = version.split(".")
    return ".".join([str(int(major) + by), *rest])


class ReleaseSite:
    """github.com and its file host on loopback TLS: latest -> the tag's file -> the file host, as GitHub
    redirects a release download; every request logged, with its headers."""

    def __init__(self, folder: Path) -> None:
        self.pki = make_pki(folder, "update-check test CA", hosts=(*HOSTS, OTHER_HOST))
        self.manifest = b""
        self.file_host = HOSTS[1]
        self.log: list[FakeRequest] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.tls = TLSServer(self, self.pki.cert_pem, self.pki.key_pem, self._stop)  # type: ignore[arg-type]
        self.proxy = ConnectProxy(self.tls.server_address[1], hosts=(*HOSTS, OTHER_HOST))
        self._threads = [serve_in_thread(self.tls, "release-tls"), serve_in_thread(self.proxy, "release-proxy")]

    def handle(self, request: FakeRequest, via: str) -> FakeResponse:
        with self._lock:
            self.log.append(request)
        cookie = [("set-cookie", "_gh_sess=abc123; Path=/; Secure; HttpOnly"), ("set-cookie", "logged_in=no; Path=/")]
        if request.host == "github.com" and request.path == LATEST:
            return FakeResponse(302, [("location", f"https://github.com{TAGGED}"), *cookie], [b""])
        if request.host == "github.com" and request.path == TAGGED:
            return FakeResponse(302, [("location", f"https://{self.file_host}{ASSET}"), *cookie], [b""])
        if request.host == self.file_host and f"{request.path}?{request.query}" == ASSET:
            return FakeResponse(200, [("content-type", "application/octet-stream")], [self.manifest])
        return FakeResponse(404, [], [b"Not Found"])

    def env(self) -> dict[str, str]:
        proxy = f"http://127.0.0.1:{self.proxy.server_address[1]}"
        env = {"HTTPS_PROXY": proxy, "https_proxy": proxy, "SSL_CERT_FILE": str(self.pki.ca_pem)}
        env |= {name: "" for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")}
        return env

    def close(self) -> None:
        self._stop.set()
        for server in (self.tls, self.proxy):
            server.shutdown()
            server.server_close()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ReleaseSite]:
    served = ReleaseSite(tmp_path / "release-site")
    for name, value in served.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    try:
        yield served
    finally:
        served.close()


@pytest.fixture
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


class Clock:
    START = 1_800_000_000.0

    def __init__(self) -> None:
        self.t = self.START

    def __call__(self) -> float:
        return self.t


#: When the tests' manifests were signed, unless a test says otherwise: an hour before the app's clock.
ISSUED = Clock.START - 3600


def signed(key: Ed25519PrivateKey, version: str = NEWER, url: str = "", issued: float = ISSUED) -> bytes:
    """What packaging/sign_manifest.py writes for a release (the release's command, its rules kept)."""
    return sign_manifest.sign(
        key,
        version,
        url or f"{RELEASES}/tag/v{version}",
        expect_public=sign_manifest.public_b64(key),
        issued=datetime.fromtimestamp(issued, UTC),
    )


def start_app(
    qapp: QApplication,
    place: dict,
    key: Ed25519PrivateKey,
    clock: Clock,
    *,
    turned_on: bool = True,
    built_with_key: bool = True,
) -> object:
    from searchdesk_desktop.app import DesktopApp

    settings_path: Path = place["settings_path"]
    if turned_on:
        AppSettings(first_run_done=True, update_check=True, update_check_asked=True).save(settings_path)
    core = Core(**core_args(place))  # type: ignore[arg-type]
    updates = UpdateCheck(
        core.settings,
        lambda: core.settings.save(core.settings_path),
        key=sign_manifest.public_b64(key) if built_with_key else "",
        now=clock,
    )
    app = DesktopApp(qapp, core, autostart=place["autostart"], tray=True, updates=updates)  # type: ignore[arg-type]
    app.start(show_window=True)
    return app


def stop_app(app: object) -> None:
    app.quit()  # type: ignore[attr-defined]
    app.updates.stop(wait=True)  # type: ignore[attr-defined]
    app.dispose()  # type: ignore[attr-defined]
    gc.collect()


def words(app: object) -> list[str]:
    """Everything the person can read now: the main window's visible labels and the tray menu."""
    window = app.window  # type: ignore[attr-defined]
    labels = [label.text() for label in window.findChildren(QLabel) if label.isVisibleTo(window) and label.text()]
    return labels + app.tray.texts()  # type: ignore[attr-defined]


def checked(qtbot: QtBot, app: object) -> object:
    qtbot.waitUntil(lambda: app.updates.last is not None, timeout=20_000)  # type: ignore[attr-defined]
    return app.updates.last  # type: ignore[attr-defined]


def check_again(qtbot: QtBot, app: object, clock: Clock) -> object:
    """A day later, the next check (the running app's timer would do the same)."""
    clock.t += DAY_S
    app.updates.last = None  # type: ignore[attr-defined]
    app.updates.look()  # type: ignore[attr-defined]
    return checked(qtbot, app)


def about_updates(app: object) -> str:
    """About's "Updates" line, as the person reads it."""
    from searchdesk_desktop.windows.about import AboutDialog

    dialog = AboutDialog(app.core)  # type: ignore[attr-defined]
    try:
        lines = dialog.summary.text().splitlines()
    finally:
        dialog.deleteLater()
    return next(line for line in lines if line.startswith("Updates: ")).removeprefix("Updates: ")


OUT_OF_DATE = "The last answer was out of date, so SearchDesk ignored it."


def test_a_newer_signed_release_is_shown_in_the_window_and_the_tray_with_its_link(
    qtbot: QtBot, qapp: QApplication, place: dict, site: ReleaseSite, key: Ed25519PrivateKey, real_keyring: object
) -> None:
    site.manifest = signed(key)
    app = start_app(qapp, place, key, Clock())
    try:
        assert checked(qtbot, app).outcome is Outcome.NEWER  # type: ignore[attr-defined]
        page = f"{RELEASES}/tag/v{NEWER}"
        notice = app.update_notice  # type: ignore[attr-defined]
        qtbot.waitUntil(lambda: notice.isVisible())
        assert notice.heading.text() == f"SearchDesk {NEWER} is out"
        assert f'href="{page}"' in notice.link.text() and notice.link.openExternalLinks()
        opened: list[str] = []
        app.open_url = opened.append  # type: ignore[attr-defined]
        app.tray.rebuild()  # type: ignore[attr-defined]
        line = next(a for a in app.tray.menu.actions() if a.text().startswith(f"SearchDesk {NEWER} is out"))  # type: ignore[attr-defined]
        line.trigger()
        assert opened == [page]
        # What went: GitHub's redirects followed to the file host, one GET each, nothing but these headers —
        # no cookie although github.com set two, no version, no system, no account.
        assert [(r.method, r.host, r.path) for r in site.log] == [
            ("GET", "github.com", LATEST),
            ("GET", "github.com", TAGGED),
            ("GET", HOSTS[1], ASSET.split("?")[0]),
        ]
        for request in site.log:
            assert request.headers == {
                "host": request.host,
                "user-agent": "SearchDesk",
                "accept": "*/*",
                "accept-encoding": "identity",
            }
            assert request.body == b""
        assert sorted(set(site.proxy.connects)) == sorted(f"{h}:443" for h in HOSTS)
    finally:
        stop_app(app)


@pytest.mark.parametrize(
    "case",
    [
        "bad signature",
        "older version",
        "same version",
        "link to another host",
        "link to another repository",
        "redirect to another host",
        "oversized",
    ],
)
def test_what_is_not_a_newer_release_from_us_changes_nothing_and_says_nothing(
    qtbot: QtBot,
    qapp: QApplication,
    place: dict,
    site: ReleaseSite,
    key: Ed25519PrivateKey,
    real_keyring: object,
    case: str,
) -> None:
    if case == "bad signature":
        site.manifest = signed(Ed25519PrivateKey.generate())  # signed, but not with the app's key
    elif case == "older version":
        site.manifest = signed(key, _bump(__version__, -1) if __version__.split(".")[0] != "0" else "0.0.1")
    elif case == "same version":
        site.manifest = signed(key, __version__)
    elif case == "link to another host":
        site.manifest = sign_manifest.manifest(
            key, NEWER, f"https://{OTHER_HOST}{REPO_PATH}/tag/v{NEWER}", datetime.fromtimestamp(ISSUED, UTC)
        )
    elif case == "link to another repository":  # GitHub, but not this project's release page
        site.manifest = sign_manifest.manifest(
            key,
            NEWER,
            f"https://github.com/someone-else/searchdesk/releases/tag/v{NEWER}",
            datetime.fromtimestamp(ISSUED, UTC),
        )
    elif case == "oversized":  # more than any manifest we publish: not read to the end
        site.manifest = signed(key) + b" " * 20_000
    else:
        site.manifest = signed(key)
        site.file_host = OTHER_HOST  # github.com redirects the download somewhere that is not GitHub's
    app = start_app(qapp, place, key, Clock())
    try:
        before = words(app)
        found = checked(qtbot, app)
        expected = {
            "bad signature": Outcome.REJECTED,
            "older version": Outcome.CURRENT,
            "same version": Outcome.CURRENT,
            "link to another host": Outcome.REJECTED,
            "link to another repository": Outcome.REJECTED,
            "redirect to another host": Outcome.UNREACHABLE,
            "oversized": Outcome.UNREACHABLE,
        }[case]
        assert found.outcome is expected, found  # type: ignore[attr-defined]
        qtbot.wait(100)
        assert not app.update_notice.isVisible()  # type: ignore[attr-defined]
        assert words(app) == before
        assert app.tray.last_message is None  # type: ignore[attr-defined]
        saved = AppSettings.load(place["settings_path"])
        assert (saved.newer_version, saved.newer_url, saved.update_check) == ("", "", True)
        if case == "redirect to another host":
            assert f"{OTHER_HOST}:443" not in site.proxy.connects
            assert all(r.host != OTHER_HOST for r in site.log)
        # What About then says: a believed answer (nothing newer) is a fresh one; the rest are not.
        fresh = f"On. Last up-to-date answer on {day(Clock.START)}: this is the newest version."
        none_yet = "On. No up-to-date answer from SearchDesk's release page yet."
        assert (
            about_updates(app)
            == {
                Outcome.CURRENT: fresh,
                Outcome.REJECTED: f"{none_yet} The last answer was not signed by SearchDesk, so SearchDesk ignored it.",
                Outcome.UNREACHABLE: f"{none_yet} The last check could not reach GitHub.",
            }[expected]
        )
    finally:
        stop_app(app)


def test_an_expired_manifest_is_refused_and_about_says_there_is_no_fresh_answer(
    qtbot: QtBot, qapp: QApplication, place: dict, site: ReleaseSite, key: Ed25519PrivateKey, real_keyring: object
) -> None:
    """Signed by our key and naming a newer version, but past its 30 days: someone kept it back (or the
    weekly re-signing stopped). Believing it would let whoever holds it hide every later release."""
    site.manifest = signed(key, issued=Clock.START - VALID_DAYS * DAY_S - 60)
    app = start_app(qapp, place, key, Clock())
    try:
        before = words(app)
        found = checked(qtbot, app)
        assert found.outcome is Outcome.STALE and "expired" in found.why, found  # type: ignore[attr-defined]
        qtbot.wait(100)
        assert not app.update_notice.isVisible() and words(app) == before  # type: ignore[attr-defined]
        saved = AppSettings.load(place["settings_path"])
        assert (saved.newer_version, saved.update_seen_version, saved.update_seen_issued) == ("", "", 0.0)
        assert saved.update_fresh_at == 0.0
        assert about_updates(app) == f"On. No up-to-date answer from SearchDesk's release page yet. {OUT_OF_DATE}"
    finally:
        stop_app(app)


def test_an_older_manifest_played_back_is_refused_also_after_a_restart(
    qtbot: QtBot, qapp: QApplication, place: dict, site: ReleaseSite, key: Ed25519PrivateKey, real_keyring: object
) -> None:
    """Two genuine manifests for the same version, both within their 30 days: once the newer has been
    believed, the older (an answer recorded earlier and played back) is refused, also by the app started
    again (what it believed is in its settings). The weekly re-signed one is then believed again."""
    clock = Clock()
    older = signed(key, issued=Clock.START - 3 * DAY_S)
    site.manifest = signed(key, issued=Clock.START - 3600)
    app = start_app(qapp, place, key, clock)
    try:
        assert checked(qtbot, app).outcome is Outcome.NEWER  # type: ignore[attr-defined]
    finally:
        stop_app(app)
    saved = AppSettings.load(place["settings_path"])
    assert (saved.update_seen_version, saved.update_seen_issued, saved.update_fresh_at) == (
        NEWER,
        Clock.START - 3600,
        Clock.START,
    )
    site.manifest = older
    clock.t += DAY_S
    app = start_app(qapp, place, key, clock, turned_on=False)
    try:
        found = checked(qtbot, app)
        assert found.outcome is Outcome.STALE and "older than one already believed" in found.why, found  # type: ignore[attr-defined]
        assert about_updates(app) == (
            f"On. Last up-to-date answer on {day(Clock.START)}: SearchDesk {NEWER} is out. {OUT_OF_DATE}"
        )
        assert AppSettings.load(place["settings_path"]).update_seen_issued == Clock.START - 3600
        site.manifest = signed(key, issued=clock.t - 60)  # the weekly workflow's: same version, signed later
        assert check_again(qtbot, app, clock).outcome is Outcome.NEWER  # type: ignore[attr-defined]
        assert about_updates(app) == f"On. Last up-to-date answer on {day(clock.t)}: SearchDesk {NEWER} is out."
    finally:
        stop_app(app)


def test_a_version_below_one_already_seen_is_refused(
    qtbot: QtBot, qapp: QApplication, place: dict, site: ReleaseSite, key: Ed25519PrivateKey, real_keyring: object
) -> None:
    """A manifest signed later but naming a lower version than one believed: a step back to an old release
    (an old release's manifest re-signed by mistake, or a stolen key that cannot undo what was seen)."""
    clock = Clock()
    site.manifest = signed(key, NEWER)
    app = start_app(qapp, place, key, clock)
    try:
        assert checked(qtbot, app).outcome is Outcome.NEWER  # type: ignore[attr-defined]
        lower = "9.9.8"
        site.manifest = signed(key, lower, issued=clock.t + DAY_S - 60)
        found = check_again(qtbot, app, clock)
        assert found.outcome is Outcome.STALE and f"lower than {NEWER}" in found.why, found  # type: ignore[attr-defined]
        saved = AppSettings.load(place["settings_path"])
        assert (saved.newer_version, saved.update_seen_version, saved.update_fresh_at) == (NEWER, NEWER, Clock.START)
        assert app.update_notice.heading.text() == f"SearchDesk {NEWER} is out"  # type: ignore[attr-defined]
        assert about_updates(app).endswith(OUT_OF_DATE)
    finally:
        stop_app(app)


def test_a_build_without_the_release_key_says_in_about_that_it_does_not_check(
    qtbot: QtBot, qapp: QApplication, place: dict, site: ReleaseSite, key: Ed25519PrivateKey, real_keyring: object
) -> None:
    site.manifest = signed(key)
    app = start_app(qapp, place, key, Clock(), built_with_key=False)
    try:
        assert not app.updates.can_check  # type: ignore[attr-defined]
        app.updates.look()  # type: ignore[attr-defined]
        qtbot.wait(300)
        assert site.log == [] and site.proxy.connects == []
        assert about_updates(app) == NO_CHECK
        assert NO_CHECK.startswith("This copy does not check for updates: ")
    finally:
        stop_app(app)


def test_a_tampered_manifest_is_rejected(key: Ed25519PrivateKey) -> None:
    """Our key's signature, with the version in the payload changed afterwards."""
    import json

    from searchdesk_desktop.updates.manifest import NotOurs, load_key, read_manifest

    doc = json.loads(signed(key, "1.0.0"))
    payload = base64.b64decode(doc["payload"]).replace(b"1.0.0", b"9.0.0")
    doc["payload"] = base64.b64encode(payload).decode()
    public = load_key(sign_manifest.public_b64(key))
    assert public is not None
    with pytest.raises(NotOurs, match="signature"):
        read_manifest(json.dumps(doc).encode(), public)


def test_an_unreachable_server_changes_nothing_and_says_nothing_alarming(
    qtbot: QtBot,
    qapp: QApplication,
    place: dict,
    key: Ed25519PrivateKey,
    real_keyring: object,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on: the proxy (so GitHub) cannot be reached
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for name in ("HTTPS_PROXY", "https_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
    app = start_app(qapp, place, key, Clock())
    try:
        before = words(app)
        assert checked(qtbot, app).outcome is Outcome.UNREACHABLE  # type: ignore[attr-defined]
        qtbot.wait(100)
        assert words(app) == before
        assert not app.update_notice.isVisible()  # type: ignore[attr-defined]
        assert app.tray.last_message is None  # type: ignore[attr-defined]
        assert AppSettings.load(place["settings_path"]).newer_version == ""
    finally:
        stop_app(app)


def test_at_most_once_a_day_also_across_restarts(
    qtbot: QtBot, qapp: QApplication, place: dict, site: ReleaseSite, key: Ed25519PrivateKey, real_keyring: object
) -> None:
    site.manifest = signed(key, __version__)
    clock = Clock()
    app = start_app(qapp, place, key, clock)
    try:
        checked(qtbot, app)
        assert len(site.log) == 3  # one check: latest, the tag's file, the file host
        clock.t += DAY_S - 60
        app.updates.look()  # type: ignore[attr-defined]
        app.core.changed.emit()  # type: ignore[attr-defined]  # (Settings saved: the app looks again)
        qtbot.wait(300)
        assert len(site.log) == 3
    finally:
        stop_app(app)
    app = start_app(qapp, place, key, clock, turned_on=False)  # a restart the same day: no check either
    try:
        qtbot.wait(300)
        assert len(site.log) == 3
        clock.t += 60
        app.updates.look()  # type: ignore[attr-defined]
        qtbot.waitUntil(lambda: len(site.log) == 6, timeout=20_000)
    finally:
        stop_app(app)


def test_off_until_the_person_says_yes_and_asked_once(
    qtbot: QtBot, qapp: QApplication, place: dict, site: ReleaseSite, key: Ed25519PrivateKey, real_keyring: object
) -> None:
    site.manifest = signed(key)
    clock = Clock()
    app = start_app(qapp, place, key, clock, turned_on=False)  # a first start: nothing chosen yet
    try:
        question = app.update_question  # type: ignore[attr-defined]
        assert question is not None and question.isVisible()
        assert QUESTION in words(app)
        app.updates.look()  # type: ignore[attr-defined]
        qtbot.wait(500)
        assert site.log == [] and site.proxy.connects == []  # nothing at all went out
        question.no_button.click()
        assert not question.isVisible()
        app.updates.look()  # type: ignore[attr-defined]
        qtbot.wait(300)
        assert site.log == []
        saved = AppSettings.load(place["settings_path"])
        assert (saved.update_check, saved.update_check_asked) == (False, True)
    finally:
        stop_app(app)
    app = start_app(qapp, place, key, clock, turned_on=False)  # asked once: not again
    try:
        assert app.update_question is None  # type: ignore[attr-defined]
        assert QUESTION not in words(app)
        assert site.log == []
    finally:
        stop_app(app)


def test_yes_checks_and_settings_turns_it_off(
    qtbot: QtBot, qapp: QApplication, place: dict, site: ReleaseSite, key: Ed25519PrivateKey, real_keyring: object
) -> None:
    from searchdesk_desktop.windows.settings import SettingsWindow

    site.manifest = signed(key)
    clock = Clock()
    app = start_app(qapp, place, key, clock, turned_on=False)
    try:
        app.update_question.yes_button.click()  # type: ignore[attr-defined]
        qtbot.waitUntil(lambda: app.update_notice.isVisible(), timeout=20_000)  # type: ignore[attr-defined]
        settings = SettingsWindow(app.core)  # type: ignore[attr-defined]
        qtbot.addWidget(settings)
        assert settings.update_switch.isChecked()
        settings.update_switch.setChecked(False)
        assert settings.save()
        qtbot.waitUntil(lambda: not app.update_notice.isVisible())  # type: ignore[attr-defined]
        assert not any(t.startswith("SearchDesk 9.9.9") for t in app.tray.texts())  # type: ignore[attr-defined]
        clock.t += 2 * DAY_S
        app.updates.look()  # type: ignore[attr-defined]
        qtbot.wait(300)
        assert len(site.log) == 3 and AppSettings.load(place["settings_path"]).update_check is False
    finally:
        stop_app(app)


def test_the_demo_never_asks_and_never_checks(qapp: QApplication, place: dict) -> None:
    from searchdesk_desktop.app import DesktopApp

    core = Core(demo=True, **core_args(place))  # type: ignore[arg-type]
    app = DesktopApp(qapp, core, autostart=place["autostart"], tray=False)
    assert not app.updates.should_ask and not app.updates.enabled
    app.gc.stop()
    app.dispose()
    gc.collect()


def test_the_signing_script_refuses_a_key_that_is_not_the_apps_and_a_foreign_link(
    tmp_path: Path, key: Ed25519PrivateKey
) -> None:
    page = f"{RELEASES}/tag/v{NEWER}"
    with pytest.raises(sign_manifest.SignError, match="not the one"):
        sign_manifest.sign(key, NEWER, page, expect_public=sign_manifest.public_b64(Ed25519PrivateKey.generate()))
    with pytest.raises(sign_manifest.SignError, match="release page"):
        sign_manifest.sign(key, NEWER, f"https://{OTHER_HOST}/", expect_public=sign_manifest.public_b64(key))
    with pytest.raises(sign_manifest.SignError, match="release page"):  # another version's page
        sign_manifest.sign(key, NEWER, f"{RELEASES}/tag/v1.0.0")
    private = tmp_path / "release.key"
    done = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "sign_manifest.py"), "keygen", "--private-key-file", str(private)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert private.stat().st_mode & 0o077 == 0
    assert "UPDATE_PUBLIC_KEY" in done.stdout and private.read_text().strip() not in done.stdout
    public = done.stdout.strip().splitlines()[-1]
    assert public == sign_manifest.public_b64(sign_manifest.load_private(private.read_text()))


def test_abouts_update_line_for_each_state() -> None:
    """The words About shows, state by state (the checks above reach them through the real check)."""
    from searchdesk_desktop.updates.checker import status_text

    on = AppSettings(update_check=True, update_check_asked=True)
    assert status_text(on, offered=False) == NO_CHECK
    assert status_text(AppSettings(), offered=True) == "Off. You can turn it on in Settings."
    assert status_text(on, offered=True) == "On. No up-to-date answer from SearchDesk's release page yet."
    on.update_fresh_at, on.update_last_outcome = Clock.START, Outcome.CURRENT.value
    assert (
        status_text(on, offered=True)
        == f"On. Last up-to-date answer on {day(Clock.START)}: this is the newest version."
    )
    on.update_last_outcome = Outcome.UNREACHABLE.value
    assert status_text(on, offered=True).endswith("The last check could not reach GitHub.")
