"""What a verifying scorer checks: the ``scorer`` a suite declares and each prompt's ``[prompt.check]``.

A suite names its verifying scorer in its ``[suite]`` table (``scorer = "math"``); each prompt
then says what a good answer contains::

    # scorer = "math": final answers compared numerically, with credit per sub-question
    [[prompt.check.answers]]
    part = "c"                 # optional: the answer sits under the "(c)" sub-question
    label = "a_10"             # optional: or is given as "a_10 = ..."
    value = "6/11"             # a number, or a string "6/11" / "1.5e3" read exactly
    rel_tol = 1e-6             # optional (default 1e-6), abs_tol too (default 1e-9); a rounded
                               # decimal with 3+ significant digits also counts (0.545 for 6/11)

    # scorer = "code_tests": hidden pytest-style tests run in the sandbox against the code
    [prompt.check]
    defines = ["merge_intervals"]   # optional: names the tested code block must define
    tests = '''
    def test_empty():
        assert merge_intervals([]) == []
    '''

    # scorer = "choice": the letter of the right option (suite kind "choice")
    [prompt.check]
    choice = "B"

    # scorer = "japanese": length in characters and the register asked for
    [prompt.check]
    min_chars = 640
    max_chars = 960            # optional
    register = "dearu"         # optional: "dearu" (だ・である) | "desumasu" (です・ます)

    # any scorer but code_tests and tool_schema: parts the prompt asks for, each found by any
    # one of its keywords (case-insensitive; math keywords also ignore spaces, braces and $)
    [[prompt.check.parts]]
    name = "failover"
    keywords = ["failover", "region fails"]

``tool_schema`` needs no check table: it validates each call against the offered tool's JSON
Schema and matches the calls with ``[[prompt.expected_calls]]``. ``coverage`` (english, design)
needs ``parts``. Every key is checked and a problem is a one-line error, as for the rest of a
suite file. This module reads TOML tables only: it never imports the suite loader.
"""

from __future__ import annotations

import ast
import math
import threading
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, get_args

from jsonschema import Draft202012Validator, SchemaError

from nvfp4_tui.config.tomlcheck import (
    Table,
    a_list_of,
    a_number,
    a_string,
    an_int,
    one_of,
    shortened,
)

ScorerName = Literal[
    "math", "code_tests", "tool_schema", "japanese", "coverage", "choice", "recall"
]
SCORER_NAMES: tuple[ScorerName, ...] = get_args(ScorerName)
# The suite kind each scorer is written for.
SCORER_KINDS: dict[ScorerName, str] = {
    "math": "math",
    "code_tests": "code",
    "tool_schema": "tool_call",
    "japanese": "text",
    "coverage": "text",
    "choice": "choice",
    "recall": "context",
}
Register = Literal["dearu", "desumasu"]
DEFAULT_REL_TOL = 1e-6
DEFAULT_ABS_TOL = 1e-9
_CHECK_KEYS: dict[ScorerName, frozenset[str]] = {
    "math": frozenset({"answers", "parts"}),
    "code_tests": frozenset({"tests", "defines"}),
    "tool_schema": frozenset(),
    "japanese": frozenset({"min_chars", "max_chars", "register", "parts"}),
    "coverage": frozenset({"parts"}),
    "choice": frozenset({"choice"}),
    "recall": frozenset(),  # the context ladder's facts are made with its prompts, not written
}
CHOICE_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class MathAnswer:
    """One checkable final answer: where to find it and the value it must have."""

    value: float
    text: str  # the value as the suite wrote it, for detail strings
    part: str | None = None  # the sub-question label, e.g. "b" for "(b)"
    label: str | None = None  # a name the answer is given under, e.g. "a_10"
    rel_tol: float = DEFAULT_REL_TOL
    abs_tol: float = DEFAULT_ABS_TOL

    @property
    def name(self) -> str:
        return self.label or (f"({self.part})" if self.part else "answer")


@dataclass(frozen=True)
class RequiredPart:
    """A part the prompt asks for; any one keyword found in the answer marks it addressed."""

    name: str
    keywords: tuple[str, ...]


