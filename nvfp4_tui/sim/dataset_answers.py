"""What a simulated model answers to a dataset suite's prompt (HumanEval, a JSONL suite): the
right answer with the model's ``quality`` as its chance, else a wrong one.

Each prompt has a difficulty in [0, 1), and a model answers right the prompts whose difficulty is
below its quality. The difficulties are spread evenly over a suite (the golden-ratio sequence
over the prompts' order, turned by the model's ``seed``), so every prompt is right with the
quality as its chance, and a run of a whole dataset scores the quality within a problem or two,
where independent draws would stray by about sqrt(q(1 - q)/n), 0.03 over HumanEval's 164 at
0.85. Models of one seed find the same prompts hard, a weaker one failing those a stronger one
fails and more, as real models tend to.

The key is built from the suites themselves, by each prompt's text as the runner sends it: a
HumanEval problem is answered with its canonical solution after the problem's stub, in a
```python block, or with the stub's function returning None; a number with the reference (or
one more); a choice with the right letter (or another). A code prompt without a known solution
has no entry and gets the generic coding answer. ``dataset_suites`` finds a profile's dataset
suites without failing on one it cannot read: the run reports that suite itself.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from random import Random

from nvfp4_tui.config.checks import CHOICE_LETTERS, PromptCheck
from nvfp4_tui.config.profile import Profile
from nvfp4_tui.config.suites import Suite, load_suite
from nvfp4_tui.config.tomlcheck import ConfigError, load_toml

_GOLDEN = 0.6180339887498949  # spreads i * _GOLDEN mod 1 evenly over [0, 1) for any count


@functools.cache
def _turn(seed: int) -> float:
    return Random(f"difficulty|{seed}").random()


@dataclass(frozen=True)
class KeyedAnswer:
    right: str
    wrong: str
    position: float  # the prompt's place in [0, 1) before a model's seed turns it

    def pick(self, quality: float, seed: int) -> str:
        difficulty = (self.position + _turn(seed)) % 1.0
        return self.right if difficulty < quality else self.wrong


AnswerKey = Mapping[str, KeyedAnswer]


def _code(text: str) -> str:
    return f"Here is the function.\n\n```python\n{text.rstrip()}\n```\n"


def _keyed(check: PromptCheck, position: float) -> KeyedAnswer | None:
    if check.answers:
        written, value = check.answers[0].text, check.answers[0].value
        return KeyedAnswer(
            f"Working it through, the answer is \\boxed{{{written}}}.",
            f"Working it through, the answer is \\boxed{{{value + 1:g}}}.",
            position,
        )
    if check.choice is not None:
        other = CHOICE_LETTERS[(CHOICE_LETTERS.index(check.choice) + 1) % 4]
        return KeyedAnswer(
            f"The answer is ({check.choice}).", f"The answer is ({other}).", position
        )
    if check.solution is None:
        return None
    if check.stub is not None:  # HumanEval: the solution is the body that completes the stub
        stub = check.stub.rstrip("\n") + "\n"
        right, wrong = _code(stub + check.solution), _code(stub + "    return None\n")
        return KeyedAnswer(right, wrong, position)
    return KeyedAnswer(_code(check.solution), _code("raise NotImplementedError"), position)


def answer_key(suites: Iterable[Suite]) -> dict[str, KeyedAnswer]:
    """Every dataset prompt's text -> its right and wrong answer."""
    key: dict[str, KeyedAnswer] = {}
    for suite in suites:
        for i, prompt in enumerate(suite.prompts):
            position = (i * _GOLDEN) % 1.0
            keyed = _keyed(prompt.check, position) if prompt.check is not None else None
            if keyed is not None:
                key[prompt.text] = keyed
    return key


def dataset_suites(profile: Profile) -> list[Suite]:
    """The dataset suites a profile can run (built-in or its own), those that load."""
    files = {
        path.stem: path for folder in profile.suite_dirs for path in sorted(folder.glob("*.toml"))
    }
    suites = []
    for path in files.values():
        try:
            head = load_toml(path).get("suite")
            if isinstance(head, dict) and "source" in head:
                suites.append(load_suite(path))
        except ConfigError:
            continue
    return suites
