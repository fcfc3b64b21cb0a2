"""The tool-call scorer: each call validated against its tool's JSON Schema, then matched.

A call is valid when it names a tool the prompt offered and its arguments are a JSON object that
the tool's ``parameters`` schema accepts (JSON Schema 2020-12 with format checks, so a
``"format": "date"`` string must be a date). Valid calls are matched with the expected calls in
any order (a bipartite matching, so parallel calls may come in any order), each expected
argument compared as the suite loader documents (literals, ``contains``, ``one_of``, ``min``,
``max``). Score: matched / expected, less ``WRONG_CALL_PENALTY`` for every call that matched
nothing (invalid, or valid but not asked for), at least 0. The detail names the first schema
error so a user sees why a call did not count.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from jsonschema import Draft202012Validator

from nvfp4_tui.config.suites import Prompt
from nvfp4_tui.scoring.heuristic import matched_calls

WRONG_CALL_PENALTY = 0.25
_ERROR_CHARS = 120


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(
        json.loads(schema_json), format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def _problem(call: dict[str, Any], schemas: dict[str, str]) -> tuple[dict[str, Any] | None, str]:
    """The call's arguments if the call is valid, else None and what is wrong with it."""
    name = call.get("name")
    if name not in schemas:
        return None, f"unknown tool {name!r}"
    raw = call.get("arguments")
    if isinstance(raw, dict):
        arguments: Any = raw
    elif raw is None or (isinstance(raw, str) and not raw.strip()):
        arguments = {}  # some servers send "" for a call without arguments
    else:
        try:
            arguments = json.loads(raw)
        except (TypeError, ValueError):
            return None, f"{name}: arguments are not JSON"
    if not isinstance(arguments, dict):
        return None, f"{name}: arguments are not a JSON object"
    error = next(iter(_validator(schemas[name]).iter_errors(arguments)), None)
    if error is not None:
        where = "/".join(map(str, error.absolute_path))
        message = f"{name}: {where + ' ' if where else ''}{error.message}"
        return None, message[:_ERROR_CHARS]
    return arguments, ""


def score_tool_schema(
    prompt: Prompt, answer_text: str, tool_calls: Sequence[dict[str, Any]]
) -> tuple[float, str]:
    """Matched expected calls over expected, less a penalty per call that matched nothing."""
    if not prompt.expected_calls:
        raise ValueError(f"prompt {prompt.id!r} has no expected calls")
    if not tool_calls:
        return 0.0, "text_only" if answer_text.strip() else "no_call"
    schemas = {
        t["function"]["name"]: json.dumps(t["function"].get("parameters", {}), sort_keys=True)
        for t in prompt.tools or ()
    }
    valid: list[tuple[str, dict[str, Any]]] = []
    problems: list[str] = []
    for call in tool_calls:
        arguments, problem = _problem(call, schemas)
        if arguments is None:
            problems.append(problem)
        else:
            valid.append((call["name"], arguments))
    matched = matched_calls(prompt.expected_calls, valid)
    unmatched = len(tool_calls) - matched
    expected = len(prompt.expected_calls)
    score = max(matched / expected - WRONG_CALL_PENALTY * unmatched, 0.0)
    detail = f"matched:{matched}/{expected}|calls:{len(tool_calls)}|invalid:{len(problems)}"
    if problems:
        detail += f"|{problems[0]}"
    return score, detail
