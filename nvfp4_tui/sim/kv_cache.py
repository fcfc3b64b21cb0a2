"""What the KV cache's settings change on a simulated vLLM server: a small model, not a measurement.

A profile's ``decode_tps``, ``concurrency_curve`` and ``vram_used_mib`` are what the endpoint
showed with the settings in ``measured_with`` (by default the ones it serves: ``kv_cache_dtype``
and ``gpu_memory_utilization``). Serving other settings moves them, each from that measurement:

- **Bytes per token.** An 8-bit cache (every ``fp8*``) takes half the bytes of a 16-bit one
  (``bfloat16``, or ``auto``: the model's own dtype, bf16 for the seed's models).
- **Capacity.** vLLM pre-allocates the cache from ``gpu_memory_utilization``: the pool has the
  same bytes whatever the dtype, so an 8-bit cache holds twice the tokens. ``num_gpu_blocks`` in
  ``cache_config_info`` doubles and ``kv_cache_usage_perc`` fills half as fast. (A utilisation's
  effect on the pool's size is left out: the capacity is the measured one's, by its bytes.)
- **Decode speed.** A decode step reads the weights once for the whole batch and every running
  request's whole context from the cache. With ``x`` the tokens the running requests hold over
  ``KV_READ_REF_TOKENS``, a step takes ``(1 - s) + s * x * bytes / 2`` (``s`` = ``KV_READ_SHARE``,
  the cache's share of a step holding the reference tokens in 16 bits; the rest of the step is
  taken as fixed). Speeds scale by the ratio of that time with the measured dtype to that with
  the served one, so an 8-bit cache decodes faster by more as requests or contexts grow: about
  1.5 % for one request of 600 tokens, 6 % for four, 11 % for eight. The seed reports no speed
  with a 16-bit cache (every run it shows used FP8), so ``s`` is an assumption: a 3B-active NVFP4
  MoE reads about 2 GB of weights a step, and 1,024 tokens of a GQA cache at ~100 KB each are
  5 % of that. Prefill is compute-bound and keeps its time.
- **Long contexts.** The declared speeds hold for contexts up to ``CONTEXT_REF_TOKENS`` a
  running request (what the seed's prompts and answers hold); past that, a step reads more of the
  cache than the measurement's did and takes the longer time of the same formula:
  ``step(x) / step(running * CONTEXT_REF_TOKENS / KV_READ_REF_TOKENS)``. One request of 128K
  tokens decodes about 4x slower than at 4K with an 8-bit cache, 6x with a 16-bit one.
- **Used VRAM** is the budget vLLM takes, ``gpu_memory_utilization`` of the card, whatever the
  dtype: a changed utilisation moves it by its share of the card, a changed dtype not at all.
  The seed's own pair of runs (87,200 MiB with ``auto``, 92,470 MiB with ``fp8`` on GPU 0) reads
  0.89 and 0.945 of its 97,887 MiB card: its compose file sets ``GPU_MEMORY_UTILIZATION=0.95``,
  and 87,200 is what vLLM's default of 0.9 takes, so that step was the utilisation's.
"""

from __future__ import annotations

from nvfp4_tui.config.profile import SimSpec

KV_READ_SHARE = 0.05
KV_READ_REF_TOKENS = 1024
# A 96 GB card at 128K context with an FP8 cache, roughly; a 16-bit cache holds half.
KV_POOL_TOKENS_8BIT = 524_288
KV_BLOCK_SIZE = 16  # vLLM's default block size, in tokens
CONTEXT_REF_TOKENS = 4096  # per running request: the contexts the declared speeds were read at


def kv_bytes(dtype: str) -> int:
    """Bytes per cached element: 1 for the ``fp8*`` caches, 2 for ``auto`` and ``bfloat16``."""
    return 1 if dtype.startswith("fp8") else 2


def kv_capacity_tokens(spec: SimSpec) -> int:
    """The cache's tokens: the pool (the profile's ``kv_cache_tokens``, else a 96 GB card's)
    in its dtype; the pool's bytes are the same whatever the dtype, so 16 bits hold half."""
    pool = spec.kv_cache_tokens if spec.kv_cache_tokens is not None else KV_POOL_TOKENS_8BIT
    return pool // kv_bytes(spec.kv_cache_dtype)


def _step(bytes_per_element: int, x: float) -> float:
    return (1.0 - KV_READ_SHARE) + KV_READ_SHARE * x * bytes_per_element / 2


def kv_speed_factor(spec: SimSpec, kv_tokens: int) -> float:
    """Decode speed with the served cache relative to the measured one, while the running
    requests hold ``kv_tokens`` in the cache; exactly 1 when both take the same bytes."""
    served, reference = kv_bytes(spec.kv_cache_dtype), kv_bytes(spec.measured.kv_cache_dtype)
    if served == reference:
        return 1.0
    x = max(kv_tokens, 0) / KV_READ_REF_TOKENS
    return _step(reference, x) / _step(served, x)


def context_speed_factor(spec: SimSpec, kv_tokens: int, running: int) -> float:
    """Decode speed with ``running`` requests holding ``kv_tokens`` relative to the declared
    one: 1 up to ``CONTEXT_REF_TOKENS`` a request, slower past it."""
    served = kv_bytes(spec.kv_cache_dtype)
    reference = max(running, 1) * CONTEXT_REF_TOKENS / KV_READ_REF_TOKENS
    x = max(kv_tokens, 0) / KV_READ_REF_TOKENS
    return 1.0 if x <= reference else _step(served, reference) / _step(served, x)


def vram_used_mib(spec: SimSpec) -> float:
    """Used VRAM with the served utilisation: the declared figure moved by the difference's
    share of the card, within the card."""
    change = spec.gpu_memory_utilization - spec.measured.gpu_memory_utilization
    if change == 0:
        return spec.vram_used_mib
    return min(max(spec.vram_used_mib + change * spec.vram_total_mib, 0.0), spec.vram_total_mib)
