"""FleetCommands: every action of the app in the command palette, the keys of the screen it was
opened on, and each endpoint's detail."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import cast

from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from nvfp4_tui.core.figures.scores import SCORE_LABELS
from nvfp4_tui.tui.bindings import app_binding, key_label
from nvfp4_tui.tui.fleet_view import FleetView
from nvfp4_tui.tui.readouts import next_score

Command = tuple[str, str, Callable[[], object]]  # name, help, what it does


class FleetCommands(Provider):
    def _commands(self) -> list[Command]:
        app = cast(FleetView, self.app)

        def bound(name: str, help_text: str, binding_id: str) -> Command:
            # The key and the action come from the binding, so the palette says what the key does.
            binding = app_binding(binding_id)
            run = partial(self._run_on, self.app, binding.action)
            return name, f"{help_text} ({key_label(binding, app.user_keymap)})", run

        commands = [
            bound("Fleet grid", "One pane per endpoint", "grid"),
            bound("Leaderboard", "Quality, speed, scaling and routes", "leaderboard"),
        ]
        capabilities = app.source.capabilities
        if capabilities.pause_sending:
            commands.append(
                bound(
                    "Resume run" if app.paused else "Pause run",
                    "Stop or restart sending new requests",
                    "pause",
                )
            )
        replay = app.replay_readout()
        if replay is not None:
            commands += [
                bound(
                    "Resume replay" if replay.paused else "Pause replay",
                    "Hold or restart the replay's clock",
                    "replay-pause",
                ),
                bound("Replay faster", "x1, x2, x5, x10, x60, max", "replay-faster"),
                bound("Replay slower", "max, x60, x10, x5, x2, x1", "replay-slower"),
                bound("Back 10 s", "Seek the replay back", "replay-back"),
                bound("Forward 10 s", "Seek the replay on", "replay-fwd"),
                bound("Replay from the start", "Seek to the first event", "replay-home"),
                bound("Replay to the end", "Seek to the last event", "replay-end"),
            ]
        following = next_score(app.state, app.score_name)
        commands += [
            bound(
                f"Show {SCORE_LABELS[following] if following else 'other'} scores",
                "Quality: answers checked, the seed's text heuristic, or the judge's grade",
                "scores",
            ),
            bound("Keys", "Every key binding", "help"),
            bound(
                "Quit",
                "Stop the run if one is going, then quit"
                if capabilities.stops_run
                else "Quit; the recorded run is left as it is",
                "quit",
            ),
        ]
        # The keys of the screen the palette was opened on: the fleet's views and sort, the
        # detail's statistics (each says it is this screen's).
        screen = self.screen
        for binding in screen.BINDINGS:
            if isinstance(binding, Binding) and binding.show and binding.id != "back":
                commands.append(
                    (
                        binding.description,
                        f"On this screen ({key_label(binding, app.user_keymap)})",
                        partial(self._run_on, screen, binding.action),
                    )
                )
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
    async def _run_on(target: App | Screen, action: str) -> None:
        await target.run_action(action)

    async def discover(self) -> Hits:
        for name, help_text, callback in self._commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
