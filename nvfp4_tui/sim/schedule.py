"""The simulator's token schedule as pure functions: what a measurement should find.

The server times every stream with these functions, so tests and other modules can compare what
they measure against the same numbers. All results are in simulated seconds; a server running
with ``time_scale`` k serves the same schedule k times faster (divide by k).

- TTFT = (ttft_s + prompt_tokens / prefill_tps) / factor(c): a busier batch slows prefill the
  same way it slows decode (``c`` counts the requests running when this one is admitted,
  itself included).
- Decode: each token takes 1 / (decode_tps * factor(c) * kv(tokens)), with ``c`` the requests
  running at the moment that token is scheduled and ``tokens`` what they hold in the KV cache
  then. kv() is 1 when the cache served takes the bytes of the one measured, else the speed
  change of ``sim.kv_cache`` (a decode step reads every running request's context), times
  its slowdown past the contexts the speeds were declared at (``context_speed_factor``).
- factor(c) interpolates ``concurrency_curve`` linearly; beyond its last point the aggregate
  throughput stays at the last point's value, so factor(c) = factor(last) * last / c.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise

from nvfp4_tui.config.profile import SimSpec
from nvfp4_tui.sim.kv_cache import context_speed_factor, kv_speed_factor


def concurrency_factor(curve: Sequence[tuple[int, float]], concurrency: int) -> float:
    """Per-request decode speed at ``concurrency`` relative to concurrency 1."""
    if concurrency <= curve[0][0]:
        return curve[0][1]
    for (c0, f0), (c1, f1) in pairwise(curve):
        if concurrency <= c1:
            return f0 + (f1 - f0) * (concurrency - c0) / (c1 - c0)
    last_c, last_f = curve[-1]
    return last_f * last_c / concurrency


def decode_tps_at(spec: SimSpec, concurrency: int, kv_tokens: int = 0) -> float:
    """Decode tokens per second of one request while ``concurrency`` requests run, holding
    ``kv_tokens`` in the KV cache together (prompts and the tokens generated so far)."""
    factor = concurrency_factor(spec.concurrency_curve, concurrency)
    context = context_speed_factor(spec, kv_tokens, concurrency)
    return spec.decode_tps * factor * kv_speed_factor(spec, kv_tokens) * context


def aggregate_tps_at(spec: SimSpec, concurrency: int, kv_tokens: int = 0) -> float:
    """Tokens per second of the whole endpoint while ``concurrency`` requests decode."""
    return decode_tps_at(spec, concurrency, kv_tokens) * concurrency


def token_interval_s(spec: SimSpec, concurrency: int, kv_tokens: int = 0) -> float:
    """Simulated seconds between two tokens of one request."""
    return 1.0 / decode_tps_at(spec, concurrency, kv_tokens)


def expected_ttft_s(spec: SimSpec, prompt_tokens: int, concurrency: int = 1) -> float:
    """Time to first token of a request admitted while ``concurrency`` requests run."""
    prefill_s = spec.ttft_s + prompt_tokens / spec.prefill_tps
    return prefill_s / concurrency_factor(spec.concurrency_curve, concurrency)


def expected_e2e_s(
    spec: SimSpec, prompt_tokens: int, completion_tokens: int, concurrency: int = 1
) -> float:
    """End-to-end latency when ``concurrency`` requests of this shape run in step for the whole
    request (each holding its prompt and the tokens generated so far)."""
    decode_s = math.fsum(
        token_interval_s(spec, concurrency, concurrency * (prompt_tokens + generated))
        for generated in range(1, completion_tokens)
    )
    return expected_ttft_s(spec, prompt_tokens, concurrency) + decode_s
