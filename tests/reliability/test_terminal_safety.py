"""Model output, server messages and recorded names are shown as text, never obeyed.

Answers, reasoning, error messages, status messages, run and endpoint names may hold ANSI colour
codes, OSC sequences (window title, hyperlinks, clipboard), C1 controls or Textual markup
(including ``[@click=...]`` actions). On every screen they must show as plain text: no escape
byte reaches the terminal and no markup is interpreted.
"""

from __future__ import annotations

import html
import io
from typing import Any

from textual.widgets import Static

from nvfp4_tui.core.events import (
    EndpointInfo,
    EndpointStatus,
    PhasePlan,
    PhaseStarted,
    RunStarted,
)
from nvfp4_tui.launch.run import PhasePrinter
from nvfp4_tui.tui.app import FleetApp
from nvfp4_tui.tui.screens.detail import DetailScreen
from nvfp4_tui.tui.widgets.gpu_pane import GpuPane
from tests.support.factories import T0, request
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import settle, wait_until

MARKUP = "[bold red]loud[/] [@click=app.quit]quit[/]"
HOSTILE = (
    "\x1b[31mred\x1b[0m \x1b]0;pwned-title\x07 \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ "
    "\x1b]52;c;ZXZpbA==\x07 \x9b2J \x1bP+q\x1b\\ \r\x08" + MARKUP
)
ESCAPE_BYTES = ("\x1b", "\x07", "\x9b", "\x9d", "\x90", "\x08")


def _events() -> list[Any]:
    weird = EndpointInfo("qwen3.6", f"label {MARKUP}", "http://127.0.0.1:9", "m", 0, "moe")
    down = EndpointInfo("down-one", "down", "http://127.0.0.1:8", "m", 1, "dense")
    plan = (PhasePlan("qwen3.6", "english", 1, 2), PhasePlan("down-one", "english", 1, 2))
    return [
        RunStarted(T0, "run", f"run {HOSTILE}", (weird, down), plan),
        PhaseStarted(T0, "qwen3.6", "english", 1, 0),
        request(
            "qwen3.6",
            t=T0 + 1,
            ttft_s=0.1,
            e2e_s=1.0,
            tokens_out=10,
            decode_tps=10.0,
            answer_text=f"answer {HOSTILE} end",
            reasoning_text=f"thinking {HOSTILE}",
            score_heuristic=0.5,
        ),
        request(
            "qwen3.6",
            t=T0 + 2,
            request_index=1,
            status="error",
            e2e_s=0.5,
            error_kind="protocol",
            error_message=f"server error in stream: {HOSTILE}",
        ),
        EndpointStatus(T0 + 3, "down-one", "down", f"connect: {HOSTILE}"),
    ]


def _screen_text(app: FleetApp) -> str:
    return html.unescape(app.export_screenshot()).replace("\xa0", " ")


def _assert_safe(text: str) -> None:
    for byte in ESCAPE_BYTES:
        assert byte not in text, repr(byte)


def _static_texts(app: FleetApp) -> str:
    return "\n".join(str(widget.render()) for widget in app.screen.query(Static))


async def test_hostile_text_shows_as_text_on_the_grid_and_the_detail_screen() -> None:
    events = _events()
    source = FixedSource(events, kind="live", linger=True)
    app = FleetApp(source, clock=lambda: T0 + 4)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot, source)
        grid = _static_texts(app)
        _assert_safe(grid)
        panes = {pane.endpoint_id: pane for pane in app.screen.query(GpuPane)}
        assert set(panes) == {"qwen3.6", "down-one"}  # an id with a dot is a pane like any
        errors = str(panes["qwen3.6"].query_one(".errors").render())
        # Shown as text (the line is cut at a word where the pane ends, hence its start only).
        assert "server error in stream" in errors and "[bold red]loud[/]" in errors
        _assert_safe(errors)
        assert MARKUP in str(panes["down-one"].query_one(".errors").render())
        grid_screen = _screen_text(app)
        _assert_safe(grid_screen)
        assert "[bold red]loud[/]" in grid_screen and "pwned-title" not in grid_screen
        assert app.title == "nvfp4-tui"  # no OSC sequence retitled anything

        app.open_detail("qwen3.6")
        await wait_until(pilot, lambda: isinstance(app.screen, DetailScreen), "the detail screen")
        app.redraw()
        await pilot.pause()
        answer = str(app.screen.query_one("#answer-text", Static).render())
        assert answer.startswith("answer ") and answer.endswith(f"{MARKUP} end")
        _assert_safe(answer)
        reasoning = str(app.screen.query_one("#reasoning-text", Static).render())
        assert MARKUP in reasoning
        _assert_safe(reasoning)
        screen = _screen_text(app)
        _assert_safe(screen)
        assert "[bold red]loud[/]" in screen  # shown, not applied
        await pilot.press("escape", "l")
        _assert_safe(_screen_text(app))
        await pilot.press("g")
        assert app.is_running  # the [@click=app.quit] link was never an action


class _Talking(FixedSource):
    """A live source whose worker printed hostile messages."""

    def __init__(self) -> None:
        super().__init__(_events()[:1], kind="live", linger=True)
        self.messages = [f"warning: {HOSTILE}", "plain note"]


async def test_worker_messages_are_notified_as_plain_text() -> None:
    source = _Talking()
    app = FleetApp(source, clock=lambda: T0)
    notes: list[tuple[str, dict[str, Any]]] = []
    shown = app.notify

    def notify(message: str, **options: Any) -> None:
        notes.append((message, options))
        shown(message, **options)

    app.notify = notify  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: len(notes) >= 2, "both messages notified")
        _assert_safe(_screen_text(app))
    said = [message for message, _ in notes]
    assert len(said) == 2 and said[1] == "plain note", said
    assert said[0].startswith("warning: ") and MARKUP in said[0]
    _assert_safe(said[0])
    assert all(options.get("markup") is False for _, options in notes)


def test_headless_progress_lines_carry_no_escape() -> None:
    """A server's words (its model list, in a health message) reach a terminal headless too."""
    stream = io.StringIO()
    printer = PhasePrinter(stream)
    printer(EndpointStatus(T0, "e0", "down", f"model 'm' is not served here; lists {HOSTILE}"))
    printed = stream.getvalue()
    _assert_safe(printed)
    assert printed.startswith("e0") and MARKUP in printed and len(printed.splitlines()) == 1
