"""The Japanese scorer: characters (not words), kana/kanji share, register, asked-for parts."""

from __future__ import annotations

import pytest

from nvfp4_tui.config.checks import PromptCheck, RequiredPart
from nvfp4_tui.scoring.heuristic import score_text
from nvfp4_tui.scoring.japanese import length_score, measure, score_japanese

# 23 counted characters: 10 kanji (町本屋人本出会場所続), 12 kana and 。.
DEARU = "町の本屋は人と本が出会う場所であり続けるのだ。"
# 24 counted characters: the same 10 kanji, 13 kana and 。.
DESUMASU = "町の本屋は人と本が出会う場所であり続けています。"
CHECK = PromptCheck(min_chars=200, max_chars=300, register="dearu")


def test_characters_are_counted_where_the_seed_counted_words():
    essay = "\n\n".join([DEARU * 5] * 2)  # 10 sentences, no spaces
    stats = measure(essay)
    assert stats.chars == 230  # 23 counted characters a sentence
    assert score_text(essay, 200)[1].startswith("words:2|")  # the seed's count: two "words"
    assert (stats.polite_sentences, stats.plain_sentences) == (0, 10)


def test_markdown_latin_and_spaces_are_not_counted():
    stats = measure("# 見出し\n\n**AI** と 本屋。 2025年")
    assert stats.chars == len("見出しと本屋。2025年")
    assert (stats.kana, stats.kanji, stats.latin) == (2, 5, 2)  # しと, 見出本屋年, AI


@pytest.mark.parametrize(
    ("essay", "score", "detail"),
    [
        # Good: 230 characters in range, all Japanese (kana 120/220), all だ・である.
        (DEARU * 10, 1.0, "chars:230(200-300)|kana:55%|kanji:45%|register:dearu 100% of 10"),
        # Partial: 69 + 48 = 117 characters, under 200; two sentences of five in です・ます.
        (
            DEARU * 3 + DESUMASU * 2,
            (117 / 200 + 1.0 + 3 / 5) / 3,
            "chars:117(200-300)|kana:55%|kanji:45%|register:dearu 60% of 5",
        ),
        # Bad: English.
        (
            "Bookshops matter. " * 20,
            (0.0 + 0.0 + 0.0) / 3,
            "chars:0(200-300)|kana:0%|kanji:0%|register:dearu 0% of 0",
        ),
    ],
    ids=["good", "partial", "bad"],
)
def test_japanese_answers(essay, score, detail):
    got_score, got_detail = score_japanese(CHECK, essay)
    assert got_detail == detail
    assert got_score == pytest.approx(score, abs=1e-9)


def test_register_is_read_from_sentence_endings():
    polite = "本が好きです。毎日読みます。「面白い」と言いました。行きましょう！読みますか？"
    plain = "本が好きだ。毎日読む。それは面白い。行こう！読むのか？本屋である。"
    assert (measure(polite).polite_sentences, measure(polite).plain_sentences) == (5, 0)
    assert (measure(plain).polite_sentences, measure(plain).plain_sentences) == (0, 6)
    check = PromptCheck(min_chars=1, register="desumasu")
    assert "register:desumasu 100% of 5" in score_japanese(check, polite)[1]


def test_length_falls_off_in_proportion_outside_the_range():
    assert length_score(100, 200, 300) == 0.5
    assert length_score(250, 200, 300) == 1.0
    assert length_score(600, 200, 300) == 0.5
    assert length_score(10_000, 200, None) == 1.0


def test_asked_parts_add_a_component():
    check = PromptCheck(
        min_chars=10,
        parts=(RequiredPart("failure", ("失敗",)), RequiredPart("tips", ("工夫",))),
    )
    score, detail = score_japanese(check, "料理で失敗したのだ。" * 2)
    assert detail.endswith("|parts:1/2 missing:tips")
    assert score == pytest.approx((1.0 + 1.0 + 0.5) / 3)
