"""What the simulated models write: categories, determinism, exact token accounting, quality."""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nvfp4_tui.sim.answers import ChatRequest, classify, compose
from nvfp4_tui.sim.codebank import SNIPPETS
from nvfp4_tui.sim.codegen import build_module
from nvfp4_tui.sim.tokens import count_tokens
from tests.sim.simclient import make_spec

PROMPTS = {
    "english": "Write a critical essay on the social consequences of automation. Discuss:\n"
    "1. Labor displacement\n2. Education\n3. Historical parallels",
    "japanese": "「季節と記憶」というテーマで、800字程度のエッセイを書いてください。",
    "math": "A test has 95% sensitivity and 98% specificity; the prevalence is 3%. "
    "Compute the probability that a positive result is a true positive.",
    "coding": "Implement a Python function that merges overlapping intervals, with tests.",
    "design": "Design the architecture of a URL shortener: schema, caching and scaling.",
}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            },
            "required": ["city", "unit", "days"],
        },
    },
}
FX_TOOL = {
    "type": "function",
    "function": {
        "name": "convert_currency",
        "description": "Convert an amount of money from one currency to another",
        "parameters": {
            "type": "object",
            "properties": {
                "amount": {"type": "number"},
                "from_currency": {"type": "string"},
                "to_currency": {"type": "string"},
            },
            "required": ["amount", "from_currency", "to_currency"],
        },
    },
}


def request(prompt: str, max_tokens: int | None = 512, **kw) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": prompt}], max_tokens=max_tokens, **kw)


@pytest.mark.parametrize("category", sorted(PROMPTS))
def test_prompts_are_classified_by_their_words(category: str) -> None:
    assert classify(request(PROMPTS[category])) == category


def test_tools_make_a_tool_call_unless_tool_choice_is_none() -> None:
    assert classify(request("hi", tools=[WEATHER_TOOL])) == "tool_call"
    assert classify(request("hi", tools=[WEATHER_TOOL], tool_choice="none")) == "english"


def test_same_seed_and_request_give_the_same_answer_and_chunking() -> None:
    spec = make_spec(reasoning=True)
    first = compose(spec, request(PROMPTS["design"]))
    again = compose(spec, request(PROMPTS["design"]))
    assert first == again and first.pieces == again.pieces
    other_seed = compose(make_spec(reasoning=True, seed=8), request(PROMPTS["design"]))
    assert other_seed.content != first.content


@settings(max_examples=40, deadline=None)
@given(
    category=st.sampled_from(sorted(PROMPTS)),
    max_tokens=st.one_of(st.none(), st.integers(1, 1500)),
    reasoning=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_pieces_carry_exactly_the_answer_and_respect_max_tokens(
    category: str, max_tokens: int | None, reasoning: bool, seed: int
) -> None:
    answer = compose(
        make_spec(reasoning=reasoning, seed=seed), request(PROMPTS[category], max_tokens)
    )
    reasoning_text = "".join(p.text for p in answer.pieces if p.kind == "reasoning")
    content_text = "".join(p.text for p in answer.pieces if p.kind == "content")
    assert reasoning_text == answer.reasoning and content_text == answer.content
    assert answer.completion_tokens == count_tokens(answer.reasoning) + count_tokens(answer.content)
    assert answer.reasoning_tokens == count_tokens(answer.reasoning)
    assert answer.pieces[0].tokens == 1
    assert all(1 <= p.tokens <= 3 for p in answer.pieces)
    if max_tokens is not None:
        assert answer.completion_tokens <= max_tokens
        assert (answer.finish_reason == "length") == (answer.completion_tokens == max_tokens)
    assert bool(answer.reasoning) == reasoning


def test_long_form_answers_mostly_stop_within_the_target_band() -> None:
    lengths = Counter()
    for seed in range(20):
        answer = compose(make_spec(seed=seed, quality=0.9), request(PROMPTS["english"], 1000))
        ratio = answer.completion_tokens / 1000
        lengths[
            "stop-in-band" if answer.finish_reason == "stop" and 0.5 <= ratio < 1 else "other"
        ] += 1
    assert lengths["stop-in-band"] >= 16


def test_a_tiny_max_tokens_ends_with_length() -> None:
    answer = compose(make_spec(), request(PROMPTS["english"], 5))
    assert answer.finish_reason == "length" and answer.completion_tokens == 5


def test_category_markers_are_present() -> None:
    spec = make_spec(quality=1.0)
    japanese = compose(spec, request(PROMPTS["japanese"])).content
    assert re.search(r"[\u3040-\u30ff]", japanese) and "。" in japanese
    math = compose(spec, request(PROMPTS["math"])).content
    assert "Step 1:" in math and "Therefore" in math and "=" in math
    design = compose(spec, request(PROMPTS["design"], 1500)).content
    assert "```text" in design and "+--" in design and "CREATE TABLE" in design
    code = compose(spec, request(PROMPTS["coding"], 1500)).content
    assert "```python" in code and "def " in code and '"""' in code and "assert" in code


def _duplicate_share(text: str) -> float:
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s) > 20]
    return 1 - len(set(sentences)) / len(sentences)


