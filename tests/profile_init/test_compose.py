"""``init --from-compose``: the seed's compose file, other ways of writing one, bad input."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from nvfp4_tui.cli import main
from nvfp4_tui.config.profile import load_profile
from nvfp4_tui.config.suites import load_suites
from nvfp4_tui.core.exit_codes import USAGE
from nvfp4_tui.profile_init.compose import read_compose

SEED_COMPOSE = Path("/work/shared/seed-data/docker-compose.bench-7models.yml")
# The seed's first service, enough for the tests that do not need all seven.
ONE_SERVICE = """\
services:
  moe-qwen36:
    environment:
      - NVIDIA_VISIBLE_DEVICES=0
      - MODEL_PATH=/models/current
      - PORT=8016
      - MAX_NUM_SEQS=16
    volumes:
      - /models/Qwen/Qwen3.6-35B-A3B-NVFP4:/models/current:ro
    ports:
      - "8016:8016"
    command: ["--kv-cache-dtype", "fp8"]
"""


def _init(tmp_path: Path, compose_text: str, *extra: str) -> int:
    compose = tmp_path / "docker-compose.yml"
    compose.write_text(compose_text)
    return main(["init", "--from-compose", str(compose), "--out", str(tmp_path / "p.toml"), *extra])


@pytest.mark.skipif(not SEED_COMPOSE.exists(), reason="the seed's compose file is not here")
def test_the_seed_compose_file_gives_its_seven_endpoints(tmp_path: Path) -> None:
    out = tmp_path / "fleet" / "profile.toml"
    out.parent.mkdir()
    assert main(["init", "--from-compose", str(SEED_COMPOSE), "--out", str(out)]) == 0
    profile = load_profile(out)
    endpoints = profile.endpoints
    assert [e.url for e in endpoints] == [f"http://127.0.0.1:{p}" for p in range(8016, 8023)]
    assert [e.gpu for e in endpoints] == list(range(7))
    assert {e.model for e in endpoints} == {"current"}
    assert endpoints[0].id == "moe-qwen36"
    assert endpoints[0].label == "Qwen3.6-35B-A3B-NVFP4"
    # Classes guessed from the weights' folder names, as the seed's write-up has them.
    assert [(e.model_class, e.active_params_b) for e in endpoints] == [
        ("moe", 3.0),
        ("moe", 3.8),
        ("moe", 3.8),
        ("dense", 27.0),
        ("dense", 27.0),
        ("dense", 31.0),
        ("moe", 3.8),  # supergemma4-26b: the gemma 4 26B family, though its name says no A4B
    ]
    text = out.read_text()
    assert text.count("# A guess from the name") == 7
    assert "max_num_seqs 4" in text and "KV cache fp8" in text and "max_model_len 131072" in text
    # The smallest cap (4, dense-gemma31) keeps the seed's levels 1 and 4.
    assert profile.run.concurrency == (1, 4)
    # A profile in a folder of its own runs the built-in suites.
    assert set(load_suites(profile.suite_dirs, profile.run.suites)) == set(profile.run.suites)


def test_other_ways_of_writing_a_service(tmp_path: Path) -> None:
    compose = """\
