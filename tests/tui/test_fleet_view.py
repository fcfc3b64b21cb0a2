"""The app offers the screens everything FleetView says they may use."""

from __future__ import annotations

from nvfp4_tui.tui.fleet_view import FleetView
from tests.support.sample_app import sample_app


def test_the_app_is_a_fleet_view() -> None:
    app, _source = sample_app()
    assert isinstance(app, FleetView)
    assert isinstance(app.score_name, str) and callable(app.clock)
