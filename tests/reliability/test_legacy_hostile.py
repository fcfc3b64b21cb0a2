"""Hostile legacy JSON: wrong types, missing keys, huge strings, deep nesting, odd files.

Each is refused with one line naming the file and the key, exit 2 through ``nvfp4-tui import``,
and a 50 MB string costs the importer no more than a few times its size in memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nvfp4_tui.cli import main as cli_main
from nvfp4_tui.store.legacy import TEXT_MAX_CHARS, LegacyError, import_legacy
from tests.replay.builders import legacy_file

HUGE_CHARS = 50 * 1024 * 1024
RSS_GROWTH_MAX = 4  # the importer's peak memory growth, in multiples of the huge string


@pytest.fixture
def good(tmp_path: Path) -> dict[str, Any]:
    return legacy_file(tmp_path / "good.json")


def _with(body: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``body`` with the dotted ``path`` (list indices as numbers) set, or removed for DELETE."""
    copy = json.loads(json.dumps(body))
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    target = copy
    for step in parents:
        target = target[step]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value
    return copy


DELETE = object()
CASES = [
    ("metadata", DELETE, "metadata: missing"),
    ("results", DELETE, "results: missing"),
    ("metadata.date", 20260416, "metadata.date: expected a date"),
    ("metadata.models", [], "metadata.models: expected an object of models"),
    ("results.0.tokens_out", "512", "results[0].tokens_out: expected an integer"),
    ("results.0.latency_ms", -1, "results[0].latency_ms: expected a number >= 0"),
    ("results.0.concurrency", 0, "results[0].concurrency: expected an integer >= 1"),
    ("results.0.model", DELETE, "results[0].model: missing"),
    ("results.0.model", "ghost\n\x1b[2J", "results[0].model: expected one of"),
    ("results.0", "row", "results[0]: expected an object"),
    ("results.0.content", 7, "results[0].content: expected a string"),
    ("results.1.content", "x" * (TEXT_MAX_CHARS + 1), "results[1].content: a string of"),
    ("metadata.gpu", "y" * (TEXT_MAX_CHARS + 1), "metadata.gpu: a string of"),
]


@pytest.mark.parametrize(("path", "value", "says"), CASES, ids=[c[0] + c[2][-8:] for c in CASES])
def test_bad_legacy_files_are_one_line_errors_exit_2(
    tmp_path: Path,
    good: dict[str, Any],
    path: str,
    value: Any,
    says: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    legacy = tmp_path / "bad.json"
    legacy.write_text(json.dumps(_with(good, path, value)))
    with pytest.raises(LegacyError) as caught:
        import_legacy(legacy, tmp_path / "out")
    message = str(caught.value)
    assert message.startswith(f"{legacy}: ") and says in message, message
    assert len(message.splitlines()) == 1 and "\x1b" not in message and len(message) < 400
    assert not (tmp_path / "out").exists()  # nothing half-imported
    assert cli_main(["import", str(legacy), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == message


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 64 levels"),
        (b"\xff\xfe{", "cannot read"),
        (b"[1, 2, 3]", "top level: expected an object"),
        (b'{"metadata": {}, "results": []}', "metadata.date: missing"),
    ],
)
def test_files_that_are_not_legacy_json_are_one_line_errors(
    tmp_path: Path, content: bytes, says: str
) -> None:
    legacy = tmp_path / "odd.json"
    legacy.write_bytes(content)
    with pytest.raises(LegacyError, match=says) as caught:
        import_legacy(legacy, tmp_path / "out")
    assert len(str(caught.value).splitlines()) == 1


def test_a_device_is_not_read_without_bound(tmp_path: Path) -> None:
    with pytest.raises(LegacyError, match=r"not JSON|cannot read|more than"):
        import_legacy(Path("/dev/null"), tmp_path / "out")


MEASURE = """
import json, resource, sys
from pathlib import Path
from nvfp4_tui.store.legacy import LegacyError, import_legacy
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    import_legacy(Path(sys.argv[1]), Path(sys.argv[2]))
    outcome = "imported"
except LegacyError as error:
    outcome = str(error)
grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(json.dumps({"outcome": outcome, "grown_bytes": grown_kib * 1024}))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is KiB on Linux")
def test_a_50_mb_string_costs_a_few_times_its_size(tmp_path: Path, good: dict[str, Any]) -> None:
    legacy = tmp_path / "huge.json"
    legacy.write_text(json.dumps(_with(good, "results.3.content", "z" * HUGE_CHARS)))
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(legacy), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert "results[3].content: a string of 52,428,800 characters" in report["outcome"]
    assert report["grown_bytes"] < RSS_GROWTH_MAX * HUGE_CHARS, report
