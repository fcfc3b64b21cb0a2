"""Live load of one simulated endpoint: who is running, who waits, and what was observed.

Admission is first come, first served up to ``max_num_seqs`` running requests (vLLM's
scheduler limit); the rest wait. The counts here drive the token schedule (``running`` is the
``c`` of the concurrency curve), the Prometheus gauges, ``/sim/stats`` and the simulated GPU.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from nvfp4_tui.sim.kv_cache import KV_POOL_TOKENS_8BIT
from nvfp4_tui.sim.tokens import message_text, split_tokens

PREFIX_BLOCK_TOKENS = 16  # vLLM's default block size: its prefix cache keeps whole blocks

DEFAULT_MAX_NUM_SEQS = 256


class EndpointLoad:
    def __init__(
        self,
        clock: Callable[[], float],
        *,
        max_num_seqs: int = DEFAULT_MAX_NUM_SEQS,
        kv_capacity_tokens: int = KV_POOL_TOKENS_8BIT,
    ) -> None:
        self._clock = clock
        self.max_num_seqs = max_num_seqs
        self.kv_capacity_tokens = kv_capacity_tokens
        self.running = 0
        self.waiting = 0
        self.max_running = 0
        self.received = 0  # chat requests that arrived, rejected ones included
        self.started = 0  # admitted
        self.served = 0  # answered in full
        self.failed = 0  # admitted but not answered in full (fault or client gone)
        self.prompt_tokens = 0
        self.generation_tokens = 0
        self.prefix_queries = 0  # prompt tokens looked up in the prefix cache
        self.prefix_hits = 0
        self.finished: Counter[str] = Counter()  # served requests by finish_reason
        self.kv_tokens = 0
        self.running_at_start: Counter[int] = Counter()
        self.running_while_decoding: Counter[int] = Counter()  # tokens by running count
        self.faults: Counter[str] = Counter()
        self._queue: deque[asyncio.Future[None]] = deque()
        self._last_change = clock()
        self._busy_s = 0.0
        self._running_s = 0.0

    def next_request_number(self) -> int:
        self.received += 1
        return self.received

    async def admit(self) -> tuple[int, bool]:
        """Wait for a running slot; returns how many run now (this request included) and
        whether the request had to wait."""
        queued = self.running >= self.max_num_seqs or bool(self._queue)
        if queued:
            slot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._queue.append(slot)
            self.waiting += 1
            try:
                await slot
            except asyncio.CancelledError:
                if slot.done() and not slot.cancelled():
                    self._release_slot()  # the slot was handed over just as we gave up
                else:
                    self._queue.remove(slot)
                raise
            finally:
                self.waiting -= 1
        else:
            self._set_running(self.running + 1)
        self.started += 1
        self.max_running = max(self.max_running, self.running)
        self.running_at_start[self.running] += 1
        return self.running, queued

    def release(self, kv_tokens: int) -> None:
        """A running request ended, holding ``kv_tokens`` of KV cache until now."""
        self.kv_tokens -= kv_tokens
        self._release_slot()

    def _release_slot(self) -> None:
        while self._queue:
            slot = self._queue.popleft()
            if not slot.done():
                slot.set_result(None)  # the slot passes on; the running count stays
                return
        self._set_running(self.running - 1)

    def _set_running(self, running: int) -> None:
        now = self._clock()
        elapsed = now - self._last_change
        self._busy_s += elapsed if self.running > 0 else 0.0
        self._running_s += elapsed * self.running
        self._last_change = now
        self.running = running

    def integrals(self) -> tuple[float, float]:
        """Seconds with any request running, and request-seconds run, since the start."""
        elapsed = self._clock() - self._last_change
        busy = self._busy_s + (elapsed if self.running > 0 else 0.0)
        return busy, self._running_s + elapsed * self.running

    @property
    def kv_usage(self) -> float:
        return min(1.0, self.kv_tokens / self.kv_capacity_tokens)

    def stats(self) -> dict[str, Any]:
        return {
            "requests_received": self.received,
            "requests_started": self.started,
            "requests_served": self.served,
            "requests_failed": self.failed,
            "in_flight": self.running,
            "waiting": self.waiting,
            "max_in_flight": self.max_running,
            "in_flight_at_start": {str(k): v for k, v in sorted(self.running_at_start.items())},
            "in_flight_while_decoding": {
                str(k): v for k, v in sorted(self.running_while_decoding.items())
            },
            "faults": dict(sorted(self.faults.items())),
            "prompt_tokens": self.prompt_tokens,
            "prefix_hits": self.prefix_hits,
            "generation_tokens": self.generation_tokens,
            "kv_cache_usage": round(self.kv_usage, 6),
        }


class PrefixCache:
    """Which leading blocks of a prompt's tokens the endpoint has cached (vLLM's automatic
    prefix caching): whole blocks of ``PREFIX_BLOCK_TOKENS``, each named by a hash of every
    token up to its end, so two prompts share the blocks of their common beginning, whether
    that is a system message or the first 300 tokens of one user message (a trace's)."""

    def __init__(self, max_blocks: int = 1 << 16) -> None:
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._max_blocks = max_blocks

    def hit_tokens(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of the prompt's leading blocks already cached (only those prefilled before:
        a twin that arrives while the first is still in prefill finds nothing)."""
        hits = 0
        for key in self._block_keys(messages):
            if key not in self._seen:
                break
            hits += PREFIX_BLOCK_TOKENS
            self._seen.move_to_end(key)
        return hits

    def remember(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """The prompt's whole blocks, once prefilled, are cached for those that follow."""
        for key in self._block_keys(messages):
            self._seen[key] = None
            self._seen.move_to_end(key)
        while len(self._seen) > self._max_blocks:
            self._seen.popitem(last=False)

    @staticmethod
    def _block_keys(messages: Sequence[Mapping[str, Any]]) -> list[bytes]:
        tokens: list[str] = []
        for message in messages:
            tokens.append(f"<|{message.get('role')}|>")
            tokens += split_tokens(message_text(message.get("content")))
        digest = hashlib.sha256()
        keys = []
        for start in range(0, len(tokens) - PREFIX_BLOCK_TOKENS + 1, PREFIX_BLOCK_TOKENS):
            digest.update("\x00".join(tokens[start : start + PREFIX_BLOCK_TOKENS]).encode())
            keys.append(digest.digest())
        return keys
