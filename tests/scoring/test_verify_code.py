"""The coding scorer: which code is tested, and hidden-test scores of good, partial, bad answers."""

from __future__ import annotations

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.suites import load_suite
from nvfp4_tui.scoring.code_check import fenced_blocks, score_code, select_code
from nvfp4_tui.scoring.sandbox import sandbox_kind

CODING = load_suite(BUILTIN_SUITES / "coding.toml")
CHECKS = {p.id: p.check for p in CODING.prompts}
SANDBOX = f"sandbox:{sandbox_kind()[0]}"

MERGE_GOOD = '''
import pytest


def merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge overlapping or touching closed intervals, sorted by start."""
    for start, end in intervals:
        if start > end:
            raise ValueError(f"start {start} > end {end}")
    merged: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def test_touching():
    assert merge_intervals([(1, 2), (2, 3)]) == [(1, 3)]
'''
# Touching intervals stay apart ("<" for "<="), and lists come back instead of tuples.
MERGE_PARTIAL = MERGE_GOOD.replace("start <= merged[-1][1]", "start < merged[-1][1]")
MERGE_BAD = "def merge_intervals(intervals):\n    return intervals\n"

TTL_GOOD = """
import threading
import time
from collections import OrderedDict


class TTLCache:
    def __init__(self, max_size, ttl_s, clock=time.monotonic):
        if max_size < 1 or ttl_s <= 0:
            raise ValueError("bad settings")
        self.max_size, self.ttl_s, self.clock = max_size, ttl_s, clock
        self.entries = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key, default=None):
        with self.lock:
            if key not in self.entries:
                return default
            expires, value = self.entries[key]
            if self.clock() >= expires:
                del self.entries[key]
                return default
            self.entries.move_to_end(key)
            return value

    def put(self, key, value):
        with self.lock:
            self.entries[key] = (self.clock() + self.ttl_s, value)
            self.entries.move_to_end(key)
            while len(self.entries) > self.max_size:
                self.entries.popitem(last=False)
"""

BUCKET_GOOD = """
import asyncio
import time


class TokenBucket:
    def __init__(self, rate: float, capacity: int) -> None:
        self.rate, self.capacity = rate, capacity
        self.tokens, self.updated = float(capacity), time.monotonic()

    async def acquire(self, tokens: int = 1) -> None:
        if not 1 <= tokens <= self.capacity:
            raise ValueError(tokens)
        while True:
            now = time.monotonic()
            self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
            self.updated = now
            if self.tokens >= tokens:
                self.tokens -= tokens
                return
            await asyncio.sleep((tokens - self.tokens) / self.rate)

    async def __aenter__(self):
        await self.acquire()
        return self

    async def __aexit__(self, *exc):
        return None
"""


def fenced(code: str, lang: str = "python") -> str:
    return f"Here is my solution.\n\n```{lang}\n{code.strip()}\n```\n\nIt runs in O(n log n)."


@pytest.mark.parametrize(
    ("prompt_id", "answer", "score", "detail"),
    [
        ("merge-intervals", fenced(MERGE_GOOD), 1.0, f"passed:6/6|{SANDBOX}"),
        (
            "merge-intervals",
            fenced(MERGE_PARTIAL),
            5 / 6,
            "passed:5/6|failed:test_touching_intervals_merge(assert failed: assert "
            f"merged([(1, 2), (2, 4), (6, 7)]) == [(1, 4), (6, 7)])|{SANDBOX}",
        ),
        ("lru-cache-ttl", fenced(TTL_GOOD), 1.0, f"passed:5/5|{SANDBOX}"),
        ("async-token-bucket", fenced(BUCKET_GOOD), 1.0, f"passed:5/5|{SANDBOX}"),
        ("merge-intervals", "I would sort the intervals and sweep.", 0.0, "passed:0/6|no_code"),
        ("merge-intervals", fenced("def merge_intervals(:"), 0.0, "passed:0/6|syntax_error"),
        (
            "lru-cache-ttl",
            fenced("class LRUCache:\n    pass"),
            0.0,
            "passed:0/5|undefined:TTLCache",
        ),
    ],
    ids=[
        "merge-good",
        "merge-partial",
        "ttl-good",
        "bucket-good",
        "no-code",
        "syntax-error",
        "undefined-name",
    ],
)
def test_code_answers_score_passed_over_total(prompt_id, answer, score, detail):
    got_score, got_detail = score_code(CHECKS[prompt_id], answer)
    assert got_detail == detail
    assert got_score == pytest.approx(score)


def test_a_bad_answer_names_every_failing_test():
    score, detail = score_code(CHECKS["merge-intervals"], fenced(MERGE_BAD))
    assert score == pytest.approx(1 / 6)  # only the empty input comes back right
    assert detail.startswith("passed:1/6|failed:test_disjoint_intervals_come_back_sorted(")
    for name in ("overlapping", "nested", "touching", "start_after_end"):
        assert name in detail
    assert detail.endswith(SANDBOX)


def test_a_solution_that_breaks_on_import_fails_every_test_with_the_reason():
    score, detail = score_code(CHECKS["merge-intervals"], fenced(MERGE_GOOD + "\n1 / 0\n"))
    assert score == 0.0
    assert detail.startswith("passed:0/6|failed:test_empty_input(solution: ZeroDivision")
    # Six long reasons are shortened to fit 400 characters; every name and the label stay.
    assert len(detail) <= 400 and detail.endswith(f"...)|{SANDBOX}")
    for name in CHECKS["merge-intervals"].tests.names:
        assert f"{name}(solution: ZeroDivision" in detail


def test_fenced_blocks_keep_python_and_unmarked_blocks_only():
    text = (
        "```bash\npip install x\n```\n"
        "```python\na = 1\n```\n"
        "~~~\nb = 2\n~~~\n"
        "````py\nc = '```'\n````\n"
        "```python\nd = 4"  # cut off by max_tokens: runs to the end
    )
    assert fenced_blocks(text) == ["a = 1", "b = 2", "c = '```'", "d = 4"]


def test_the_tested_block_is_the_one_that_defines_the_names():
    text = (
        "```python\nfrom solution import merge_intervals\nprint(merge_intervals([]))\n```\n"
        "```python\ndef merge_intervals(x):\n    return x\n```\n"
    )
    assert select_code(text, ("merge_intervals",)) == ("def merge_intervals(x):\n    return x", "")
    # Names spread over blocks: all parseable blocks, joined in order.
    split = "```python\nK = 2\n```\n```python\ndef f():\n    return K\n```"
    assert select_code(split, ("f", "K")) == ("K = 2\n\ndef f():\n    return K", "")
    # Without names to look for, the longest block; an unfenced answer is taken whole.
    assert select_code("```\nx = 1\n```\n```\ny = 22222\n```", ()) == ("y = 22222", "")
    assert select_code("def f():\n    return 1\n", ("f",))[0] == "def f():\n    return 1\n"
