"""The line reader of Prometheus text: names, values and labels as prometheus_client reads them."""

from __future__ import annotations

import math
import re

import pytest
from prometheus_client.parser import text_string_to_metric_families

from nvfp4_tui.telemetry.exposition import NotPrometheusText, Sample, samples
from tests.telemetry.fakes import dcgm_text
from tests.telemetry.test_prometheus_parse import ODD_BUT_VALID, VLLM_BODY

ESCAPES = 'x{path="C:\\\\dir",say="a \\"b\\"\\nc",empty=""} 1\n'


@pytest.mark.parametrize("body", ["odd", "vllm", "dcgm", "escapes"])
def test_samples_and_labels_are_what_prometheus_client_reads(body: str) -> None:
    text = {
        "odd": lambda: ODD_BUT_VALID,
        "vllm": lambda: VLLM_BODY.read_text(encoding="utf-8"),
        "dcgm": lambda: dcgm_text(hosts=("node7", "node8"), with_total=True),
        "escapes": lambda: ESCAPES,
    }[body]()

    # prometheus_client adds "_total" to a counter written without it; the reader keeps the
    # name as the body has it.
    def as_written(name: str) -> str:
        written = re.search(rf"^{re.escape(name)}[{{ ]", text, re.MULTILINE)
        return name if written else name.removesuffix("_total")

    expected = [
        (as_written(s.name), s.labels, s.value)
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if not math.isnan(s.value)
    ]
    assert [(s.name, s.labels(), s.value) for s in samples(text)] == expected


def test_escapes_are_undone() -> None:
    (sample,) = samples(ESCAPES)
    assert sample.labels() == {"path": "C:\\dir", "say": 'a "b"\nc', "empty": ""}


@pytest.mark.parametrize("raw", ['gpu="0" junk', "gpu=0", '="x"', 'gpu="0",,uuid="u"'])
def test_labels_that_are_no_pairs_are_refused(raw: str) -> None:
    with pytest.raises(NotPrometheusText, match='name="value" pairs'):
        Sample("DCGM_FI_DEV_GPU_UTIL", raw, 1.0).labels()


def test_a_line_that_is_no_sample_is_quoted_whole() -> None:
    line = "Bearer sk-" + "x" * 60
    with pytest.raises(NotPrometheusText) as raised:
        list(samples(f"ok 1\n{line}\n"))
    assert line in str(raised.value)
