"""transformers' config class defaults of the older families issue 26's task E gave entries (values only).

Read from each config class of transformers 5.20.2 (the vLLM 0.33.0 harness venv: `<Config>().to_dict()`, the fields
kvtop reads). The class and file are named above each table; a checkpoint's own (remote-code) class where transformers
has none (Molmo) is read from its published configuration file, named the same way.
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
# Zamba2Config — models/zamba2/configuration_zamba2.py (intermediate_size None: 4 × hidden; attention_hidden_size,
# attention_head_dim and mamba_headdim derived in __post_init__, so not defaults)
ZAMBA2: dict[str, DefaultValue] = {
    "hidden_size": 2560, "num_hidden_layers": 54, "num_attention_heads": 32, "vocab_size": 32000,
    "max_position_embeddings": 4096, "tie_word_embeddings": True, "n_mamba_heads": 8, "mamba_d_state": 64,
    "mamba_d_conv": 4, "mamba_ngroups": 1, "adapter_rank": 128, "num_mem_blocks": 1,
    "use_shared_attention_adapter": False, "add_bias_linear": False
}  # fmt: skip
# Grok-1 has no config class in transformers or the engines (hpcai-tech's remote-code Grok1Config names model_type
# grok-1); SGLang 0.5.23 grok.py reads getattr(config, "head_dim", 128) and builds its own LM head
GROK1: dict[str, DefaultValue] = {"head_dim": 128, "tie_word_embeddings": False}
# Phi3SmallConfig is the checkpoint's remote code (microsoft/Phi-3-small-8k-instruct configuration_phi3_small.py);
# SGLang 0.5.23 phi3_small.py ties the LM head unless the config says otherwise (getattr(..., True))
PHI3_SMALL: dict[str, DefaultValue] = {"tie_word_embeddings": True}
# MolmoConfig — allenai/Molmo-7B-D-0924 config_molmo.py (remote code; its __init__ defaults): vLLM 0.33.0 molmo.py
# reads `weight_tying` for the head, never tie_word_embeddings (whose class default, True, the entry refuses unequal)
MOLMO: dict[str, DefaultValue] = {
    "vocab_size": 50304, "embedding_size": 50304, "hidden_size": 4096, "intermediate_size": 11008,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2048,
    "qkv_bias": False, "weight_tying": False, "tie_word_embeddings": True, "attention_layer_norm": False,
    "norm_after": False, "layer_norm_type": "rms",
}  # fmt: skip
# IQuestLoopCoderConfig (remote code: IQuestLab/IQuest-Coder-V1-40B-Loop-Instruct configuration_iquestloopcoder.py,
# index id 61845863474): loop_num 2 and loop_window_size 64, the same defaults vLLM 0.33.0 and SGLang 0.5.23
# iquest_loopcoder.py read with getattr; head_dim is stated but both engines size heads hidden ÷ heads
IQUEST_LOOPCODER: dict[str, DefaultValue] = {
    "vocab_size": 76800, "hidden_size": 5120, "intermediate_size": 27648, "num_hidden_layers": 80,
    "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 8192,
    "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "loop_num": 2, "loop_window_size": 64,
}  # fmt: skip
