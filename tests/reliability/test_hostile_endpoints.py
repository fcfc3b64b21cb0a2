"""Hostile endpoints (issue 15, items 8-12 and 14): each server misbehaves in one way; the row says
what happened, keeps what was measured before it, and the client's work stays bounded. A bad
/metrics body stays its endpoint's problem."""

from __future__ import annotations

import asyncio
import gzip
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from nvfp4_tui.bench.client import ChatRequest, EndpointClient, Measurement, Timeouts
from nvfp4_tui.bench.client.budget import EventBudget
from nvfp4_tui.bench.client.endpoint import DRAIN_WAIT_S, MEASURED_ON_LOOP_CHUNKS, SLICE_BYTES
from nvfp4_tui.bench.client.stream import Stream
from nvfp4_tui.bench.progress import TokenMeter
from nvfp4_tui.bench.sse import SseParser
from nvfp4_tui.config.plan import LaunchPlan, plan_run
from nvfp4_tui.config.profile import ReplyLimits, load_profile
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.core.figures.board import pareto_axes, pareto_points
from nvfp4_tui.core.figures.scores import HEURISTIC
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.scoring.judge import JudgeConfig, judge_answer
from nvfp4_tui.telemetry.prometheus import MetricsStatus, PrometheusScraper
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.screens.leaderboard import LeaderboardScreen
from tests.bench.scripted_server import DONE, Handler, chunk, play, serve, serve_client, usage
from tests.profile.test_profile import GOOD, write
from tests.reliability.runs import hostile_endpoint_toml, record_run, write_run_profile
from tests.support.factories import endpoint_info, seeded_run
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import settle
from tests.telemetry.fakes import EngineState, endpoint, vllm_metrics_text

HELLO = ChatRequest(messages=({"role": "user", "content": "hi"},), max_tokens=64)
SMALL = ReplyLimits(max_answer_bytes=4096, max_event_bytes=2048, max_chunks=100)
SECRET = "sk-hostile-5ecret-value"
GOOD_STREAM = [
    chunk("a"),
    chunk("b"),
    chunk(finish="stop"),
    chunk(usage=usage(3, 2), choices=False),
]
HELD_S = 60.0  # how long a server holds a body's end open after [DONE]
ENDLESS_BYTES = 8 << 20  # what an endless server writes at most, so a failing test still ends


