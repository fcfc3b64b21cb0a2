"""A user's keymap: its keys run the bindings it names, the Keys screen and the palette show
them, and a bad file is one line per problem naming the file and the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nvfp4_tui.config.keymap import KEYMAP_ENV, keymap_path, load_keymap
from nvfp4_tui.config.tomlcheck import ConfigError
from nvfp4_tui.tui.app import FleetApp, binding_ids
from nvfp4_tui.tui.screens.help import HelpScreen, KeyList
from nvfp4_tui.tui.screens.leaderboard import LeaderboardScreen
from tests.support.fixed_source import FixedSource
from tests.support.sample_app import press_for, settle
from tests.support.sample_events import sample_events


def test_a_keymap_names_bindings_by_id_and_bad_entries_are_one_line_each(tmp_path: Path) -> None:
    good = tmp_path / "keymap.toml"
    good.write_text('[keys]\nleaderboard = "L"\nquit = "q, ctrl+q"\n')
    assert load_keymap(good, binding_ids(), required=True) == {
        "leaderboard": "L",
        "quit": "q,ctrl+q",
    }
    bad = tmp_path / "bad.toml"
    bad.write_text('[keys]\nleaderbored = "L"\ngrid = "g g"\nhelp = 3\n[extra]\n')
    with pytest.raises(ConfigError) as raised:
        load_keymap(bad, binding_ids(), required=True)
    expected = 'expected key names joined by commas, such as "L" or "q,ctrl+q"'
    assert raised.value.problems == [
        f'{bad}: keys.grid: {expected}, got "g g"',
        f"{bad}: keys.help: {expected}, got 3",
        f"{bad}: keys.leaderbored: unknown key; did you mean 'leaderboard'?",
        f"{bad}: extra: unknown key; known keys: keys",
    ]


def test_the_keymap_is_found_where_the_user_keeps_it(tmp_path: Path) -> None:
    assert keymap_path({KEYMAP_ENV: str(tmp_path / "k.toml")}) == (tmp_path / "k.toml", True)
    config = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert keymap_path(config) == (tmp_path / "nvfp4-tui" / "keymap.toml", False)
    # None at the usual place is no keymap; one named but missing is an error.
    assert load_keymap(tmp_path / "nvfp4-tui" / "keymap.toml", binding_ids(), required=False) == {}
    with pytest.raises(ConfigError, match="file not found"):
        load_keymap(tmp_path / "k.toml", binding_ids(), required=True)


async def test_the_users_key_runs_the_binding_and_the_keys_screen_says_so() -> None:
    source = FixedSource(sample_events(None), kind="replay", linger=True)
    app = FleetApp(source, keymap={"leaderboard": "L"})
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, source)
        await pilot.press("l")  # the default key no longer opens it
        await pilot.pause()
        assert not isinstance(app.screen, LeaderboardScreen)
        await press_for(pilot, "L", screen=LeaderboardScreen)
        await press_for(pilot, "question_mark", screen=HelpScreen)
        shown = str(app.screen.query_one("#keys", KeyList).render())
        assert "L" in shown.split("Leaderboard")[0].splitlines()[-1]


def test_the_readme_names_every_binding_id() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("The ids: ", 1)[1].split("\n\n", 1)[0]
    assert set(re.findall(r"`([a-z-]+)`", section)) == binding_ids()
