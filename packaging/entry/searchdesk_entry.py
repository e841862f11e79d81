"""PyInstaller entry for `searchdesk` (windowed): the same `main` as the pip-installed gui-script."""

from searchdesk_desktop.__main__ import main

raise SystemExit(main())
