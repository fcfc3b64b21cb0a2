from __future__ import annotations

from nvfp4_tui.tui.text_fit import fit_words


def test_a_name_that_fits_is_left_whole() -> None:
    assert fit_words("Qwen3.5-27B", 11) == "Qwen3.5-27B"


def test_a_long_name_is_cut_at_a_word_boundary() -> None:
    assert fit_words("Huihui Gemma4-26B-A4B", 16) == "Huihui Gemma4…"
    assert fit_words("Huihui Gemma4-26B-A4B", 19) == "Huihui Gemma4-26B…"
    assert fit_words("Jiunsong SuperGemma4", 12) == "Jiunsong…"


def test_a_first_word_longer_than_the_room_is_cut_inside() -> None:
    assert fit_words("SuperGemma4-26B", 6) == "Super…"
    assert len(fit_words("abcdefghij", 4)) == 4


def test_no_room() -> None:
    assert fit_words("abc", 0) == ""
    assert fit_words("abc", 1) == "…"
