"""SearchDesk's copy of each property's daily Search Analytics beyond Google's 16 months (issue 28).

`store` writes and keeps it (the app's copier is its only writer); `reader` is what the server asks
for days Google no longer has. One SQLite file per Google account, in the person's data folder; the
demo has its own. Nothing here contacts Google.
"""
