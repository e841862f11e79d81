"""The change journal: every change SearchDesk sent to Google, and every guarded call's outcome.

One SQLite file per person on this computer (`paths`), written by every server process and read by the
app (`store`); each row carries its own hash over the one before it (`chain`), checked by
`searchdesk-server --check-journal` and the app's Check the record (`check`). What a tool call writes is
`record`; how each change can be undone is `undo`. The module names are the map: nothing is imported here,
so the server's start-up path pays for none of it.
"""
