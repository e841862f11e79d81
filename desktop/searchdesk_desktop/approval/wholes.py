"""That the dialog shows what a yes is bound to: each value's `whole` shortens to its `value`.

A yes is bound to the words' digest (`protocol.words_digest`), which covers each value as the words hold
it: shortened when long (`text.display.shorten`: its start, its end and a 128-bit digest of the whole). The
dialog shows the `whole` sent beside it. Nothing else ties the two, so a request whose `whole` is another
value than the one its `value` shortens would have the person read one thing and approve another (issue
36). Before a question is kept or shown, the app shortens each `whole` it received by the one rule both
programs import and refuses the question unless that is the `value` it received. The digest on the
socket is unchanged, so an app and a server of different versions still agree on it.
"""

from __future__ import annotations

from searchdesk_server.agent.protocol import ApprovalRequest, ErrorCode
from searchdesk_server.text.display import shorten

from ..refusals import Refusal


class WholeIsNotTheValue(Refusal):
    """A value's `whole` does not shorten to its `value`: the question is refused, never shown."""

    code = ErrorCode.INVALID_PARAMS

    def __init__(self, index: int) -> None:
        super().__init__(
            f"values[{index}].whole does not shorten to values[{index}].value, so the dialog would show a "
            "value other than the one the question's words hold; the question was not shown and nothing "
            "was approved."
        )
        self.index = index
        self.data = {"value": index}


def check_wholes(request: ApprovalRequest) -> None:
    """Raise WholeIsNotTheValue for the first value whose `whole` is not what its `value` shortens.

    A value without `whole` is shown as `value` itself (an older server, or a value short enough), so
    what is shown is what is bound."""
    for index, value in enumerate(request.values):
        if value.whole is not None and shorten(value.whole) != value.value:
            raise WholeIsNotTheValue(index)
