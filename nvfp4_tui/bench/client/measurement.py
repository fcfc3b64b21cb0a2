"""Measurement: one request's numbers, computed once from the attempt that answered it.

Timing follows DESIGN.md "Metric definitions": TTFT and E2E from when the request's bytes went to
the socket, ITL from the gaps between generated chunks (split per token when usage streams per
chunk), decode tok/s over the window after the first chunk.

A token count the stream contradicts (``Stream.usage_doubt``: over max_tokens, or far more tokens
than its text could hold) is not believed: the row is ``error_kind="suspect"``, as the legacy
import marks silent failures, so no rate is computed from it, and the message says what the
server claimed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from nvfp4_tui.bench.client.errors import Failure
from nvfp4_tui.bench.client.stream import INT64_MAX, Attempt, ToolCall
from nvfp4_tui.core.events import SUSPECT_ERROR_KIND, MeasuredFields, RequestStatus
from nvfp4_tui.core.slo import tpot_s
from nvfp4_tui.core.stats import percentile_of_sorted


@dataclass(frozen=True, slots=True)
class Measurement(MeasuredFields):
    """One request's numbers: the fields of ``events.RequestFinished`` the client can know."""


def measure(attempt: Attempt, queue_s: float) -> Measurement:
    """The numbers of one attempt, which waited ``queue_s`` for the client's slot."""
    stream = attempt.stream
    failure = attempt.failure
    sent_at = attempt.sent_at
    times = stream.gen_times
    ttft_s = times[0] - sent_at if times else None
    e2e_s = attempt.ended_at - sent_at
    usage = stream.usage or {}
    details = usage.get("completion_tokens_details")
    details = details if isinstance(details, dict) else {}
    reasoning_tokens = _count(details.get("reasoning_tokens"))
    claimed = usage.get("completion_tokens")
    reported = claimed if type(claimed) is int and claimed >= 0 else None
    doubt = None if reported is None else stream.usage_doubt(reported, reasoning_tokens)
    if doubt is not None:
        reported = None
        if failure is None:
            failure = Failure(SUSPECT_ERROR_KIND, doubt)
    if reported is not None:
        tokens_out, estimated = reported, False
    elif times or failure is None:
        tokens_out, estimated = stream.estimated_tokens(), True
    else:
        tokens_out, estimated = None, False
    counts = stream.gen_tokens if _rising_to(stream.gen_tokens, reported) else []
    samples, per_token = itl_samples(times, counts)
    samples.sort()
    if failure is not None:
        status: RequestStatus = "error"
    else:
        status = "incomplete" if stream.finish_reason == "length" else "ok"
    finished_tokens = tokens_out if failure is None else None
    first_chunk_tokens = first_chunk_tokens_of(stream.gen_tokens)
    if first_chunk_tokens is not None and reported is not None and first_chunk_tokens > reported:
        first_chunk_tokens = None  # more than the whole answer: not a count of its first chunk
    decode_tps = None
    if finished_tokens is not None and ttft_s is not None and e2e_s > ttft_s:
        # The first chunk's tokens were decoded before TTFT: the window after it holds only the
        # rest (DESIGN.md "Decode tok/s"). Counted chunks are one token each, as is a first
        # chunk the server gave no count for.
        k = first_chunk_tokens if first_chunk_tokens is not None and not estimated else 1
        if finished_tokens > k:
            decode_tps = (finished_tokens - k) / (e2e_s - ttft_s)
    tokens_in = _count(usage.get("prompt_tokens"))
    second_at = _second_token_at(times, counts)
    return Measurement(
        status=status,
        queue_s=queue_s,
        setup_s=attempt.setup_s,
        ttft_s=ttft_s,
        ttfa_s=stream.ttfa_at - sent_at if stream.ttfa_at is not None else None,
        ttst_s=None if second_at is None else second_at - sent_at,
        e2e_s=e2e_s,
        itl_p50_s=percentile_of_sorted(samples, 50),
        itl_p95_s=percentile_of_sorted(samples, 95),
        itl_p99_s=percentile_of_sorted(samples, 99),
        itl_max_s=samples[-1] if samples else None,
        tpot_s=tpot_s(ttft_s, e2e_s, finished_tokens),
        itl_per_token=per_token,
        chunks=len(times),
        first_chunk_tokens=first_chunk_tokens,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        reasoning_tokens=reasoning_tokens,
        tokens_estimated=estimated,
        decode_tps=decode_tps,
        e2e_tps=finished_tokens / e2e_s if finished_tokens is not None and e2e_s > 0 else None,
        prefill_tps=tokens_in / ttft_s if tokens_in is not None and ttft_s else None,
        finish_reason=stream.finish_reason if isinstance(stream.finish_reason, str) else None,
        answer_text=_join_text(stream.answer),
        reasoning_text=_join_text(stream.reasoning),
        tool_calls_json=_tool_calls_json(stream.tools),
        error_kind=failure.kind if failure else None,
        error_message=failure.message if failure else None,
        http_status=attempt.http_status,
        retry_after_s=attempt.retry_after_s,
    )


