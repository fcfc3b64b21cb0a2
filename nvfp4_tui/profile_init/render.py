"""The text of the profile ``init`` writes: a commented ``[run]`` table and one
``[[endpoint]]`` table per draft."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from nvfp4_tui.profile_init.draft import EndpointDraft, safe_text, toml_string
from nvfp4_tui.profile_init.model_class import ClassGuess
from nvfp4_tui.profile_init.run_table import builtin_suites, max_tokens_lines, suites_lines

# The seed's two load levels; a level above a server's max_num_seqs only queues in the server.
SEED_CONCURRENCY = (1, 4)


def _endpoint_lines(draft: EndpointDraft) -> list[str]:
    lines = [f"# {note}" for note in draft.notes]
    lines += [
        "[[endpoint]]",
        f"id = {toml_string(draft.id)}",
        f"label = {toml_string(draft.label)}",
        f"url = {toml_string(draft.url)}",
        f"model = {toml_string(draft.model)}"
        + (f"  # {draft.model_note}" if draft.model_note else ""),
    ]
    if isinstance(draft.gpu, int):
        lines.append(f"gpu = {draft.gpu}")
    elif draft.gpu == "auto":
        lines.append('gpu = "auto"  # the GPU where the process serving this port holds memory')
    else:
        lines.append(f"gpu = {toml_string(draft.gpu)}")
    if draft.api_key_env:
        lines.append(f"api_key_env = {toml_string(draft.api_key_env)}  # the key is read from it")
    elif draft.wants_api_key:
        lines += [
            "# The server wants an API key, written in the compose file itself: put it in an",
            "# environment variable, name it here and remove the '#'.",
            '# api_key_env = "VLLM_API_KEY"',
        ]
    return lines + _class_lines(draft.class_guess)


def _class_lines(guess: ClassGuess | None) -> list[str]:
    if guess is None:
        return [
            '# class = "moe"  # or "dense" (the default); active_params_b, experts: for figures'
        ]
    lines = [
        f"# A guess from the name {toml_string(guess.name)} ({guess.why}): check it.",
        f"class = {toml_string(guess.model_class)}",
    ]
    if guess.active_params_b is not None:
        lines.append(f"active_params_b = {guess.active_params_b}")
    if guess.experts is not None:
        lines.append(f"experts = {guess.experts}")
    return lines


def render_profile(
    name: str, origin: str, drafts: Sequence[EndpointDraft], max_concurrency: int | None = None
) -> str:
    """The profile's text. ``max_concurrency``, the smallest server-side cap known, trims the
    seed's levels so no phase measures a queue inside the server instead of the model."""
    suites = builtin_suites()
    levels = [c for c in SEED_CONCURRENCY if max_concurrency is None or c <= max_concurrency]
    lengths = [d.max_model_len for d in drafts if d.max_model_len is not None]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# Written by `nvfp4-tui init` from {safe_text(origin)} on {stamp}.",
        "# Check each endpoint's label, gpu and class, then: nvfp4-tui run THIS_FILE",
        "[run]",
        f"name = {toml_string(name)}",
        *suites_lines(suites),
        "concurrency = [" + ", ".join(str(c) for c in levels) + "]",
        "requests = 2  # per prompt per phase",
        *max_tokens_lines(suites.loaded, min(lengths, default=None)),
    ]
    for draft in drafts:
        lines += ["", *_endpoint_lines(draft)]
    return "\n".join(lines) + "\n"
