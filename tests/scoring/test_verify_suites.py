"""Suite files declare verifying scorers and per-prompt checks; bad ones get one-line problems."""

from __future__ import annotations

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.checks import HiddenTests, MathAnswer, RequiredPart
from nvfp4_tui.config.suites import ConfigError, load_suite, load_suites

SUITES_DIR = BUILTIN_SUITES
SCORERS = {
    "english": "coverage",
    "japanese": "japanese",
    "math": "math",
    "coding": "code_tests",
    "design": "coverage",
    "tool_call": "tool_schema",
}


def test_every_shipped_suite_declares_a_scorer_and_its_checks():
    suites = load_suites(SUITES_DIR, list(SCORERS))
    for name, scorer in SCORERS.items():
        suite = suites[name]
        assert suite.scorer == scorer
        for prompt in suite.prompts:
            assert (prompt.check is None) == (scorer == "tool_schema"), prompt.id
    dice = suites["math"].prompts[1].check
    assert [(a.part, a.text) for a in dice.answers] == [("a", "1/6"), ("b", "5/36"), ("c", "6/11")]
    assert dice.answers[2].value == pytest.approx(6 / 11)
    merge = suites["coding"].prompts[0].check
    assert merge.defines == ("merge_intervals",)
    assert merge.tests.names[0] == "test_empty_input"
    bookshop = suites["japanese"].prompts[0].check
    assert (bookshop.min_chars, bookshop.max_chars, bookshop.register) == (640, 960, "dearu")


MATH_SUITE = """
[suite]
kind = "math"
max_tokens = 100
scorer = "math"
[[prompt]]
id = "p"
text = "Compute."
"""
CODE_SUITE = """
[suite]
kind = "code"
max_tokens = 100
scorer = "code_tests"
[[prompt]]
id = "c"
text = "Implement f."
[prompt.check]
"""
JAPANESE_SUITE = """
[suite]
kind = "text"
max_tokens = 100
min_words = 10
scorer = "japanese"
[[prompt]]
id = "j"
text = "書いてください。"
[prompt.check]
"""
TOOL_SUITE = """
[suite]
kind = "tool_call"
max_tokens = 100
scorer = "tool_schema"
[[prompt]]
id = "w"
text = "Weather?"
[[prompt.tools]]
type = "function"
[prompt.tools.function]
name = "get_weather"
[prompt.tools.function.parameters]
type = "object"
[prompt.tools.function.parameters.properties]
city = { type = "string" }
days = { type = "integer", minimum = "one" }
[[prompt.expected_calls]]
name = "get_weather"
"""


