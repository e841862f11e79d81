"""PyInstaller entry for `searchdesk-server` (console): the same `main` as the pip-installed script."""

from searchdesk_server.cli import main

raise SystemExit(main())
