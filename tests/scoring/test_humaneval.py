"""HumanEval through our extraction and sandbox: the dataset's canonical solutions pass, broken
ones fail, and the ways a chat answer gives its code (whole function, body alone, no imports,
no fence) all reach the problem's own check()."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.suites import Prompt, load_suites
from nvfp4_tui.scoring.code_check import complete_stub
from nvfp4_tui.scoring.verify import VERIFY_WORKERS, score_verified
from nvfp4_tui.sim.dataset_answers import answer_key

SUITE = load_suites(BUILTIN_SUITES, ["humaneval"])["humaneval"]
KEY = answer_key([SUITE])
# A few problems of different shapes: typing imports (0), a helper in the stub (38), numbers (2).
FEW = ("HumanEval-0", "HumanEval-2", "HumanEval-38", "HumanEval-53")


def problem(task_id: str) -> Prompt:
    return next(p for p in SUITE.prompts if p.id == task_id)


def parts(prompt: Prompt) -> tuple[str, str]:
    """The problem's stub and its canonical body."""
    assert prompt.check is not None and prompt.check.stub and prompt.check.solution
    return prompt.check.stub, prompt.check.solution


def scores(answers: list[tuple[Prompt, str]]) -> list[float | None]:
    def one(job: tuple[Prompt, str]) -> float | None:
        verdict = score_verified(SUITE, job[0], job[1], None)
        assert verdict is not None
        return verdict[0]

    with ThreadPoolExecutor(VERIFY_WORKERS) as pool:
        return list(pool.map(one, answers))


@pytest.mark.slow  # 328 sandbox runs: about 35 s on two cores
def test_all_164_canonical_solutions_pass_and_the_broken_ones_fail():
    right = [(p, KEY[p.text].right) for p in SUITE.prompts]
    wrong = [(p, KEY[p.text].wrong) for p in SUITE.prompts]
    passed = scores(right)
    assert [p.id for p, s in zip(SUITE.prompts, passed, strict=True) if s != 1.0] == []
    assert scores(wrong) == [0.0] * 164


def test_the_simulators_right_answers_pass_and_wrong_ones_fail_on_a_few_problems():
    prompts = [problem(task_id) for task_id in FEW]
    assert scores([(p, KEY[p.text].right) for p in prompts]) == [1.0] * len(FEW)
    assert scores([(p, KEY[p.text].wrong) for p in prompts]) == [0.0] * len(FEW)


def test_every_way_of_giving_the_code_reaches_check():
    prompt = problem("HumanEval-0")
    stub, body = parts(prompt)
    signature = next(line for line in stub.splitlines() if line.startswith("def "))
    whole = f"{signature}\n{body}"  # no `from typing import List`: the stub brings it
    flush_left = "\n".join(line.removeprefix("    ") for line in body.splitlines())
    answers = {
        "whole function in a fence": f"Sure.\n\n```python\n{stub}{body}```\nDone.",
        "function without its imports": f"```python\n{whole}\n```",
        "body alone in a fence": f"```python\n{body}```",
        "body written flush left": f"```\n{flush_left}\n```",
        "no fence at all": whole,
        "prose, then the fence": f"The idea: compare pairs.\n```py\n{whole}\n```",
    }
    got = scores([(prompt, text) for text in answers.values()])
    assert dict(zip(answers, got, strict=True)) == dict.fromkeys(answers, 1.0)


def test_a_wrong_or_missing_answer_fails_with_its_reason():
    prompt = problem("HumanEval-53")  # add(x, y)
    stub, _ = parts(prompt)
    wrong = score_verified(SUITE, prompt, "```python\ndef add(x, y):\n    return x - y\n```", None)
    assert wrong is not None and wrong[0] == 0.0
    assert wrong[1].startswith("passed:0/1|failed:test_check(")
    assert complete_stub(stub, "I cannot help with that.", "add") == (None, "syntax_error")
    assert complete_stub(stub, "   ", "add") == (None, "no_code")
    empty = score_verified(SUITE, prompt, "", None)
    assert empty == (0.0, "empty")
