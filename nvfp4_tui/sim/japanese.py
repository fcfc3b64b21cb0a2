"""Japanese essays (seasonal words, metaphors) for the simulated models.

The essays are in だ・である調 unless the prompt asks for です・ます調, and run to the token
budget unless the prompt asks for a length in characters (八百字程度, 六百字から千字). A strong
model follows both requests; a weaker one slips into the other register now and then, and misses
the length by more.
"""

from __future__ import annotations

import re

from nvfp4_tui.sim.writer import Writer

_QUOTED = re.compile(r"「([^」]{2,40})」")
_DEFAULT_THEME = "技術と文化のこれから"

_BANK: dict[str, tuple[str, ...]] = {
    "kigo": (
        "若葉",
        "木漏れ日",
        "春霞",
        "蝉時雨",
        "夕立",
        "秋風",
        "紅葉",
        "初霜",
        "雪明かり",
        "花冷え",
        "朧月",
        "虫の音",
    ),
    "metaphor": (
        "一枚の鏡",
        "まだ誰も歩いていない雪原",
        "風のない湖面",
        "遠くで鳴る鐘",
        "編みかけの布",
        "夜明け前の空",
        "古い楽譜",
        "潮の満ち引き",
    ),
    "example": (
        "写真",
        "作曲",
        "書道",
        "翻訳",
        "建築設計",
        "俳句",
        "映画の脚本",
        "料理",
        "舞台照明",
        "染織",
    ),
    "actor": ("人間", "作り手", "受け手", "職人", "若い世代", "私たち"),
}

_SENTENCES = (
    "{kigo}の季節になると、{actor}はふと立ち止まり、{theme}について考える。",
    "{theme}とは、まるで{metaphor}のようなものである。",
    "たとえば{example}の世界では、機械が差し出す無数の候補の中から、{actor}がひとつを選び取る。",
    "そこでは、選ぶという行為そのものが新しい表現の核になりつつある。",
    "かつて写真が絵画の役割を問い直したように、{example}もまた静かに変わり始めている。",
    "{actor}の手の揺らぎや迷いは、効率の物差しでは測れない価値を持つのだろう。",
    "しかし、便利さの陰で失われるものがないとは言い切れない。",
    "{kigo}は毎年同じように訪れるが、それを眺める心は同じではない。",
    "{example}の現場では、道具が変わるたびに、{actor}が自分の仕事の意味を問い直してきた。",
    "文化とは完成された作品の集まりではなく、問いを受け渡していく営みなのかもしれない。",
    "機械は疲れを知らないが、{kigo}の匂いを懐かしむこともない。",
    "その隔たりこそが、共に作ることの出発点になるのではないか。",
    "{metaphor}に小石を投げれば、波紋はゆっくりと広がっていく。",
    "{theme}をめぐる議論は、しばしば賛成か反対かの二択に押し込められてしまう。",
    "だが、本当に問うべきは関わり方の質である。",
    "{actor}が問いを立て、機械が応え、その応えがまた新しい問いを生む。",
    "この往復の中にこそ、まだ名前のない文化の芽があるのだろう。",
    "{example}においても、最後に責任を引き受けるのは{actor}である。",
    "{kigo}の下で交わされる言葉は、どこか{metaphor}に似ている。",
    "効率だけを求めるなら、{example}はもっと早く、もっと安くなるだろう。",
)

_ENDINGS = (
    "答えはまだ、{kigo}の向こうに霞んでいる。",
    "その行方を見届けるのは、きっとこれからの{actor}なのだろう。",
    "{metaphor}に映るものが何であるのか、私たちはまだ知らない。",
)
_FLAT_ENDING = "以上の理由から、{theme}は新しい文化を生むと言える。"