def test_lower_quality_repeats_itself_and_writes_fewer_paragraphs() -> None:
    def profile(quality: float) -> tuple[float, float, float]:
        dups = paragraphs = tokens = 0.0
        for seed in range(12):
            answer = compose(
                make_spec(seed=seed, quality=quality), request(PROMPTS["english"], 800)
            )
            dups += _duplicate_share(answer.content)
            paragraphs += answer.content.count("\n\n") / answer.completion_tokens
            tokens += answer.completion_tokens
        return dups, paragraphs, tokens

    strong, weak = profile(0.95), profile(0.5)
    assert weak[0] > strong[0] * 2
    assert weak[1] < strong[1]


def test_lower_quality_code_skips_docstrings_and_tests() -> None:
    def share(quality: float, marker: str) -> float:
        hits = 0
        for seed in range(16):
            content = compose(
                make_spec(seed=seed, quality=quality), request(PROMPTS["coding"], 1500)
            ).content
            hits += marker in content
        return hits / 16

    assert share(0.95, "def test_") > share(0.3, "def test_")
    assert share(0.95, '"""') > share(0.3, '"""')


def _run(source: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "<snippet>", "exec"), {"__name__": "__main__"})  # our own templates
    return out.getvalue()


@pytest.mark.parametrize("snippet", SNIPPETS, ids=lambda s: s.name)
def test_every_snippet_passes_its_tests_and_its_flaw_breaks_them(snippet) -> None:
    for typed in (True, False):
        source = build_module(
            [snippet], typed=typed, docstrings=[typed], flawed=[False], with_tests=True
        )
        assert _run(source).strip() == "all tests passed"
    assert snippet.flaw is not None and snippet.flaw[0] in snippet.body
    flawed = build_module([snippet], typed=True, docstrings=[True], flawed=[True], with_tests=True)
    with pytest.raises(Exception):  # noqa: B017 - an assert or the error the flaw causes
        _run(flawed)


def test_a_strong_models_whole_coding_answer_runs() -> None:
    for seed in range(4):
        content = compose(
            make_spec(seed=seed, quality=1.0), request(PROMPTS["coding"], 3000)
        ).content
        code = content.split("```python\n", 1)[1].split("```", 1)[0]
        assert _run(code).strip() == "all tests passed"


def test_tool_call_arguments_satisfy_the_schema() -> None:
    spec = make_spec(quality=1.0)
    answer = compose(
        spec,
        request(
            "What will the weather be in Osaka for the next 3 days, in fahrenheit?",
            tools=[FX_TOOL, WEATHER_TOOL],
        ),
    )
    assert answer.finish_reason == "tool_calls"
    assert [c.name for c in answer.tool_calls] == ["get_weather"]
    args = json.loads(answer.tool_calls[0].arguments)
    assert args == {"city": "Osaka", "unit": "fahrenheit", "days": 3}
    assert all(c.id.startswith("chatcmpl-tool-") for c in answer.tool_calls)


def test_two_requests_in_one_message_give_two_calls_and_a_weak_model_may_miss_one() -> None:
    prompt = (
        "Convert 100 USD to JPY and tell me the current weather in Tokyo in celsius for 2 days."
    )
    strong = compose(make_spec(quality=1.0), request(prompt, tools=[WEATHER_TOOL, FX_TOOL]))
    assert sorted(c.name for c in strong.tool_calls) == ["convert_currency", "get_weather"]
    fx = json.loads(next(c for c in strong.tool_calls if c.name == "convert_currency").arguments)
    assert fx["from_currency"] == "USD" and fx["to_currency"] == "JPY" and fx["amount"] == 100
    counts = {
        len(
            compose(
                make_spec(quality=0.0, seed=s), request(prompt, tools=[WEATHER_TOOL, FX_TOOL])
            ).tool_calls
        )
        for s in range(6)
    }
    assert counts == {1}
