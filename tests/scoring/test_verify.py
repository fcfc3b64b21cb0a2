"""score_verified: dispatch by the suite's scorer, coverage for prose, reasoning kept apart."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import replace

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.scoring import verify
from nvfp4_tui.scoring.coverage import coverage
from nvfp4_tui.scoring.heuristic import score_text
from nvfp4_tui.scoring.verify import score_verified, score_verified_async, split_reasoning

SUITES = load_suites(
    BUILTIN_SUITES,
    ["english", "japanese", "math", "coding", "design", "tool_call"],
)


def prompt(suite: str, prompt_id: str):
    return next(p for p in SUITES[suite].prompts if p.id == prompt_id)


URL_GOOD = """# Design: a URL shortener

## Data model
One table maps a short key to its long URL; links never change, so rows are write-once.

## Key generation
A per-region counter encoded in base62 gives keys without collisions.

## Caching and storage
Redirects read through a cache in front of a key-value database.

## Two regions
Each region serves reads; on failover, when one region fails, the other takes all traffic.

```text
client --> edge cache --> app --> key-value store
```
"""
URL_PARTIAL = """A shortener needs a table of keys, a cache and a database. That is most of it."""


@pytest.mark.parametrize(
    ("answer", "parts_score", "parts_detail"),
    [
        (URL_GOOD, 1.0, "parts:7/7"),
        (URL_PARTIAL, 3 / 7, "parts:3/7 missing:key-generation,two-regions,region-failure,diagram"),
        ("Use a hash map.", 0.0, "parts:0/7 missing:data-model,key-generation,caching,storage+3"),
    ],
    ids=["good", "partial", "bad"],
)
def test_prose_is_the_mean_of_the_heuristic_and_the_parts_covered(
    answer, parts_score, parts_detail
):
    design = SUITES["design"]
    url = prompt("design", "url-shortener")
    heuristic, _ = score_text(answer, design.min_words)
    score, detail = score_verified(design, url, answer, None)
    assert detail == f"{parts_detail}|heuristic:{heuristic:.2f}"
    assert score == pytest.approx((heuristic + parts_score) / 2)


def test_keywords_ignore_case_and_line_breaks():
    parts = prompt("english", "cities-after-remote-work").check.parts
    text = "Office\nvacancies rose; Retail and RENTS fell; public\n  transport emptied."
    assert coverage(parts, text)[1].startswith("parts:4/7 missing:winners-and-losers")


def test_each_suite_reaches_its_scorer():
    cases = {
        ("math", "dice-seven-before-eight"): ("(a) 1/6\n(b) 5/36\n(c) 6/11", "right:3/3"),
        ("japanese", "town-bookshop"): ("本屋は残るのだ。", "chars:8(640-960)"),
        ("tool_call", "convert-currency"): ("", "no_call"),
        ("english", "public-libraries"): ("Libraries.", "parts:0/4"),
        ("coding", "merge-intervals"): ("No code today.", "passed:0/6|no_code"),
    }
    for (suite, prompt_id), (answer, start) in cases.items():
        result = score_verified(SUITES[suite], prompt(suite, prompt_id), answer, None)
        assert result is not None and result[1].startswith(start), (suite, result)


def test_a_suite_without_a_scorer_has_no_verified_score():
    plain = replace(SUITES["english"], scorer=None)
    assert score_verified(plain, plain.prompts[0], "An essay.", None) is None


def test_reasoning_is_never_scored_and_its_length_is_reported_apart():
    suite, dice = SUITES["math"], prompt("math", "dice-seven-before-eight")
    answer = "(a) 1/6\n(b) 5/36\n(c) 6/11"
    thinking = "<think>\n(a) 1/2\n(b) 1/2\n(c) \\boxed{1/2}</think>"
    # The wrong values in the reasoning change nothing; both kinds of reasoning are counted.
    score, detail = score_verified(suite, dice, thinking + "\n" + answer, None, "x" * 100)
    assert score == 1.0
    assert detail == f"right:3/3|(a):ok|(b):ok|(c):ok|reasoning_chars:{100 + len(thinking)}"
    # An answer that is all reasoning (cut off before </think>) is empty.
    assert score_verified(suite, dice, "<think>(c) 6/11", None) == (
        0.0,
        "empty|reasoning_chars:15",
    )
    assert split_reasoning("a<think>b</think>c<think>d") == ("ac", 16 + 8)


async def test_the_async_form_runs_on_a_bounded_pool(monkeypatch):
    running, peak = 0, 0
    lock = threading.Lock()

    def slow(*args, **kwargs):
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.05)
        with lock:
            running -= 1
        return 1.0, "ok"

    monkeypatch.setattr(verify, "score_verified", slow)
    suite = SUITES["math"]
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    clock = asyncio.create_task(ticker())
    jobs = [score_verified_async(suite, suite.prompts[0], "a", None) for _ in range(6)]
    results = await asyncio.gather(*jobs)
    clock.cancel()
    assert results == [(1.0, "ok")] * 6
    assert peak == verify.VERIFY_WORKERS == 2
    assert ticks >= 5  # the loop kept running while the pool worked (3 rounds of 50 ms)


async def test_a_failing_scorer_costs_one_score_not_the_run(monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("oops")

    monkeypatch.setattr(verify, "score_verified", broken)
    suite = SUITES["math"]
    assert await score_verified_async(suite, suite.prompts[0], "a", None) == (
        None,
        "scorer_error:KeyError: 'oops'",
    )
