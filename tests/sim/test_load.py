"""Admission beyond max_num_seqs: first come, first served, and nothing leaks on cancel."""

from __future__ import annotations

import asyncio

from nvfp4_tui.sim.load import PREFIX_BLOCK_TOKENS, EndpointLoad, PrefixCache


async def test_requests_beyond_the_limit_wait_in_order() -> None:
    load = EndpointLoad(asyncio.get_running_loop().time, max_num_seqs=2)
    assert await load.admit() == (1, False)
    assert await load.admit() == (2, False)
    order: list[int] = []

    async def waiter(n: int) -> None:
        await load.admit()
        order.append(n)

    third = asyncio.create_task(waiter(3))
    fourth = asyncio.create_task(waiter(4))
    await asyncio.sleep(0)
    assert load.waiting == 2 and load.running == 2
    load.release(0)
    await asyncio.sleep(0)
    assert order == [3] and load.running == 2 and load.waiting == 1
    fourth.cancel()
    await asyncio.gather(third, fourth, return_exceptions=True)
    assert load.waiting == 0
    load.release(0)
    load.release(0)
    assert load.running == 0 and load.max_running == 2
    assert dict(load.running_at_start) == {1: 1, 2: 2}


async def test_a_slot_handed_to_a_cancelled_waiter_passes_on() -> None:
    load = EndpointLoad(asyncio.get_running_loop().time, max_num_seqs=1)
    await load.admit()
    first = asyncio.create_task(load.admit())
    second = asyncio.create_task(load.admit())
    await asyncio.sleep(0)
    load.release(0)  # hands the slot to ``first``...
    first.cancel()  # ...which gives up before it runs
    await asyncio.gather(first, return_exceptions=True)
    assert await asyncio.wait_for(second, 1) == (1, True)
    assert load.running == 1 and load.waiting == 0


def test_busy_and_running_integrals() -> None:
    now = [0.0]
    load = EndpointLoad(lambda: now[0])
    load._set_running(2)
    now[0] = 3.0
    load._set_running(0)
    now[0] = 5.0
    assert load.integrals() == (3.0, 6.0)


def test_prefix_cache_counts_the_whole_leading_blocks_seen_before() -> None:
    """vLLM's way: whole blocks of 16 tokens, shared wherever two prompts begin alike, within
    one message or across messages; a partial last block is never a hit, and a prompt is
    found only once it was prefilled (remembered)."""
    cache = PrefixCache()
    words = [f" {a}{b}" for a in "pqrs" for b in "abcdefghij"]  # 40, one simulated token each
    system = {"role": "system", "content": "".join(words[:20])}  # 21 tokens with its role
    user = {"role": "user", "content": "".join(words[20:])}

    def sent(*messages: dict[str, str]) -> int:
        hits = cache.hit_tokens(PrefixCache.blocks(messages))
        cache.remember(PrefixCache.blocks(messages))
        return hits

    assert cache.hit_tokens(PrefixCache.blocks([system, user])) == 0
    # Looked up, not yet prefilled: no hit.
    assert cache.hit_tokens(PrefixCache.blocks([system, user])) == 0
    assert sent(system, user) == 0
    # The system message's first 16 tokens fill a block; its last 5 fall in the next.
    assert sent(system, {"role": "user", "content": " x"}) == PREFIX_BLOCK_TOKENS
    assert sent(system, user) == 2 * PREFIX_BLOCK_TOKENS  # 42 tokens: 2 blocks
    one = {"role": "user", "content": "".join(words)}
    assert sent(one) == 0  # a different first token: nothing shared
    longer = {"role": "user", "content": "".join(words) + " tail more"}
    assert sent(longer) == 2 * PREFIX_BLOCK_TOKENS  # within one message
