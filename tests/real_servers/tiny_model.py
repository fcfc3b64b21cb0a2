"""Builds a tiny random Llama, with a tokenizer trained here and a chat template that knows tools.

Run with a server's own Python (it needs torch, transformers and tokenizers, which the project does
not): `python tiny_model.py ROOT` writes ROOT/head64 (hidden 128, 2 heads of 64, 1 KV head, vocab
4096: 1.3 M parameters) and ROOT/head16, whose head size vLLM's CPU attention does not support: it
loads and reports healthy, then its first request kills the engine. Nothing is fetched: the
weights are random and the tokenizer is trained on a text written below, so the model talks
nonsense at a real server's speed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

# A hermes-style template: tools listed in the system turn, tool calls as <tool_call> JSON, which is
# what vLLM's `--tool-call-parser hermes` reads back.
CHAT_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\nYou may call these tools:\n<tools>\n"
    "{%- for tool in tools %}{{ tool | tojson }}\n{%- endfor %}</tools>\n"
    'Answer a call as <tool_call>{"name": ..., "arguments": ...}</tool_call><|im_end|>\n'
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'tool' %}<|im_start|>tool\n{{ message.content }}<|im_end|>\n"
    "{%- elif message.tool_calls %}<|im_start|>assistant\n"
    "{%- for call in message.tool_calls %}<tool_call>{{ call.function | tojson }}</tool_call>"
    "{%- endfor %}<|im_end|>\n"
    "{%- else %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}"
)

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]

_CORPUS_TEXT = (
    "the a model server token stream request answer question write code function return value "
    "list number string print test python error result time first last fast slow queue batch "
    "cache memory load level prompt user assistant system tool call name arguments json reply "
    "english french quick brown fox jumps over lazy dog zero one two three four five six seven"
)
_CORPUS_WORDS = _CORPUS_TEXT.split(" ")


def _corpus(lines: int) -> list[str]:
    """Deterministic text with digits, punctuation and code so the trained vocabulary covers them."""
    out = []
    for i in range(lines):
        words = [_CORPUS_WORDS[(i * 7 + j * 13) % len(_CORPUS_WORDS)] for j in range(12)]
        out.append(f"{' '.join(words)}. def f{i}(x): return x + {i} # {i * 31 % 997}!?")
    return out


def build(out: Path, head_size: int, vocab_size: int = 4096) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(4000), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)

    heads = 2
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=heads * head_size,
        intermediate_size=4 * heads * head_size,
        num_hidden_layers=2,
        num_attention_heads=heads,
        num_key_value_heads=1,
        head_dim=head_size,
        max_position_embeddings=2048,
        eos_token_id=fast.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=fast.convert_tokens_to_ids("<|endoftext|>"),
        bos_token_id=None,
        tie_word_embeddings=True,
        dtype="bfloat16",
    )
    import torch

    torch.manual_seed(0)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(out)
    (out / "generation_config.json").write_text(
        json.dumps({"eos_token_id": config.eos_token_id, "pad_token_id": config.pad_token_id})
    )


HEAD_SIZES = (64, 16)


def model_dir(root: Path, head_size: int) -> Path:
    return root / f"head{head_size}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    args = parser.parse_args()
    for head_size in HEAD_SIZES:
        build(model_dir(args.root, head_size), head_size)


if __name__ == "__main__":
    main()
