"""What desktop-notifier 6.2 does not expose, added in one small layer of ours (issue 24), never a fork.

An Approve on a notification must be as safe as the dialog's. The systems can help, but desktop-notifier
creates every macOS action with ``UNNotificationActionOptionNone``, has no subtitle, and gives Windows
toast buttons no style. So, on the backend desktop-notifier chose, and nowhere else:

- macOS (``CocoaNotificationCenter``): the Approve action is registered with
  ``UNNotificationActionOptionAuthenticationRequired`` ("can be performed only on an unlocked device",
  Apple's UNNotificationActionOptions) and ``UNNotificationActionOptionDestructive`` (shown as
  destructive). Our own ``_find_or_create_notification_category`` replaces desktop-notifier's: its
  category names carry the options, so a category an older build registered without them is never
  reused. The subtitle is set on the ``UNMutableNotificationContent`` desktop-notifier creates in
  ``_send``: the module's content class is wrapped once by one that reads ``SUBTITLE``.
- Windows (``WinRTDesktopNotifier``): the toast XML desktop-notifier builds in ``_send`` passes through
  the module's ``tostring``; ours first styles the Approve button ``hint-buttonStyle="Critical"`` with
  ``useButtonStyle="true"`` on ``<toast>`` (Microsoft Learn, toast schema: the style needs that
  attribute). The subtitle there is the body's first line (approval.notification_question.compose: a toast has
  no line of its own for it).
- Linux: nothing to add (the D-Bus backend sends what notices/channel.py, the channel, gives it).

The subtitle travels in a ContextVar set around one send (``with subtitle(text): await ...``): each
asyncio task has its own, so two questions sent at once never swap subtitles. ``install`` runs once per
``DesktopNotifier``; the tests import desktop-notifier's real backends with the OS faked at its
boundary (rubicon's ObjC classes, the winrt modules) and check what reaches it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any
from xml.etree.ElementTree import Element

#: The kind of the Approve button's key (``<kind>.<nonce>``): the layer marks that action;
#: approval.notification_question offers it.
APPROVE = "approve"

#: Apple's UNNotificationActionOptions (UserNotifications/UNNotificationAction.h).
AUTHENTICATION_REQUIRED = 1 << 0
DESTRUCTIVE = 1 << 1
OPTION_NONE = 0

#: The subtitle of the notification being sent in this task ("" for none).
SUBTITLE: ContextVar[str] = ContextVar("searchdesk_notification_subtitle", default="")


@contextlib.contextmanager
def subtitle(text: str) -> Iterator[None]:
    """The subtitle of the notification sent inside this block (in this asyncio task)."""
    token = SUBTITLE.set(text)
    try:
        yield
    finally:
        SUBTITLE.reset(token)


def approves(identifier: str) -> bool:
    """Whether a button key is an Approve: only it gets the systems' extra protection."""
    return identifier.partition(".")[0] == APPROVE  # a key is ``<kind>.<nonce>`` (notify.Note)


def action_options(identifier: str) -> int:
    """macOS: Approve only from an unlocked device and shown as destructive; any other button plain."""
    return AUTHENTICATION_REQUIRED | DESTRUCTIVE if approves(identifier) else OPTION_NONE


def install(notifier: Any) -> None:
    """Extend the backend this ``DesktopNotifier`` uses, where it is one we extend."""
    backend = notifier._backend
    module = sys.modules[type(backend).__module__]
    name = type(backend).__name__
    if name == "CocoaNotificationCenter":
        _layer_macos(backend, module)
    elif name == "WinRTDesktopNotifier":
        _layer_windows(module)


# --- macOS ---------------------------------------------------------------------------------------


class _ContentWithSubtitle:
    """Stands in for ``UNMutableNotificationContent`` in desktop-notifier's macOS module: the content
    it makes carries this task's subtitle."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def alloc(self) -> _ContentWithSubtitle:
        return self

    def init(self) -> Any:
        content = self.real.alloc().init()
        text = SUBTITLE.get()
        if text:
            content.subtitle = text
        return content


def _layer_macos(backend: Any, module: Any) -> None:
    if not isinstance(module.UNMutableNotificationContent, _ContentWithSubtitle):
        module.UNMutableNotificationContent = _ContentWithSubtitle(module.UNMutableNotificationContent)
    base = type(backend)
    if getattr(base, "searchdesk_layer", False):
        return
    backend.__class__ = type(base.__name__, (base,), {"searchdesk_layer": True, **_macos_methods(module)})


def _macos_methods(module: Any) -> dict[str, Any]:
    async def _find_or_create_notification_category(self: Any, notification: Any) -> str:
        """One category per set of button titles and options (Apple ties actions to a category)."""
        buttons = [(b.identifier, b.title, action_options(b.identifier)) for b in notification.buttons]
        category_id = "searchdesk_" + "_".join(f"{title}-{options}" for _, title, options in buttons)
        categories = await self._get_notification_categories()
        known = {module.py_from_ns(c.identifier) for c in categories.allObjects()}
        if category_id not in known:
            actions = [
                module.UNNotificationAction.actionWithIdentifier(identifier, title=title, options=options)
                for identifier, title, options in buttons
            ]
            category = module.UNNotificationCategory.categoryWithIdentifier(
                category_id,
                actions=actions,
                intentIdentifiers=[],
                options=module.UNNotificationCategoryOptionCustomDismissAction,
            )
            self.nc.setNotificationCategories(categories.setByAddingObject(category))
        return category_id

    return {"_find_or_create_notification_category": _find_or_create_notification_category}


# --- Windows -------------------------------------------------------------------------------------


def style_toast(toast: Element, prefix: str) -> None:
    """Approve styled critical (red). ``prefix`` is what desktop-notifier puts before a button's key
    in its ``arguments``."""
    for action in toast.iter("action"):
        arguments = action.get("arguments", "")
        if arguments.startswith(prefix) and approves(arguments[len(prefix) :]):
            action.set("hint-buttonStyle", "Critical")
            toast.set("useButtonStyle", "true")


def _layer_windows(module: Any) -> None:
    real = module.tostring
    if getattr(real, "searchdesk_layer", False):
        return

    def tostring(element: Element, *args: Any, **kwargs: Any) -> Any:
        if element.tag == "toast":
            style_toast(element, module.BUTTON_ACTION_PREFIX)
        return real(element, *args, **kwargs)

    tostring.searchdesk_layer = True  # type: ignore[attr-defined]
    module.tostring = tostring
