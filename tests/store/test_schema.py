"""Table schemas follow the event dataclasses, and every persisted event round-trips through Parquet."""

from __future__ import annotations

import io
import json
import typing
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any, Literal

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nvfp4_tui.core.events import (
    GpuSample,
    RequestFinished,
    RunStarted,
    ServerSample,
    TokenProgress,
    decode,
    encode,
)
from nvfp4_tui.store.schema import (
    EVENTS_TABLE,
    ROW_TABLES,
    SCHEMAS,
    dtype_for,
    events_to_frame,
    frame_to_events,
    row_to_event,
    table_for,
)
from tests.store.helpers import one_of_each, request_event
from tests.support.factories import T0

# The documented format of the requests table: changing it needs a new schema_version.
PINNED_REQUESTS_SCHEMA: list[tuple[str, pl.DataType]] = [
    ("ts", pl.Datetime("us", "UTC")),
    ("t", pl.Float64()),
    ("endpoint_id", pl.String()),
    ("suite", pl.String()),
    ("prompt_id", pl.String()),
    ("concurrency", pl.Int64()),
    ("phase_index", pl.Int64()),
    ("request_index", pl.Int64()),
    ("status", pl.String()),
    ("queue_s", pl.Float64()),
    ("setup_s", pl.Float64()),
    ("ttft_s", pl.Float64()),
    ("ttfa_s", pl.Float64()),
    ("ttst_s", pl.Float64()),
    ("e2e_s", pl.Float64()),
    ("itl_p50_s", pl.Float64()),
    ("itl_p95_s", pl.Float64()),
    ("itl_p99_s", pl.Float64()),
    ("itl_max_s", pl.Float64()),
    ("tpot_s", pl.Float64()),
    ("itl_per_token", pl.Boolean()),
    ("chunks", pl.Int64()),
    ("first_chunk_tokens", pl.Int64()),
    ("tokens_in", pl.Int64()),
    ("tokens_out", pl.Int64()),
    ("reasoning_tokens", pl.Int64()),
    ("tokens_estimated", pl.Boolean()),
    ("decode_tps", pl.Float64()),
    ("e2e_tps", pl.Float64()),
    ("prefill_tps", pl.Float64()),
    ("finish_reason", pl.String()),
    ("answer_text", pl.String()),
    ("reasoning_text", pl.String()),
    ("tool_calls_json", pl.String()),
    ("error_kind", pl.String()),
    ("error_message", pl.String()),
    ("http_status", pl.Int64()),
    ("retry_after_s", pl.Float64()),
    ("score_heuristic", pl.Float64()),
    ("score_heuristic_detail", pl.String()),
    ("score_verified", pl.Float64()),
    ("score_verified_detail", pl.String()),
    ("score_judge", pl.Float64()),
    ("score_judge_detail", pl.String()),
    ("late_s", pl.Float64()),
    ("trimmed", pl.Boolean()),
    ("attempt", pl.Int64()),
    ("tokens_in_asked", pl.Int64()),
    ("tokens_out_asked", pl.Int64()),
    ("turn", pl.Int64()),
]


def test_requests_schema_is_pinned() -> None:
    assert list(SCHEMAS["requests"].items()) == PINNED_REQUESTS_SCHEMA


def test_events_table_schema() -> None:
    assert list(SCHEMAS[EVENTS_TABLE].items()) == [
        ("ts", pl.Datetime("us", "UTC")),
        ("t", pl.Float64()),
        ("type", pl.String()),
        ("json", pl.String()),
    ]


@pytest.mark.parametrize("table", sorted(ROW_TABLES))
def test_row_table_columns_are_the_dataclass_fields(table: str) -> None:
    names = [f.name for f in fields(ROW_TABLES[table])]
    assert SCHEMAS[table].names() == ["ts", *names]


def test_gpu_and_server_schemas_use_the_annotations() -> None:
    assert SCHEMAS["gpu"]["gpu"] == pl.Int64()
    assert SCHEMAS["gpu"]["vram_used_mib"] == pl.Float64()
    assert SCHEMAS["gpu"]["source"] == pl.String()
    assert SCHEMAS["server"]["kv_cache_pct"] == pl.Float64()


def test_dtype_for_annotations() -> None:
    assert dtype_for(Literal["a", "b"]) == pl.String()
    assert dtype_for(int | None) == pl.Int64()
    assert dtype_for(typing.Optional[bool]) == pl.Boolean()  # noqa: UP045 - the old spelling too
    with pytest.raises(TypeError, match="no snapshot column type"):
        dtype_for(tuple[int, ...])
    with pytest.raises(TypeError, match="no snapshot column type"):
        dtype_for(int | str)


def test_every_persisted_type_has_a_table_and_token_progress_none() -> None:
    tables = {type(e).__name__: table_for(e) for e in one_of_each()}
    assert tables == {
        "RunStarted": "events",
        "PhaseStarted": "events",
        "GpuSample": "gpu",
        "ServerSample": "server",
        "RequestFinished": "requests",
        "EndpointStatus": "events",
        "PhaseFinished": "events",
        "RunFinished": "events",
    }
    assert table_for(TokenProgress(T0, "gpu0", 2, 100.0)) is None


def parquet_round_trip(frame: pl.DataFrame) -> pl.DataFrame:
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    buffer.seek(0)
    return pl.read_parquet(buffer)


def test_every_persisted_type_round_trips_through_parquet() -> None:
    originals = one_of_each()
    for event in originals:
        table = table_for(event)
        assert table is not None
        frame = parquet_round_trip(events_to_frame(table, [event]))
        assert frame.schema == SCHEMAS[table]
        assert frame_to_events(table, frame) == [event]
        assert row_to_event(table, frame.row(0, named=True)) == event


