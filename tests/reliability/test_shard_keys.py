"""A ``--workers`` shard scrubs every key of the run, not only its own endpoints': a gateway the
endpoints share can quote endpoint b's key in an answer to endpoint a, and a's shard must not
record it."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from aiohttp import web

from nvfp4_tui.bench.shard_process import shard_runner
from nvfp4_tui.config.plan import plan_run
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.core.events import Event
from tests.reliability.hostile_servers import chunk, good_stream, serve
from tests.reliability.runs import hostile_endpoint_toml, write_run_profile

ENV_A, ENV_B = "NVFP4_SHARD_KEY_A", "NVFP4_SHARD_KEY_B"


def gateway(leaked: str) -> web.Application:
    """One server for both endpoints, whose answers quote a key it was sent for another."""

    async def chat(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(chunk(f" the last caller sent Bearer {leaked}"))
        for piece in good_stream(words=2):
            await response.write(piece)
        return response

    async def health(_: web.Request) -> web.Response:
        return web.Response(text="")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/health", health)
    return app


async def test_a_shard_scrubs_another_shards_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_a, key_b = (f"sk-shard-{secrets.token_hex(12)}" for _ in range(2))
    monkeypatch.setenv(ENV_A, key_a)
    monkeypatch.setenv(ENV_B, key_b)
    # Two ports of the same gateway (a profile refuses one URL for two endpoints).
    async with serve(["a", "b"], build=lambda _: gateway(key_b)) as urls:
        path = write_run_profile(
            tmp_path,
            [
                hostile_endpoint_toml("a", urls["a"], api_key_env=ENV_A),
                hostile_endpoint_toml("b", urls["b"], api_key_env=ENV_B),
            ],
            requests=1,
        )
        plan = plan_run(load_profile(path), gpu_telemetry="none")
        events: list[Event] = []
        runner = shard_runner(plan, ["a"], "shard-keys", events.append)
        assert [e.id for e in runner.profile.endpoints] == ["a"]
        assert {key_a, key_b} <= runner.secrets
        await runner.run_endpoints()
    answered = [e for e in events if getattr(e, "answer_text", "")]
    assert answered and all("the last caller sent Bearer ***" in e.answer_text for e in answered)
    assert key_b not in repr(events)
