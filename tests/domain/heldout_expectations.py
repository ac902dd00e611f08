"""What the engines hold per token for a config, derived here from the raw JSON, independently of kvtop.

Each attention layer the engine builds keeps K and V for every token of its `num_kv_heads × head_size`
(vLLM `FullAttentionSpec` / `SlidingWindowSpec`: `2 × block × kv_heads × head_size × dtype`; SGLang's
MHA pool: `2 × head_num × head_dim` per layer), V `head_size_v` wide where the model says so (MiMo-V2); a
latent-attention layer one `kv_lora_rank + qk_rope_head_dim` latent (`MLAAttentionSpec`), a DSA layer with
an indexer also the indexer key (`index_head_dim` FP8 bytes + an fp32 scale per 128); a layer reading
another's KV (`kv_sharing_target_layer_name`), a Mamba/linear layer and an MLP-only block hold none. The
layer lists come from each model file's own test of the config (cited per family).
"""

from __future__ import annotations

from typing import Any

BF16 = 2


# LlamaConfig's class defaults (transformers configuration_llama.py): what LlavaConfig builds its text model
# from where the file leaves fields out (llava-1.5's text_config states neither layers nor width)
LLAMA_DEFAULTS = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32}


# MistralConfig's (configuration_mistral.py): llava-next's Mistral text_config states neither either
MISTRAL_DEFAULTS = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32}


def text_section(cfg: dict[str, Any]) -> dict[str, Any]:
    for key in ("text_config", "llm_config", "language_config"):
        if isinstance(cfg.get(key), dict):
            if cfg.get("model_type") == "llava":
                return {**LLAMA_DEFAULTS, **cfg[key]}
            if cfg.get("model_type") == "llava_next" and cfg[key].get("model_type") == "mistral":
                return {**MISTRAL_DEFAULTS, **cfg[key]}
            return cfg[key]
    return cfg


def _attention_layers(t: dict[str, Any], layers: int) -> list[int]:
    """Indices of the layers that hold KV, as each family's model file decides them."""
    if "hybrid_override_pattern" in t:  # nemotron_h.py: '*' is an attention layer
        return [i for i, c in enumerate(t["hybrid_override_pattern"]) if c == "*"]
    if "layers_block_type" in t:
        return [i for i, w in enumerate(t["layers_block_type"]) if w == "attention"]
    if isinstance(t.get("linear_attn_config"), dict):  # kimi_linear: 1-based full_attn_layers
        return [i - 1 for i in t["linear_attn_config"]["full_attn_layers"]]
    if t.get("model_type") == "zaya":  # SGLang 0.5.23 configs/zaya.py full_attention_layer_ids: the even layers
        return [i for i in range(layers) if i % 2 == 0]
    if "attn_layer_period" in t:  # jamba.py: i % period == offset
        return [i for i in range(layers) if i % t["attn_layer_period"] == t.get("attn_layer_offset", 0)]
    if "block_configs" in t:  # nemotron_nas.py: no_op / replace_with_linear attention holds no KV
        return [i for i, b in enumerate(t["block_configs"])
                if not b["attention"].get("no_op") and not b["attention"].get("replace_with_linear")]  # fmt: skip
    if "layer_types" in t:
        holding = {"full_attention", "sliding_attention", "attention", "chunked_attention",
                   "deepseek_sparse_attention", "indexed_attention"}  # fmt: skip
        out = [i for i, w in enumerate(t["layer_types"]) if w in holding]
    elif "full_attention_interval" in t:  # qwen3_next.py: every interval-th layer
        out = [i for i in range(layers) if (i + 1) % t["full_attention_interval"] == 0]
    else:
        out = list(range(layers))
    shared = t.get("num_kv_shared_layers") or 0  # gemma4.py / gemma3n.py: the last N read earlier KV
    return [i for i in out if i < layers - shared]


