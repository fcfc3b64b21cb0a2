"""The Japanese scorer: length in characters, the share of kana and kanji, and the register.

The seed counted whitespace-separated words, and unspaced Japanese has almost none, so here the
length is the number of Japanese characters: kana, kanji, Japanese punctuation, full-width forms
and digits (not Latin letters, whitespace or Markdown marks), the way 字数 is counted. Length
earns full marks inside the asked range and falls off in proportion outside it (n / min below,
max / n above). Script: the share of kana and kanji among all letters (kana, kanji, Latin),
full marks from ``JAPANESE_SHARE_FULL``. Register: each sentence that ends in 。！？ is polite
(です・ます: ends in です, ます, でした, ました, ません, ましょう, でしょう, ください, with
か/ね/よ after) or plain (だ・である: anything else); the score is the share in the register
asked for. Required parts, when the check lists them, add their coverage. The score is the mean
of the components present.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nvfp4_tui.config.checks import PromptCheck
from nvfp4_tui.scoring.coverage import coverage

JAPANESE_SHARE_FULL = 0.9
_KANA = re.compile(r"[\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_KANJI = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\u3005]")
_LATIN = re.compile(r"[A-Za-z\uff21-\uff3a\uff41-\uff5a]")
_COUNTED = re.compile(
    r"[\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u4e00-\u9fff\u3400-\u4dbf"
    r"\u3000-\u303f\uff00-\uffef0-9]"
)
_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]")
_CLOSERS = "」』）)】〕\"'”’ \u3000"
_POLITE = re.compile(
    r"(です|ます|でした|ました|ません|ましょう|でしょう|ください|下さい)(か|ね|よ|よね)?$"
)


@dataclass(frozen=True)
class JapaneseStats:
    chars: int  # counted characters (see the module docstring)
    kana: int
    kanji: int
    latin: int
    polite_sentences: int
    plain_sentences: int

    @property
    def japanese_share(self) -> float:
        letters = self.kana + self.kanji + self.latin
        return (self.kana + self.kanji) / letters if letters else 0.0


def measure(text: str) -> JapaneseStats:
    polite = plain = 0
    for sentence in _SENTENCE.findall(text):
        body = sentence.strip().rstrip("。！？!?").rstrip(_CLOSERS)
        if not (_KANA.search(body) or _KANJI.search(body)):
            continue
        if _POLITE.search(body):
            polite += 1
        else:
            plain += 1
    return JapaneseStats(
        chars=len(_COUNTED.findall(text)),
        kana=len(_KANA.findall(text)),
        kanji=len(_KANJI.findall(text)),
        latin=len(_LATIN.findall(text)),
        polite_sentences=polite,
        plain_sentences=plain,
    )


def length_score(chars: int, min_chars: int, max_chars: int | None) -> float:
    if chars < min_chars:
        return chars / min_chars
    if max_chars is not None and chars > max_chars:
        return max_chars / chars
    return 1.0


def score_japanese(check: PromptCheck, answer_text: str) -> tuple[float, str]:
    if check.min_chars is None:
        raise ValueError("a japanese check needs min_chars")
    stats = measure(answer_text)
    span = f"{check.min_chars}-{check.max_chars}" if check.max_chars else f">={check.min_chars}"
    letters = stats.kana + stats.kanji + stats.latin
    components = [
        length_score(stats.chars, check.min_chars, check.max_chars),
        min(stats.japanese_share / JAPANESE_SHARE_FULL, 1.0),
    ]
    details = [
        f"chars:{stats.chars}({span})",
        f"kana:{stats.kana / letters if letters else 0:.0%}",
        f"kanji:{stats.kanji / letters if letters else 0:.0%}",
    ]
    if check.register is not None:
        sentences = stats.polite_sentences + stats.plain_sentences
        asked = stats.polite_sentences if check.register == "desumasu" else stats.plain_sentences
        share = asked / sentences if sentences else 0.0
        components.append(share)
        details.append(f"register:{check.register} {share:.0%} of {sentences}")
    if check.parts:
        part_score, part_detail = coverage(check.parts, answer_text)
        components.append(part_score)
        details.append(part_detail)
    return sum(components) / len(components), "|".join(details)
