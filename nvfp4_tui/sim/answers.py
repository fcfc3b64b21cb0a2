"""What a simulated model answers: the request classified, the whole answer written up front, and
cut into the chunks the stream will send.

The answer is a pure function of the model's ``SimSpec`` and the request (messages, tools,
sampling settings), so the same seed and request always give the same text and the same
chunking. Chunks usually carry one token; now and then two or three, as with speculative
decoding; usage counts always equal the tokens the chunks carry.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from random import Random
from typing import Any, Literal

from nvfp4_tui.config.profile import SimSpec
from nvfp4_tui.sim import codegen, designdoc, english, japanese, mathsteps
from nvfp4_tui.sim.dataset_answers import AnswerKey
from nvfp4_tui.sim.recall import recall_answer
from nvfp4_tui.sim.tokens import count_tokens, message_text, split_tokens
from nvfp4_tui.sim.toolcalls import ToolCall, make_calls, pick_tools
from nvfp4_tui.sim.writer import Writer

Category = Literal["tool_call", "japanese", "math", "coding", "design", "english"]
PieceKind = Literal["reasoning", "content", "tool_head", "tool_args"]
FinishReason = Literal["stop", "length", "tool_calls"]

_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_KEYWORDS: tuple[tuple[Category, re.Pattern[str]], ...] = (
    (
        "math",
        re.compile(
            r"\b(prove|proof|probabilit\w*|comput\w*|equations?|calculat\w*|solve|integral|"
            r"derivative|theorem|expected value|bayes)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "coding",
        re.compile(
            r"\b(python|functions?|code|implement\w*|class|module|algorithm|unit tests?)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "design",
        re.compile(r"\b(design|architecture|system|schema|scalab\w*)\b", re.IGNORECASE),
    ),
    (
        "english",
        re.compile(r"\b(essay|critique|argue|discuss|analy[sz]\w*|reflect\w*)\b", re.IGNORECASE),
    ),
)
# Natural answer lengths (tokens) when the request sets no max_tokens.
_NATURAL_TOKENS: dict[Category, tuple[int, int]] = {
    "english": (700, 1400),
    "japanese": (500, 900),
    "math": (400, 900),
    "coding": (800, 1600),
    "design": (700, 1400),
    "tool_call": (20, 60),
}
_TOOL_HEAD_TOKENS = 3  # the markup around a call's name: <tool_call>{"name": ...
_MULTI_TOKEN_CHUNK_RATE = 0.08


@dataclass(frozen=True)
class ChatRequest:
    """The parts of a chat completion request that shape the answer."""

    messages: Sequence[Mapping[str, Any]]
    max_tokens: int | None = None
    temperature: float = 1.0
    seed: int | None = None
    tools: list[Any] | None = None
    tool_choice: Any = None
    thinking: bool = True  # chat_template_kwargs.enable_thinking
    # Tokens written before the end of sequence may stop the answer: vLLM's min_tokens, or
    # max_tokens under ignore_eos (which writes to the limit).
    min_tokens: int = 0

    @property
    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return message_text(message.get("content"))
        return ""

    def digest(self) -> str:
        body = json.dumps(
            [self.messages, self.max_tokens, self.temperature, self.seed, self.tools]
            + ([self.min_tokens] if self.min_tokens else []),
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        return hashlib.sha256(body.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Piece:
    """What one chunk carries: text of one kind and the number of tokens it stands for."""

    kind: PieceKind
    text: str
    tokens: int
    tool_index: int = 0


@dataclass(frozen=True)
class Answer:
    category: Category
    reasoning: str
    content: str
    tool_calls: tuple[ToolCall, ...]
    finish_reason: FinishReason
    pieces: tuple[Piece, ...] = field(repr=False)

    @property
    def completion_tokens(self) -> int:
        return sum(p.tokens for p in self.pieces)

    @property
    def reasoning_tokens(self) -> int:
        return sum(p.tokens for p in self.pieces if p.kind == "reasoning")


def classify(request: ChatRequest) -> Category:
    """Tools present -> tool call; kana/kanji -> japanese; else the best keyword match."""
    if request.tools and request.tool_choice != "none":
        return "tool_call"
    text = request.last_user_text
    if _JAPANESE.search(text):
        return "japanese"
    hits = [(len(pattern.findall(text)), -i, name) for i, (name, pattern) in enumerate(_KEYWORDS)]
    count, _, name = max(hits)
    return name if count else "english"


def _forced_tools(request: ChatRequest) -> list[Any] | None:
    """The tool a request names in ``tool_choice``, or every tool for "required"."""
    tools = request.tools or []
    choice = request.tool_choice
    if isinstance(choice, Mapping):
        wanted = (choice.get("function") or {}).get("name")
        return [t for t in tools if (t.get("function") or {}).get("name") == wanted][:1]
    if choice == "required":
        return tools[:1]
    return None


def _target_tokens(category: Category, request: ChatRequest, rng: Random, quality: float) -> int:
    """How long the answer wants to be; a weaker model writes less, or rambles past the limit."""
    shorter = 0.7 + 0.3 * quality
    if request.max_tokens is None:
        low, high = _NATURAL_TOKENS[category]
        return round(rng.randint(low, high) * shorter)
    if category == "tool_call":
        return min(request.max_tokens, rng.randint(*_NATURAL_TOKENS["tool_call"]))
    if rng.random() < (1.0 - quality) * 0.3:
        return request.max_tokens * 2  # finish_reason "length"
    return max(1, round(request.max_tokens * rng.uniform(0.6, 0.95) * shorter))


def _chunk(tokens: list[str], kind: PieceKind, rng: Random, index: int = 0) -> list[Piece]:
    pieces = []
    i = 0
    while i < len(tokens):
        size = 1
        if i > 0 and rng.random() < _MULTI_TOKEN_CHUNK_RATE:
            size = rng.randint(2, 3)
        pieces.append(Piece(kind, "".join(tokens[i : i + size]), len(tokens[i : i + size]), index))
        i += size
    return pieces


def _write(category: Category, writer: Writer, prompt: str) -> None:
    writers = {
        "english": english.write_essay,
        "japanese": japanese.write_essay,
        "math": mathsteps.write_solution,
        "coding": codegen.write_code,
        "design": designdoc.write_design,
    }
    writers[category](writer, prompt)


def _tool_pieces(
    calls: list[ToolCall], budget: int, rng: Random
) -> tuple[list[Piece], FinishReason]:
    """Each call as a head chunk (id, name) then argument chunks, cut off at ``budget``."""
    wanted: list[Piece] = []
    for index, call in enumerate(calls):
        wanted.append(
            Piece("tool_head", call.name, count_tokens(call.name) + _TOOL_HEAD_TOKENS, index)
        )
        wanted += _chunk(split_tokens(call.arguments), "tool_args", rng, index)
    kept: list[Piece] = []
    used = 0
    for piece in wanted:
        if used + piece.tokens > budget:
            if piece.kind == "tool_head" and used < budget:
                kept.append(Piece(piece.kind, piece.text, budget - used, piece.tool_index))
            return kept, "length"
        kept.append(piece)
        used += piece.tokens
    return kept, "tool_calls"


def _as_streamed(calls: list[ToolCall], pieces: list[Piece]) -> list[ToolCall]:
    """The calls as far as ``pieces`` carry them (all of them unless the budget ran out)."""
    streamed = []
    for index, call in enumerate(calls):
        mine = [p for p in pieces if p.tool_index == index]
        if mine:
            args = "".join(p.text for p in mine if p.kind == "tool_args")
            streamed.append(ToolCall(call.id, call.name, args))
    return streamed


def compose(spec: SimSpec, request: ChatRequest, key: AnswerKey | None = None) -> Answer:
    """The whole answer for ``request``, deterministic in ``spec.seed`` and the request; a
    dataset prompt in ``key`` gets its right or wrong answer (``dataset_answers``)."""
    rng = Random(f"{spec.seed}|{request.digest()}")
    category = classify(request)
    prompt = request.last_user_text
    keyed = key.get(prompt) if key else None
    recalled = recall_answer(spec, prompt, rng)
    budget = request.max_tokens if request.max_tokens is not None else 1 << 30
    target = _target_tokens(category, request, rng, spec.quality)

    calls: list[ToolCall] = []
    if category == "tool_call":
        chosen = _forced_tools(request)
        if chosen is None:
            chosen = pick_tools(request.tools or [], prompt)
        calls = make_calls(chosen, prompt, rng, spec.quality)

    reasoning = ""
    if spec.reasoning and request.thinking:
        share = 0.6 if category == "tool_call" else rng.uniform(0.15, 0.3)
        plan = [f"call {c.name}" for c in calls]
        thinker = Writer(rng, spec.quality, max(8, round(target * share)))
        english.write_reasoning(thinker, prompt, plan)
        reasoning = thinker.text()
    reasoning_tokens = split_tokens(reasoning)[:budget]
    left = budget - len(reasoning_tokens)

    pieces = _chunk(reasoning_tokens, "reasoning", rng)
    content = ""
    finish: FinishReason = "stop"
    if calls:
        tool_pieces, finish = _tool_pieces(calls, left, rng)
        calls = _as_streamed(calls, tool_pieces)
        pieces += tool_pieces
    elif left > 0:
        if keyed is not None:
            text = keyed.pick(spec.quality, spec.seed)
        elif recalled is not None:
            text = recalled
        else:
            writer = Writer(rng, spec.quality, max(1, target - len(reasoning_tokens)))
            if category == "tool_call":
                english.write_direct_reply(writer, prompt)
            else:
                _write(category, writer, prompt)
            text = writer.text()
        content_tokens = split_tokens(text)
        need = request.min_tokens - len(reasoning_tokens)
        if len(content_tokens) < need:
            while len(content_tokens) < need:  # no end of sequence yet: the model writes on
                more = Writer(rng, spec.quality, need - len(content_tokens))
                _write(category, more, prompt)
                content_tokens += split_tokens("\n\n" + more.text())
            del content_tokens[need:]  # and ends at the first token it may
        if len(content_tokens) >= left:  # vLLM says "length" once max_tokens is reached
            content_tokens = content_tokens[:left]
            finish = "length"
        content = "".join(content_tokens)
        pieces += _chunk(content_tokens, "content", rng)
    else:
        finish = "length"
    return Answer(
        category=category,
        reasoning="".join(reasoning_tokens),
        content=content,
        tool_calls=tuple(calls),
        finish_reason=finish,
        pieces=tuple(pieces),
    )