services:
  big:
    environment: {CUDA_VISIBLE_DEVICES: "2,3", VLLM_API_KEY: secret-never-written}
    command: >
      vllm serve /weights/Llama-70B --port 8000
      --served-model-name llama70 --max-num-seqs 2 --max-model-len=32768
    ports:
      - "127.0.0.1:18000:8000/tcp"
  small:
    environment:
      MODEL_PATH: /m/tiny
      PORT: "8001"
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ['2']
"""
    assert _init(tmp_path, compose) == 0
    text = (tmp_path / "p.toml").read_text()
    assert "secret-never-written" not in text
    big, small = load_profile(tmp_path / "p.toml").endpoints
    # The key is written in the compose file, so in no variable the profile could name.
    assert (big.url, big.model, big.gpu, big.api_key_env) == (
        "http://127.0.0.1:18000",
        "llama70",
        2,
        None,
    )
    assert '# api_key_env = "VLLM_API_KEY"' in text and "wants an API key" in text
    assert "GPUs 2,3" in text and "max_model_len 32768" in text
    # GPU 2 is taken: a profile gives a GPU one pane, so the second is resolved at run time.
    assert (small.url, small.model, small.gpu) == ("http://127.0.0.1:8001", "tiny", "auto")
    # max_num_seqs 2 leaves only the first of the seed's levels.
    assert load_profile(tmp_path / "p.toml").run.concurrency == (1,)


@pytest.mark.parametrize(
    ("setting", "api_key_env"),
    [
        ('command: ["--api-key", "${BENCH_KEY}"]', "BENCH_KEY"),
        ('command: ["--api-key=$BENCH_KEY"]', "BENCH_KEY"),
        ('command: ["--api-key", "${BENCH_KEY:-dev}"]', "BENCH_KEY"),
        ('command: ["--api-key", "sk-literal-never-written"]', None),
        ("environment: [MODEL_PATH=/m/x, PORT=8016, VLLM_API_KEY]", "VLLM_API_KEY"),
        # $$ is compose's escape for a literal $: this key is written in the file.
        ("environment: {MODEL_PATH: /m/x, PORT: 8016, VLLM_API_KEY: $$HOST_KEY}", None),
        ("environment: {MODEL_PATH: /m/x, PORT: 8016, VLLM_API_KEY: '${HOST_KEY}'}", "HOST_KEY"),
    ],
)
def test_the_api_key_is_named_only_where_a_client_can_read_it(
    tmp_path: Path, setting: str, api_key_env: str | None
) -> None:
    service = "services:\n  a:\n    " + setting + "\n"
    if "environment" not in setting:
        service += "    environment: [MODEL_PATH=/m/x, PORT=8016]\n"
    assert _init(tmp_path, service) == 0
    text = (tmp_path / "p.toml").read_text()
    assert "never-written" not in text
    (endpoint,) = load_profile(tmp_path / "p.toml").endpoints
    assert endpoint.api_key_env == api_key_env
    assert ('# api_key_env = "VLLM_API_KEY"' in text) == (api_key_env is None)


def test_the_temporary_file_is_a_new_one(tmp_path: Path) -> None:
    # A file planted where a fixed temporary name would be is neither followed nor replaced.
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (tmp_path / ".p.toml.init-tmp").symlink_to(victim)
    assert _init(tmp_path, ONE_SERVICE) == 0
    assert victim.read_text() == "keep\n"
    assert (tmp_path / ".p.toml.init-tmp").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".p.toml.init-tmp",
        "docker-compose.yml",
        "p.toml",
        "victim",
    ]
    assert (tmp_path / "p.toml").stat().st_mode & 0o777 == 0o644


def test_services_that_serve_no_model_are_skipped_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    others = """\
  prometheus:
    image: prom/prometheus:latest
    ports: ["9090:9090"]
    command: ["--config.file=/etc/prometheus/prometheus.yml"]
  grafana:
    image: grafana/grafana
    environment: [GF_SECURITY_ADMIN_PASSWORD=admin]
    ports: ["3000:3000"]
  proxy:
    image: nginx:alpine
    ports: ["80:80"]
  served:
    image: vllm/vllm-openai:latest
    command: ["--model", "Qwen/Qwen3-30B-A3B", "--port", "8001"]
    ports: ["8001:8001"]
