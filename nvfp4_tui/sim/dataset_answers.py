"""What a simulated model answers to a dataset suite's prompt (HumanEval, a JSONL suite): the
right answer with the model's ``quality`` as its chance, else a wrong one.

The key is built from the suites themselves, by each prompt's text as the runner sends it: a
HumanEval problem is answered with its canonical solution after the problem's stub, in a
```python block, or with the stub's function returning None; a number with the reference (or
one more); a choice with the right letter (or another). A code prompt without a known solution
has no entry and gets the generic coding answer. ``dataset_suites`` finds a profile's dataset
suites without failing on one it cannot read: the run reports that suite itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from random import Random

from nvfp4_tui.config.checks import CHOICE_LETTERS, PromptCheck
from nvfp4_tui.config.profile import Profile
from nvfp4_tui.config.suites import Suite, load_suite
from nvfp4_tui.config.tomlcheck import ConfigError, load_toml


@dataclass(frozen=True)
class KeyedAnswer:
    right: str
    wrong: str

    def pick(self, rng: Random, quality: float) -> str:
        return self.right if rng.random() < quality else self.wrong


AnswerKey = Mapping[str, KeyedAnswer]


def _code(text: str) -> str:
    return f"Here is the function.\n\n```python\n{text.rstrip()}\n```\n"


def _keyed(check: PromptCheck) -> KeyedAnswer | None:
    if check.answers:
        written, value = check.answers[0].text, check.answers[0].value
        return KeyedAnswer(
            f"Working it through, the answer is \\boxed{{{written}}}.",
            f"Working it through, the answer is \\boxed{{{value + 1:g}}}.",
        )
    if check.choice is not None:
        other = CHOICE_LETTERS[(CHOICE_LETTERS.index(check.choice) + 1) % 4]
        return KeyedAnswer(f"The answer is ({check.choice}).", f"The answer is ({other}).")
    if check.solution is None:
        return None
    if check.stub is not None:  # HumanEval: the solution is the body that completes the stub
        stub = check.stub.rstrip("\n") + "\n"
        return KeyedAnswer(_code(stub + check.solution), _code(stub + "    return None\n"))
    return KeyedAnswer(_code(check.solution), _code("raise NotImplementedError"))


def answer_key(suites: Iterable[Suite]) -> dict[str, KeyedAnswer]:
    """Every dataset prompt's text -> its right and wrong answer."""
    key: dict[str, KeyedAnswer] = {}
    for suite in suites:
        for prompt in suite.prompts:
            keyed = _keyed(prompt.check) if prompt.check is not None else None
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
