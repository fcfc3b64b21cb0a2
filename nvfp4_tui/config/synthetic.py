"""Synthetic prompts by length: a suite of generated prompts whose input and output lengths
are drawn from a distribution, as load generators (AIPerf, ``vllm bench serve``) send them.

A suite file of ``kind = "synthetic"`` holds one ``[suite.synthetic]`` table and no prompts::

    [suite]
    kind = "synthetic"
    [suite.synthetic]
    prompts = 200        # distinct prompts generated (a phase that needs more cycles them)
    seed = 0             # the same prompts on every endpoint and in every run with this seed
    ignore_eos = true    # ask the server to write exactly the output length (vLLM's
                         # ignore_eos and min_tokens); false for a server that refuses them
    isl = 512            # input tokens: a fixed length, or a table:
    osl = { dist = "normal", mean = 128, sd = 16, min = 32 }

A length table has ``dist`` (``fixed``, ``normal``, ``uniform`` or ``histogram``) and what that
distribution needs: ``mean`` (fixed, normal), ``sd`` (normal), ``min`` and ``max`` (uniform's
bounds, a normal's clip), or ``lengths`` and ``weights`` (histogram). The command line's
``--synthetic isl=512,osl=128,dist=normal,sd=16`` and ``[run] synthetic = "..."`` say the same in
one line (``parse_synthetic``).

Lengths are counted in the endpoint's tokens: each prompt is that many short common words,
which every tokenizer we know cuts one token each, and the server's ``usage`` says what it
really counted (its chat template adds a few). The report sets asked against received
(``core.figures.lengths``); no tokenizer is loaded, and none is fetched from a hub.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from random import Random
from typing import Any, Literal, get_args

from nvfp4_tui.config.tomlcheck import (
    ConfigError,
    Problems,
    Table,
    a_bool,
    a_list_of,
    a_number,
    an_int,
    one_of,
    show,
    spelt_out,
)

LengthDist = Literal["fixed", "normal", "uniform", "histogram"]
LENGTH_DISTS: tuple[LengthDist, ...] = get_args(LengthDist)
MAX_LENGTH = 1 << 20  # tokens: past any model's context
MAX_PROMPTS = 100_000
DEFAULT_PROMPTS = 100
SYNTHETIC_SUITE = "synthetic"  # the suite ``--synthetic`` and ``[run] synthetic`` make
# Words of at most three letters: with the space before them, one token each in the BPE and
# SentencePiece vocabularies of the models we serve, and in the simulator's tokenizer.
_WORD_TEXT = """the and of to in is it was for on are as his he at be by had not but you all can
    her one our out day get has him how man new now old see two way who boy did its let put say
    she too use sea sun red big cat dog run sit top yes end far few low own set try ask men war
    law air art car cup eye job key map oil pay sky tea age arm bed box bus fan fun gas hat ice
    leg lot mix net pen pot raw row sad six ten web win zoo"""
_WORDS = tuple(_WORD_TEXT.split())
# ``--synthetic`` keys; the per-side ones override the shared ``dist``, ``sd``, ``min``, ``max``.
_SHARED = ("dist", "sd", "min", "max")
_SIDES = ("isl", "osl")
_OPTION_KEYS = (
    *_SIDES,
    *_SHARED,
    *(f"{side}_{key}" for side in _SIDES for key in _SHARED),
    "prompts",
    "seed",
    "ignore_eos",
)
SYNTHETIC_EXAMPLE = "isl=512,osl=128[,dist=normal,sd=16][,prompts=200]"


@dataclass(frozen=True)
class Lengths:
    """How many tokens, drawn once per prompt."""

    dist: LengthDist = "fixed"
    mean: int = 0  # fixed: the length; normal: its mean
    sd: float = 0.0  # normal
    low: int = 1  # uniform's bounds; a normal's draws are clipped to them
    high: int = MAX_LENGTH
    lengths: tuple[int, ...] = ()  # histogram: the lengths, drawn by their weights
    weights: tuple[float, ...] = ()

    def draw(self, rng: Random) -> int:
        if self.dist == "fixed":
            return self.mean
        if self.dist == "uniform":
            return rng.randint(self.low, self.high)
        if self.dist == "histogram":
            return rng.choices(self.lengths, self.weights)[0]
        return min(max(round(rng.gauss(self.mean, self.sd)), self.low), self.high)

    @property
    def label(self) -> str:
        """How the report names it: ``512``, ``normal(512, sd 16)``, ``uniform(64..256)``."""
        if self.dist == "fixed":
            return str(self.mean)
        if self.dist == "uniform":
            return f"uniform({self.low}..{self.high})"
        if self.dist == "histogram":
            return f"histogram({len(self.lengths)} lengths)"
        return f"normal({self.mean}, sd {self.sd:g})"


@dataclass(frozen=True)
class Synthetic:
    """A synthetic suite's recipe: its input and output lengths and how many prompts."""

    isl: Lengths
    osl: Lengths
    prompts: int = DEFAULT_PROMPTS
    seed: int = 0
    ignore_eos: bool = True

    @property
    def label(self) -> str:
        return f"isl {self.isl.label}, osl {self.osl.label}"


