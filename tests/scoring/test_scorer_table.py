"""The scorer table is the scorers suites may name: every name a suite may give has its scorer
and its suite kind, and nothing else is in the table."""

from __future__ import annotations

from nvfp4_tui.config.checks import SCORER_KINDS, SCORER_NAMES
from nvfp4_tui.scoring.verify import SCORERS, SCORES_EMPTY


def test_every_scorer_a_suite_may_name_is_in_the_table() -> None:
    assert set(SCORERS) == set(SCORER_NAMES) == set(SCORER_KINDS)
    assert set(SCORERS) >= SCORES_EMPTY
