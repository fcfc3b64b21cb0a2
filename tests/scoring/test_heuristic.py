"""Hand-computed heuristic scores for fixed answers, one table per scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.suites import ExpectedCall, Prompt, Suite, load_suites
from nvfp4_tui.scoring.heuristic import (
    CODE_SIGNS,
    MATH_SIGNS,
    score_answer,
    score_signs,
    score_text,
    score_tool_calls,
)

SUITES_DIR = BUILTIN_SUITES

TEXT_CASES = [
    # words 8 (Alpha beta gamma. Alpha delta. Alpha delta. End); unique lower-cased 5 -> 0.625;
    # paragraphs 3 (a spaces-only line is blank); non-blank lines 4, distinct 3 -> dups 1.
    # 2*min(8/4, 1.5)=3 + min(0.75*3, 3)=2.25 + min(4*0.625, 2)=2 + (2-0.5*1)=1.5 -> 8.75/10
    (
        "Alpha beta gamma.\n\nAlpha delta.\nAlpha delta.\n\n   \n\nEnd",
        4,
        0.875,
        "words:8|para:3|uniq:0.62|dups:1",
    ),
    # Unspaced Japanese: 2 whitespace words, both distinct, 2 paragraphs.
    # 2*(2/200)=0.02 + 1.5 + 2 + 2 -> 5.52/10
    (
        "これは日本語の文章です。\n\n二つ目の段落です。",
        200,
        0.552,
        "words:2|para:2|uniq:1.00|dups:0",
    ),
    # One word 1000 times on one line: length capped at 3, 1 paragraph 0.75,
    # uniq 1/1000 -> 0.004, one line so no duplicates 2 -> 5.754/10
    ("word " * 1000, 400, 0.5754, "words:1000|para:1|uniq:0.00|dups:0"),
    # Six equal lines: 12 words, 2 distinct -> 1/6; dups 6-1=5 -> repetition max(2-2.5, 0)=0.
    # 2*(12/400)=0.06 + 0.75 + 4/6=0.6667 + 0 -> 1.4767/10
    ("same line\n" * 6, 400, 0.147667, "words:12|para:1|uniq:0.17|dups:5"),
    # Case folds for vocabulary ("The"/"the"), CRLF blank lines split paragraphs,
    # indented copies of a line are duplicates once stripped.
    # words 6 (The cat. the cat. The cat.), unique {the, cat.} 2/6; paragraphs 2; lines 3,
    # distinct 2 -> dups 1. 2*(6/10)=1.2 + 1.5 + 4/3=1.3333 + 1.5 -> 5.5333/10
    ("The cat.\r\n\r\n  the cat.\r\n the cat.", 10, 0.553333, "words:6|para:2|uniq:0.33|dups:1"),
]


@pytest.mark.parametrize(("answer", "min_words", "score", "detail"), TEXT_CASES)
def test_text_scores(answer, min_words, score, detail):
    got_score, got_detail = score_text(answer, min_words)
    assert got_detail == detail
    assert got_score == pytest.approx(score, abs=1e-6)


FULL_PROGRAM = '''import asyncio

async def double(n: int) -> int:
    """Twice n."""
    if n < 0:
        raise ValueError("negative")
    return 2 * n

def test_double():
    assert asyncio.run(double(2)) == 4
'''

CODE_CASES = [
    # def 2; "f(x):" has no ": " and no "->"; 2 lines -> 2/10
    ("def f(x):\n    return x\n", 0.2, "has_def"),
    # def 2 + typed 1.5 + docstring 1 + tests 1.5 + raise 1 + async 1 + import 1 = 9 (10 lines)
    (FULL_PROGRAM, 0.9, "has_def|typed|docstring|tests|error_handling|async|imports"),
    # the same padded to 30 lines: + substantial 1 = 10 -> 1.0
    (
        FULL_PROGRAM + "# pad\n" * 20,
        1.0,
        "has_def|typed|docstring|tests|error_handling|async|substantial|imports",
    ),
    # keywords ignore case: "Testing" -> tests 1.5; "Import" -> imports 1 -> 2.5/10
    ("Testing first. Import nothing", 0.25, "tests|imports"),
    ("Hello there", 0.0, "none"),
]


@pytest.mark.parametrize(("answer", "score", "detail"), CODE_CASES)
def test_code_scores(answer, score, detail):
    assert score_signs(answer, CODE_SIGNS) == (pytest.approx(score), detail)


MATH_CASES = [
    # step 2 + "=" and "P(" formula 2 + digits 1 + therefore 1.5 + 2 paragraphs 1.5 = 8
    (
        "Step 1: P(A) = 1/2.\n\nTherefore the answer is 1/2.",
        0.8,
        "step|formula|numbers|therefore|structured",
    ),
    # "We show" and "QED" -> proof 2
    ("We show the claim holds. QED", 0.2, "proof"),
    # symbols are matched as written: "p(" is not "P(", and there is nothing else
    ("Let p(x) be a polynomial", 0.0, "none"),
    # "Sum" is a keyword (any case) -> formula 2 + digits 1 + "Hence" 1.5; one paragraph -> 4.5
    ("The Sum of the series is 10.\nHence done.", 0.45, "formula|numbers|therefore"),
    # everything: 2 + 2 + 1 + 1.5 + 2 + 1.5 = 10
    (
        "Proof. Step one: C(4,2) = 6.\n\nThus so the answer is 6.",
        1.0,
        "step|formula|numbers|therefore|proof|structured",
    ),
]


@pytest.mark.parametrize(("answer", "score", "detail"), MATH_CASES)
def test_math_scores(answer, score, detail):
    assert score_signs(answer, MATH_SIGNS) == (pytest.approx(score), detail)


def call(name: str, arguments: object) -> dict:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": f"call-{name}", "name": name, "arguments": text}


OSAKA = ExpectedCall("get_weather", {"city": "Osaka"})
NAGOYA = ExpectedCall("get_weather", {"city": "Nagoya", "unit": "celsius"})
TWO = (OSAKA, NAGOYA)

TOOL_CASES = [
    # both made, reversed order, extra free argument ignored: 2/2 -> 1.0
    (
        TWO,
        [
            call("get_weather", {"city": "Nagoya", "unit": "celsius"}),
            call("get_weather", {"city": "Osaka", "x": 1}),
        ],
        1.0,
        "calls:2|matched:2/2|extra:0|bad_json:0",
    ),
    # strings ignore case and surrounding space
    (
        TWO,
        [
            call("get_weather", {"city": " osaka "}),
            call("get_weather", {"city": "NAGOYA", "unit": "Celsius"}),
        ],
        1.0,
        "calls:2|matched:2/2|extra:0|bad_json:0",
    ),
    # one of two: 1/2 -> 0.5
    (TWO, [call("get_weather", {"city": "Osaka"})], 0.5, "calls:1|matched:1/2|extra:0|bad_json:0"),
    # a missing expected argument (unit) fails the call: 1/2
    (
        TWO,
        [call("get_weather", {"city": "Osaka"}), call("get_weather", {"city": "Nagoya"})],
        0.5,
        "calls:2|matched:1/2|extra:0|bad_json:0",
    ),
    # both plus a third: 2/2 - 0.25 * 1 -> 0.75
    (
        TWO,
        [
            call("get_weather", {"city": "Osaka"}),
            call("get_weather", {"city": "Nagoya", "unit": "celsius"}),
            call("get_weather", {"city": "Kyoto"}),
        ],
        0.75,
        "calls:3|matched:2/2|extra:1|bad_json:0",
    ),
    # the same call twice for one expected: 1/1 - 0.25 -> 0.75
    (
        (OSAKA,),
        [call("get_weather", {"city": "Osaka"})] * 2,
        0.75,
        "calls:2|matched:1/1|extra:1|bad_json:0",
    ),
    # five calls for one expected: 1 - 0.25 * 4 -> floored at 0
    (
        (OSAKA,),
        [call("get_weather", {"city": "Osaka"})] * 5,
        0.0,
        "calls:5|matched:1/1|extra:4|bad_json:0",
    ),
    # unparsable and non-object arguments match nothing: 0/2
    (
        TWO,
        [call("get_weather", '{"city": "Osaka"'), call("get_weather", "[1]")],
        0.0,
        "calls:2|matched:0/2|extra:0|bad_json:2",
    ),
    # wrong tool: 0/1
    (
        (OSAKA,),
        [call("get_time", {"city": "Osaka"})],
        0.0,
        "calls:1|matched:0/1|extra:0|bad_json:0",
    ),
    # "" arguments are an empty object, enough for an expectation without arguments: 1/1
    (
        (ExpectedCall("list_cities", {}),),
        [call("list_cities", "")],
        1.0,
        "calls:1|matched:1/1|extra:0|bad_json:0",
    ),
    # a matching, not a greedy pass: Osaka could serve either expectation, Kyoto only the first
    (
        (ExpectedCall("get_weather", {"city": {"one_of": ["Osaka", "Kyoto"]}}), OSAKA),
        [call("get_weather", {"city": "Osaka"}), call("get_weather", {"city": "Kyoto"})],
        1.0,
        "calls:2|matched:2/2|extra:0|bad_json:0",
    ),
]


@pytest.mark.parametrize(("expected", "calls", "score", "detail"), TOOL_CASES)
def test_tool_call_scores(expected, calls, score, detail):
    assert score_tool_calls(expected, "", calls) == (pytest.approx(score), detail)


def test_no_tool_call_scores_zero_and_says_why():
    assert score_tool_calls(TWO, "", []) == (0.0, "no_call")
    assert score_tool_calls(TWO, "It is sunny in Osaka.", []) == (0.0, "text_only")


@pytest.mark.parametrize(
    ("expected_value", "actual", "matches"),
    [
        ({"contains": "quarterly review"}, "Q3 Quarterly Review", True),
        ({"contains": "quarterly review"}, "Quarterly", False),
        ({"contains": "x"}, 5, False),
        ({"min": 1, "max": 10}, 10, True),
        ({"min": 1, "max": 10}, 10.5, False),
        ({"min": 1}, "5", False),
        ({"min": 0}, True, False),  # a boolean is not a number
        ({"one_of": ["EUR", 978]}, 978.0, True),
        (250, 250.0, True),
        (250, "250", False),
        (1, True, False),
        (True, True, True),
        (["a@x.org", "b@x.org"], ["B@x.org", "a@x.org"], True),  # lists ignore order
        (["a@x.org", "b@x.org"], ["a@x.org", "a@x.org"], False),
        (["a@x.org"], "a@x.org", False),
    ],
)
def test_argument_comparison(expected_value, actual, matches):
    expected = (ExpectedCall("f", {"v": expected_value}),)
    score, _ = score_tool_calls(expected, "", [call("f", {"v": actual})])
    assert score == (1.0 if matches else 0.0)


def test_tool_call_prompt_needs_expected_calls():
    with pytest.raises(ValueError, match="expected call"):
        score_tool_calls((), "", [call("f", {})])


def _suite(kind: str, min_words: int | None = None) -> Suite:
    return Suite("s", kind, 100, min_words, None, (Prompt("p", "q"),), Path("s.toml"))


@pytest.mark.parametrize(
    ("kind", "min_words", "answer", "expected"),
    [
        # 2*min(4/4, 1.5)=2 + 0.75*2=1.5 + 2 + 2 -> 7.5/10
        ("text", 4, "One two.\n\nThree four.", (0.75, "words:4|para:2|uniq:1.00|dups:0")),
        # def 2 (and no ": " after the colon) -> 2/10
        ("code", None, "def f():\n    pass", (0.2, "has_def")),
        # "=" formula 2 + digits 1 -> 3/10
        ("math", None, "2 + 2 = 4", (0.3, "formula|numbers")),
        # a blank answer is 0 for every kind, not the text formula's 0.2 for "no repetition"
        ("text", 4, " \n\n ", (0.0, "empty")),
        ("code", None, "", (0.0, "empty")),
        ("math", None, "\n", (0.0, "empty")),
    ],
)
def test_score_answer_dispatches_on_kind(kind, min_words, answer, expected):
    suite = _suite(kind, min_words)
    score, detail = score_answer(suite, suite.prompts[0], answer, None)
    assert (pytest.approx(score), detail) == (pytest.approx(expected[0]), expected[1])


def test_score_answer_ignores_tool_calls_outside_tool_suites():
    suite = _suite("math")
    assert score_answer(suite, suite.prompts[0], "", [call("f", {})]) == (0.0, "empty")


def test_text_suite_without_min_words_is_refused():
    suite = _suite("text")
    with pytest.raises(ValueError, match="min_words"):
        score_answer(suite, suite.prompts[0], "words", None)


# What a good model would call for each shipped tool prompt.
GOOD_CALLS = {
    "stock-two-warehouses": [
        call("check_inventory", {"sku": "SKU-1042", "warehouse": "osaka"}),
        call("check_inventory", {"sku": "SKU-1042", "warehouse": "nagoya"}),
    ],
    "schedule-review": [
        call(
            "create_event",
            {
                "title": "Quarterly review",
                "start": "2025-07-14T15:00:00",
                "timezone": "Asia/Tokyo",
                "duration_minutes": 45,
                "attendees": ["bob@example.com", "alice@example.com"],
            },
        )
    ],
    "convert-currency": [
        call("convert_currency", {"amount": 250, "from_currency": "usd", "to_currency": "EUR"})
    ],
}


def test_shipped_tool_prompts_are_satisfiable():
    suite = load_suites(SUITES_DIR, ["tool_call"])["tool_call"]
    assert {p.id for p in suite.prompts} == set(GOOD_CALLS)
    for prompt in suite.prompts:
        score, detail = score_answer(suite, prompt, "", GOOD_CALLS[prompt.id])
        assert score == 1.0, (prompt.id, detail)
        # and the same calls in the wrong tool's name score nothing
        wrong = [{**c, "name": "search_web"} for c in GOOD_CALLS[prompt.id]]
        assert score_answer(suite, prompt, "", wrong)[0] == 0.0
