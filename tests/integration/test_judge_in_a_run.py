"""A profile's [judge] grades every answer of the suites it has a rubric for, in its own column."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from aiohttp import web

from nvfp4_tui.bench.runner import Runner
from nvfp4_tui.config.profile import ConfigError, load_profile, with_urls
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.events import Event, RequestFinished
from nvfp4_tui.scoring.judge import JUDGE_SCALE
from nvfp4_tui.sim.fleet import SimFleet
from tests.integration.fleet_files import endpoint_toml, write_profile, write_suite

JUDGE = """
[judge]
url = "{url}"
model = "judge"
api_key_env = "NVFP4_TEST_JUDGE_KEY"
[judge.rubrics]
essay = "Reward a clear thesis and concrete examples."
"""


async def start_judge(seen: list[dict]) -> tuple[web.AppRunner, str]:
    async def grade(request: web.Request) -> web.Response:
        seen.append({"body": await request.json(), "auth": request.headers.get("Authorization")})
        verdict = json.dumps({"score": 0.7 * JUDGE_SCALE, "reason": "solid"})
        return web.json_response({"choices": [{"message": {"content": verdict}}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", grade)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


def test_the_judge_scores_answers_in_its_own_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NVFP4_TEST_JUDGE_KEY", "judge-secret")
    write_suite(tmp_path / "suites", "essay", max_tokens=32)
    write_suite(tmp_path / "suites", "other", max_tokens=32)
    seen: list[dict] = []
    records: list[RequestFinished] = []

    def collect(event: Event) -> None:
        if isinstance(event, RequestFinished):
            records.append(event)

    async def run() -> None:
        judge, url = await start_judge(seen)
        path = write_profile(
            tmp_path,
            [endpoint_toml("e0", 0, decode_tps=500.0, ttft_s=0.02)],
            suites=["essay", "other"],
            concurrency=[1],
            requests=2,
        )
        path.write_text(path.read_text() + JUDGE.format(url=url))
        profile = load_profile(path)
        suites = load_suites(profile.suite_dirs, profile.run.suites)
        try:
            async with SimFleet(profile.endpoints, time_scale=10.0) as fleet:
                await Runner(with_urls(profile, fleet.urls), suites, "judged", collect).run()
        finally:
            await judge.cleanup()

    asyncio.run(run())
    essay = [r for r in records if r.suite == "essay"]
    other = [r for r in records if r.suite == "other"]
    assert [r.score_judge for r in essay] == [pytest.approx(0.7)] * 2
    assert all(r.score_judge_detail and "solid" in r.score_judge_detail for r in essay)
    assert all(r.score_judge is None for r in other)  # no rubric for that suite
    assert all(r.score_heuristic is not None for r in records)  # the judge adds, never replaces
    assert len(seen) == 2 and {s["auth"] for s in seen} == {"Bearer judge-secret"}
    assert "Reward a clear thesis" in json.dumps(seen[0]["body"])


def test_a_bad_judge_table_is_a_one_line_error(tmp_path: Path) -> None:
    write_suite(tmp_path / "suites", "essay")
    path = write_profile(
        tmp_path, [endpoint_toml("e0", 0)], suites=["essay"], concurrency=[1], requests=1
    )
    path.write_text(
        path.read_text() + '[judge]\nurl = "http://127.0.0.1:1"\nmodel = "j"\nrubrics = 3\n'
    )
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.problems == [
        f"{path}: judge.rubrics: expected a table of suite name = rubric text, got 3"
    ]