@dataclass(frozen=True)
class HiddenTests:
    """pytest-style test functions (plain asserts; ``async def`` allowed) run against the code."""

    source: str
    names: tuple[str, ...]  # the top-level ``test_*`` functions, in file order


@dataclass(frozen=True)
class RecallFact:
    """A fact a context-ladder prompt hides (``config.context_ladder``): at ``depth`` (0: its
    start, 1: its end), the pass code of ``name`` is ``code``."""

    depth: float
    name: str
    code: str


@dataclass(frozen=True)
class PromptCheck:
    answers: tuple[MathAnswer, ...] = ()
    parts: tuple[RequiredPart, ...] = ()
    tests: HiddenTests | None = None
    defines: tuple[str, ...] = ()
    min_chars: int | None = None
    max_chars: int | None = None
    register: Register | None = None
    choice: str | None = None  # the right option's letter
    facts: tuple[RecallFact, ...] = ()  # scorer = "recall": each to be found in the answer
    # Code the answer completes (a HumanEval problem's signature and docstring): it runs before
    # the answer's code, so its imports and helpers are there, and a body alone continues it.
    stub: str | None = None
    solution: str | None = None  # a known-good answer from a dataset; only the simulator uses it


_AST_LOCK = threading.Lock()


# Why a source the parser gave up on was refused: CPython raises RecursionError or MemoryError,
# not SyntaxError, for an expression nested thousands deep ("x = ----...1").
TOO_DEEP = "nested too deeply to parse"


def parse_python(source: str) -> ast.Module:
    """``ast.parse`` one source at a time: CPython 3.11 can fail with "AST constructor recursion
    depth mismatch" when threads (the verify pool) build trees at once (cpython gh-106905)."""
    with _AST_LOCK:
        return ast.parse(source)


def parse_value(raw: Any) -> float | None:
    """A finite number, or a string holding one exactly ("6/11", "-2.5", "1e3")."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return float(raw) if math.isfinite(raw) else None
    if isinstance(raw, str):
        try:
            return float(Fraction(raw.replace(" ", "")))
        except (ValueError, ZeroDivisionError):
            return None
    return None


def _a_label(raw: Any) -> str | None:
    return raw.strip() if isinstance(raw, str) and raw.strip() and len(raw) <= 40 else None


def _read_answer(table: Table) -> MathAnswer | None:
    raw = table.data.get("value")
    value = table.get("value", parse_value, 'a number or a string such as "6/11"')
    part = table.get("part", _a_label, 'a sub-question label such as "b"', None)
    label = table.get("label", _a_label, 'a name such as "a_10"', None)
    rel_tol = table.get("rel_tol", a_number(minimum=0.0), "a number >= 0", DEFAULT_REL_TOL)
    abs_tol = table.get("abs_tol", a_number(minimum=0.0), "a number >= 0", DEFAULT_ABS_TOL)
    table.finish()
    if value is None:
        return None
    return MathAnswer(value, str(raw), part, label, rel_tol, abs_tol)


def _read_part(table: Table) -> RequiredPart | None:
    name = table.get("name", a_string, "a non-empty string")
    keywords = table.get("keywords", a_list_of(a_string), "a non-empty list of strings")
    table.finish()
    return RequiredPart(name, keywords) if name and keywords else None


def hidden_tests(source: str) -> HiddenTests | str:
    """The test functions of ``source``, or what is wrong with it."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError) as e:
        line = f" (line {e.lineno})" if isinstance(e, SyntaxError) else ""
        return f"not valid Python: {getattr(e, 'msg', e)}{line}"
    except (RecursionError, MemoryError):
        return f"not valid Python: {TOO_DEEP}"
    names = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    ]
    if not names:
        return "expected at least one top-level def test_...() function"
    if len(set(names)) != len(names):
        return "two test functions share a name"
    return HiddenTests(source, tuple(names))


def _read_tests(table: Table) -> HiddenTests | None:
    source = table.get("tests", a_string, "Python source with top-level test_* functions")
    if source is None:
        return None
    tests = hidden_tests(source)
    if isinstance(tests, str):
        table.problems.add(f"{table.key}.tests", tests)
        return None
    return tests


