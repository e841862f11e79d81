"""Running a tool's handler (the one its catalogue entry names) so that every failure becomes a result
a person can read.

Below both the server (which runs read tools directly) and the approval chain (which runs a guarded
tool once a person said yes), so neither imports the other. On the start-up path, so it imports
nothing a tool needs until a tool is called (`catalogue.resolve`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import mcp_types as types

from .catalogue import resolve
from .result import Output, ToolFailure, error_result, to_result
from .runtime import Call

if TYPE_CHECKING:
    from .archive.reader import Sources

log = logging.getLogger("searchdesk_server")


async def run_tool(call: Call, *, note: str = "") -> types.CallToolResult:
    """Run the handler; `note` (the server's own words) is added to a successful result's text."""
    from .google.errors import GoogleError
    from .journal.record import NotRecorded

    try:
        await call.route()
        out: Output = await resolve(call.spec.handler)(call)
    except NotRecorded as exc:  # nothing was sent: the change could not be recorded first
        return error_result(str(exc), decision="refused", journal="unavailable")
    except ToolFailure as exc:
        return error_result(str(exc))
    except GoogleError as exc:
        from .account_routing import not_found

        if not_found(exc):
            call.runtime.directory.forget(call.account)  # what it seemed to see is out of date
        return error_result(
            _with_record(call, str(exc)), from_google=exc.upstream is not None, kind=exc.kind.name.lower()
        )
    except Exception as exc:  # a bug of ours: say so plainly, keep details (which may quote data) in the log
        log.exception("%s failed unexpectedly", call.spec.name)
        return error_result(
            f"{call.spec.name} failed inside SearchDesk ({type(exc).__name__}); nothing was changed by this error. "
            "Try again, or report it with the server's log.",
            kind="internal",
        )
    sources = _sources(call)
    if sources is not None and sources.used:  # archive/reader.py: which days came from where
        out.text = f"{out.text}\n\n{sources.sentence()}"
        out.data["sources"] = sources.data()
    if note:
        out.text = f"{out.text}\n\n{note}"
        out.data["approval"] = "confirm_token"
    out.text = _with_record(call, out.text)
    return to_result(out)


def _sources(call: Call) -> Sources | None:
    """Where the days of this call's Search Analytics answers came from, if it asked for any."""
    from .archive.reader import Sources

    return call.gathered_so_far(Sources)


def _with_record(call: Call, text: str) -> str:
    """The text, and when a change's outcome could not be recorded after it was sent, that sentence."""
    if not call.record.incomplete:
        return text
    from .journal.record import INCOMPLETE

    return f"{text}\n\n{INCOMPLETE}"
