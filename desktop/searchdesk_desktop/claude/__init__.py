"""Claude clients: SearchDesk in Claude Desktop, found, added, replaced and removed.

- ``install``: step 2's decisions without Qt (which way in, when an entry is replaced, what it means).
- ``config_file``: Claude Desktop's settings file, edited carefully (only our own entry).
- ``entry``: our entry's shape (the command and its variables); ``paths``: where the file is.
- ``extension``: the SearchDesk extension (``.mcpb``), when this build ships one.
- ``found``: whether Claude Desktop is on this computer; ``state``: what it holds of SearchDesk now.
"""