_POLITE_SENTENCES = (
    "{kigo}の季節になると、{actor}はふと立ち止まり、{theme}について考えます。",
    "{theme}は、まるで{metaphor}のようなものです。",
    "たとえば{example}の世界では、{actor}が無数の候補の中からひとつを選び取ります。",
    "そこでは、選ぶという行為そのものが新しい表現の核になりつつあります。",
    "{example}もまた、道具が変わるたびに静かに姿を変えてきました。",
    "{actor}の手の揺らぎや迷いには、効率の物差しでは測れない価値があるのでしょう。",
    "便利さの陰で失われるものがないとは、言い切れません。",
    "{kigo}は毎年同じように訪れますが、それを眺める心は同じではありません。",
    "文化とは、問いを受け渡していく営みなのかもしれません。",
    "{metaphor}に小石を投げれば、波紋はゆっくりと広がっていきます。",
    "本当に問うべきなのは、関わり方の質ではないでしょうか。",
    "{example}においても、最後に責任を引き受けるのは{actor}です。",
)
_POLITE_ENDINGS = (
    "答えはまだ、{kigo}の向こうに霞んでいます。",
    "その行方を見届けるのは、きっとこれからの{actor}でしょう。",
)
_POLITE_ASKED = re.compile(r"です[・･]?ます")
_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")}
_UNITS = {"十": 10, "百": 100, "千": 1000}
_LENGTH = re.compile(
    r"([0-9〇一二三四五六七八九十百千]+)字?から([0-9〇一二三四五六七八九十百千]+)字|"
    r"([0-9〇一二三四五六七八九十百千]+)字"
)
_CLOSING_CHARS = 120  # about what the closing paragraph adds


def _number(text: str) -> int:
    """A count written in digits or kanji numerals (八百, 千二百)."""
    if text.isdigit():
        return int(text)
    total, digit = 0, 0
    for ch in text:
        if ch in _DIGITS:
            digit = _DIGITS[ch]
        else:
            total += (digit or 1) * _UNITS[ch]
            digit = 0
    return total + digit


def asked_chars(prompt: str) -> int | None:
    """The length in characters the prompt asks for (the middle of a range), if any."""
    m = _LENGTH.search(prompt)
    if m is None:
        return None
    if m.group(3):
        return _number(m.group(3))
    return (_number(m.group(1)) + _number(m.group(2))) // 2


def _chars(w: Writer) -> int:
    return sum(len("".join(block.split())) for block in w.blocks)


def write_essay(w: Writer, prompt: str) -> None:
    """A literary essay on the prompt's 「theme」; a strong model ends on a lingering note."""
    quoted = _QUOTED.search(prompt)
    slots = {**_BANK, "theme": (quoted.group(1) if quoted else _DEFAULT_THEME,)}
    w.add(f"# {slots['theme'][0]}")
    polite = _POLITE_ASKED.search(prompt) is not None
    follows = 0.2 + 0.8 * w.quality  # the chance a paragraph keeps to the register asked for
    aim = asked_chars(prompt)
    if aim is not None:  # a weaker model misses the asked length by more, mostly overshooting
        aim = round(
            aim * (1 + w.rng.uniform(-0.08, 0.08) + (1 - w.quality) * w.rng.uniform(-0.5, 0.9))
        )

    def sentences() -> tuple[str, ...]:
        return _POLITE_SENTENCES if polite == w.chance(follows) else _SENTENCES

    closing_reserve = 80
    while w.tokens + closing_reserve < w.target_tokens:
        if aim is not None and _chars(w) + _CLOSING_CHARS >= aim:
            break
        w.add(w.paragraph(sentences(), slots, joiner="", reserve=closing_reserve))
    polite_ending = polite == w.chance(follows)
    if w.chance(w.quality):
        ending = w.rng.choice(_POLITE_ENDINGS if polite_ending else _ENDINGS)
    else:
        ending = _FLAT_ENDING
    closing = w.paragraph(_POLITE_SENTENCES if polite_ending else _SENTENCES, slots, joiner="")
    w.add(closing + w.fill(ending, slots))
