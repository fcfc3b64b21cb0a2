"""Coding answers: a fenced Python module assembled from ``codebank`` snippets, then prose.

A strong model writes type hints, docstrings and tests that pass; a weaker one drops some of
them, and the weaker it is, the more often it ships a flaw that makes one of its own asserts (and
a suite's hidden tests, for the snippets the shipped coding prompts ask for) fail.
"""

from __future__ import annotations

import re

from nvfp4_tui.sim.codebank import SNIPPETS, Snippet
from nvfp4_tui.sim.tokens import count_tokens
from nvfp4_tui.sim.writer import Writer, topic_terms

_SUBJECT = re.compile(
    r"\b(?:implement|write|build|create)\s+(?:an?\s+|the\s+)?([^.,:;\n(]{6,90})", re.IGNORECASE
)

_NOTES = (
    "`{name}` could also {alt}, but that would {cost}.",
    "A production version of `{name}` would add {extra}.",
    "If `{name}` ever becomes a hot spot, {optim}.",
    "The tests for `{name}` cover {case}; {more} would be the next cases to add.",
    "Every public function validates its arguments and raises ValueError naming the bad value.",
    "Injected clocks and callbacks keep `{name}` deterministic under test.",
)
_NOTE_BANK: dict[str, tuple[str, ...]] = {
    "alt": (
        "accept a custom key function",
        "return a generator",
        "log each decision",
        "take a timeout",
        "support cancellation",
    ),
    "cost": (
        "widen its interface",
        "slow down the tests",
        "couple it to a logging framework",
        "complicate the error handling",
    ),
    "extra": (
        "structured logging",
        "metrics for each call",
        "input size limits",
        "a configurable clock",
        "richer error messages",
    ),
    "optim": (
        "profile it before changing anything",
        "a standard-library equivalent is the first thing to try",
        "batching the calls helps more than micro-optimising",
        "caching its results is usually enough",
    ),
    "case": ("the normal path", "the empty input", "invalid arguments", "boundary values"),
    "more": ("very large inputs", "concurrent callers", "unicode input", "negative numbers"),
}


def _rank(prompt: str, w: Writer) -> list[Snippet]:
    words = set(topic_terms(prompt, limit=40)) | set(re.findall(r"[a-z]+", prompt.lower()))
    shuffled = list(SNIPPETS)
    w.rng.shuffle(shuffled)
    return sorted(shuffled, key=lambda s: -len(s.keywords & words))


def _imports(snippets: list[Snippet], typed: bool) -> list[str]:
    modules: dict[str, set[str]] = {}
    plain: set[str] = set()
    typevars = sorted({t for s in snippets for t in s.typevars})
    lines = [line for s in snippets for line in s.imports]
    if typevars:
        lines.append("from typing import TypeVar")
    for line in lines:
        if line.startswith("from "):
            module, names = line[5:].split(" import ")
            modules.setdefault(module, set()).update(n.strip() for n in names.split(","))
        else:
            plain.add(line)
    out = ["from __future__ import annotations", ""] if typed else []
    out += sorted(plain)
    out += [f"from {m} import {', '.join(sorted(modules[m]))}" for m in sorted(modules)]
    if typevars:
        out += ["", *(f'{t} = TypeVar("{t}")' for t in typevars)]
    return out


def _definition(s: Snippet, typed: bool, docstring: bool, flawed: bool) -> str:
    head = s.typed if typed else s.plain
    doc = ""
    if docstring:
        lines = s.doc.splitlines()
        if len(lines) == 1:
            doc = f'    """{lines[0]}"""\n'
        else:
            inner = "\n".join(f"    {line}" if line else "" for line in lines[1:])
            doc = f'    """{lines[0]}\n{inner}\n    """\n'
        if head.startswith("class"):
            doc += "\n"
    body = s.body
    if flawed and s.flaw is not None:
        body = body.replace(*s.flaw)
    return f"{head}\n{doc}{body}"


def _test(s: Snippet) -> str:
    lines = "\n".join(s.tests).splitlines()
    indented = "\n".join(f"    {line}" if line else "" for line in lines)
    return f"def test_{s.name.lower()}() -> None:\n{indented}\n"


def build_module(
    snippets: list[Snippet],
    *,
    typed: bool,
    docstrings: list[bool],
    flawed: list[bool],
    with_tests: bool,
) -> str:
    """The Python module for ``snippets``: imports, definitions, tests and a main guard."""
    definitions = [
        _definition(s, typed, doc, flaw)
        for s, doc, flaw in zip(snippets, docstrings, flawed, strict=True)
    ]
    parts = ["\n".join(_imports(snippets, typed)), *definitions]
    if with_tests:
        parts += [_test(s) for s in snippets]
        calls = "\n".join(f"    test_{s.name.lower()}()" for s in snippets)
        parts.append(f'if __name__ == "__main__":\n{calls}\n    print("all tests passed")\n')
    return "\n\n".join(p.rstrip("\n") + "\n" for p in parts).rstrip("\n") + "\n"


def write_code(w: Writer, prompt: str) -> None:
    """Intro, one ```python module (definitions, tests, main guard), then explanation."""
    match = _SUBJECT.search(prompt)
    subject = match.group(1).strip() if match else "the requested module"
    if len(subject) > 60:
        subject = subject[:60].rsplit(" ", 1)[0]
    w.add(f"Below is a self-contained Python module for this task ({subject}).")
    code_budget = int(w.target_tokens * 0.7)
    typed = w.chance(0.4 + w.quality * 0.6)
    with_tests = w.chance(0.2 + w.quality * 0.8)
    picked: list[Snippet] = []
    docstrings: list[bool] = []
    flawed: list[bool] = []
    size = 60
    for snippet in _rank(prompt, w):
        flaw = w.chance((1.0 - w.quality) * 0.8)  # a flaw the hidden tests of a suite catch
        doc = w.chance(0.3 + w.quality * 0.8)
        cost = count_tokens(_definition(snippet, typed, doc, flaw))
        cost += count_tokens(_test(snippet)) if with_tests else 0
        if picked and size + cost > code_budget:
            continue
        picked.append(snippet)
        docstrings.append(doc)
        flawed.append(flaw)
        size += cost
    module = build_module(
        picked, typed=typed, docstrings=docstrings, flawed=flawed, with_tests=with_tests
    )
    w.add("```python\n" + module + "```")
    w.add("## How it works\n\n" + "\n".join(f"- `{s.name}`: {s.summary}." for s in picked))
    if w.chance(w.quality):
        w.add("## Complexity\n\n" + "\n".join(f"- `{s.name}`: {s.complexity}." for s in picked))
    slots = {**_NOTE_BANK, "name": tuple(s.name for s in picked)}
    while not w.full():
        w.add(w.paragraph(_NOTES, slots))
