"""``init`` guesses a model's class and active parameters from its names, and says so."""

from __future__ import annotations

import pytest

from nvfp4_tui.profile_init.model_class import guess_class


@pytest.mark.parametrize(
    ("name", "model_class", "active_params_b", "experts"),
    [
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", "moe", 3.0, None),
        ("Qwen3-235B-A22B-FP8", "moe", 22.0, None),
        ("Qwen1.5-MoE-A2.7B", "moe", 2.7, None),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "moe", 17.0, 16),
        ("some-lab/Llama-4-17B-128E", "moe", 17.0, 128),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "moe", 12.9, 8),
        ("acme-4x2B-merge", "moe", None, 4),
        ("microsoft/Phi-3.5-MoE-instruct", "moe", None, None),
        ("openai/gpt-oss-120b", "moe", 5.1, 128),
        ("deepseek-ai/DeepSeek-V3", "moe", 37.0, 256),
        ("RedHatAI/gemma-4-26B-A4B-it-NVFP4", "moe", 3.8, 128),
        ("supergemma4-26b-abliterated-multimodal-NVFP4", "moe", 3.8, 128),
        # A distilled R1 is its dense student; a name with only a size is most likely dense.
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "dense", 32.0, None),
        ("meta-llama/Llama-3.1-8B-Instruct", "dense", 8.0, None),
        ("Qwen2.5-1.5B", "dense", 1.5, None),
        ("gemma-4-31B-it", "dense", 31.0, None),
    ],
)
def test_a_name_tells_what_it_can(
    name: str, model_class: str, active_params_b: float | None, experts: int | None
) -> None:
    guess = guess_class(name)
    assert guess is not None and guess.name == name
    assert (guess.model_class, guess.active_params_b, guess.experts) == (
        model_class,
        active_params_b,
        experts,
    )


def test_names_that_tell_nothing_give_no_guess() -> None:
    for name in ("current", "/models/current", "llama3b", "model-w4a16", "v2-final", ""):
        assert guess_class(name) is None, name
    assert guess_class(None, "current") is None
    # The first telling name wins: a served name "current" says nothing, its weights do.
    guess = guess_class("current", "/models/Qwen3-30B-A3B")
    assert guess is not None and guess.name == "/models/Qwen3-30B-A3B"
    assert guess.why == '"A3B": 3B active'
