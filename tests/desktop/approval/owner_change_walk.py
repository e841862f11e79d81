"""Opens the owner-change dialog as the queue opens it, on whatever screen Qt is given, and prints as JSON
where its words are: run by test_owner_change_at_1024x600.py under an offscreen screen of 1024×600 (a
screen's size is fixed when Qt starts, so it runs in a process of its own)."""

from __future__ import annotations

import json
import sys

from PySide6.QtCore import QCoreApplication, QEvent, QRect
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from searchdesk_desktop.approval.book import ApprovalBook
from searchdesk_desktop.approval.dialog import ApprovalDialog
from searchdesk_desktop.screenshots import ACCOUNT, as_sent
from searchdesk_server.approval import question as q


def in_view(dialog: ApprovalDialog, widget: QWidget) -> bool:
    """All of `widget` is on screen in the dialog: not clipped by a scroll area, not below the window."""
    visible = widget.visibleRegion().boundingRect()
    inside = QRect(widget.mapTo(dialog, widget.rect().topLeft()), widget.size())
    return widget.isVisibleTo(dialog) and visible == widget.rect() and dialog.rect().contains(inside)


def main() -> None:
    owners = int(sys.argv[1])
    app = QApplication([])
    current = [ACCOUNT, *(f"owner{i:03}@example.com" for i in range(owners))]
    question = q.update_site_owners("sc-domain:example.com", current, [ACCOUNT, "new-agency@example.net"], ACCOUNT)
    entry = ApprovalBook().ask(as_sent(question, "walk"))
    dialog = ApprovalDialog(entry, arm_delay_ms=0)
    dialog.place()
    dialog.show()
    for _ in range(5):
        app.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    room = dialog.screen().availableGeometry()
    labels = dialog.findChildren(QLabel)
    texts = [label.text() for label in labels] + [value.text() for _, value in dialog.value_labels]
    last_value = dialog.value_labels[-1][1]
    print(
        json.dumps(
            {
                "screen": [room.width(), room.height()],
                "dialog": [dialog.width(), dialog.height()],
                "consequence_in_view": in_view(dialog, dialog.consequence_label),
                "consequence_top": dialog.consequence_label.mapTo(
                    dialog, dialog.consequence_label.rect().topLeft()
                ).y(),
                "buttons_top": dialog.approve_button.mapTo(dialog, dialog.approve_button.rect().topLeft()).y(),
                "what_in_view": in_view(dialog, dialog.what_label),
                "heading_in_view": in_view(dialog, dialog.values_heading),
                "loss_in_view": in_view(dialog, dialog.loss_label),
                "first_value_in_view": in_view(dialog, dialog.value_labels[0][1]),
                "last_value_in_view": in_view(dialog, last_value),
                "values": len(dialog.value_labels),
                "sc_domain_shown": any("sc-domain:" in text for text in texts),
                "domain_line": [f"{key.text()} {value.text()}" for key, value in dialog.value_labels[:1]],
            }
        )
    )


if __name__ == "__main__":
    main()
