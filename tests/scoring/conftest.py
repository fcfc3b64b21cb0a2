"""Fixtures of the sandbox tests: which sandbox a case runs in, and where its directories go."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from nvfp4_tui.scoring.sandbox import bwrap_status, fallback_refusal


@pytest.fixture(params=["bwrap", "rlimit-only"])
def mode(request) -> str:
    if request.param == "bwrap" and not bwrap_status()[0]:
        pytest.skip(f"bubblewrap unusable here: {bwrap_status()[1]}")
    if request.param == "rlimit-only" and fallback_refusal():
        pytest.skip(f"the fallback refuses to run code here: {fallback_refusal()}")
    return request.param


@pytest.fixture
def sandbox_tmp(tmp_path, monkeypatch) -> Path:
    """Sandbox directories under this test's tmp_path, so a leftover one is seen."""
    root = tmp_path / "sandboxes"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root
