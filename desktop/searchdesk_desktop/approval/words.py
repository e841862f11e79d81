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
    main window say it alike."""
    by = time.strftime("%H:%M", time.localtime(answered + QUESTION_OPEN_S))
    return (
        "Now tell Claude: “I approved it in SearchDesk, please try again.” Claude must ask again by "
        f"{by} ({minutes(QUESTION_OPEN_S)} after your answer), or the approval lapses and nothing is done."
    )


def first_sentence(text: str) -> str:
    """The server's opening sentence, for a one-line mention of a question (main window, tray)."""
    text = text.strip()
    match = re.match(r".+?[.!?](?=\s|$)", text, re.DOTALL)
    return match.group(0) if match else text
