"""The simulator's tokenizer: pieces rebuild the text, counts agree, CJK costs a token a char."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nvfp4_tui.sim.tokens import count_prompt_tokens, count_tokens, split_tokens


@given(st.text(max_size=300))
def test_pieces_rebuild_the_text_and_match_the_count(text: str) -> None:
    pieces = split_tokens(text)
    assert "".join(pieces) == text
    assert len(pieces) == count_tokens(text)
    assert all(pieces)


def test_cjk_is_one_token_per_character() -> None:
    assert count_tokens("日本語のテキスト") == 8


def test_ascii_words_are_about_four_characters_per_token() -> None:
    text = "the quick brown fox jumps over the lazy dog " * 20
    assert 3.0 <= len(text) / count_tokens(text) <= 5.0


def test_prompt_tokens_grow_with_messages_and_tools() -> None:
    one = [{"role": "user", "content": "hello there"}]
    two = [*one, {"role": "assistant", "content": "hi"}]
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    assert count_prompt_tokens(two) > count_prompt_tokens(one)
    assert count_prompt_tokens(one, tools) > count_prompt_tokens(one)
    parts = [{"role": "user", "content": [{"type": "text", "text": "hello there"}]}]
    assert count_prompt_tokens(parts) == count_prompt_tokens(one)
