"""Profiles and suites written into a temporary directory for end-to-end runs."""

from __future__ import annotations

from pathlib import Path

SUITE = """
[suite]
name = "{name}"
kind = "{kind}"
max_tokens = {max_tokens}
{extra}

[[prompt]]
id = "p0"
text = "{text}"
"""

ESSAY = "Write an essay about rivers and the towns that grew beside them."


def write_suite(
    directory: Path,
    name: str,
    *,
    kind: str = "text",
    max_tokens: int = 48,
    text: str = ESSAY,
    extra: str = "min_words = 100",
) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    body = SUITE.format(name=name, kind=kind, max_tokens=max_tokens, text=text, extra=extra)
    (directory / f"{name}.toml").write_text(body)


def endpoint_toml(
    endpoint_id: str,
    gpu: int,
    *,
    decode_tps: float = 100.0,
    ttft_s: float = 0.3,
    sim_extra: str = "",
    faults: str = "",
) -> str:
    text = f"""
[[endpoint]]
id = "{endpoint_id}"
url = "http://127.0.0.1:{18000 + gpu}"
model = "current"
gpu = {gpu}
class = "moe"

[endpoint.sim]
decode_tps = {decode_tps}
ttft_s = {ttft_s}
vram_used_mib = 90000
seed = {gpu}
{sim_extra}
"""
    if faults:
        text += f"\n[endpoint.sim.faults]\n{faults}\n"
    return text


def write_profile(
    directory: Path,
    endpoints: list[str],
    *,
    suites: list[str],
    concurrency: list[int],
    requests: int,
    timeout_s: float = 30.0,
    warmup: bool = False,
) -> Path:
    path = directory / "profile.toml"
    run = f"""
[run]
name = "t"
suites = {suites!r}
concurrency = {concurrency!r}
requests = {requests}
timeout_s = {timeout_s}
warmup = {str(warmup).lower()}
"""
    path.write_text(run.replace("'", '"') + "".join(endpoints))
    return path


TOOL_SUITE = """
[suite]
name = "tools"
kind = "tool_call"
max_tokens = 256

[[prompt]]
id = "weather"
text = "What is the weather in Osaka right now?"

[[prompt.tools]]
type = "function"
[prompt.tools.function]
name = "get_weather"
description = "Current weather for a city."
[prompt.tools.function.parameters]
type = "object"
required = ["city"]
[prompt.tools.function.parameters.properties.city]
type = "string"

[[prompt.expected_calls]]
name = "get_weather"
arguments = { city = "Osaka" }
"""


def write_tool_suite(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "tools.toml").write_text(TOOL_SUITE)
