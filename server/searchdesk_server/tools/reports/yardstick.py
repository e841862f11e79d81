"""What the reports judge keys by: the fewest impressions worth a look, and an expected CTR curve.

Report-only yardsticks, kept apart from the arithmetic (`analytics.metrics`) that every answer shares.
"""

from __future__ import annotations

import math
from typing import Final

MIN_IMPRESSIONS: Final = 100  # quick wins and cannibalisation ignore keys with fewer in the period

#: Expected organic CTR by position, (first, last, ctr): our rounding of published industry
#: averages. A rough yardstick, not Google's figure.
CTR_CURVE: Final[tuple[tuple[int, int, float], ...]] = (
    (1, 1, 0.28),
    (2, 2, 0.155),
    (3, 3, 0.11),
    (4, 4, 0.08),
    (5, 5, 0.06),
    (6, 6, 0.045),
    (7, 7, 0.035),
    (8, 8, 0.03),
    (9, 9, 0.025),
    (10, 10, 0.02),
    (11, 15, 0.012),
    (16, 20, 0.008),
)
CTR_CURVE_SOURCE: Final = (
    "SearchDesk's rounding of published industry averages of organic click-through rate by Google "
    "position (desktop and mobile together). A rough yardstick, not Google's own figure: real CTR "
    "varies with brand, search intent and what else the results page shows."
)


def expected_ctr(pos: float) -> float | None:
    """The curve's CTR for a position rounded to the nearest whole place (halves round up)."""
    place = math.floor(pos + 0.5)
    for first, last, value in CTR_CURVE:
        if first <= place <= last:
            return value
    return None
