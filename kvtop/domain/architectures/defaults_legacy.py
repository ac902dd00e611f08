"""transformers' config class defaults of the older families issue 26's task E gave entries (values only).

Read from each config class of transformers 5.20.2 (the vLLM 0.33.0 harness venv: `<Config>().to_dict()`, the fields
kvtop reads). The class and file are named above each table.
"""

from __future__ import annotations

from kvtop.domain.architectures.defaults import DefaultValue

# PersimmonConfig — models/persimmon/configuration_persimmon.py (every head its own KV: no num_key_value_heads)
PERSIMMON: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 36, "num_attention_heads": 64, "vocab_size": 262144,
    "intermediate_size": 16384, "max_position_embeddings": 16384, "tie_word_embeddings": False, "qk_layernorm": True
}  # fmt: skip
# MllamaTextConfig — models/mllama/configuration_mllama.py (cross_attention_layers, [3, 8, …, 38] by default, is
# left out: every published config states it, and kvtop reads it from the file or refuses)
MLLAMA_TEXT: dict[str, DefaultValue] = {
    "hidden_size": 4096, "num_hidden_layers": 40, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 128256, "intermediate_size": 14336, "max_position_embeddings": 131072, "tie_word_embeddings": False
}  # fmt: skip
