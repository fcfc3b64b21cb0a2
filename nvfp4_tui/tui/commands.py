"""FleetCommands: every action of the app in the command palette, plus each endpoint's detail."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

from nvfp4_tui.core.figures.scores import SCORE_LABELS
from nvfp4_tui.tui.readouts import next_score

if TYPE_CHECKING:
    from nvfp4_tui.tui.app import FleetApp


class FleetCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = cast("FleetApp", self.app)
        run = partial(self._run, app)
        commands: list[tuple[str, str, Callable[[], object]]] = [
            ("Fleet grid", "One pane per endpoint (g)", partial(run, "grid")),
            ("Leaderboard", "Quality, speed, scaling and routes (l)", partial(run, "leaderboard")),
        ]
        capabilities = app.source.capabilities
        if capabilities.pause_sending:
            commands.append(
                (
                    "Resume run" if app.paused else "Pause run",
                    "Stop or restart sending new requests (p)",
                    partial(run, "toggle_pause"),
                )
            )
        replay = app.replay_readout()
        if replay is not None:
            commands += [
                (
                    "Resume replay" if replay.paused else "Pause replay",
                    "Hold or restart the replay's clock (space)",
                    partial(run, "replay('toggle')"),
                ),
                (
                    "Replay faster",
                    "x1, x2, x5, x10, x60, max (+)",
                    partial(run, "replay('faster')"),
                ),
                (
                    "Replay slower",
                    "max, x60, x10, x5, x2, x1 (-)",
                    partial(run, "replay('slower')"),
                ),
                ("Back 10 s", "Seek the replay back (←)", partial(run, "replay('seek:-10')")),
                ("Forward 10 s", "Seek the replay on (→)", partial(run, "replay('seek:+10')")),
                (
                    "Replay from the start",
                    "Seek to the first event (home)",
                    partial(run, "replay('home')"),
                ),
                (
                    "Replay to the end",
                    "Seek to the last event (end)",
                    partial(run, "replay('end')"),
                ),
            ]
        following = next_score(app.state, app.score_name)
        commands += [
            (
                f"Show {SCORE_LABELS[following] if following else 'other'} scores",
                "Quality: answers checked, the seed's text heuristic, or the judge's grade (v)",
                partial(run, "toggle_scores"),
            ),
            ("Keys", "Every key binding (?)", partial(run, "help")),
            (
                "Quit",
                "Stop the run if one is going, then quit (q)"
                if capabilities.stops_run
                else "Quit; the recorded run is left as it is (q)",
                partial(run, "request_quit"),
            ),
        ]
        for endpoint in app.state.endpoints.values():
            gpu = endpoint.info.gpu
            where = f"GPU {gpu}" if gpu is not None else endpoint.id
            commands.append(
                (
                    f"Detail: {where} · {endpoint.info.label}",
                    "Charts, recent requests and the latest answer",
                    partial(app.open_detail, endpoint.id),
                )
            )
        return commands

    @staticmethod
    async def _run(app: FleetApp, action: str) -> None:
        await app.run_action(action)

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