@dataclass
class Endless:
    """A server writing ``prefix`` then ``piece`` over and over; notes if the client hung up."""

    prefix: list[bytes]
    piece: bytes
    hung_up: bool = False

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            for piece in self.prefix:
                await response.write(piece)
            for _ in range(ENDLESS_BYTES // len(self.piece)):
                await response.write(self.piece)
        except (ConnectionError, RuntimeError, asyncio.CancelledError):
            # Which one depends on where the write was when the client left.
            self.hung_up = True
            raise
        return response


async def chat(
    handler: Handler, limits: ReplyLimits = SMALL, request: ChatRequest = HELLO, **options
) -> Measurement:
    async with serve_client(handler, limits=limits, **options) as (_, client):
        return await client.chat(request)


def assert_kind(m: Measurement, kind: str, *words: str) -> None:
    assert m.status == "error" and m.error_kind == kind, (m.error_kind, m.error_message)
    for word in words:
        assert m.error_message is not None and word in m.error_message, m.error_message
    assert m.decode_tps is None and m.e2e_tps is None


# ---- 8: bounds on what one reply may hold ----------------------------------------------------


async def test_data_lines_without_a_blank_line_end_too_large_with_what_came_before() -> None:
    server = Endless([chunk("a"), chunk("b")], b"data: " + b"x" * 94 + b"\n")
    m = await chat(server)
    assert_kind(m, "too_large", "2048 bytes", "run.max_event_bytes")
    assert (m.chunks, m.answer_text) == (2, "ab") and m.ttft_s is not None
    assert server.hung_up  # the client stopped reading at the bound, not at the server's end


async def test_a_line_without_its_end_is_bounded_too() -> None:
    m = await chat(Endless([chunk("a"), b"data: "], b"y" * 1000))
    assert_kind(m, "too_large", "run.max_event_bytes")
    assert m.answer_text == "a"


async def test_an_answer_past_max_answer_bytes_is_cut_before_the_chunk_that_crossed() -> None:
    server = Endless([], chunk("é" * 250))  # 500 bytes of UTF-8 a chunk
    m = await chat(server)
    assert_kind(m, "too_large", "4096 bytes", "run.max_answer_bytes")
    assert m.answer_text == "é" * 250 * 8 and m.chunks == 8 and server.hung_up


async def test_a_flood_of_tiny_chunks_stops_at_max_chunks() -> None:
    server = Endless([], chunk("x"))
    m = await chat(server)
    assert_kind(m, "too_large", "100 SSE events", "run.max_chunks")
    assert m.chunks == 100 and m.answer_text == "x" * 100 and server.hung_up


async def test_tool_call_text_counts_against_the_answer_bound() -> None:
    call = {"index": 0, "id": "c", "function": {"name": "f", "arguments": "z" * 1000}}
    m = await chat(Endless([], chunk(tool_calls=[call])))
    assert_kind(m, "too_large", "run.max_answer_bytes")
    assert m.chunks == 4 and m.tool_calls_json is not None and "z" * 4000 in m.tool_calls_json


async def test_a_reply_inside_the_bounds_is_ok() -> None:
    m = await chat(play([(0, b"".join(GOOD_STREAM)), (0, DONE)]))
    assert m.status == "ok" and m.answer_text == "ab" and m.tokens_out == 2


async def test_a_long_stream_is_measured_off_the_loop_to_the_same_numbers() -> None:
    count = MEASURED_ON_LOOP_CHUNKS + 100
    body = chunk("x") * count + chunk(finish="stop") + chunk(usage=usage(3, count), choices=False)
    request = ChatRequest(messages=HELLO.messages, max_tokens=count)
    m = await chat(play([(0, body), (0, DONE)]), ReplyLimits(), request)
    assert m.status == "ok" and m.chunks == m.tokens_out == count
    assert m.answer_text == "x" * count and m.itl_max_s is not None


async def test_bytes_after_done_are_not_read_forever() -> None:
    server = Endless([*GOOD_STREAM, DONE], b": keep-alive\n")
    m = await chat(server)
    assert m.status == "ok" and m.answer_text == "ab"
    assert server.hung_up


async def test_a_body_whose_end_lags_its_done_does_not_hold_the_next_request() -> None:
    """A server slow to end its bodies would hold a closed loop's next request as long as it
    lags. Past [DONE] the client waits DRAIN_WAIT_S, then drops the connection; the answer
    stands, and the next request goes out on a new connection."""
    held = asyncio.Event()  # set when the server gives up holding: the client left

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b"".join([*GOOD_STREAM, DONE]))
        try:
            await asyncio.sleep(HELD_S)  # the body's end, long after [DONE]
            await response.write_eof()
        finally:
            held.set()
        return response

    timeouts = Timeouts(idle_s=HELD_S, total_s=2 * HELD_S)  # neither ends the wait
    async with serve_client(handler, limits=SMALL, timeouts=timeouts) as (_, client):
        async with asyncio.timeout(HELD_S / 3):
            first = await client.chat(HELLO)
            second = await client.chat(HELLO)
            await held.wait()
    for m in (first, second):
        assert m.status == "ok" and m.answer_text == "ab" and m.tokens_out == 2


async def test_a_request_leaves_full_load_at_its_done_not_when_the_drain_ends() -> None:
    """Full load is time the server holds N requests: it stops at [DONE], and the client's
    DRAIN_WAIT_S after it (waiting for the body's end) counts neither there nor as decoding."""

    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b"".join([*GOOD_STREAM, DONE]))
        await asyncio.sleep(HELD_S)
        return response

    meter = TokenMeter(full_level=1)
    timeouts = Timeouts(idle_s=HELD_S, total_s=2 * HELD_S)
    async with serve_client(handler, limits=SMALL, timeouts=timeouts) as (_, client):
        called = time.perf_counter()
        async with asyncio.timeout(HELD_S / 3):
            m = await client.chat(HELLO, progress=meter)
        took_s = time.perf_counter() - called
    meter.advance()
    assert m.status == "ok" and (meter.in_flight, meter.decoding) == (0, 0)
    # The drain's timer fires no earlier than DRAIN_WAIT_S past [DONE].
    assert 0 < meter.full_s <= took_s - DRAIN_WAIT_S + 0.001
    assert meter.decode_s <= meter.full_s


