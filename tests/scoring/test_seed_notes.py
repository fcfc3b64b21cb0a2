"""The heuristic scorers against the seed's own results (tests/scoring/seed_results.jsonl).

The fixture is the seed's ``results[]`` (benchmark_all6.json) with each answer cut to its first
500 characters, as the seed stored it; content is kept for math and coding rows and for answers
that were complete. The notes carry the counts (text) or the signs found (code, math), so they
pin the formulas even where the answer itself is cut short.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.scoring.heuristic import CODE_SIGNS, MATH_SIGNS, score_signs, score_text, text_score

ROWS = [
    json.loads(line)
    for line in (Path(__file__).parent / "seed_results.jsonl").read_text().splitlines()
]
SUITES_DIR = BUILTIN_SUITES
# The seed's test names, and the suites of ours that score the same way.
SEED_TEXT_SUITES = {"english_critique": "english", "japanese": "japanese", "design": "design"}
SEED_MIN_WORDS = {"english_critique": 400, "japanese": 200, "design": 300}
SIGNS = {"coding": CODE_SIGNS, "math": MATH_SIGNS}
TEXT_NOTES = re.compile(r"^words:(\d+)\|para:(\d+)\|uniq:(\d\.\d\d)\|dups:(\d+)$")


def _rows(*tests: str) -> list[dict]:
    return [r for r in ROWS if r["test"] in tests]


def test_fixture_holds_every_seed_row():
    assert len(ROWS) == 390
    assert len(_rows(*SEED_TEXT_SUITES)) == 180
    assert len(_rows("coding", "math")) == 120


def test_our_text_suites_use_the_seeds_length_targets():
    suites = load_suites(SUITES_DIR, list(SEED_TEXT_SUITES.values()))
    for seed_test, ours in SEED_TEXT_SUITES.items():
        assert suites[ours].kind == "text"
        assert suites[ours].min_words == SEED_MIN_WORDS[seed_test]


def test_text_formula_reproduces_every_seed_text_score():
    for row in _rows(*SEED_TEXT_SUITES):
        match = TEXT_NOTES.match(row["quality_notes"])
        assert match, row["quality_notes"]
        words, paragraphs, unique_ratio, duplicates = match.groups()
        score = text_score(
            int(words),
            SEED_MIN_WORDS[row["test"]],
            int(paragraphs),
            float(unique_ratio),
            int(duplicates),
        )
        # The notes round the unique ratio to 0.01, worth up to 4 * 0.005 / 10 = 0.002 of score,
        # unless the vocabulary points are capped at 2.
        tolerance = 0.002 if 4 * float(unique_ratio) < 2 else 0.0
        assert score == pytest.approx(row["quality_score"], abs=tolerance + 1e-9), row


def test_length_targets_are_pinned_by_short_seed_answers():
    """Rows under 1.5 x min_words decide min_words: any other target misses some of them."""
    for seed_test, min_words in SEED_MIN_WORDS.items():
        for wrong in (min_words - 100, min_words + 100):
            misses = 0
            for row in _rows(seed_test):
                w, p, u, d = TEXT_NOTES.match(row["quality_notes"]).groups()
                score = text_score(int(w), wrong, int(p), float(u), int(d))
                misses += abs(score - row["quality_score"]) > 0.002 + 1e-9
            assert misses > 0, (seed_test, wrong)


def test_complete_seed_answer_scores_exactly_as_the_seed_did():
    complete = [r for r in _rows(*SEED_TEXT_SUITES) if "content" in r]
    assert len(complete) == 1
    row = complete[0]
    score, detail = score_text(row["content"], SEED_MIN_WORDS[row["test"]])
    assert detail == row["quality_notes"] == "words:3|para:2|uniq:1.00|dups:0"
    assert score == pytest.approx(row["quality_score"])  # 0.553


@pytest.mark.parametrize("seed_test", ["coding", "math"])
def test_sign_points_reproduce_every_seed_score(seed_test):
    points = {tag: p for tag, p, _ in SIGNS[seed_test]}
    order = [tag for tag, _, _ in SIGNS[seed_test]]
    for row in _rows(seed_test):
        tags = row["quality_notes"].split("|")
        assert tags == sorted(tags, key=order.index), row["quality_notes"]  # same detail order
        score = min(sum(points[t] for t in tags) / 10, 1.0)
        assert score == pytest.approx(row["quality_score"], abs=1e-9), row


@pytest.mark.parametrize("seed_test", ["coding", "math"])
def test_signs_found_in_the_first_500_chars_are_among_the_seeds(seed_test):
    """Every sign is monotone in the text, so what a prefix shows, the whole answer showed."""
    found_any = 0
    for row in _rows(seed_test):
        _, detail = score_signs(row["content"], SIGNS[seed_test])
        found = set(detail.split("|")) - {"none"}
        assert found <= set(row["quality_notes"].split("|")), (row["quality_notes"], detail)
        found_any += bool(found)
    # Not vacuous: nearly every prefix shows some sign (one coding answer opens with a plan).
    assert found_any >= 0.9 * len(_rows(seed_test))
