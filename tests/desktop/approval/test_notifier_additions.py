"""Our layer over desktop-notifier's macOS and Windows backends (issue 24), with the OS faked at its
boundary: desktop-notifier's real ``backends/macos.py`` and ``backends/winrt.py`` are imported with
rubicon's ObjC classes and the winrt modules replaced by recorders, and the tests read what reaches the
OS. macOS: the Approve action unlocked-only and destructive, other buttons plain, the subtitle on the
content; Windows: Approve styled critical. Nothing here ran on a Mac or on Windows."""

from __future__ import annotations

import asyncio
import importlib
import platform
import sys
import types
from collections.abc import Iterator
from typing import Any, ClassVar
from xml.etree import ElementTree

import pytest

from searchdesk_desktop.notices import notifier_additions as notifier_layer

NONCE = "0123456789abcdef0123456789abcdef"
SUBTITLE = "https://www.example.com/old/sitemap.xml"


def buttons(*kinds: str) -> tuple[Any, ...]:
    from desktop_notifier import Button

    labels = {"approve": "Approve", "deny": "Deny", "review": "Show the question"}
    return tuple(Button(labels[k], identifier=f"{k}.{NONCE}") for k in kinds)


def notification(*kinds: str) -> Any:
    from desktop_notifier import Notification

    return Notification(
        "SearchDesk: Remove a sitemap?", "It can be submitted again.", buttons=buttons(*kinds), identifier=NONCE
    )


