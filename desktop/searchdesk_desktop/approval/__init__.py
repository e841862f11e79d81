"""Asking the person on the desktop: everything that turns a server's question into a person's answer.

One module per part, named for what it holds:

- ``book``: the questions waiting for a person and what became of them (no Qt: the listener, the
  server's contract tests and the Qt parts all read the same book).
- ``words``: the words about a question that the dialog, the main window and the tray say alike.
- ``wholes``: that each value the dialog shows whole shortens to the value the words bind (else the
  question is refused before it is kept).
- ``arming``: when a press or a key may answer (the delay, the pointer rule, the keyboard rule).
- ``layout``: how the dialog's words take exactly the room they need (a value shown whole, the
  scroll area as tall as its words).
- ``dialog``: the native dialog for one question; ``dialog_parts``: its parts that are widgets of their
  own (the coloured strips, the warning of who loses access, the status line above the buttons).
- ``queue``: the one dialog on screen at a time, oldest question first.
- ``notification_question``: the notification beside each question (its form, Approve/Deny or "Show the
  question", and the rules a press must pass); it sends through the app's general notification
  channel (``searchdesk_desktop.notices.channel``), which knows nothing of approvals.
- ``screen_lock``: whether the screen is locked when a notification's press arrives.

Nothing is imported here, so that reading the book never loads Qt.
"""