@dataclass(frozen=True)
class Asked:
    """The lengths one synthetic prompt asks for, in tokens."""

    tokens_in: int
    tokens_out: int


@dataclass(frozen=True)
class TraceBlocks:
    """A trace request's prompt, built when it is sent: a block of ``block_tokens`` words per
    hash id (the same words for the same id, so requests that share leading ids share that
    prefix), cut or filled with words of this line's own to ``tokens_in``."""

    hash_ids: tuple[int, ...]
    block_tokens: int
    tokens_in: int
    line: int  # the trace's line: what no other request shares

    def text(self) -> str:
        words: list[str] = []
        for hash_id in self.hash_ids:
            if len(words) >= self.tokens_in:
                break
            words += _block(hash_id, self.block_tokens)
        if len(words) < self.tokens_in:
            own = Random(f"trace-line|{self.line}")
            words += own.choices(_WORDS, k=self.tokens_in - len(words))
        return " ".join(words[: self.tokens_in])


@lru_cache(maxsize=4096)
def _block(hash_id: int, tokens: int) -> tuple[str, ...]:
    return tuple(Random(f"trace-block|{hash_id}").choices(_WORDS, k=tokens))


def words_of(rng: Random, count: int) -> str:
    """``count`` short common words, a token each."""
    return " ".join(rng.choices(_WORDS, k=count))


def generated(spec: Synthetic) -> list[tuple[Asked, str]]:
    """Each prompt's lengths and text: ``tokens_in`` words drawn from ``_WORDS``, that many
    tokens give or take a tokenizer. The same for every endpoint and every run with the seed."""
    lengths, words = Random(f"synthetic|{spec.seed}"), Random(f"synthetic-text|{spec.seed}")
    asked = [Asked(spec.isl.draw(lengths), spec.osl.draw(lengths)) for _ in range(spec.prompts)]
    return [(one, words_of(words, one.tokens_in)) for one in asked]


_LENGTH = an_int(1, MAX_LENGTH)
_LENGTH_EXPECTED = f"an integer from 1 to {MAX_LENGTH}"


def _read_lengths(table: Table, key: str) -> Lengths | None:
    """One side's lengths: an integer (fixed), or a table with its ``dist``."""
    table.read.add(key)
    raw = table.data.get(key)
    name = f"{table.key}.{key}" if table.key else key
    if raw is None:
        table.problems.add(name, f"missing; expected {_LENGTH_EXPECTED} or a table")
        return None
    if not isinstance(raw, dict):
        length = _LENGTH(raw)
        if length is None:
            table.problems.add(name, f"expected {_LENGTH_EXPECTED} or a table, got {show(raw)}")
            return None
        return Lengths(mean=length)
    side = Table(raw, name, table.problems)
    before = len(table.problems.lines)
    dist = side.get("dist", one_of(*LENGTH_DISTS), spelt_out(LENGTH_DISTS), "fixed")
    needs = {
        "fixed": ("mean",),
        "normal": ("mean", "sd"),
        "uniform": ("min", "max"),
        "histogram": ("lengths", "weights"),
    }.get(dist or "", ())
    mean = side.get("mean", _LENGTH, _LENGTH_EXPECTED) if "mean" in needs else None
    sd = side.get("sd", a_number(above=0), "a number > 0") if "sd" in needs else None
    clip = dist == "normal"
    low = high = None
    if clip or "min" in needs:  # uniform's bounds are required, a normal's clip is not
        low = side.get("min", _LENGTH, _LENGTH_EXPECTED, *([1] if clip else []))
        high = side.get("max", _LENGTH, _LENGTH_EXPECTED, *([MAX_LENGTH] if clip else []))
    lengths = weights = None
    if dist == "histogram":
        lengths = side.get("lengths", a_list_of(_LENGTH), f"a list of {_LENGTH_EXPECTED}")
        weights = side.get("weights", a_list_of(a_number(above=0)), "a list of numbers > 0")
    _refuse_unused(side, dist, needs, clip)
    side.finish()
    if low is not None and high is not None and low > high:
        side.problems.add(f"{side.key}.min", f"{low} is above max {high}")
    if lengths and weights and len(lengths) != len(weights):
        side.problems.add(f"{side.key}.weights", f"expected {len(lengths)} weights, one per length")
    if len(table.problems.lines) > before or dist is None:
        return None
    return Lengths(
        dist=dist,
        mean=mean or 0,
        sd=sd or 0.0,
        low=low or 1,
        high=high or MAX_LENGTH,
        lengths=lengths or (),
        weights=weights or (),
    )


