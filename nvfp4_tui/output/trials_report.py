"""The report of a plan run several times (``--trials N``, ``nvfp4-tui trials SNAPSHOT...``):
each leaderboard figure as its mean over the trials with its 95% interval across them
(``core.figures.trials``), in a table or as JSON rows (``kind: "trial"``)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from nvfp4_tui.core.figures.trials import TrialChange, TrialRow, trial_changes, trial_rows
from nvfp4_tui.output.report import snapshot_board
from nvfp4_tui.output.tables import Table, format_table, number_cell, table_cells
from nvfp4_tui.store.reader import Snapshot

TRIAL_FORMATS = ("text", "markdown", "json")


def trials_of(snapshots: Sequence[Snapshot]) -> tuple[list[TrialRow], dict[str, str]]:
    """The rows, and each endpoint's label (the first trial's)."""
    boards = [snapshot_board(snapshot) for snapshot in snapshots]
    labels: dict[str, str] = {}
    for board in boards:
        for endpoint in board.endpoints:
            labels.setdefault(endpoint.id, endpoint.label)
    return trial_rows([board.rows for board in boards]), labels


def trials_table(rows: Sequence[TrialRow], labels: dict[str, str], count: int) -> Table:
    title = (
        f"Trials: each figure's mean over {count} runs of the plan, with the 95% interval of that "
        "mean across runs (Student's t), and each run's value"
    )
    headers = ["endpoint", "suite", "load", "figure", "n", "mean", "± 95%", "per trial"]
    body = [
        [
            labels.get(r.endpoint_id, r.endpoint_id),
            r.suite,
            r.load.label,
            r.figure.name,
            f"{len(r.values)}/{r.trials}",
            number_cell(r.mean, r.figure.spec),
            number_cell(r.ci95_half, r.figure.spec),
            " ".join(format(v, r.figure.spec) for v in r.values),
        ]
        for r in rows
    ]
    return title, headers, body


def changes_table(changes: Sequence[TrialChange], labels: dict[str, str]) -> Table:
    title = (
        "Trials A → B: each figure's mean over each set's runs (± its 95% interval), the change, "
        "and whether the means differ at 95% (Welch's t-test across runs)"
    )
    headers = ["endpoint", "suite", "load", "figure", "A", "B", "change", "differ"]
    body = [
        [
            labels.get(c.a.endpoint_id, c.a.endpoint_id),
            c.a.suite,
            c.a.load.label,
            c.a.figure.name,
            _with_interval(c.a),
            _with_interval(c.b),
            "—" if c.relative is None else f"{c.relative * 100:+.1f} %",
            {True: "yes", False: "no", None: "—"}[c.significant],
        ]
        for c in changes
    ]
    return title, headers, body


def _with_interval(row: TrialRow) -> str:
    spec = row.figure.spec
    text = number_cell(row.mean, spec)
    half = row.ci95_half
    return text if half is None else f"{text} ± {format(half, spec)} (n={len(row.values)})"


def render_trials(
    snapshots: Sequence[Snapshot], fmt: str = "text", versus: Sequence[Snapshot] = ()
) -> str:
    """The trials' table; with ``versus``, A (``snapshots``) against B, figure by figure."""
    if fmt not in TRIAL_FORMATS:
        raise ValueError(f"trials format must be one of {list(TRIAL_FORMATS)}, got {fmt!r}")
    rows, labels = trials_of(snapshots)
    if versus:
        other, other_labels = trials_of(versus)
        changes = trial_changes(rows, other)
        if fmt == "json":
            return json.dumps([change.json() for change in changes], indent=1)
        title, headers, body = changes_table(changes, {**other_labels, **labels})
        return format_table(headers, table_cells(body), title=title, markdown=fmt == "markdown")
    if fmt == "json":
        return json.dumps([row.json() for row in rows], indent=1)
    title, headers, body = trials_table(rows, labels, len(snapshots))
    return format_table(headers, table_cells(body), title=title, markdown=fmt == "markdown")
