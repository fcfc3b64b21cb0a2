"""The quality scores a request can carry, their names on screen, and the one default.

The verifying scorer (answers checked: tests run, numbers compared, schemas validated) is the
default everywhere; the seed's text heuristic stays comparable with the seed's published tables
but not with correctness; an LLM judge's rubric grade exists where a profile names a judge.
A run that has heuristic scores and no verified ones (an imported legacy run, an old snapshot)
shows the heuristic, and every table says which score it shows.
"""

from __future__ import annotations

from collections.abc import Callable

VERIFIED = "score_verified"
HEURISTIC = "score_heuristic"
JUDGE = "score_judge"
# Score columns of RequestFinished that get quality statistics; a new scorer adds its column here.
SCORE_NAMES: tuple[str, ...] = (HEURISTIC, VERIFIED, JUDGE)
SCORE_LABELS = {VERIFIED: "verified", HEURISTIC: "heuristic", JUDGE: "judge"}
SCORE_CYCLE = (VERIFIED, HEURISTIC, JUDGE)
DEFAULT_SCORE = VERIFIED


def shown_score(has_scores: Callable[[str], bool], wanted: str = DEFAULT_SCORE) -> str:
    """The score to show when ``wanted`` is asked for: verified falls back to heuristic for a
    run that has heuristic scores and no verified ones."""
    if wanted == VERIFIED and not has_scores(VERIFIED) and has_scores(HEURISTIC):
        return HEURISTIC
    return wanted


def score_label(name: str) -> str:
    return SCORE_LABELS.get(name, name)