@pytest.fixture
def fresh_modules(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Installs fake modules; the backend modules imported with them are dropped afterwards."""
    dropped = (
        "desktop_notifier.backends.macos",
        "desktop_notifier.backends.macos_support",
        "desktop_notifier.backends.winrt",
    )
    for name in dropped:
        monkeypatch.delitem(sys.modules, name, raising=False)

    def fake(name: str, **attrs: Any) -> types.ModuleType:
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        monkeypatch.setitem(sys.modules, name, module)
        return module

    yield fake
    for name in dropped:
        sys.modules.pop(name, None)


# --- macOS ---------------------------------------------------------------------------------------


class Category:
    def __init__(self, identifier: str, actions: list[dict[str, Any]], options: int) -> None:
        self.identifier, self.actions, self.options = identifier, actions, options


class FakeSet:
    def __init__(self, items: list[Any]) -> None:
        self.items = items

    def allObjects(self) -> list[Any]:
        return list(self.items)

    def setByAddingObject(self, item: Any) -> FakeSet:
        return FakeSet([*self.items, item])


class Center:
    """UNUserNotificationCenter: what was registered and posted."""

    def __init__(self) -> None:
        self.categories = FakeSet([])
        self.requests: list[Any] = []
        self.delegate: Any = None

    def setNotificationCategories(self, categories: FakeSet) -> None:
        self.categories = categories

    def getNotificationCategoriesWithCompletionHandler(self, handler: Any) -> None:
        handler(self.categories)

    def addNotificationRequest(self, request: Any, withCompletionHandler: Any) -> None:
        self.requests.append(request)
        withCompletionHandler(None)


CENTER = Center()


class Obj:
    """Any ObjC object: alloc().init() makes one; attributes can be set."""

    @classmethod
    def alloc(cls) -> Any:
        return cls()

    def init(self) -> Any:
        return self


class ObjCClasses:
    """What ``ObjCClass(name)`` returns for each class the backend names."""

    class UNUserNotificationCenter(Obj):
        @staticmethod
        def currentNotificationCenter() -> Center:
            return CENTER

    class NSSet(Obj):
        def init(self) -> Any:
            return FakeSet([])

    class UNNotificationAction(Obj):
        @staticmethod
        def actionWithIdentifier(identifier: str, title: str, options: int) -> dict[str, Any]:
            return {"identifier": identifier, "title": title, "options": options}

    class UNNotificationCategory(Obj):
        @staticmethod
        def categoryWithIdentifier(
            identifier: str, actions: list[Any], intentIdentifiers: Any, options: int
        ) -> Category:
            return Category(identifier, actions, options)

    class UNNotificationRequest(Obj):
        @staticmethod
        def requestWithIdentifier(identifier: str, content: Any, trigger: Any) -> Any:
            return types.SimpleNamespace(identifier=identifier, content=content)

    class UNMutableNotificationContent(Obj):
        pass


@pytest.fixture
def macos(fresh_modules: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    global CENTER
    CENTER = Center()
    fresh_modules("rubicon")
    fresh_modules(
        "rubicon.objc",
        NSObject=Obj,
        ObjCClass=lambda name: getattr(ObjCClasses, name, Obj),
        objc_method=lambda f: f,
        py_from_ns=lambda x: x,
    )
    fresh_modules("rubicon.objc.runtime", load_library=lambda name: object(), objc_block=object, objc_id=object)
    monkeypatch.setattr(platform, "mac_ver", lambda *a: ("14.5", ("", "", ""), "arm64"))
    return importlib.import_module("desktop_notifier.backends.macos")  # afresh, with the fakes


def send_macos(macos: Any, note: Any, subtitle: str = "") -> Any:
    backend = macos.CocoaNotificationCenter("SearchDesk")
    notifier_layer.install(types.SimpleNamespace(_backend=backend))

    async def send() -> None:
        with notifier_layer.subtitle(subtitle):
            await backend._send(note)

    asyncio.run(send())
    return backend


def test_macos_approve_is_unlocked_only_and_destructive_and_other_buttons_plain(macos: Any) -> None:
    assert macos.UNNotificationActionOptionAuthenticationRequired == notifier_layer.AUTHENTICATION_REQUIRED
    assert macos.UNNotificationActionOptionDestructive == notifier_layer.DESTRUCTIVE
    send_macos(macos, notification("approve", "deny"), SUBTITLE)
    (category,) = CENTER.categories.items
    options = {a["identifier"].partition(".")[0]: a["options"] for a in category.actions}
    both = macos.UNNotificationActionOptionAuthenticationRequired | macos.UNNotificationActionOptionDestructive
    assert options == {"approve": both, "deny": macos.UNNotificationActionOptionNone}
    (request,) = CENTER.requests
    assert request.identifier == NONCE and request.content.categoryIdentifier == category.identifier
    assert request.content.subtitle == SUBTITLE and request.content.title == "SearchDesk: Remove a sitemap?"


def test_macos_a_show_the_question_notification_has_no_subtitle_unless_given_and_plain_buttons(macos: Any) -> None:
    send_macos(macos, notification("review", "deny"))
    (category,) = CENTER.categories.items
    assert [a["options"] for a in category.actions] == [0, 0]
    (request,) = CENTER.requests
    assert not hasattr(request.content, "subtitle")


def test_macos_never_reuses_a_category_registered_without_the_options(macos: Any) -> None:
    """desktop-notifier names a category by its button titles only, and reads the registered ones
    afresh each time ("may be modified by other Python processes using desktop-notifier"): an
    Approve/Deny category registered elsewhere with no options must not carry our Approve."""
    backend = macos.CocoaNotificationCenter("SearchDesk")
    notifier_layer.install(types.SimpleNamespace(_backend=backend))
    old = Category("desktop-notifier_button-title-Approve_button-title-Deny", [], 1)
    CENTER.categories = FakeSet([old])
    asyncio.run(backend._send(notification("approve", "deny")))
    used = CENTER.requests[0].content.categoryIdentifier
    assert used != old.identifier
    new = next(c for c in CENTER.categories.items if c.identifier == used)
    assert new.actions[0]["options"] == 3
    asyncio.run(backend._send(notification("approve", "deny")))  # the same set again: registered once
    assert len(CENTER.categories.items) == 2 and CENTER.requests[1].content.categoryIdentifier == used


def test_macos_subtitles_of_two_sends_at_once_never_swap(macos: Any) -> None:
    backend = macos.CocoaNotificationCenter("SearchDesk")
    notifier_layer.install(types.SimpleNamespace(_backend=backend))

    async def one(text: str) -> None:
        with notifier_layer.subtitle(text):
            await asyncio.sleep(0)
            await backend._send(notification("approve", "deny"))

    async def both() -> None:
        await asyncio.gather(one("first"), one("second"))

    asyncio.run(both())
    assert sorted(r.content.subtitle for r in CENTER.requests) == ["first", "second"]


# --- Windows -------------------------------------------------------------------------------------


class Toasts:
    shown: ClassVar[list[str]] = []


@pytest.fixture
def winrt(fresh_modules: Any) -> Any:
    Toasts.shown = []

    class XmlDocument:
        def load_xml(self, text: str) -> None:
            Toasts.shown.append(text)

    class ToastNotification:
        def __init__(self, xml: Any) -> None:
            self.xml = xml

        def __getattr__(self, name: str) -> Any:
            return lambda *a: None  # add_activated, add_dismissed, add_failed

    notifier = types.SimpleNamespace(show=lambda native: None)
    manager = types.SimpleNamespace(create_toast_notifier_with_id=lambda app_id: notifier, history=None)
    fresh_modules("winreg")
    for name in (
        "winrt",
        "winrt.windows",
        "winrt.windows.applicationmodel",
        "winrt.windows.data",
        "winrt.windows.data.xml",
        "winrt.windows.ui",
    ):
        fresh_modules(name)
    fresh_modules("winrt.system", Object=object, unbox_string=str)
    fresh_modules("winrt.windows.applicationmodel.core", CoreApplication=types.SimpleNamespace(id="SearchDesk"))
    fresh_modules("winrt.windows.data.xml.dom", XmlDocument=XmlDocument)
    fresh_modules(
        "winrt.windows.ui.notifications",
        NotificationSetting=object,
        ToastActivatedEventArgs=object,
        ToastDismissalReason=object,
        ToastDismissedEventArgs=object,
        ToastFailedEventArgs=object,
        ToastNotification=ToastNotification,
        ToastNotificationManager=types.SimpleNamespace(get_default=lambda: manager),
        ToastNotificationPriority=types.SimpleNamespace(DEFAULT=0, HIGH=1),
    )
    return importlib.import_module("desktop_notifier.backends.winrt")  # afresh, with the fakes


def send_windows(winrt: Any, note: Any) -> ElementTree.Element:
    backend = winrt.WinRTDesktopNotifier("SearchDesk")
    notifier_layer.install(types.SimpleNamespace(_backend=backend))
    asyncio.run(backend._send(note))
    return ElementTree.fromstring(Toasts.shown[-1])


def test_windows_approve_is_styled_critical(winrt: Any) -> None:
    toast = send_windows(winrt, notification("approve", "deny"))
    assert toast.get("useButtonStyle") == "true"
    styles = {
        a.get("arguments", "").rpartition("=")[2].partition(".")[0]: a.get("hint-buttonStyle")
        for a in toast.iter("action")
    }
    assert styles == {"approve": "Critical", "deny": None}


def test_windows_a_toast_without_approve_is_not_styled(winrt: Any) -> None:
    toast = send_windows(winrt, notification("review", "deny"))
    assert toast.get("useButtonStyle") is None
    assert all(a.get("hint-buttonStyle") is None for a in toast.iter("action"))
    send_windows(winrt, notification("approve", "deny"))  # installed twice: styled once, as before
    assert Toasts.shown[-1].count("hint-buttonStyle") == 1


def test_linux_is_left_as_desktop_notifier_made_it() -> None:
    class DBusDesktopNotifier:
        pass

    backend = DBusDesktopNotifier()
    notifier_layer.install(types.SimpleNamespace(_backend=backend))
    assert type(backend) is DBusDesktopNotifier
