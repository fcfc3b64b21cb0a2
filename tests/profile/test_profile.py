"""Fleet profiles: the shipped ones load, and every bad input gets its one-line message."""

from __future__ import annotations

from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.config import DEMO_PROFILE
from nvfp4_tui.config.profile import (
    ConfigError,
    ServerSettings,
    load_profile,
    with_overrides,
    with_urls,
)

PROFILES = Path(__file__).resolve().parents[2] / "profiles"

GOOD = """
[run]
name = "t"
suites = ["english"]

[[endpoint]]
id = "a"
url = "http://127.0.0.1:8016/v1/"
model = "current"
gpu = 0
class = "moe"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "p.toml"
    path.write_text(text)
    return path


def test_seed_fleet_profile_matches_design() -> None:
    profile = load_profile(PROFILES / "nvfp4-7gpu.toml")
    assert [e.gpu for e in profile.endpoints] == list(range(7))
    assert [e.url for e in profile.endpoints] == [
        f"http://127.0.0.1:{p}" for p in range(8016, 8023)
    ]
    assert {e.model for e in profile.endpoints} == {"current"}
    assert [e.model_class for e in profile.endpoints].count("moe") == 4
    assert all(e.sim is None for e in profile.endpoints)


def test_demo_profile_is_simulated_with_seed_figures() -> None:
    profile = load_profile(DEMO_PROFILE)
    figures = {e.label: (e.sim.decode_tps, e.sim.vram_used_mib) for e in profile.endpoints if e.sim}
    assert figures["Qwen3.6-35B-A3B"] == (144.0, 92316)
    assert figures["Gemma4-31B"] == (50.0, 94210)
    assert len(figures) == 7
    assert profile.run.concurrency == (1, 4)


def test_a_sim_measured_with_other_settings_keeps_the_served_where_it_says_none(
    tmp_path: Path,
) -> None:
    sim = "[endpoint.sim]\ndecode_tps = 9\ngpu_memory_utilization = 0.8\n"
    (plain,) = load_profile(write(tmp_path, GOOD + sim)).endpoints
    assert plain.sim is not None
    assert plain.sim.measured == plain.sim.served == ServerSettings("auto", 0.8)
    sim += 'measured_with = { kv_cache_dtype = "fp8" }\n'
    (other,) = load_profile(write(tmp_path, GOOD + sim)).endpoints
    assert other.sim is not None and other.sim.measured == ServerSettings("fp8", 0.8)


def test_url_is_normalised_and_overrides_apply(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, GOOD))
    assert profile.endpoints[0].url == "http://127.0.0.1:8016"
    changed = with_overrides(profile, concurrency=(2, 8), duration_s=5.0)
    assert (changed.run.concurrency, changed.run.requests, changed.run.duration_s) == (
        (2, 8),
        None,
        5.0,
    )
    moved = with_urls(profile, {"a": "http://127.0.0.1:9999"})
    assert moved.endpoints[0].url == "http://127.0.0.1:9999"


def test_node_is_the_profiles_or_the_urls_host(tmp_path: Path) -> None:
    (plain,) = load_profile(write(tmp_path, GOOD)).endpoints
    assert (plain.node, plain.info.node) == ("127.0.0.1", "127.0.0.1")
    (named,) = load_profile(write(tmp_path, GOOD + 'node = "gpubox2"\n')).endpoints
    assert named.info.node == "gpubox2"


BAD = [
    (
        "gpu = 0",
        'gpu = "two"',
        'endpoint[0].gpu: expected an integer >= 0, a GPU UUID ("GPU-…") or "auto", got "two"',
    ),
    (
        "gpu = 0",
        "gpu = -1",
        'endpoint[0].gpu: expected an integer >= 0, a GPU UUID ("GPU-…") or "auto", got -1',
    ),
    (
        'url = "http://127.0.0.1:8016/v1/"',
        'url = "ftp://x"',
        'endpoint[0].url: expected an http(s) URL such as http://127.0.0.1:8016, got "ftp://x"',
    ),
    (
        'url = "http://127.0.0.1:8016/v1/"',
        'url = "http://h:99999"',
        'endpoint[0].url: expected an http(s) URL such as http://127.0.0.1:8016, got "http://h:99999"',
    ),
    (
        'class = "moe"',
        'class = "sparse"',
        'endpoint[0].class: expected "moe" or "dense", got "sparse"',
    ),
    ('class = "moe"', 'clas = "moe"', "endpoint[0].clas: unknown key; did you mean 'class'?"),
    (
        'model = "current"',
        "",
        "endpoint[0].model: missing; expected the served model name, a non-empty string",
    ),
    (
        'suites = ["english"]',
        "suites = []",
        "run.suites: expected a non-empty list of suite names, got []",
    ),
    (
        'suites = ["english"]',
        'suites = ["english"]\nconcurrency = [0]',
        "run.concurrency: expected a non-empty list of integers from 1 to 4096, got [0]",
    ),
    (
        'suites = ["english"]',
        'suites = ["english"]\nrequests = 2\nduration_s = 5',
        "run.requests: set either requests or duration_s, not both",
    ),
    (
        'suites = ["english"]',
        'suites = ["english"]\ntemprature = 0.2',
        "run.temprature: unknown key; did you mean 'temperature'?",
    ),
    (
        'suites = ["english"]',
        'suites = ["english"]\ntimeout_s = true',
        "run.timeout_s: expected a number of seconds > 0 and <= 604800, got true",
    ),
    (
        'suites = ["english"]',
        'suites = ["english"]\nconcurrency = [1, 1000000000000000000]',
        "run.concurrency: expected a non-empty list of integers from 1 to 4096, "
        "got [1, 1000000000000000000]",
    ),
    (
        'suites = ["english"]',
        'suites = ["english"]\nrequests = 10000000',
        "run.requests: expected an integer from 1 to 1000000, got 10000000",
    ),
    (
        'suites = ["english"]',
        'suites = ["english"]\nrate = 1e9',
        "run.rate: expected a number of requests/s > 0 and <= 10000, or a list of them, got 1000000000.0",
    ),
    (
        'suites = ["english"]',
        'suites = ["english"]\nduration_s = 1e12',
        "run.duration_s: expected a number of seconds > 0 and <= 604800, got 1000000000000.0",
    ),
    (
        'suites = ["english"]',
        'suites = ["english"]\nmax_tokens = 99999999',
        "run.max_tokens: expected an integer from 1 to 1048576, got 99999999",
    ),
    (
        'class = "moe"',
        'class = "moe"\n[endpoint.sim]\ndecode_tps = -3',
        "endpoint[0].sim.decode_tps: expected a number of tokens/s > 0, got -3",
    ),
    (
        'class = "moe"',
        'class = "moe"\n[endpoint.sim]\ndecode_tps = 9\n[endpoint.sim.faults]\nhttp_status = 418',
        "endpoint[0].sim.faults.http_status: expected one of 400, 404, 422, 429, 500, 503, got 418",
    ),
    (
        'class = "moe"',
        'class = "moe"\n[endpoint.sim]\ndecode_tps = 9\nkv_cache_dtype = "fp4"',
        "endpoint[0].sim.kv_cache_dtype: expected one of auto, bfloat16, fp8, fp8_e4m3, "
        'fp8_e5m2, fp8_inc, got "fp4"',
    ),
    (
        'class = "moe"',
        'class = "moe"\n[endpoint.sim]\ndecode_tps = 9\nmeasured_with = { kv_cache_dtype = 8 }',
        "endpoint[0].sim.measured_with.kv_cache_dtype: expected one of auto, bfloat16, fp8, "
        "fp8_e4m3, fp8_e5m2, fp8_inc, got 8",
    ),
    (
        'class = "moe"',
        'class = "moe"\n[endpoint.sim]\ndecode_tps = 9\ngpu_memory_utilization = 1.5',
        "endpoint[0].sim.gpu_memory_utilization: expected a share of the GPU's memory > 0 and "
        "<= 1, got 1.5",
    ),
    (
        'class = "moe"',
        'class = "moe"\ntelemetry = "dcgm:nowhere"',
        'endpoint[0].telemetry: expected "nvml", "none", "sim", "dcgm:http://host:9400/metrics" or "prometheus:http://host:9090", got "dcgm:nowhere"',
    ),
    (
        'id = "a"',
        'id = "a b"',
        "endpoint[0].id: expected an id of letters, digits, '_', '.' or '-', got \"a b\"",
    ),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD)
def test_bad_profile_gets_one_line(tmp_path: Path, old: str, new: str, message: str) -> None:
    path = write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.problems == [f"{path}: {message}"]


def test_duplicates_are_caught(tmp_path: Path) -> None:
    second = GOOD.split("[[endpoint]]")[1]
    path = write(tmp_path, GOOD + "[[endpoint]]" + second)
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    assert err.value.problems == [
        f"{path}: endpoint[1].id: duplicate id 'a', already used by endpoint[0]",
        f"{path}: endpoint[1].gpu: duplicate gpu 0 on node '127.0.0.1', already used by endpoint[0]",
        f"{path}: endpoint[1].url: duplicate url 'http://127.0.0.1:8016', already used by endpoint[0]",
    ]


def test_each_node_has_its_own_gpu_indices(tmp_path: Path) -> None:
    second = GOOD.split("[[endpoint]]")[1].replace('id = "a"', 'id = "b"')
    second = second.replace("127.0.0.1:8016", "10.0.0.2:8016")
    profile = load_profile(write(tmp_path, GOOD + "[[endpoint]]" + second))
    assert [(e.node, e.gpu) for e in profile.endpoints] == [("127.0.0.1", 0), ("10.0.0.2", 0)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[run\n", "not valid TOML"),
        ("[run]\nsuites=['x']\n", "endpoint: missing; expected at least one [[endpoint]] table"),
        ("endpoint = 3\n[run]\nsuites=['x']\n", "endpoint: expected an array of tables, got 3"),
    ],
)
def test_structural_problems(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_profile(write(tmp_path, text))
    assert message in str(err.value)


def test_cli_reports_bad_profile_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, GOOD.replace("gpu = 0", 'gpu = "two"'))
    assert main(["run", str(path), "--headless", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith('got "two"')
    assert "Traceback" not in err
    assert main(["run", str(tmp_path / "missing.toml"), "--headless"]) == 2
    assert "file not found" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "overrides", "message"),
    [
        (
            "--concurrency",
            {"concurrency": (1, 10**9)},
            "integers from 1 to 4096, got [1, 1000000000]",
        ),
        ("--rate", {"rate_rps": (0.5, 1e6)}, "<= 10000, or a list of them, got [0.5, 1000000.0]"),
        ("--requests", {"requests": 0}, "an integer from 1 to 1000000, got 0"),
        ("--duration", {"duration_s": 1e9}, "seconds > 0 and <= 604800, got 1000000000.0"),
    ],
)
def test_command_line_options_have_the_profile_bounds(
    tmp_path: Path, option: str, overrides: dict, message: str
) -> None:
    profile = load_profile(write(tmp_path, GOOD))
    with pytest.raises(ConfigError) as err:
        with_overrides(profile, **overrides)
    [line] = err.value.problems
    assert line.startswith(f"{option}: expected ") and line.endswith(message)


def test_run_level_telemetry_is_every_endpoints_default(tmp_path: Path) -> None:
    text = GOOD.replace(
        'suites = ["english"]', 'suites = ["english"]\ntelemetry = "prometheus:http://prom:9090"'
    )
    second = GOOD.split("[[endpoint]]")[1].replace('id = "a"', 'id = "b"').replace("8016", "8017")
    second = second.replace("gpu = 0", "gpu = 1")
    text += "[[endpoint]]" + second.replace('class = "moe"', 'class = "moe"\ntelemetry = "nvml"')
    profile = load_profile(write(tmp_path, text))
    assert str(profile.run.telemetry) == "prometheus:http://prom:9090"
    assert [str(e.telemetry) for e in profile.endpoints] == ["prometheus:http://prom:9090", "nvml"]
    bad = write(
        tmp_path, GOOD.replace('suites = ["english"]', 'suites = ["english"]\ntelemetry = "prom"')
    )
    with pytest.raises(ConfigError) as err:
        load_profile(bad)
    assert err.value.problems == [
        f'{bad}: run.telemetry: expected "nvml", "none", "sim", "dcgm:http://host:9400/metrics" '
        'or "prometheus:http://host:9090", got "prom"'
    ]