def first_chunk_tokens_of(tokens: list[Any]) -> int | None:
    """Tokens up to and with the first generated chunk, by its cumulative usage, if it had one.

    Usage is cumulative, so tokens decoded before it without text of their own (a tool parser
    holding back a call's head) count too: they also came before TTFT. A count of 0 beside
    generated text is no count.
    """
    count = _count(tokens[0]) if tokens else None
    return count if count else None


def itl_samples(times: list[float], tokens: list[Any]) -> tuple[list[float], bool]:
    """Gaps between generated chunks, split per token when every chunk carried cumulative usage.

    A chunk whose usage did not grow hands its gap on to the next chunk that brings tokens.
    """
    per_token = bool(tokens) and all(type(count) is int for count in tokens)
    if not per_token:
        return [later - earlier for earlier, later in pairwise(times)], False
    samples: list[float] = []
    carried_s = 0.0
    for index in range(1, len(times)):
        gap_s = times[index] - times[index - 1] + carried_s
        count = tokens[index] - tokens[index - 1]
        if count < 1:
            carried_s = gap_s
            continue
        carried_s = 0.0
        if count == 1:
            samples.append(gap_s)
        else:
            samples.extend([gap_s / count] * count)
    return samples, True


def _count(value: Any) -> int | None:
    return value if type(value) is int and 0 <= value <= INT64_MAX else None


def _second_token_at(times: Sequence[float], counts: Sequence[int]) -> float | None:
    """When the second generated token arrived: the first chunk whose running count (the
    server's, per chunk) reaches 2, else, without counts, the second chunk."""
    if counts:
        return next((t for t, c in zip(times, counts, strict=False) if c >= 2), None)
    return times[1] if len(times) > 1 else None


def _rising_to(counts: list[Any], final: int | None) -> bool:
    """Whether per-chunk cumulative counts are believable: whole, never falling, and never past
    the final count that was believed; ITL is split per token only then."""
    if final is None or not counts or any(type(count) is not int for count in counts):
        return False
    return all(a <= b for a, b in pairwise(counts)) and counts[0] >= 0 and counts[-1] <= final


def _join_text(parts: list[Any]) -> str:
    try:
        return "".join(parts)
    except TypeError:  # a server sent a non-string delta; keep what it said
        return "".join(part if isinstance(part, str) else json.dumps(part) for part in parts)


def _tool_calls_json(tools: dict[Any, ToolCall]) -> str | None:
    if not tools:
        return None
    calls = [
        {"id": call.id, "name": call.name, "arguments": "".join(call.arguments)}
        for call in tools.values()  # in order of first appearance, which is index order
    ]
    return json.dumps(calls, ensure_ascii=False)
