"""The windows, one module per window (as Vorta's ``views``), and the pieces they share.

``main`` is the main window; its three steps are classes of their own, each owning its display and
its actions (``step_google``, ``step_claude``, ``step_check``; what step 2 decides is
``claude.install``'s, without Qt). ``activity`` is the record of changes and its check, ``about`` the
About dialog, ``settings`` the Settings window with its sections (``settings_form``,
``settings_record``, ``archive``); ``accounts`` is step 1's account cards; ``parts``, ``check_report``
and ``approvals_section`` are pieces the windows share. Windows are wired with Qt signals, connected
by whoever makes them; none takes a callable assigned after it is made.
"""
