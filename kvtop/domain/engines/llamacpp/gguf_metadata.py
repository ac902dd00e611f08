"""A GGUF file's metadata as the `config.json` kvtop reads (docs/engines/llamacpp.md §6).

llama.cpp's converter (`convert_hf_to_gguf.py`) writes each config field under the architecture's
prefix (`llama.block_count` is `num_hidden_layers`); llama.cpp reads them back in
`llama_model::load_hparams` (src/llama-model.cpp). The same fields, named back, go through kvtop's one
architecture reader, so a GGUF and its config.json describe one model. Layer patterns llama.cpp fixes
in code rather than in the file (Gemma 3: `hparams.set_swa_pattern(6)`, five sliding layers then a
full one) are written here as `layer_types`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kvtop.domain.engines.llamacpp.architectures import READS, refusal_words
from kvtop.domain.errors import InputError

# general.architecture -> the config's model_type (where they differ, and only those kvtop reads)
MODEL_TYPES: Mapping[str, str] = {
    "llama": "llama", "mistral": "mistral", "qwen2": "qwen2", "qwen3": "qwen3", "qwen3moe": "qwen3_moe",
    "gemma2": "gemma2", "gemma3": "gemma3_text", "phi3": "phi3",
}  # fmt: skip
# GGUF key (after the architecture's prefix) -> config field
FIELDS: Mapping[str, str] = {
    "block_count": "num_hidden_layers", "embedding_length": "hidden_size",
    "feed_forward_length": "intermediate_size", "attention.head_count": "num_attention_heads",
    "attention.head_count_kv": "num_key_value_heads", "attention.key_length": "head_dim",
    "context_length": "max_position_embeddings", "attention.sliding_window": "sliding_window",
    "vocab_size": "vocab_size", "expert_count": "num_experts", "expert_used_count": "num_experts_per_tok",
    "expert_feed_forward_length": "moe_intermediate_size",
}  # fmt: skip
SWA_PATTERNS: Mapping[str, int] = {"gemma3": 6}  # src/llama-model.cpp: hparams.set_swa_pattern(n)


def config_from_gguf(metadata: Mapping[str, Any], *, tensor_names: frozenset[str], source: str) -> dict[str, Any]:
    """The config.json fields a GGUF's metadata states (`metadata`: key -> scalar, string or list)."""
    arch = metadata.get("general.architecture")
    if not isinstance(arch, str):
        raise InputError("the GGUF names no general.architecture", field="--model", source=source, value_is_file=True)
    model_type = MODEL_TYPES.get(arch)
    if model_type is None:
        newest = READS[-1]
        if arch not in newest.loaded:  # llama.cpp itself would stop: say so in its words
            raise InputError(f"llama.cpp {newest.last} refuses this GGUF: {refusal_words(arch)} ({newest.source})",
                             field="--model", source=source, value_is_file=True)  # fmt: skip
        raise InputError(f"GGUF architecture {arch!r} is not one kvtop reads (one of {', '.join(MODEL_TYPES)})",
                         field="--model", source=source, value_is_file=True)  # fmt: skip
    config: dict[str, Any] = {"model_type": model_type, "torch_dtype": "bfloat16"}
    for key, field in FIELDS.items():
        value = metadata.get(f"{arch}.{key}")
        if isinstance(value, list):
            if len(set(value)) != 1:
                raise InputError(f"{arch}.{key} differs by layer ({sorted(set(value))[:4]}): not modelled for GGUF files",
                                 field="--model", source=source, value_is_file=True)  # fmt: skip
            value = value[0]
        if value is not None:
            config[field] = int(value)
    if "vocab_size" not in config and isinstance(metadata.get("tokenizer.ggml.tokens"), list):
        config["vocab_size"] = len(metadata["tokenizer.ggml.tokens"])
    value_length = metadata.get(f"{arch}.attention.value_length")
    if value_length is not None and value_length != config.get("head_dim"):
        raise InputError("K and V head widths differ: not modelled for GGUF files", field="--model", source=source, value_is_file=True)
    missing = [f for f in ("num_hidden_layers", "hidden_size", "num_attention_heads") if f not in config]
    if missing:
        raise InputError(f"the GGUF states no {', '.join(missing)}", field="--model", source=source, value_is_file=True)
    config.setdefault("num_key_value_heads", config["num_attention_heads"])
    config["tie_word_embeddings"] = "output.weight" not in tensor_names
    pattern = SWA_PATTERNS.get(arch)
    if pattern is not None:
        config["layer_types"] = [
            "full_attention" if (layer + 1) % pattern == 0 else "sliding_attention"
            for layer in range(config["num_hidden_layers"])
        ]
    return config
