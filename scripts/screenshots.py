"""Writes the README's screenshots, docs/*.svg, from the sample events the snapshot tests use.

    python scripts/screenshots.py [--out docs] [--size 160x48]

Each picture is the app on the deterministic sample run with its clock stopped, so running this
again gives the same files unless the UI itself changed.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from nvfp4_tui.tui.sample_app import sample_app, settle

# (file name, whole run or partway, keys pressed once the events are in)
SHOTS: tuple[tuple[str, bool, tuple[str, ...]], ...] = (
    ("fleet", False, ()),
    ("detail", False, ("down", "down", "enter")),
    ("leaderboard", True, ("l",)),
)
DRAW_WAIT_S = 0.3


async def shoot(
    name: str, complete: bool, keys: tuple[str, ...], size: tuple[int, int], out: Path
) -> Path:
    app, source = sample_app(complete=complete)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, source)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        await pilot.pause(DRAW_WAIT_S)
        path = app.save_screenshot(filename=f"{name}.svg", path=str(out))
    return Path(path)


def _size(text: str) -> tuple[int, int]:
    width, _, height = text.partition("x")
    return int(width), int(height)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "docs")
    parser.add_argument("--size", type=_size, default=(160, 48), help="terminal WIDTHxHEIGHT")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, complete, keys in SHOTS:
        print(asyncio.run(shoot(name, complete, keys, args.size, args.out)))


if __name__ == "__main__":
    main()