def test_events_table_holds_type_and_codec_json() -> None:
    run_finished = one_of_each()[-1]
    frame = events_to_frame(EVENTS_TABLE, [run_finished])
    assert frame.row(0, named=True)["type"] == "RunFinished"
    assert frame.row(0, named=True)["json"] == (
        '{"t":1796203807.0,"status":"complete","message":null,"type":"RunFinished"}'
    )


def test_a_run_started_recorded_before_configuration_was_carried_still_reads() -> None:
    started = one_of_each()[0]
    assert isinstance(started, RunStarted) and started.configuration
    body = json.loads(encode(started))
    del body["configuration"]  # as a run recorded before it was carried
    old = decode(json.dumps(body))
    assert isinstance(old, RunStarted)
    assert old.configuration == () and old.endpoints == started.endpoints


def test_ts_is_the_utc_instant_of_t() -> None:
    event = request_event(0, t=T0 + 0.25)
    frame = events_to_frame("requests", [event])
    assert frame["ts"][0] == datetime(2026, 12, 2, 9, 30, 0, 250000, tzinfo=UTC)
    assert frame["t"][0] == T0 + 0.25


def strategy_for(annotation: Any) -> st.SearchStrategy[Any]:
    """Values for one event field, built from its annotation like the schema itself."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return st.sampled_from(args)
    if origin is not None:
        (present,) = [a for a in args if a is not type(None)]
        return st.none() | strategy_for(present)
    return {
        str: st.text(max_size=30),
        int: st.integers(-(2**63), 2**63 - 1),
        float: st.floats(allow_nan=False),
        bool: st.booleans(),
    }[annotation]


def events_of(cls: type) -> st.SearchStrategy[Any]:
    hints = typing.get_type_hints(cls)
    field_strategies = {f.name: strategy_for(hints[f.name]) for f in fields(cls)}
    return st.builds(cls, **field_strategies)


ROUND_TRIP_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@ROUND_TRIP_SETTINGS
@given(st.lists(events_of(RequestFinished), min_size=1, max_size=5))
def test_request_rows_round_trip(batch: list[RequestFinished]) -> None:
    frame = parquet_round_trip(events_to_frame("requests", batch))
    assert frame_to_events("requests", frame) == batch
    # Exactly: -0.0 and 0.0 compare equal, so compare float bits through repr as well.
    assert [repr(e) for e in frame_to_events("requests", frame)] == [repr(e) for e in batch]


@ROUND_TRIP_SETTINGS
@given(st.lists(events_of(GpuSample), min_size=1, max_size=5))
def test_gpu_rows_round_trip(batch: list[GpuSample]) -> None:
    frame = parquet_round_trip(events_to_frame("gpu", batch))
    assert [repr(e) for e in frame_to_events("gpu", frame)] == [repr(e) for e in batch]


@ROUND_TRIP_SETTINGS
@given(st.lists(events_of(ServerSample), min_size=1, max_size=5))
def test_server_rows_round_trip(batch: list[ServerSample]) -> None:
    frame = parquet_round_trip(events_to_frame("server", batch))
    assert [repr(e) for e in frame_to_events("server", frame)] == [repr(e) for e in batch]


def test_a_snapshot_written_before_optional_columns_existed_still_reads(tmp_path) -> None:
    from nvfp4_tui.store.reader import open_snapshot
    from nvfp4_tui.store.schema import OPTIONAL_COLUMNS

    assert {"score_verified", "score_judge", "first_chunk_tokens"} <= OPTIONAL_COLUMNS["requests"]
    writer_root = tmp_path / "snap"
    (writer_root / "requests").mkdir(parents=True)
    (writer_root / "manifest.json").write_text(
        '{"schema_version": 1, "run_id": "snap", "status": "complete"}'
    )
    frame = events_to_frame("requests", [request_event(0)]).drop(
        "score_verified", "score_verified_detail", "first_chunk_tokens"
    )
    frame.write_parquet(writer_root / "requests.parquet")
    snapshot = open_snapshot(writer_root)
    requests = snapshot.requests()
    assert snapshot.warnings == []
    assert requests.height == 1 and requests.get_column("score_verified").to_list() == [None]
    assert requests.get_column("first_chunk_tokens").to_list() == [None]


def test_an_older_server_table_reads_with_nulls_and_without_its_interpolated_quantiles(
    tmp_path,
) -> None:
    from nvfp4_tui.store.reader import open_snapshot

    root = tmp_path / "snap"
    root.mkdir()
    (root / "manifest.json").write_text(
        '{"schema_version": 1, "run_id": "snap", "status": "complete"}'
    )
    # The server table as written before means and bucket ranges: point quantiles instead.
    latency = [f"{h}_{part}" for h in ("ttft", "itl", "e2e") for part in ("count", "mean_s")]
    latency += [
        f"{h}_{q}_{edge}_s"
        for h in ("ttft", "itl", "e2e")
        for q in ("p50", "p95")
        for edge in ("low", "high")
    ]
    frame = events_to_frame("server", [ServerSample(T0, "gpu0", kv_cache_pct=12.5)]).drop(latency)
    old = frame.with_columns(
        pl.lit(value).alias(name)
        for name, value in (("ttft_p50_s", 0.175), ("ttft_p95_s", 0.5), ("itl_p50_s", 0.02))
    )
    old.write_parquet(root / "server.parquet")
    snapshot = open_snapshot(root)
    server = snapshot.server()
    assert snapshot.warnings == []
    assert "ttft_p50_s" not in server.columns
    assert server.get_column("ttft_mean_s").to_list() == [None]
    assert server.get_column("kv_cache_pct").to_list() == [12.5]
    assert snapshot.events() == [ServerSample(T0, "gpu0", kv_cache_pct=12.5)]
