"""The simulator's tokenizer: deterministic, cheap, and the only source of its token counts.

Roughly four characters per token for ASCII words and runs of one punctuation mark, one token
per CJK character or other punctuation mark, digits in groups of three. ``split_tokens`` returns pieces whose concatenation is the input,
so the stream can send exactly the tokens it counts in ``usage``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

_CHARS_PER_TOKEN = 4
_SPACES_PER_TOKEN = 8  # indentation and alignment runs are cheap, as in code-trained tokenizers
# Alternatives in order; the last one matches any character, so every input is covered.
# Runs of one ASCII punctuation mark ("-----", "====") go four to a token, like words.
_PIECE = re.compile(
    r" ?[A-Za-z]+| ?[0-9]{1,3}|\n+| {2,}|([!-/:-@\[-`{-~])\1+| ?[^\sA-Za-z0-9]|[\s\S]"
)
# Overheads a chat template adds (role markers, turn separators), as small fixed counts.
_TOKENS_PER_MESSAGE = 4
_TOKENS_PER_PROMPT = 3


def split_tokens(text: str) -> list[str]:
    """The text cut into tokens; ``"".join(split_tokens(t)) == t``."""
    tokens: list[str] = []
    for match in _PIECE.finditer(text):
        piece = match.group(0)
        width = _SPACES_PER_TOKEN if piece.startswith("  ") else _CHARS_PER_TOKEN
        if len(piece) <= width:
            tokens.append(piece)
        else:
            tokens.extend(piece[i : i + width] for i in range(0, len(piece), width))
    return tokens


def count_tokens(text: str) -> int:
    total = 0
    for match in _PIECE.finditer(text):
        piece = match.group(0)
        width = _SPACES_PER_TOKEN if piece.startswith("  ") else _CHARS_PER_TOKEN
        total += -(-len(piece) // width)
    return total


def message_text(content: Any) -> str:
    """The text of a chat message's ``content``: a string or a list of ``{"type":"text"}`` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


def count_prompt_tokens(
    messages: Iterable[Mapping[str, Any]], tools: list[Any] | None = None
) -> int:
    """Tokens of a chat prompt as the simulated chat template renders it."""
    total = _TOKENS_PER_PROMPT
    for message in messages:
        total += _TOKENS_PER_MESSAGE + count_tokens(message_text(message.get("content")))
        for call in message.get("tool_calls") or ():
            total += count_tokens(json.dumps(call, ensure_ascii=False))
    if tools:
        total += count_tokens(json.dumps(tools, ensure_ascii=False))
    return total
