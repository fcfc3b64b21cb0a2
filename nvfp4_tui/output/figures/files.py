"""``export SNAPSHOT --format figures --out DIR``: every figure the run supports as PNG and SVG;
the ones it cannot support are returned as ``Omitted``, for the command to say why."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from nvfp4_tui.core.figures.plot_data import FigureData, Omitted, published_figures
from nvfp4_tui.output.figures import FiguresExtraMissing
from nvfp4_tui.output.figures.inputs import figure_inputs
from nvfp4_tui.store.manifest import SnapshotError, error_text, write_atomic
from nvfp4_tui.store.reader import Snapshot

IMAGE_FORMATS = ("png", "svg")


def image_renderer() -> Callable[[FigureData, str], bytes]:
    """``draw.image_bytes``, or FiguresExtraMissing when matplotlib is not installed."""
    try:
        from nvfp4_tui.output.figures.draw import image_bytes
    except ImportError as exc:
        if (exc.name or "").split(".")[0] == "matplotlib":
            raise FiguresExtraMissing() from None
        raise
    return image_bytes


def snapshot_figures(
    snapshot: Snapshot, score_name: str | None = None
) -> tuple[FigureData | Omitted, ...]:
    return published_figures(figure_inputs(snapshot, score_name))


def export_figures(snapshot: Snapshot, fmt: str, out: Path) -> list[Path | Omitted]:
    """`export --format figures`: the snapshot's published figures in ``out``; returns the
    files written, then the figures left out with why."""
    published = snapshot_figures(snapshot)
    written: list[Path | Omitted] = [*write_figures(published, out)]
    return written + [figure for figure in published if isinstance(figure, Omitted)]


def _out_dir(out: Path) -> Path:
    if out.exists() and not out.is_dir():
        raise SnapshotError(f"cannot export figures to {out}: not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SnapshotError(f"cannot create {out}: {error_text(exc)}") from exc
    return out


def write_figures(figures: Sequence[FigureData | Omitted], out: Path) -> list[Path]:
    """Each drawable figure as ``NAME.png`` and ``NAME.svg`` in ``out``; returns the files."""
    render = image_renderer()
    out = _out_dir(Path(out))
    written: list[Path] = []
    for figure in figures:
        if isinstance(figure, Omitted):
            continue
        for fmt in IMAGE_FORMATS:
            path = out / f"{figure.name}.{fmt}"
            try:
                write_atomic(path, render(figure, fmt))
            except OSError as exc:
                raise SnapshotError(f"cannot write {path}: {error_text(exc)}") from exc
            written.append(path)
    return written