def test_a_full_math_check_reads_into_typed_parts(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(
        MATH_SUITE
        + """
[[prompt.check.answers]]
part = "a"
value = "6/11"
rel_tol = 0.01
[[prompt.check.answers]]
label = "a_10"
value = 1025
[[prompt.check.parts]]
name = "induction"
keywords = ["induction"]
"""
    )
    check = load_suite(path).prompts[0].check
    assert check.answers == (
        MathAnswer(6 / 11, "6/11", part="a", rel_tol=0.01),
        MathAnswer(1025.0, "1025", label="a_10"),
    )
    assert check.parts == (RequiredPart("induction", ("induction",)),)


def test_hidden_tests_are_parsed_not_run(tmp_path):
    path = tmp_path / "c.toml"
    source = "import os\\nos._exit(3)\\ndef helper():\\n    pass\\ndef test_one():\\n    pass\\n"
    path.write_text(CODE_SUITE + f'tests = "{source}"\n' + 'defines = ["f"]\n')
    check = load_suite(path).prompts[0].check
    assert check.tests == HiddenTests(source.replace("\\n", "\n"), ("test_one",))
    assert check.defines == ("f",)


BAD = [
    (
        "unknown-scorer",
        MATH_SUITE.replace('scorer = "math"', 'scorer = "regex"') + "[prompt.check]\n",
        [
            'suite.scorer: expected "math" | "code_tests" | "tool_schema" | "japanese" | '
            '"coverage" | "choice", got "regex"'
        ],
    ),
    (
        "scorer-of-another-kind",
        MATH_SUITE.replace('scorer = "math"', 'scorer = "japanese"')
        + "[prompt.check]\nmin_chars = 10\n",
        ['suite.scorer: "japanese" needs kind "text", not "math"'],
    ),
    (
        "check-missing",
        MATH_SUITE,
        ["prompt[0].check: missing; expected a [prompt.check] table"],
    ),
    (
        "check-without-scorer",
        MATH_SUITE.replace('scorer = "math"\n', "") + "[prompt.check]\n",
        ["prompt[0].check: only allowed when suite.scorer is set"],
    ),
    (
        "empty-math-check",
        MATH_SUITE + "[prompt.check]\n",
        ["prompt[0].check: expected answers or parts, or both"],
    ),
    (
        "bad-value",
        MATH_SUITE + '[[prompt.check.answers]]\nvalue = "six elevenths"\n',
        [
            'prompt[0].check.answers[0].value: expected a number or a string such as "6/11", '
            'got "six elevenths"'
        ],
    ),
    (
        "answers-in-one-place",
        MATH_SUITE + "[[prompt.check.answers]]\nvalue = 1\n[[prompt.check.answers]]\nvalue = 2\n",
        ["prompt[0].check.answers: with several answers, each needs its own part or label"],
    ),
    (
        "key-of-another-scorer",
        MATH_SUITE + "[prompt.check]\nmin_chars = 3\n[[prompt.check.parts]]\n"
        'name = "p"\nkeywords = ["k"]\n',
        ['prompt[0].check.min_chars: not used by scorer "math"'],
    ),
    (
        "typo",
        MATH_SUITE + '[prompt.check]\nanswer = 3\n[[prompt.check.parts]]\nname = "p"\n'
        'keywords = ["k"]\n',
        ["prompt[0].check.answer: unknown key; did you mean 'answers'?"],
    ),
    (
        "part-without-keywords",
        MATH_SUITE + '[[prompt.check.parts]]\nname = "p"\nkeywords = []\n',
        ["prompt[0].check.parts[0].keywords: expected a non-empty list of strings, got []"],
    ),
    (
        "tests-not-python",
        CODE_SUITE + 'tests = "def test_x(:"\n',
        ["prompt[0].check.tests: not valid Python: invalid syntax (line 1)"],
    ),
    (
        "tests-without-test-functions",
        CODE_SUITE + 'tests = "assert True"\n',
        ["prompt[0].check.tests: expected at least one top-level def test_...() function"],
    ),
    (
        "defines-not-names",
        CODE_SUITE + 'tests = "def test_x():\\n    pass"\ndefines = ["not a name"]\n',
        ['prompt[0].check.defines: expected a list of Python names, got ["not a name"]'],
    ),
    (
        "japanese-range-and-register",
        JAPANESE_SUITE + 'min_chars = 800\nmax_chars = 600\nregister = "keigo"\n',
        [
            "prompt[0].check.max_chars: is below min_chars 800",
            'prompt[0].check.register: expected "dearu" | "desumasu", got "keigo"',
        ],
    ),
    (
        "japanese-without-length",
        JAPANESE_SUITE + 'register = "dearu"\n',
        ["prompt[0].check.min_chars: missing; expected an integer >= 1"],
    ),
    (
        "coverage-without-parts",
        JAPANESE_SUITE.replace('"japanese"', '"coverage"'),
        ["prompt[0].check.parts: missing; expected [[prompt.check.parts]] tables"],
    ),
    (
        "tool-schema-invalid",
        TOOL_SUITE,
        [
            "prompt[0].tools[0].function.parameters: not a valid JSON Schema at "
            "properties/days/minimum: 'one' is not of type 'number'"
        ],
    ),
    (
        "tool-schema-takes-no-check",
        TOOL_SUITE.replace('"one"', "1") + "[prompt.check]\n",
        ['prompt[0].check: not used by scorer "tool_schema"'],
    ),
]


@pytest.mark.parametrize(("case", "text", "problems"), BAD, ids=[c[0] for c in BAD])
def test_bad_checks_get_one_line_problems(tmp_path, case, text, problems):
    path = tmp_path / "x.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_suite(path)
    assert error.value.problems == [f"{path}: {p}" for p in problems]
