"""The publishable write-up of a snapshot: provenance, lineup, the seed's tables, the figures,
the computed fleet recommendation, what the data cannot show, and the method notes.

One document (``Writeup``) is built here from the report's tables and ``core.figures``; the
HTML report (``html_report``) and the README-ready Markdown (``markdown_writeup``) only render
it. Every text that came from outside (labels, model ids, suite names, manifest values) is made
one plain line when rendered, and escaped for HTML or Markdown (``tables.markdown_line``) there.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nvfp4_tui.core.figures.board import Board
from nvfp4_tui.core.figures.plot_data import (
    ADDED_FIGURES,
    CLASS_LABELS,
    SEED_FIGURES,
    FigureData,
    Omitted,
    published_figures,
)
from nvfp4_tui.core.figures.recommendation import FleetRecommendation, fleet_recommendation
from nvfp4_tui.core.figures.scores import HEURISTIC, JUDGE, VERIFIED, score_label
from nvfp4_tui.core.outside_text import outside_line
from nvfp4_tui.core.slo import capacity_rows
from nvfp4_tui.output.error_table import error_rows, error_table
from nvfp4_tui.output.figures.files import image_renderer, write_figures
from nvfp4_tui.output.figures.inputs import figure_inputs
from nvfp4_tui.output.report import (
    Table,
    benchmark_tables,
    capacity_table,
    doubt_table,
    provenance_table,
    quality_summary,
    requests_summary,
    route_summary,
    sections_of,
    snapshot_server_view,
    speed_summary,
    throughput_summary,
    vram_table,
)
from nvfp4_tui.output.request_sections import section_tables
from nvfp4_tui.output.server_view import server_view_table
from nvfp4_tui.output.tables import format_table, markdown_line
from nvfp4_tui.store.reader import Snapshot


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class TableBlock:
    table: Table


@dataclass(frozen=True)
class FigureBlock:
    figure: FigureData


Block = Paragraph | Bullets | TableBlock | FigureBlock


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Writeup:
    title: str
    sections: tuple[Section, ...]


# ---- the document ------------------------------------------------------------------------------

METHOD_NOTES = (
    "TTFT: from the request's bytes reaching the socket to the first streamed chunk that "
    "carries generated text (content, reasoning or a tool call). TTFA: to the first answer "
    "token. ITL: the gaps between chunks that carry text; each request keeps its p50, p95, p99.",
    "Decode tok/s = (output tokens − the first chunk's tokens) / (E2E − TTFT), per request. "
    'E2E tok/s = output tokens / E2E latency: the seed\'s "tok/s", prefill included.',
    "Aggregate throughput of a level = output tokens of its phases / their wall time (not the "
    "sum of per-request rates, which the seed's script reported as total_throughput).",
    "Concurrency N = N requests held in flight per endpoint (closed loop). The seed's script "
    "launched every prompt × N at once, so an imported level says what it really held.",
    "Server view: what the server's own /metrics (vLLM's) said over each level's window, "
    "beside the client's means: exact means from its histograms' _sum and _count deltas, "
    "gauges (KV cache, running, waiting) from the polls inside the window.",
    "Means carry 95% intervals: Wilson for quality scores (they live in [0, 1]), Student's t "
    "for speeds; n is the number of answers or requests behind each.",
)
SCORE_NOTES = {
    VERIFIED: "verified: the answer checked (tests run, numbers compared, schemas validated).",
    HEURISTIC: "heuristic: the seed's text heuristic (structure, vocabulary, code indicators); "
    "comparable with the seed's tables, not with correctness.",
    JUDGE: "judge: an LLM judge's rubric grade.",
}
FLAG_NOTES = (
    "suspect: a row the legacy script recorded with 0 output tokens and no error (its silent "
    "HTTP failure): counted apart, never averaged in as a zero score.",
    "errors: failed requests (HTTP 4xx/5xx, timeout, connect, reset, protocol, truncated), "
    "counted apart from the timings and scores.",
    "timing doubt: phases during which the client's own event loop ran late, so their TTFT and "
    "ITL may read up to that lag long.",
    "not steady (*): a closed-loop level that held its concurrency less than 80% of its time; "
    "its throughput reads low.",
)


def _figure_blocks(figures: dict[str, FigureData | Omitted], *names: str) -> list[Block]:
    return [FigureBlock(f) for name in names if not isinstance(f := figures[name], Omitted)]


def _provenance(snapshot: Snapshot, board: Board, score_name: str) -> list[Block]:
    manifest = snapshot.manifest
    items = [
        f"run: {snapshot.run_id} ({snapshot.status})",
        f"started {manifest.get('started_at') or '—'}, ended {manifest.get('ended_at') or '—'}",
    ]
    legacy = manifest.get("legacy")
    if isinstance(legacy, dict):
        metadata = legacy.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        items.append(
            f"imported from the seed script's JSON {legacy.get('source_file', '—')} "
            f"(its date {metadata.get('date', '—')}, GPU {metadata.get('gpu', '—')}): per "
            "request it holds latency, output tokens and a heuristic score, no stream timings"
        )
    if isinstance(host := manifest.get("host"), str):
        items.append(f"written on host {host}")
    versions = manifest.get("versions")
    if isinstance(versions, dict) and versions:
        items.append("versions: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())))
    items.append(f"quality score shown: {SCORE_NOTES.get(score_name, score_label(score_name))}")
    blocks: list[Block] = [Bullets(tuple(items))]
    if (configured := provenance_table(manifest)) is not None:
        blocks.append(TableBlock(configured))
    return blocks


def lineup_table(board: Board) -> Table:
    """The endpoints as the run listed them: GPU, label, class, parameters, model, node."""
    rows = [
        [
            "—" if e.gpu is None else str(e.gpu),
            e.label,
            CLASS_LABELS.get(e.model_class, e.model_class or "—"),
            "—" if e.active_params_b is None else f"{e.active_params_b:g}B",
            "—" if e.experts is None else str(e.experts),
            e.model,
            e.node or "—",
        ]
        for e in board.endpoints
    ]
    return ("Lineup", ["GPU", "endpoint", "class", "active", "experts", "model", "node"], rows)


def _recommendation(rec: FleetRecommendation, board: Board, route: Table | None) -> list[Block]:
    labels = {e.id: e.label for e in board.endpoints}
    blocks: list[Block] = []
    if not rec.routes:
        return [Paragraph("No suite was scored, so there is nothing to route by.")]
    if not rec.recommends:
        blocks.append(
            Paragraph(
                f"Too thin to recommend: a route needs {rec.min_prompts} prompts scored on "
                f"every endpoint, and the best covered suite has {rec.best_covered} (fewer "
                "cannot tell models apart: a Wilson interval over 2 answers spans most of "
                "0–1). The evidence so far is below."
            )
        )
    else:
        blocks.append(
            Bullets(
                tuple(
                    f"GPU {'—' if a.gpu is None else a.gpu}: {labels.get(a.endpoint_id, a.endpoint_id)}"
                    f" — {', '.join(a.suites)}"
                    for a in rec.assignments
                )
            )
        )
        notes = [
            f"{r.suite}: too thin ({r.min_prompts} prompts, need {rec.min_prompts})"
            for r in rec.thin
        ]
        notes += [
            f"{labels.get(eid, eid)}: no task (never the fastest among those tied with the best)"
            for eid in rec.unrouted
        ]
        if notes:
            blocks.append(Bullets(tuple(notes)))
    if route is not None:
        blocks.append(TableBlock(route))
    return blocks


def build_writeup(snapshot: Snapshot, score_name: str | None = None) -> Writeup:
    inputs = figure_inputs(snapshot, score_name)
    board, score = inputs.board, inputs.score_name
    published = published_figures(inputs)
    figures = {f.name: f for f in published}
    events = snapshot.report_events()
    quality: list[Block] = [TableBlock(quality_summary(board, score))]
    if not board.seed_suites and board.benchmarks and isinstance(figures["quality"], Omitted):
        # Benchmarks alone: an empty table would say nothing; the reason says where to look.
        reason = figures["quality"].reason
        quality = [Paragraph(reason[:1].upper() + reason[1:] + ".")]
    sections: list[Section] = [
        Section("Run", tuple(_provenance(snapshot, board, score))),
        Section("Lineup", (TableBlock(lineup_table(board)),)),
        Section("Quality", (*quality, *_figure_blocks(figures, "quality", "profile"))),
    ]
    if benchmarks := benchmark_tables(board):  # never pooled with the suites above
        sections.append(
            Section(
                "Standard benchmarks",
                (*map(TableBlock, benchmarks), *_figure_blocks(figures, "benchmarks")),
            )
        )
    sections += [
        Section(
            "Speed",
            (
                TableBlock(speed_summary(board)),
                *_figure_blocks(figures, "speed", "pareto", "latency", "ttft", "itl"),
                *_figure_blocks(figures, "output_length"),
            ),
        ),
    ]
    throughput: list[Block] = [TableBlock(throughput_summary(board))]
    throughput += _figure_blocks(figures, "throughput_scaling")
    if capacity := capacity_rows(events):
        throughput.append(TableBlock(capacity_table(capacity, board.endpoints)))
    throughput += _figure_blocks(figures, "throughput_vs_load")
    sections.append(Section("Throughput", tuple(throughput)))
    if server_view := snapshot_server_view(snapshot):
        table = server_view_table(server_view, board.endpoints)
        sections.append(Section("Server view", (TableBlock(table),)))
    if (vram := vram_table(snapshot.gpu(), board.endpoints)) is not None:
        sections.append(Section("VRAM", (TableBlock(vram), *_figure_blocks(figures, "vram"))))
    rec = fleet_recommendation(board, score)
    sections.append(
        Section(
            "Fleet recommendation",
            tuple(_recommendation(rec, board, route_summary(board, score))),
        )
    )
    # The workloads' own tables (lengths, schedule, turns, slices, the context ladder); the
    # errors' table is among the flags below.
    given = sections_of(snapshot, events, board.endpoints, None)
    if workloads := section_tables(given, leave_out=(error_table,)):
        sections.append(Section("Workloads", tuple(map(TableBlock, workloads))))
    flags: list[Block] = [TableBlock(requests_summary(board))]
    if errors := error_rows(snapshot.requests(), board.endpoints):
        flags.append(TableBlock(error_table(errors, board.endpoints)))
    if (doubts := doubt_table(events, board.endpoints)) is not None:
        flags.append(TableBlock(doubts))
    sections.append(Section("Requests and flags", tuple(flags)))
    omitted = [f for f in published if isinstance(f, Omitted)]
    if omitted:
        sections.append(
            Section(
                "What this run cannot show",
                (Bullets(tuple(f"{f.title} ({f.name}): {f.reason}" for f in omitted)),),
            )
        )
    drawn = [f.name for f in published if not isinstance(f, Omitted)]
    seed = [n for n in SEED_FIGURES if n in drawn]
    added = [n for n in ADDED_FIGURES if n in drawn]
    sections.append(
        Section(
            "Method",
            (
                Bullets(METHOD_NOTES),
                Bullets(tuple(SCORE_NOTES.values())),
                Bullets(FLAG_NOTES),
                Paragraph(
                    f"Figures: the seed's {', '.join(seed) or 'none'}; added "
                    f"{', '.join(added) or 'none'}. One colour per endpoint in every figure and "
                    "in the monitor; dense models hatched or square, MoE solid or round."
                ),
            ),
        )
    )
    name = outside_line(str(snapshot.manifest.get("run_name") or snapshot.run_id))
    return Writeup(f"nvfp4-tui report: {name}", tuple(sections))


# ---- rendering ---------------------------------------------------------------------------------


def _cell(text: Any) -> str:
    return outside_line(str(text))


def _figure_caption(figure: FigureData) -> str:
    return _cell(f"{figure.title}. {figure.note}" if figure.note else figure.title)


def markdown_writeup(writeup: Writeup, figures_dir: str) -> str:
    """README-ready Markdown; figures linked as ``figures_dir/NAME.png`` (the path as given)."""

    def md(text: Any) -> str:
        # Outside text must not become Markdown or HTML of its own: the one rule for it.
        return markdown_line(str(text))

    base = figures_dir.rstrip("/")
    parts = [f"# {md(writeup.title)}"]
    for section in writeup.sections:
        parts.append(f"## {md(section.title)}")
        for block in section.blocks:
            if isinstance(block, Paragraph):
                parts.append(md(block.text))
            elif isinstance(block, Bullets):
                parts.append("\n".join(f"- {md(item)}" for item in block.items))
            elif isinstance(block, TableBlock):
                title, headers, rows = block.table
                # format_table escapes each cell and the title itself (markdown_line).
                parts.append(
                    format_table(
                        [str(h) for h in headers],
                        [[str(c) for c in row] for row in rows],
                        title=str(title) if title != section.title else None,
                        markdown=True,
                    )
                )
            else:
                caption = md(_figure_caption(block.figure))
                name = block.figure.name
                parts.append(f"![{md(block.figure.title)}]({base}/{name}.png)\n\n*{caption}*")
    return "\n\n".join(parts) + "\n"


CSS = """
body { font-family: system-ui, sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em;
       color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .8em 0 1.4em; font-size: .9em; }
