"""The simulator's answers to dataset prompts: right with the model's quality as the chance,
spread so a whole dataset scores that quality closely, hard prompts hard for every model."""

from __future__ import annotations

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.sim.dataset_answers import answer_key

SUITE = load_suites(BUILTIN_SUITES, ["humaneval"])["humaneval"]
KEY = answer_key([SUITE])


def solved(quality: float, seed: int) -> set[str]:
    return {p.id for p in SUITE.prompts if KEY[p.text].pick(quality, seed) == KEY[p.text].right}


@pytest.mark.parametrize("quality", [0.0, 0.3, 0.78, 0.86, 1.0])
def test_a_whole_dataset_scores_the_quality_within_a_problem_or_two(quality):
    for seed in (0, 1, 7):
        assert abs(len(solved(quality, seed)) - quality * len(SUITE.prompts)) <= 2


def test_a_weaker_model_fails_what_a_stronger_one_fails_and_a_seed_reorders_them():
    assert solved(0.7, seed=0) < solved(0.9, seed=0)
    assert solved(0.7, seed=0) != solved(0.7, seed=1)


def test_every_dataset_prompt_has_a_right_and_a_wrong_answer():
    assert len(KEY) == 164
    first = KEY[SUITE.prompts[0].text]
    assert "def has_close_elements" in first.right and "for idx, elem" in first.right
    assert first.wrong.rstrip().endswith("return None\n```")
