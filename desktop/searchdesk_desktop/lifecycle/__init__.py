"""The app on this computer, from before its first window to its uninstall.

- ``qt_libraries``: on Linux, whether Qt's X11 libraries are there and the display answers.
- ``single_instance``: one app per user; a second launch brings the first forward.
- ``autostart``: start at login, per system; off by default.
- ``uninstall``: ``searchdesk --uninstall-cleanup``, what an uninstaller asks of the app first.
"""