def _refuse_unused(side: Table, dist: str | None, needs: tuple[str, ...], clip: bool) -> None:
    """A key the distribution does not read is a mistake the user should hear of."""
    used = set(needs) | ({"min", "max"} if clip else set())
    for key in ("mean", "sd", "min", "max", "lengths", "weights"):
        side.read.add(key)
        if key in side.data and key not in used and dist is not None:
            side.problems.add(f"{side.key}.{key}", f'not used by dist = "{dist}"')


def read_synthetic(table: Table) -> Synthetic | None:
    """A ``[suite.synthetic]`` table (or the table ``parse_synthetic`` makes of one line)."""
    before = len(table.problems.lines)
    isl = _read_lengths(table, "isl")
    osl = _read_lengths(table, "osl")
    prompts = table.get(
        "prompts", an_int(1, MAX_PROMPTS), f"an integer from 1 to {MAX_PROMPTS}", DEFAULT_PROMPTS
    )
    seed = table.get("seed", an_int(0), "an integer >= 0", 0)
    ignore_eos = table.get("ignore_eos", a_bool, "true or false", True)
    table.finish()
    if len(table.problems.lines) > before or isl is None or osl is None:
        return None
    return Synthetic(isl=isl, osl=osl, prompts=prompts, seed=seed, ignore_eos=ignore_eos)


def _option_value(raw: str) -> Any:
    """A ``key=value`` value as TOML would read it: an integer, a number, a boolean or text."""
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            continue
    return {"true": True, "false": False}.get(raw, raw)


def parse_synthetic(text: str, where: str) -> Synthetic:
    """``isl=512,osl=128[,dist=normal,sd=16,...]`` as a recipe; ConfigError names ``where``
    (``--synthetic``, or the profile's ``run.synthetic``) and the key."""
    problems = Problems(Path(where))
    flat: dict[str, Any] = {}
    for part in (p.strip() for p in text.split(",")):
        key, equals, value = part.partition("=")
        if not equals or not key.strip() or not value.strip():
            problems.add("", f"expected key=value pairs such as {SYNTHETIC_EXAMPLE}, got {part!r}")
            continue
        flat[key.strip()] = _option_value(value.strip())
    keys = Table(flat, "", problems)
    keys.read.update(_OPTION_KEYS)
    keys.finish()
    problems.raise_if_any()
    for side in _SIDES:  # what a table would not let through, said in the line's own keys
        dist = flat.get(f"{side}_dist", flat.get("dist"))
        if dist == "histogram":
            problems.add(side, "dist=histogram needs lengths and weights: write it in a suite file")
        elif dist == "uniform" and side in flat:
            problems.add(side, f"not used with dist=uniform: give {side}_min and {side}_max alone")
    problems.raise_if_any()
    nested: dict[str, Any] = {k: flat[k] for k in ("prompts", "seed", "ignore_eos") if k in flat}
    for side in _SIDES:
        shape = {
            key: flat[f"{side}_{key}"] if f"{side}_{key}" in flat else flat[key]
            for key in _SHARED
            if f"{side}_{key}" in flat or key in flat
        }
        if side in flat:
            shape["mean"] = flat[side]
        nested[side] = shape if len(shape) > 1 or "mean" not in shape else shape["mean"]
        if not shape:
            del nested[side]
    spec = read_synthetic(Table(nested, "", problems))
    problems.raise_if_any()
    if spec is None:  # every reason was reported above
        raise ConfigError([f"{where}: expected {SYNTHETIC_EXAMPLE}"])
    return spec


__all__ = [
    "LENGTH_DISTS",
    "SYNTHETIC_SUITE",
    "Asked",
    "Lengths",
    "Synthetic",
    "generated",
    "parse_synthetic",
    "read_synthetic",
]