def a_choice(raw: Any) -> str | None:
    """An option letter ("B", "(b)") in capitals, or None."""
    if not isinstance(raw, str):
        return None
    letter = raw.strip().strip("()").strip().upper()
    return letter if len(letter) == 1 and letter in CHOICE_LETTERS else None


def _located_uniquely(table: Table, answers: list[MathAnswer]) -> None:
    """Several answers must each say where they are, or all would read the same final value."""
    if len(answers) < 2:
        return
    places = [(a.part, a.label) for a in answers]
    if any(place == (None, None) for place in places) or len(set(places)) != len(places):
        table.problems.add(
            f"{table.key}.answers", "with several answers, each needs its own part or label"
        )


def read_prompt_check(prompt: Table, scorer: ScorerName | None) -> PromptCheck | None:
    """The ``check`` table of a ``[[prompt]]`` table, read for the suite's scorer (if any)."""
    table = prompt.table("check")
    if table is None:
        if scorer is not None and scorer != "tool_schema":
            prompt.problems.add(f"{prompt.key}.check", "missing; expected a [prompt.check] table")
        return None
    if scorer is None:
        table.problems.add(table.key, "only allowed when suite.scorer is set")
        return None
    if scorer == "tool_schema":
        table.problems.add(table.key, 'not used by scorer "tool_schema"')
        return None
    return _read_check(table, scorer)


def _read_check(table: Table, scorer: ScorerName) -> PromptCheck:
    allowed = _CHECK_KEYS[scorer]
    answers = (
        [a for a in map(_read_answer, table.tables("answers")) if a] if "answers" in allowed else []
    )
    parts = [p for p in map(_read_part, table.tables("parts")) if p] if "parts" in allowed else []
    tests = _read_tests(table) if "tests" in allowed else None
    defines = (
        table.get("defines", a_list_of(_an_identifier), "a list of Python names", ())
        if "defines" in allowed
        else ()
    )
    choice = (
        table.get("choice", a_choice, 'the right option\'s letter, "A" to "Z"')
        if scorer == "choice"
        else None
    )
    min_chars = max_chars = register = None
    if scorer == "japanese":
        min_chars = table.get("min_chars", an_int(1), "an integer >= 1")
        max_chars = table.get("max_chars", an_int(1), "an integer >= 1", None)
        if min_chars and max_chars and max_chars < min_chars:
            table.problems.add(f"{table.key}.max_chars", f"is below min_chars {min_chars}")
        register = table.get("register", one_of("dearu", "desumasu"), '"dearu" | "desumasu"', None)
    other_keys = set().union(*_CHECK_KEYS.values()) - allowed
    for key in sorted(other_keys & set(table.data)):
        table.problems.add(f"{table.key}.{key}", f'not used by scorer "{scorer}"')
    table.finish(allowed_extra=other_keys)
    _located_uniquely(table, answers)
    if scorer == "math" and not table.data.get("answers") and not table.data.get("parts"):
        table.problems.add(table.key, "expected answers or parts, or both")
    if scorer == "coverage" and not table.data.get("parts"):
        table.problems.add(f"{table.key}.parts", "missing; expected [[prompt.check.parts]] tables")
    return PromptCheck(
        answers=tuple(answers),
        parts=tuple(parts),
        tests=tests,
        defines=tuple(defines or ()),
        min_chars=min_chars,
        max_chars=max_chars,
        register=register,
        choice=choice,
    )


def _an_identifier(raw: Any) -> str | None:
    return raw if isinstance(raw, str) and raw.isidentifier() else None


def check_tool_schemas(prompt: Table, tools: tuple[dict[str, Any], ...] | None) -> None:
    """Report a tool whose parameters are not a valid JSON Schema (tool_schema validates calls)."""
    for i, tool in enumerate(tools or ()):
        try:
            Draft202012Validator.check_schema(tool["function"].get("parameters", {}))
        except SchemaError as e:
            where = "/".join(str(p) for p in e.path) or "parameters"
            prompt.problems.add(
                f"{prompt.key}.tools[{i}].function.parameters",
                # The library's message quotes the schema: shortened, as show() shortens.
                f"not a valid JSON Schema at {shortened(where)}: {shortened(e.message)}",
            )
