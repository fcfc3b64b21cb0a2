"""The load, limit and SLO keys of a profile, the command line's flags, and their one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nvfp4_tui.bench.worker import WorkerSpec
from nvfp4_tui.cli import build_parser, main
from nvfp4_tui.config.plan import LaunchPlan, plan_run
from nvfp4_tui.config.profile import ConfigError, SweepSpec, load_profile, with_overrides
from nvfp4_tui.core.slo import SloTargets

ENDPOINT = """
[[endpoint]]
id = "a"
url = "http://127.0.0.1:8016"
model = "current"
gpu = 0
{extra}
"""


def write(tmp_path: Path, run: str, extra: str = "") -> Path:
    path = tmp_path / "p.toml"
    path.write_text(
        f'[run]\nname = "t"\nsuites = ["english"]\n{run}\n' + ENDPOINT.format(extra=extra)
    )
    return path


def test_every_new_key_is_read(tmp_path: Path) -> None:
    run = """
rate = [1, 2.5]
arrivals = "constant"
max_concurrency = 8
sweep = { factor = 1.5, max_steps = 4, max_error_share = 0.2 }
duration_s = 60
warmup_s = 5
cooldown_s = 5
max_duration_s = 90
max_requests = 500
max_errors = 10
slo = { ttft_s = 0.5, tpot_s = 0.05, e2e_s = 30, attainment = 0.95 }
"""
    profile = load_profile(write(tmp_path, run, extra="slo = { ttft_s = 2 }"))
    plan = profile.run
    assert plan.rate_rps == (1.0, 2.5) and plan.arrivals == "constant"
    assert plan.max_concurrency == 8
    assert plan.sweep == SweepSpec(factor=1.5, max_steps=4, max_error_share=0.2)
    assert (plan.warmup_s, plan.cooldown_s) == (5.0, 5.0)
    assert (plan.max_duration_s, plan.max_requests, plan.max_errors) == (90.0, 500, 10)
    assert plan.slo == SloTargets(0.5, 0.05, 30.0, 0.95)
    # An endpoint's slo table overrides the keys it names and keeps the run's others.
    assert profile.endpoints[0].slo == SloTargets(2.0, 0.05, 30.0, 0.95)


def test_defaults_keep_a_closed_loop_without_targets(tmp_path: Path) -> None:
    profile = load_profile(write(tmp_path, "sweep = true"))
    plan = profile.run
    assert plan.rate_rps == () and plan.concurrency == (1,) and plan.sweep == SweepSpec()
    assert plan.arrivals == "poisson" and not plan.slo.defined
    assert profile.endpoints[0].slo is None
    assert load_profile(write(tmp_path, "sweep = false")).run.sweep is None


BAD = [
    (
        "rate = 0",
        "run.rate: expected a number of requests/s > 0 and <= 10000, or a list of them, got 0",
    ),
    (
        "rate = 2\nconcurrency = [4]",
        "run.rate: set either concurrency (closed loop) or rate (open loop), not both",
    ),
    ('arrivals = "poisson"', "run.arrivals: only applies with rate (an open loop)"),
    ("max_concurrency = 4", "run.max_concurrency: only applies with rate (an open loop)"),
    ('rate = 2\narrivals = "bursty"', 'run.arrivals: expected "constant", "poisson" or "gamma"'),
    ("rate = 2\nburstiness = 0.5", 'run.burstiness: only applies with arrivals = "gamma"'),
    (
        'rate = 2\narrivals = "gamma"\nburstiness = 0',
        "run.burstiness: expected a number above 0 and at most 1000, got 0",
    ),
    ("sweep = 3", "run.sweep: expected true, false or a table such as"),
    ("sweep = { factor = 1 }", "run.sweep.factor: expected a number > 1, got 1"),
    ("sweep = { steps = 4 }", "run.sweep.steps: unknown key; did you mean 'max_steps'?"),
    (
        "sweep = true\nconcurrency = [4, 2]",
        "run.concurrency: a sweep climbs: expected increasing levels",
    ),
    ("slo = { ttft_s = -1 }", "run.slo.ttft_s: expected a number of seconds > 0, got -1"),
    ("slo = { attainment = 1.5 }", "run.slo.attainment: expected a share > 0 and <= 1, got 1.5"),
    ("slo = { ttft = 1 }", "run.slo.ttft: unknown key; did you mean 'ttft_s'?"),
    ("warmup_requests = 2\nwarmup_s = 1", "run.warmup_s: set either warmup_requests or warmup_s"),
    (
        "duration_s = 10\ncooldown_requests = 2",
        "run.cooldown_requests: needs phases bounded by requests; with duration_s use cooldown_s",
    ),
    ("cooldown_s = 2", "run.cooldown_s: a closed loop bounded by requests has no known end"),
    (
        "duration_s = 10\nwarmup_s = 6\ncooldown_s = 4",
        "run.cooldown_s: warmup_s + cooldown_s must be shorter than duration_s",
    ),
    ("max_errors = 0", "run.max_errors: expected an integer >= 1, got 0"),
    (
        "sweep = true\nmax_requests = 10",
        "run.max_requests: 10 requests a phase can never hold c=128 in flight; raise it",
    ),
    (
        "concurrency = [1, 4]\nmax_requests = 2",
        "run.max_requests: 2 requests a phase can never hold c=4 in flight",
    ),
    (
        "max_duration_s = 0",
        "run.max_duration_s: expected a number of seconds > 0 and <= 604800, got 0",
    ),
]


@pytest.mark.parametrize(("run", "message"), BAD)
def test_bad_keys_get_one_line_each(tmp_path: Path, run: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_profile(write(tmp_path, run))
    [line] = caught.value.problems
    assert line.startswith(f"{tmp_path / 'p.toml'}: {message}")


def test_a_bad_endpoint_slo_names_its_endpoint(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_profile(write(tmp_path, "", extra='slo = { e2e_s = "long" }'))
    assert caught.value.problems == [
        f"{tmp_path / 'p.toml'}: endpoint[0].slo.e2e_s: expected a number of seconds > 0, "
        'got "long"'
    ]


def test_overrides_switch_between_closed_and_open_loops(tmp_path: Path) -> None:
    closed = load_profile(write(tmp_path, "concurrency = [1, 4]"))
    opened = with_overrides(closed, rate_rps=(2.0,), arrivals="constant", sweep=True)
    assert opened.run.rate_rps == (2.0,) and opened.run.arrivals == "constant"
    assert opened.run.sweep == SweepSpec()
    assert with_overrides(closed, sweep=True).run.concurrency == (1,)  # climbs from the first
    assert with_overrides(closed, concurrency=(1, 2, 3), sweep=True).run.concurrency == (1, 2, 3)
    back = with_overrides(opened, concurrency=(8,))
    assert back.run.rate_rps == () and back.run.concurrency == (8,)
    with pytest.raises(ConfigError, match="--arrivals: only applies with a rate"):
        with_overrides(closed, arrivals="poisson")
    timed = load_profile(write(tmp_path, "rate = 2\nduration_s = 30\ncooldown_s = 5"))
    with pytest.raises(ConfigError, match=r"run\.cooldown_s: a closed loop bounded by requests"):
        with_overrides(timed, concurrency=(2,), requests=3)


def test_the_worker_receives_the_plan_as_resolved(tmp_path: Path) -> None:
    path = write(tmp_path, "concurrency = [1]\nsweep = { max_steps = 3 }\nslo = { ttft_s = 0.5 }")
    base = load_profile(path)
    for profile in (base, with_overrides(base, rate_rps=(1.0, 3.0), arrivals="constant")):
        plan = (
            plan_run(profile, gpu_telemetry="none")
            .with_urls({"a": "http://127.0.0.1:9"}, 5.0)
            .with_gpus({"a": 3})
        )
        sent = json.dumps(WorkerSpec.of(plan, tmp_path).__dict__)
        assert LaunchPlan.from_plain(WorkerSpec(**json.loads(sent)).plan) == plan
        # A file edited between launch and the worker's start changes nothing: the plan
        # travels whole, and the worker reads no file of it.
        text = path.read_text()
        path.write_text(text.replace("concurrency = [1]", "concurrency = [2]"))
        assert LaunchPlan.from_plain(WorkerSpec(**json.loads(sent)).plan) == plan
        path.write_text(text)


def test_a_missing_suite_stops_a_monitored_run_before_it_starts(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, "concurrency = [1]")
    assert main(["run", str(path), "--suites", "nope", "--out", str(tmp_path / "out")]) == 2
    assert "no suite named 'nope'" in capsys.readouterr().err
    assert not list((tmp_path / "out").iterdir())  # no snapshot, no worker started


def test_a_flag_is_spelled_out_no_abbreviation_stands_for_it(capsys) -> None:
    assert build_parser().parse_args(["run", "p.toml", "--headless"]).headless
    for argv in (["run", "p.toml", "--headles"], ["demo", "--time-sc", "10"], ["--vers", "demo"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(argv)
        assert "unrecognized arguments" in capsys.readouterr().err


def test_command_line_flags(tmp_path: Path, capsys) -> None:
    args = build_parser().parse_args(
        ["run", "p.toml", "--rate", "0.5,2", "--arrivals", "constant", "--sweep"]
    )
    assert (args.rate, args.arrivals, args.sweep) == ((0.5, 2.0), "constant", True)
    assert build_parser().parse_args(["demo"]).rate is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "p.toml", "--rate", "2", "--concurrency", "4"])
    assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "p.toml", "--rate", "0"])
    assert "expected requests/s > 0" in capsys.readouterr().err
    path = write(tmp_path, "concurrency = [1]")
    assert main(["run", str(path), "--arrivals", "poisson", "--headless"]) == 2
    assert capsys.readouterr().err.strip() == (
        "--arrivals: only applies with a rate (--rate, or rate in [run])"
    )
