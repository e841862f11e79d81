from searchdesk_server.cli import main

raise SystemExit(main())
