"""The check ("Check it works", and ``searchdesk --check``) as the app runs it.

- ``run``: what a check is about, the server it runs (the one Claude Desktop will start) and what its
  result teaches the app; no Qt. The check itself is the server's (``searchdesk_server.stdio_check``);
  step 3 shows it (``windows.step_check``) through the report both windows share
  (``windows.check_report``).
- ``console``: where ``searchdesk --check`` shows its verdict when there may be no console.
"""
