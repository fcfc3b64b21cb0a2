"""The coding scorer: the answer's Python code run against the suite's hidden tests, sandboxed.

Which code is tested: the fenced blocks marked ``python``/``py``/``python3`` or unmarked (an
unclosed last fence, as in an answer cut off by max_tokens, runs to the end); blocks that do not
parse are set aside. With ``defines`` in the check, the first block that defines every one of
those names at top level, else all parseable blocks joined in order; without it, the longest
block. An answer without fences is taken whole if it parses as Python.

A check with a ``stub`` (a HumanEval problem's signature and docstring) is completed instead:
the answer's code is its fenced blocks, in order, else the whole answer. The first of those that
parses and defines the entry point at top level runs after the whole stub: its definition
replaces the stub's, whose imports and helper functions stay, so an answer that leaves out
``from typing import List`` still runs. Failing that, the first one that continues the stub's
function (a body alone; one written flush left is indented) runs appended to the stub.

The tests never share a process with that code (``sandbox_bridge``): they run beside the stub,
and reach only the names they take from the answer's program, through calls whose replies are
plain data; the verdict is what their own asserts decide. The score is passed / total hidden
tests; the detail lists the failing tests, each with its reason, and which
sandbox ran them (``sandbox:bwrap`` or ``sandbox:rlimit-only``).
"""

from __future__ import annotations

import ast
import re
import textwrap

from nvfp4_tui.config.checks import PromptCheck, parse_python
from nvfp4_tui.scoring.sandbox import SandboxLimits, SandboxRun, run_hidden_tests

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([\w+-]*)")
_PYTHON_TAGS = frozenset({"", "python", "py", "python3"})
_DETAIL_CHARS = 400  # failing tests share what is left after the names
_MIN_REASON_CHARS = 12
_BODY_INDENT = "    "


def fenced_blocks(text: str) -> list[str]:
    """The bodies of the answer's Python (or unmarked) fenced code blocks, in order."""
    blocks: list[str] = []
    fence: str | None = None
    keep = False
    body: list[str] = []
    for line in text.splitlines():
        m = _FENCE.match(line)
        if fence is None:
            if m:
                fence, keep, body = m.group(1), m.group(2).lower() in _PYTHON_TAGS, []
        elif m and m.group(1).startswith(fence[0]) and len(m.group(1)) >= len(fence):
            if not m.group(2) and line.strip() == m.group(1):
                if keep:
                    blocks.append("\n".join(body))
                fence = None
                continue
            body.append(line)
        else:
            body.append(line)
    if fence is not None and keep:
        blocks.append("\n".join(body))
    return blocks


def _parses(code: str) -> ast.Module | None:
    try:
        return parse_python(code)
    except (SyntaxError, ValueError):
        return None


def top_level_names(tree: ast.Module) -> set[str]:
    """Functions, classes and variables defined at top level (an import defines nothing)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def select_code(answer_text: str, defines: tuple[str, ...]) -> tuple[str | None, str]:
    """The code to test, or None with the reason (``no_code``, ``syntax_error``, ``undefined``)."""
    blocks = fenced_blocks(answer_text)
    if not blocks:
        return (
            (answer_text, "") if answer_text.strip() and _parses(answer_text) else (None, "no_code")
        )
    parsed = [(code, tree) for code in blocks if (tree := _parses(code)) is not None]
    if not parsed:
        return None, "syntax_error"
    if not defines:
        return max((code for code, _ in parsed), key=len), ""
    for code, tree in parsed:
        if set(defines) <= top_level_names(tree):
            return code, ""
    joined = "\n\n".join(code for code, _ in parsed)
    missing = [n for n in defines if n not in top_level_names(parse_python(joined))]
    return (None, "undefined:" + ",".join(missing)) if missing else (joined, "")


def _as_body(code: str) -> str:
    """A body for the stub's function: indented once when written flush left."""
    lines = [line for line in code.splitlines() if line.strip()]
    return textwrap.indent(code, _BODY_INDENT) if lines and not lines[0][0].isspace() else code


def complete_stub(stub: str, answer_text: str, entry_point: str | None) -> tuple[str | None, str]:
    """The program to test (the stub, then the answer's code), or None with the reason."""
    pieces = fenced_blocks(answer_text) or [answer_text]
    head = stub.rstrip("\n") + "\n"
    for code in pieces:
        tree = _parses(code)
        if tree is not None and (entry_point is None or entry_point in top_level_names(tree)):
            return f"{head}\n\n{code}\n", ""
    for code in pieces:
        program = f"{head}{_as_body(code)}\n"
        if code.strip() and _parses(program) is not None:
            return program, ""
    return None, "syntax_error" if any(p.strip() for p in pieces) else "no_code"


def describe(run: SandboxRun) -> str:
    """``passed:k/n``, then every failing test's name with as much of its reason as fits."""
    failed = [o for o in run.outcomes if o.outcome != "passed"]
    head = f"passed:{run.passed}/{len(run.outcomes)}"
    if not failed:
        return f"{head}|{run.label}"
    names = sum(len(o.name) + 3 for o in failed)  # name, parentheses and comma
    room = _DETAIL_CHARS - len(head) - len(run.label) - len("|failed:|") - names
    share = max(room // len(failed), _MIN_REASON_CHARS)
    reasons = ",".join(f"{o.name}({_shorten(o.reason or o.outcome, share)})" for o in failed)
    return f"{head}|failed:{reasons}|{run.label}"


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def score_code(
    check: PromptCheck,
    answer_text: str,
    *,
    limits: SandboxLimits | None = None,
    use_bwrap: bool | None = None,
) -> tuple[float, str]:
    """passed / total hidden tests of the answer's code, run in the sandbox."""
    if check.tests is None:
        raise ValueError("a code_tests check needs hidden tests")
    if check.stub is not None:
        entry_point = check.defines[0] if check.defines else None
        code, why = complete_stub(check.stub, answer_text, entry_point)
    else:
        code, why = select_code(answer_text, check.defines)
    if code is None:
        return 0.0, f"passed:0/{len(check.tests.names)}|{why}"
    run = run_hidden_tests(
        code,
        check.tests,
        stub=check.stub or "",
        defines=check.defines,
        limits=limits,
        use_bwrap=use_bwrap,
    )
    return run.passed / len(run.outcomes), describe(run)