caption { text-align: left; font-weight: 600; padding-bottom: .3em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; }
th { background: #f3f3f3; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0 2em; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: .9em; }
.scroll { overflow-x: auto; }
"""


def _numeric(text: str) -> bool:
    digits = text.replace(",", "").replace(".", "", 1).lstrip("+-−").rstrip("%*")
    return digits.isdigit()


def _html_table(table: Table, section_title: str) -> str:
    title, headers, rows = table
    e = html.escape
    head = "".join(f"<th>{e(_cell(h))}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{e(_cell(c))}</td>' if _numeric(_cell(c)) else f"<td>{e(_cell(c))}</td>"
            for c in row
        )
        + "</tr>"
        for row in rows
    )
    caption = f"<caption>{e(_cell(title))}</caption>" if title != section_title else ""
    return (
        f'<div class="scroll"><table>{caption}'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def html_report(writeup: Writeup, render: Callable[[FigureData, str], bytes]) -> str:
    """One self-contained HTML file: CSS inline, figures as base64 PNG, no external reference."""
    e = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{e(_cell(writeup.title))}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{e(_cell(writeup.title))}</h1>",
    ]
    for section in writeup.sections:
        out.append(f"<h2>{e(_cell(section.title))}</h2>")
        for block in section.blocks:
            if isinstance(block, Paragraph):
                out.append(f"<p>{e(_cell(block.text))}</p>")
            elif isinstance(block, Bullets):
                items = "".join(f"<li>{e(_cell(item))}</li>" for item in block.items)
                out.append(f"<ul>{items}</ul>")
            elif isinstance(block, TableBlock):
                out.append(_html_table(block.table, section.title))
            else:
                png = base64.b64encode(render(block.figure, "png")).decode("ascii")
                out.append(
                    f'<figure id="{e(block.figure.name)}"><img alt="{e(_cell(block.figure.title))}" '
                    f'src="data:image/png;base64,{png}">'
                    f"<figcaption>{e(_figure_caption(block.figure))}</figcaption></figure>"
                )
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def render_writeup(
    snapshot: Snapshot,
    fmt: str,
    *,
    figures_dir: Path | None = None,
    score_name: str | None = None,
) -> str:
    """``html``: the self-contained report; ``markdown``: the write-up linking the figures,
    which are written to ``figures_dir`` first."""
    writeup = build_writeup(snapshot, score_name)
    if fmt == "html":
        return html_report(writeup, image_renderer())
    if figures_dir is None:
        raise ValueError("a Markdown write-up needs the directory of its figures")
    figures: Sequence[FigureData] = [
        b.figure for s in writeup.sections for b in s.blocks if isinstance(b, FigureBlock)
    ]
    write_figures(figures, figures_dir)
    return markdown_writeup(writeup, figures_dir.as_posix())