async def test_a_run_records_too_large_rows_under_its_profiles_bound(tmp_path: Path) -> None:
    async def models(_: web.Request) -> web.Response:
        return web.json_response({"data": [{"id": "current"}]})

    flood = Endless([], chunk("x"))
    async with serve(flood, {"/health": models, "/v1/models": models}) as server:
        path = write_run_profile(
            tmp_path, [hostile_endpoint_toml("flood", server.url)], requests=1, timeout_s=10
        )
        path.write_text(path.read_text().replace("[run]\n", "[run]\nmax_chunks = 50\n"))
        result, snapshot = await record_run(load_profile(path), tmp_path / "out")
    assert result.status == "complete"
    row = snapshot.requests().row(0, named=True)
    assert (row["status"], row["error_kind"], row["chunks"]) == ("error", "too_large", 50)
    assert "run.max_chunks" in row["error_message"] and row["ttft_s"] is not None


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("max_answer_bytes", "100", "an integer number of bytes from 1024 to 4294967296"),
        ("max_event_bytes", '"big"', "an integer number of bytes from 1024 to 4294967296"),
        ("max_chunks", "0", "an integer from 1 to 134217728"),
    ],
)
def test_a_bad_limit_in_a_profile_gets_one_line(
    tmp_path: Path, key: str, value: str, expected: str
) -> None:
    path = write(tmp_path, GOOD.replace("[run]", f"[run]\n{key} = {value}"))
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.problems == [f"{path}: run.{key}: expected {expected}, got {value}"]


def test_profile_limits_reach_the_plan_the_worker_runs(tmp_path: Path) -> None:
    text = "[run]\nmax_answer_bytes = 1073741824\nmax_event_bytes = 65536\nmax_chunks = 9"
    profile = load_profile(write(tmp_path, GOOD.replace("[run]", text)))
    assert profile.run.limits == ReplyLimits(1 << 30, 1 << 16, 9)
    plan = plan_run(profile)
    assert LaunchPlan.from_plain(plan.to_plain()).profile.run.limits == profile.run.limits
    assert load_profile(write(tmp_path, GOOD)).run.limits == ReplyLimits()


# ---- 9: compressed replies are refused, reads yield between slices ---------------------------


def encoded(body: bytes) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        await request.read()
        headers = {"Content-Type": "text/event-stream", "Content-Encoding": "gzip"}
        return web.Response(body=body, headers=headers)

    return handler


async def test_a_gzip_reply_is_a_protocol_error_and_identity_is_asked_for() -> None:
    async with serve_client(encoded(gzip.compress(b"".join([*GOOD_STREAM, DONE])))) as (
        server,
        client,
    ):
        m = await client.chat(HELLO)
    assert_kind(m, "protocol", "gzip-encoded", "identity")
    assert server.log.headers[0]["Accept-Encoding"] == "identity"


async def test_a_gzip_header_on_a_plain_body_is_a_protocol_error_not_a_reset() -> None:
    m = await chat(encoded(b"".join([*GOOD_STREAM, DONE])))
    assert_kind(m, "protocol", "gzip-encoded")


