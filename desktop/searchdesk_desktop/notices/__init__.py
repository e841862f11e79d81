"""The general notification channel: every notice that is not a question, and the layer under it.

- ``channel``: how a notice reaches the system's notifications, whatever it is about.
- ``notifier_additions``: what desktop-notifier does not expose, added in one small layer of ours.

A question's own notification (Approve and Deny) is the approval room's
(``approval.notification_question``); it sends through this channel.
"""
