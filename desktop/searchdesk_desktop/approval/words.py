"""The words about a question that the dialog, the main window and the tray say alike. No Qt here.

One definition each, so that a question reads the same wherever the person meets it.
"""

from __future__ import annotations

import re
import time

from searchdesk_server.agent.protocol import QUESTION_OPEN_S, minutes

ASKED_AGAIN = "Claude asked again after you said no"


def late_yes_words(answered: float) -> str:
    """What to do after approving a question Claude stopped waiting for, and until when: the dialog and the
    main window say it alike. The yes is kept for the server process that asked (issue 36): when Claude
    Desktop restarts it first, the new one asks afresh, and the person approves again."""
    by = time.strftime("%H:%M", time.localtime(answered + QUESTION_OPEN_S))
    return (
        "Now tell Claude: “I approved it in SearchDesk, please try again.” Claude must ask again by "
        f"{by} ({minutes(QUESTION_OPEN_S)} after your answer) and before Claude Desktop is restarted, or the "
        "approval lapses and nothing is done."
    )


def approved_before_words(answered: float) -> str:
    """The top of a question whose words equal a yes the person gave that its request never collected (the
    book's ``approved_before``): true, and it says a new yes is needed."""
    at = time.strftime("%H:%M", time.localtime(answered))
    return (
        f"You approved exactly this at {at}, but the request that asked has ended. Nothing was done: approve "
        "it again here for it to go ahead."
    )


#: The late-yes line once the server that asked collected the yes: nothing more to tell Claude.
LATE_YES_USED = "Approved, and Claude has used your answer. Nothing more to do: you can close this window."
#: The footer below the buttons once the person approved here: closing no longer denies anything.
APPROVED_FOOTER = "Approved. Closing this window changes nothing."


def first_sentence(text: str) -> str:
    """The server's opening sentence, for a one-line mention of a question (main window, tray)."""
    text = text.strip()
    match = re.match(r".+?[.!?](?=\s|$)", text, re.DOTALL)
    return match.group(0) if match else text