"""
    assert _init(tmp_path, ONE_SERVICE + others) == 0
    out = capsys.readouterr().out
    (first, served) = load_profile(tmp_path / "p.toml").endpoints
    assert (first.id, served.id, served.url) == ("moe-qwen36", "served", "http://127.0.0.1:8001")
    assert (served.model_class, served.active_params_b) == ("moe", 3.0)
    for name in ("prometheus", "grafana", "proxy"):
        assert f"services.{name}: skipped; no model path, vLLM image or vLLM command" in out
    assert "class moe (a guess)" in out

    compose = "services:\n" + others.split("  served:")[0]
    assert _init(tmp_path, compose, "--force") == USAGE
    err = capsys.readouterr().err
    assert "services: none serves a model; services.prometheus: skipped" in err


# Nine levels of ten aliases each: a billion strings once written out, a few hundred bytes here.
BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)
)


def test_anchors_and_merge_keys_are_read(tmp_path: Path) -> None:
    path = tmp_path / "docker-compose.yml"
    path.write_text(
        "x-vllm: &vllm\n"
        "  environment: &env\n"
        "    MODEL_PATH: /models/current\n"
        "services:\n"
        "  gpu0:\n"
        "    <<: *vllm\n"
        "    environment:\n"
        "      <<: *env\n"
        "      PORT: 8016\n"
        "      NVIDIA_VISIBLE_DEVICES: '0'\n"
    )
    (endpoint,) = read_compose(path).drafts
    assert (endpoint.url, endpoint.model, endpoint.gpu) == ("http://127.0.0.1:8016", "current", 0)


@pytest.mark.parametrize(
    ("compose", "expected"),
    [
        (None, "docker-compose.yml: file not found"),
        ("services:\n  a: [1, 2\n", "docker-compose.yml: line 3: expected ',' or ']'"),
        (BILLION_LAUGHS, "docker-compose.yml: too large or too deeply nested"),
        ("[" * 100_000, "docker-compose.yml: nested too deeply to be a compose file"),
        (
            "services:\n  a:\n    environment: [MODEL_PATH=/m/x, PORT=80²]\n",
            "docker-compose.yml: services.a.environment.PORT: expected an integer from 1 to 65535",
        ),
        (
            'services:\n  "a\\e]0;owned\\a":\n    environment: [MODEL_PATH=/m/x]\n',
            "docker-compose.yml: services.a.environment.PORT: missing",  # the escape dropped
        ),
        ("version: '3'\n", "docker-compose.yml: services: missing"),
        (
            "services:\n  a:\n    environment: [MODEL_PATH=/m/x]\n",
            "docker-compose.yml: services.a.environment.PORT: missing",
        ),
        (
            "services:\n  a:\n    environment: [MODEL_PATH=/m/x, PORT=http]\n",
            "docker-compose.yml: services.a.environment.PORT: expected an integer from 1 to 65535",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], compose: str | None, expected: str
) -> None:
    if compose is None:
        args = ["init", "--from-compose", str(tmp_path / "docker-compose.yml")]
        assert main([*args, "--out", str(tmp_path / "p.toml")]) == USAGE
    else:
        assert _init(tmp_path, compose) == USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err
    assert not (tmp_path / "p.toml").exists()


def test_an_existing_file_is_kept_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "p.toml").write_text("# mine\n")
    assert _init(tmp_path, ONE_SERVICE) == USAGE
    assert "p.toml: already exists; pass --force" in capsys.readouterr().err
    assert (tmp_path / "p.toml").read_text() == "# mine\n"
    assert _init(tmp_path, ONE_SERVICE, "--force") == 0
    assert load_profile(tmp_path / "p.toml").endpoints[0].gpu == 0


def test_outside_text_cannot_inject_toml_or_terminal_controls(tmp_path: Path) -> None:
    # YAML escapes: a quote, a NUL, a bidi override and a colour sequence around a table header.
    hostile = 'x\\"]\\u0000\\n[judge]\\u202e\\u001b[31m'
    compose = ONE_SERVICE.replace(
        "- MODEL_PATH=/models/current", f'- "SERVED_MODEL_NAME={hostile}"'
    )
    assert _init(tmp_path, compose) == 0
    raw = tomllib.loads((tmp_path / "p.toml").read_text())
    assert set(raw) == {"run", "endpoint"}
    (endpoint,) = load_profile(tmp_path / "p.toml").endpoints
    # Escapes, controls and the bidi override are gone; quotes and brackets are plain text.
    assert endpoint.model == 'x"]'
    text = (tmp_path / "p.toml").read_text()
    assert "\u202e" not in text and "\x1b" not in text