async def test_a_read_of_many_events_yields_to_the_loop_between_slices() -> None:
    # A busy neighbour: one read holding 8 slices of tiny events. Another task must get the
    # loop between the slices, not after the whole read.
    buffer = chunk("x") * (8 * SLICE_BYTES // len(chunk("x")))
    turns = 0

    async def neighbour() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(neighbour())
    await asyncio.sleep(0)
    before = turns
    stream = Stream(ReplyLimits(max_chunks=1 << 20))
    await EndpointClient._parse(buffer, SseParser(), stream, 0.0, EventBudget())
    task.cancel()
    assert len(stream.gen_times) == buffer.count(b"data:")
    assert turns - before >= 7


# ---- 10: redirects are not followed ----------------------------------------------------------


@asynccontextmanager
async def foreign_host() -> AsyncIterator[tuple[str, list[str]]]:
    """A server that counts what reaches it: a redirect must send nothing there."""
    seen: list[str] = []

    async def anything(request: web.Request) -> web.Response:
        seen.append(f"{request.method} {request.path}")
        return web.Response(text="captured")

    async with serve(anything, {"/health": anything, "/v1/models": anything}) as foreign:
        yield foreign.url, seen


def redirect(status: int, location: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(status=status, headers={"Location": location})

    return handler


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_a_redirect_is_an_error_naming_its_target_and_nothing_is_resent(status: int) -> None:
    async with foreign_host() as (url, seen):
        m = await chat(redirect(status, f"{url}/v1/chat/completions"))
    assert_kind(m, "protocol", f"HTTP {status}", f"{url}/v1/chat/completions", "not followed")
    assert m.http_status == status and seen == []


@asynccontextmanager
async def raw_reply(head: bytes) -> AsyncIterator[str]:
    """A server writing ``head`` as it is (aiohttp refuses to send control characters)."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(head)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
        await server.wait_closed()


async def test_a_redirect_target_is_scrubbed_and_one_line() -> None:
    location = f"http://elsewhere.invalid/?key={SECRET}&x=\x1b]0;title\x07y\u202e".encode()
    head = b"HTTP/1.1 307 Temporary Redirect\r\nLocation: " + location
    async with (
        raw_reply(head + b"\r\nContent-Length: 0\r\n\r\n") as url,
        EndpointClient(url, "m", concurrency=1, timeouts=Timeouts(), api_key=SECRET) as client,
    ):
        m = await client.chat(HELLO)
    assert_kind(m, "protocol", "elsewhere.invalid", "***")
    assert m.error_message is not None and SECRET not in m.error_message
    assert "\x1b" not in m.error_message and "\x07" not in m.error_message


async def test_health_does_not_follow_redirects() -> None:
    async with foreign_host() as (url, seen):
        routes = {"/health": redirect(302, f"{url}/health"), "/v1/models": redirect(302, url)}
        async with serve_client(play([]), routes) as (_, client):
            healthy, message = await client.health()
    assert not healthy and seen == []
    assert f"/health: HTTP 302: redirect to {url}/health not followed" in message


# ---- 12: usage the stream contradicts is suspect ---------------------------------------------


def with_usage(completion_tokens: int, reasoning: int | None = None) -> Handler:
    body = [chunk("a"), chunk("b"), chunk(finish="stop")]
    last = chunk(usage=usage(3, completion_tokens, reasoning), choices=False)
    return play([(0, b"".join([*body, last, DONE]))])


async def test_an_impossible_token_count_is_suspect_not_a_record_speed() -> None:
    m = await chat(with_usage(2**63 - 1))
    assert_kind(m, "suspect", "9223372036854775807 completion tokens")
    assert m.tokens_out == 2 and m.tokens_estimated  # the stream's own count, marked estimated
    assert m.ttft_s is not None and m.chunks == 2 and m.answer_text == "ab"


async def test_a_count_over_max_tokens_is_suspect() -> None:
    m = await chat(with_usage(65))
    assert_kind(m, "suspect", "over max_tokens 64")


async def test_hidden_reasoning_tokens_are_not_held_against_the_text() -> None:
    request = ChatRequest(messages=HELLO.messages, max_tokens=4096)
    m = await chat(with_usage(3000, reasoning=2990), request=request)
    assert m.status == "ok" and m.tokens_out == 3000


async def test_a_per_chunk_count_that_jumps_splits_no_gap_and_feeds_no_live_rate() -> None:
    counts = [1, 2**62, 3]
    steps = [chunk(t, usage=usage(3, n)) for t, n in zip("abc", counts, strict=True)]
    steps += [chunk(finish="stop", usage=usage(3, 3)), DONE]
    meter = TokenMeter()
    async with serve_client(play([(0.01 * i, s) for i, s in enumerate(steps)]), limits=SMALL) as (
        _,
        client,
    ):
        m = await client.chat(HELLO, progress=meter)
    assert m.status == "ok" and m.tokens_out == 3 and not m.itl_per_token
    assert meter.tokens <= 3


# ---- 14: HTTP 101 and other interim replies ------------------------------------------------


async def test_switching_protocols_is_a_protocol_error_not_http_4xx() -> None:
    async def upgrade(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(status=101, headers={"Upgrade": "h2c"})
        await response.prepare(request)
        return response

    m = await chat(upgrade, timeouts=Timeouts(total_s=5))
    assert_kind(m, "protocol", "HTTP 101")
    assert m.http_status == 101


async def test_the_judge_does_not_follow_redirects() -> None:
    async with (
        foreign_host() as (url, seen),
        serve(redirect(308, f"{url}/v1/chat/completions")) as judge,
        aiohttp.ClientSession() as session,
    ):
        config = JudgeConfig(url=judge.url, model="j", rubrics={"math": "Grade it."})
        verdict = await judge_answer(session, config, "math", "2+2?", "4")
    assert verdict == (None, "judge_error:http_308") and seen == []


# ---- 11: one bad /metrics stays that endpoint's ----------------------------------------------

METRICS = vllm_metrics_text([EngineState(running=2, kv_usage=0.5)])
BAD_METRICS = {
    "le_abc": METRICS.replace('le="0.1"', 'le="abc"'),
    "le_nan": METRICS.replace('le="0.1"', 'le="NaN"'),
    "count_inf": METRICS.replace("vllm:time_to_first_token_seconds_count", "x_count")
    + "vllm:time_to_first_token_seconds_count 1e400\n",
}


@pytest.mark.parametrize("bad", sorted(BAD_METRICS))
async def test_a_malformed_metrics_body_is_contained_to_its_endpoint(bad: str) -> None:
    bodies = [METRICS, BAD_METRICS[bad], METRICS, METRICS]  # the bad endpoint's, tick by tick

    async def good(_: web.Request) -> web.Response:
        return web.Response(text=METRICS, content_type="text/plain")

    async def changing(_: web.Request) -> web.Response:
        return web.Response(text=bodies.pop(0), content_type="text/plain")

    statuses: list[MetricsStatus] = []
    async with (
        serve(play([]), {"/metrics": good}) as healthy,
        serve(play([]), {"/metrics": changing}) as broken,
        aiohttp.ClientSession() as session,
    ):
        endpoints = [endpoint("healthy", healthy.url), endpoint("broken", broken.url)]
        scraper = PrometheusScraper(endpoints, session, on_status=statuses.append)
        ticks = [[s.endpoint_id for s in await scraper.scrape_once()] for _ in range(4)]
    both = ["healthy", "broken"]
    assert ticks == [both, ["healthy"], both, both]
    assert [(s.endpoint_id, s.state) for s in statuses] == [
        ("broken", "no_metrics"),
        ("broken", "ok"),
    ]
    assert statuses[0].message.startswith("no server metrics (")


async def test_metrics_redirects_are_not_followed() -> None:
    statuses: list[MetricsStatus] = []
    async with (
        foreign_host() as (url, seen),
        serve(play([]), {"/metrics": redirect(302, f"{url}/metrics")}) as moved,
        aiohttp.ClientSession() as session,
    ):
        scraper = PrometheusScraper([endpoint("m", moved.url)], session, on_status=statuses.append)
        assert await scraper.scrape_once() == []
    assert seen == [] and "HTTP 302" in statuses[0].message


# ---- 12: no figure crashes a screen ----------------------------------------------------------


async def test_the_leaderboard_draws_a_row_at_an_impossible_speed() -> None:
    # As a snapshot from before usage was checked holds it: one endpoint at 4.9e19 tok/s.
    events = seeded_run(
        "r", 1, [endpoint_info("a")], ["math"], n=3, shift={("a", "math"): {"decode_tps": 4.9e19}}
    )
    state = FleetState()
    for event in events:
        state.apply(event)
    (point,) = pareto_points(state.board(), HEURISTIC)
    axes = pareto_axes([point])
    assert axes is not None and axes.speed_tps[0] < point.speed_tps < axes.speed_tps[1]
    source = FixedSource(events)
    app = FleetApp(source, clock=lambda: events[-1].t)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("l")
        await pilot.pause(0.2)
        assert isinstance(app.screen, LeaderboardScreen)
        assert "frontier: A" in str(app.screen.query_one("#chart-pareto").border_subtitle)


def test_a_stream_past_its_event_budget_is_told_to_wait() -> None:
    budget = EventBudget(rate=1000, burst=1000)
    assert budget.pause_after(1000) == 0.0  # the burst: no wait
    assert budget.pause_after(3000) > 1.9  # 2,000 past it at 1,000 a second
