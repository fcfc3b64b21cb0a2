"""Live load of one simulated endpoint: who is running, who waits, and what was observed.

Admission is first come, first served up to ``max_num_seqs`` running requests (vLLM's
scheduler limit) and while the KV cache has room for a request's prompt and answer; the rest
wait. (vLLM admits on the prompt's blocks and preempts when decode outgrows the cache; the
simulator reserves the whole request up front, so it queues where vLLM might preempt.) The counts here drive the token schedule (``running`` is the
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
        self.kv_reserved = 0  # what the running requests were admitted for (prompt and answer)
        self._queue: deque[tuple[asyncio.Future[None], int]] = deque()
        self._last_change = clock()
        self._busy_s = 0.0
        self._running_s = 0.0

    def next_request_number(self) -> int:
        self.received += 1
        return self.received

    async def admit(self, kv_needed: int = 0) -> tuple[int, bool]:
        """Wait for a running slot and room in the KV cache for ``kv_needed`` tokens (its prompt
        and answer); returns how many run now (this request included) and whether it waited.
        First come, first served: a request that does not fit holds back those behind it."""
        queued = bool(self._queue) or not self._fits(kv_needed)
        if queued:
            slot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            entry = (slot, kv_needed)
            self._queue.append(entry)
            self.waiting += 1
            try:
                await slot
            except asyncio.CancelledError:
                if slot.done() and not slot.cancelled():
                    self._leave(kv_needed)  # the slot was handed over just as we gave up
                else:
                    self._queue.remove(entry)
                    self._wake()
                raise
            finally:
                self.waiting -= 1
        else:
            self._enter(kv_needed)
        self.started += 1
        self.max_running = max(self.max_running, self.running)
        self.running_at_start[self.running] += 1
        return self.running, queued

    def release(self, kv_tokens: int, kv_needed: int = 0) -> None:
        """A running request ended, holding ``kv_tokens`` of KV cache until now and having
        been admitted for ``kv_needed``."""
        self.kv_tokens -= kv_tokens
        self._leave(kv_needed)

    def _fits(self, kv_needed: int) -> bool:
        if self.running >= self.max_num_seqs:
            return False
        # A lone request runs whatever its size: vLLM refuses one past the model's context.
        return not self.running or self.kv_reserved + kv_needed <= self.kv_capacity_tokens

    def _enter(self, kv_needed: int) -> None:
        self.kv_reserved += kv_needed
        self._set_running(self.running + 1)

    def _leave(self, kv_needed: int) -> None:
        self.kv_reserved -= kv_needed
        self._set_running(self.running - 1)
        self._wake()

    def _wake(self) -> None:
        """Admit the waiting requests at the head of the queue that now fit."""
        while self._queue and self._fits(self._queue[0][1]):
            slot, kv_needed = self._queue.popleft()
            if not slot.done():
                self._enter(kv_needed)
                slot.set_result(None)

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
            "kv_reserved_tokens": self.kv_reserved,
        }


class PrefixCache:
    """Which leading blocks of a prompt's tokens the endpoint has cached (vLLM's automatic
    prefix caching): whole blocks of ``PREFIX_BLOCK_TOKENS``, each named by a hash of every
    token up to its end, so two prompts share the blocks of their common beginning, whether
    that is a system message or the first 300 tokens of one user message (a trace's)."""

    def __init__(self, max_blocks: int = 1 << 16) -> None:
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._max_blocks = max_blocks

    def hit_tokens(self, blocks: Sequence[bytes]) -> int:
        """Tokens of the prompt's leading ``blocks`` already cached (only those prefilled
        before: a twin that arrives while the first is still in prefill finds nothing)."""
        hits = 0
        for key in blocks:
            if key not in self._seen:
                break
            hits += PREFIX_BLOCK_TOKENS
            self._seen.move_to_end(key)
        return hits

    def remember(self, blocks: Sequence[bytes]) -> None:
        """The prompt's whole blocks, once prefilled, are cached for those that follow."""
        for key in blocks:
            self._seen[key] = None
            self._seen.move_to_end(key)
        while len(self._seen) > self._max_blocks:
            self._seen.popitem(last=False)

    @staticmethod
    def blocks(messages: Sequence[Mapping[str, Any]]) -> list[bytes]:
        """The names of a prompt's whole blocks, made once per request: a 128K-token prompt
        takes tens of milliseconds to cut into tokens."""
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
