"""The text the cheap widgets draw: sparkline columns and bars, the big number's glyphs, and
the header's read-outs for a replay and a followed run."""

from __future__ import annotations

from rich.style import Style
from textual.renderables.digits import Digits as DigitsRenderable

from nvfp4_tui.core.events import PhasePlan, RunStarted
from nvfp4_tui.core.slo import CapacityRow
from nvfp4_tui.core.state import FleetState
from nvfp4_tui.tui import units
from nvfp4_tui.tui.readouts import load_text, slo_text
from nvfp4_tui.tui.source_status import FollowReadout, ReplayReadout
from nvfp4_tui.tui.widgets.big_number import glyph_rows, text_width
from nvfp4_tui.tui.widgets.gpu_pane import decode_text
from nvfp4_tui.tui.widgets.run_header import run_readout, summary_line
from nvfp4_tui.tui.widgets.spark_bars import axis, bar_rows, columns, scaled
from tests.support.factories import T0, endpoint_info


def test_columns_take_the_highest_value_of_each_share() -> None:
    assert columns([1, 5, 2, 2, 9, 0], 3) == [5, 2, 9]
    assert columns([1, 2, 3], 6) == [1, 1, 2, 2, 3, 3]  # wider than the data: values repeat
    assert columns([], 4) == []


def test_bar_rows_start_at_zero() -> None:
    assert bar_rows([0.0, 1.0], 1) == ["▁█"]
    top, bottom = bar_rows([0.0, 0.5, 1.0], 2)
    assert bottom == "▁██"  # half of two rows fills the lower row
    assert top == "  █"


def test_big_number_draws_textual_s_bold_glyphs() -> None:
    rows = glyph_rows("127")
    drawn = DigitsRenderable("127").render(Style(bold=True))
    lines = [segment.text for segment in drawn if segment.text != "\n"]
    assert list(rows) == lines
    assert text_width("127") == 9 and text_width("—") == 1


def test_decode_text_keeps_its_width() -> None:
    assert [decode_text(v) for v in (56.4, 127.0, None)] == ["56 ", "127", "—  "]
    assert text_width(decode_text(99.4)) == text_width(decode_text(100.2))


def test_rate_and_load_text() -> None:
    assert [units.rate(x) for x in (None, 1.824, 12.34, 123.4)] == ["—", "1.82", "12.3", "123"]
    assert load_text("concurrency", 4.0) == "c=4"
    assert load_text("rate", 2.5) == "2.5 req/s"
    assert load_text("rate", None) == "—"


def test_slo_text() -> None:
    row = CapacityRow(
        endpoint="e",
        load_kind="concurrency",
        capacity=4,
        capacity_goodput_rps=1.0,
        capacity_throughput_tps=100.0,
        capacity_attainment=0.95,
        knee=8,
        knee_throughput_tps=200.0,
        max_load=16,
        steps=5,
        sweep_stop=None,
        slo_ttft_s=0.5,
        slo_tpot_s=0.05,
        slo_e2e_s=None,
        slo_attainment=0.9,
    )
    assert slo_text(row) == "TTFT ≤ 500 ms · TPOT ≤ 50 ms · ≥ 90% met"


def _state() -> FleetState:
    info = endpoint_info("e", 0)
    state = FleetState()
    state.apply(RunStarted(T0, "r", "run", (info,), (PhasePlan("e", "math", 1, 6),)))
    return state


def test_header_modes_of_a_replay() -> None:
    state = _state()

    def mode(**replay: object) -> str:
        readout = ReplayReadout(**{**PLAYING, **replay})  # type: ignore[arg-type]
        return run_readout(state, T0, paused=False, source_ended=False, replay=readout).mode

    assert mode() == "replay"
    assert mode(paused=True) == "replay-paused"
    assert mode(at_end=True) == "replay-end"  # a recording whose run never finished
    assert ReplayReadout(**PLAYING).fraction == 0.25  # type: ignore[arg-type]


PLAYING = dict(
    position_s=30,
    duration_s=120,
    speed_label="x5",
    paused=False,
    at_end=False,
)


def test_a_replay_s_summary_counts_requests_and_holds_still_as_its_clock_moves() -> None:
    state = _state()
    replay = ReplayReadout(**PLAYING)  # type: ignore[arg-type]
    lines = [
        summary_line(run_readout(state, now, paused=False, source_ended=False, replay=replay))
        for now in (T0 + 10, T0 + 70)
    ]
    assert lines[0] == lines[1]
    assert lines[0].requests == (0, 6) and lines[0].elapsed_s is None
    live = summary_line(run_readout(state, T0 + 10, paused=False, source_ended=False))
    assert live.requests is None and live.elapsed_s == 10


def test_header_modes_of_a_followed_run() -> None:
    state = _state()

    def mode(status: str = "running", finished: bool = False, stale: bool = False) -> str:
        follow = FollowReadout(status, finished, stale, 15 if stale else 0)
        return run_readout(state, T0, paused=False, source_ended=finished, follow=follow).mode

    assert mode() == "following"
    assert mode(stale=True) == "stale"
    assert mode("aborted", finished=True) == "aborted"
    assert mode("complete", finished=True) == "complete"


def test_the_sparkline_spans_the_data_range_not_zero_to_max() -> None:
    bottom, top = axis([0.0, 100.0, 110.0, 115.0, 0.0])
    assert (bottom, top) == (92.0, 115.0)  # widened to 20% of the top: 100 is not the floor
    heights = scaled([0.0, 100.0, 115.0], bottom, top)
    assert heights[0] == 0.0, "a second with nothing streaming stays blank"
    assert 0.125 < heights[1] < 0.5 and heights[2] == 1.0
    assert axis([0.0, 0.0]) is None


def test_the_sparkline_range_keeps_a_wide_spread() -> None:
    assert axis([20.0, 120.0]) == (20.0, 120.0)