def _kind(t: dict[str, Any], i: int) -> str:
    if "layer_types" in t:
        return t["layer_types"][i]
    if "hybrid_layer_pattern" in t:  # mimo_v2.py: 1 a sliding-window layer
        return "sliding_attention" if t["hybrid_layer_pattern"][i] == 1 else "full_attention"
    return "full_attention"


def _layer_bytes(t: dict[str, Any], i: int) -> int:
    """One token of layer i, bf16."""
    if "kv_lora_rank" in t:
        width = (t["kv_lora_rank"] + t["qk_rope_head_dim"]) * BF16
        if t.get("index_head_dim") and _indexed(t, i):
            width += t["index_head_dim"] + t["index_head_dim"] // 128 * 4
        return width
    heads = t.get("num_attention_heads") or t.get("n_head")
    hidden = t.get("hidden_size") or t.get("n_embd") or t.get("d_model")
    kv = t.get("num_key_value_heads") or t.get("num_kv_heads") or t.get("num_attention_groups") or heads
    head = t.get("head_dim") or t.get("kv_channels") or hidden // heads
    v_head = t.get("v_head_dim") or head
    if t.get("multi_query"):  # gpt_bigcode.py
        kv = 1
    if "multi_query_group_num" in t:  # chatglm.py
        kv = t["multi_query_group_num"] if t.get("multi_query_attention") else heads
    if "block_configs" in t:
        kv = heads // t["block_configs"][i]["attention"]["n_heads_in_group"]
    if t.get("model_type") in ("gpt2", "qwen", "baichuan", "gpt_neox", "gptj"):  # MHA whatever they state
        kv = heads
    kind = _kind(t, i)
    if kind == "sliding_attention" and "swa_num_key_value_heads" in t:  # mimo_v2.py
        kv, head, v_head = (
            t["swa_num_key_value_heads"],
            t["swa_head_dim"],
            t.get("swa_v_head_dim", t["swa_head_dim"]),
        )
    if kind == "full_attention" and t.get("global_head_dim"):  # gemma4.py per_layer_config
        kv, head = t.get("num_global_key_value_heads") or kv, t["global_head_dim"]
        v_head = head
    return kv * (head + v_head) * BF16


def _indexed(t: dict[str, Any], i: int) -> bool:
    """deepseek_v32 attention.py / SGLang dsa_layer_skips_topk: whether layer i keeps its own indexer."""
    if t.get("indexer_types"):
        return t["indexer_types"][i] != "shared"
    freq, offset = t.get("index_topk_freq") or 1, t.get("index_skip_topk_offset") or 2
    return max(i - offset + 1, 0) % freq == 0


def _index_key_bytes(t: dict[str, Any]) -> int:
    """MiniMax-M3 (vLLM models/minimax_m3): each layer its sparse_attention_freq marks keeps a
    MiniMaxM3IndexerCache, MLAAttentionSpec(num_kv_heads=1, head_size=sparse_index_dim) in bf16."""
    sparse = t.get("sparse_attention_config")
    if not isinstance(sparse, dict) or not sparse.get("sparse_attention_freq"):
        return 0
    return sum(1 for flag in sparse["sparse_attention_freq"] if flag) * sparse["sparse_index_dim"] * BF16


def kv_bytes_per_token(cfg: dict[str, Any]) -> int:
    """Σ over the layers that hold KV of their bytes per token, bf16, one rank (TP 1)."""
    t = text_section(cfg)
    layers = (t.get("num_hidden_layers") or t.get("num_layers") or t.get("n_layer")
              or len(t.get("layers_block_type") or []))  # fmt: skip
    # a looped model keeps KV per pass over its weight-tied layers (Nanbeige num_loops: SGLang 0.5.23
    # configs/model_config.py num_attention_layers = num_hidden_layers × num_loops)
    passes = t.get("num_loops") or 1
    return passes * sum(_layer_bytes(t, i) for i in _attention_layers(t, layers)) + _index_key_bytes(t)
