"""`searchdesk` / `python -m searchdesk_desktop`: the tray app; `--check` without a window;
`--uninstall-cleanup` for uninstallers."""

from __future__ import annotations

import argparse
import logging
import sys

log = logging.getLogger("searchdesk_desktop")


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="searchdesk", description="SearchDesk: Google sign-in and approvals for Claude.")
    p.add_argument("--demo", action="store_true", help="run on the built-in demo data (no Google account)")
    p.add_argument("--check", action="store_true", help="run the server as Claude Desktop would and print a verdict")
    p.add_argument("--quit-after", type=float, metavar="SECONDS", help="quit after SECONDS (smoke tests)")
    p.add_argument("--autostart", action="store_true", help="started at login: stay in the tray if there is one")
    p.add_argument(
        "--uninstall-cleanup",
        action="store_true",
        help="sign out (revoking the Google token), turn off start at login, remove SearchDesk from Claude "
        "Desktop and quit a running copy; for uninstallers: no window, no output, always exit status 0",
    )
    p.add_argument("--version", action="version", version=f"searchdesk {__version__}")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from . import logs

    try:
        logs.setup()
    except OSError:
        pass  # no log folder: run without a log file rather than not at all
    if args.uninstall_cleanup:
        from .lifecycle import uninstall

        return uninstall.main()
    if args.check:
        return headless_check(args.demo)
    return run_gui(args)


def headless_check(demo: bool) -> int:
    """The self-check of "Check it works", printed: the exact command Claude Desktop gets.

    Printed to stdout; the windowed Windows build has none, so there it goes to the console of the
    terminal it was started from, or into a message box (see check/console.py).
    """
    from PySide6.QtCore import QCoreApplication, QEventLoop

    from .check.console import deliver, output_stream
    from .core import Core

    route, stream = output_stream()
    if route == "box":
        from PySide6.QtWidgets import QApplication

        app = QCoreApplication.instance() or QApplication(sys.argv[:1])
    else:
        app = QCoreApplication.instance() or QCoreApplication(sys.argv[:1])
    core = Core(demo=demo)
    core.start()  # tokens for the child, unless the app is already running (then it serves them)
    outcome: list[int] = []
    loop = QEventLoop()  # a loop of our own, not app.exec(): nothing here means "the application quits"

    def done(result: object) -> None:
        from .check.run import check_verdict

        try:
            if isinstance(result, str):
                text, ok = f"FAIL: {result}", False
            else:
                ok = bool(result.ok)  # type: ignore[attr-defined]
                verdict = ("PASS: " if ok else "FAIL: ") + check_verdict(result)
                text = "\n".join([*result.lines, "", verdict])  # type: ignore[attr-defined]
            outcome.append(0 if ok else 1)
            deliver(text, ok, route, stream, demo=demo)
        finally:
            loop.quit()  # whatever happened, the command ends

    core.check_done.connect(done)
    core.run_check()
    loop.exec()
    core.stop()
    del app  # held until here
    return outcome[0] if outcome else 1


def run_gui(args: argparse.Namespace) -> int:
    from .lifecycle import qt_libraries

    lacking = qt_libraries.check()
    if lacking is not None:  # before Qt's own message, which says reinstalling may help: it does not
        log.error("%s", lacking)  # started from a menu, the log is where it can be read
        print(lacking, file=sys.stderr)
        return 1

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from .app import DesktopApp, run
    from .core import Core
    from .lifecycle.single_instance import SingleInstance

    qapp = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(qapp, QApplication)
    single = SingleInstance()
    if not single.claim():
        print("SearchDesk is already running; it has been brought forward.", file=sys.stderr)
        return 0
    core = Core(demo=args.demo)
    app = DesktopApp(qapp, core, single=single)
    single.activated.connect(app.window.bring_forward)
    single.quit_requested.connect(app.quit)
    app.start(show_window=not args.autostart or not core.settings.first_run_done)
    if args.quit_after is not None:
        QTimer.singleShot(int(args.quit_after * 1000), app.quit)
    code = run(app)
    single.release()
    app.dispose()
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main())
