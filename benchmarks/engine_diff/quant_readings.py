"""Readings of the engine-diff comparison for quantized checkpoints whose engine build differs from what the engine
holds when serving (arch_readings.ARCH_RULES A18, A19, A20): each matches kvtop's weights difference to the byte, from
the config's shapes and the engine's code, never from kvtop.
"""

from __future__ import annotations

import functools

from benchmarks.engine_diff.stage_check import StageCheck, config_value, tp_of, weights_delta


def _symmetric_gptq(check: StageCheck) -> dict[str, object] | None:
    quant = config_value(check.config, "quantization_config") or {}
    return quant if quant.get("quant_method") == "gptq" and quant.get("sym") is True else None


def _linear_qzeros(check: StageCheck, mlp_width: int) -> int:
    """One layer's linear qzeros on one rank (int32, 8 zeros a word, one per group and output; AutoGPTQLinearMethod
    create_weights): qkv_proj [hidden ÷ g, rank's q+k+v ÷ 8], o_proj [rank's heads × head_dim ÷ g, hidden ÷ 8],
    and with a dense MLP of `mlp_width` gate_up_proj [hidden ÷ g, 2 × width ÷ TP ÷ 8], down_proj [width ÷ TP ÷ g,
    hidden ÷ 8]."""
    value = functools.partial(config_value, check.config)
    quant = _symmetric_gptq(check) or {}
    tp, g, h = tp_of(check), int(str(quant["group_size"])), value("hidden_size")
    heads, kv = value("num_attention_heads"), value("num_key_value_heads")
    hd = value("head_dim") or h // heads
    qkv_out = (heads // tp + 2 * max(kv // tp, 1)) * hd
    attention = h // g * qkv_out // 8 + heads * hd // tp // g * h // 8
    mlp = h // g * 2 * mlp_width // tp // 8 + mlp_width // tp // g * h // 8
    return (attention + mlp) * 4


def vllm_gptq_dense_unloaded(check: StageCheck, text: str) -> bool:
    """kvtop short by exactly A20's zeros: a symmetric GPTQ checkpoint of a dense Llama/Qwen2-shaped config on a GPU
    other than sm90, where Marlin empties the linear qzeros on loading, which the meta build never does."""
    delta = weights_delta(text)
    if check.gpu == "sm90" or _symmetric_gptq(check) is None or delta is None:
        return False
    value = functools.partial(config_value, check.config)
    if value("num_experts") or value("num_local_experts") or not value("intermediate_size"):
        return False
    return -delta == (check.layers[1] - check.layers[0]) * _linear_qzeros(check, value("intermediate_size"))


def vllm_gptq_moe_unloaded(check: StageCheck, text: str) -> bool:
    """kvtop short by exactly what A18 names, a symmetric GPTQ checkpoint of a Qwen3-MoE-shaped config (every layer
    MoE, no shared expert): per layer and rank, on a GPU other than sm90, the linear qzeros Marlin empties
    (`_linear_qzeros`; on sm90 Machete keeps them and kvtop's book holds them, engines/vllm/gptq_linear.py) + the
    experts' biases (model dtype: w13 [E, 2 × I ÷ TP], w2 [E, hidden]) + the quantized gate (qweight
    [hidden ÷ 8, E] and qzeros [hidden ÷ g, E ÷ 8] int32, scales [hidden ÷ g, E]) less the fp16 gate [E, hidden]."""
    quant = config_value(check.config, "quantization_config") or {}
    delta = weights_delta(text)
    if quant.get("quant_method") != "gptq" or quant.get("sym") is not True or delta is None:
        return False
    value = functools.partial(config_value, check.config)
    if (
        value("mlp_only_layers")
        or value("decoder_sparse_step") != 1
        or value("shared_expert_intermediate_size")
    ):
        return False
    tp, g, h, experts = tp_of(check), int(quant["group_size"]), value("hidden_size"), value("num_experts")
    width = 2  # the config's float16
    qzeros = 0 if check.gpu == "sm90" else _linear_qzeros(check, 0)
    bias = (experts * 2 * value("moe_intermediate_size") // tp + experts * h) * width
    gate = h // 8 * experts * 4 + h // g * experts // 8 * 4 + h // g * experts * width - experts * h * width
    return -delta == (check.layers[1] - check.layers[0]) * (qzeros + bias + gate)


def sglang_bnb4_states(check: StageCheck, text: str) -> bool:
    """kvtop over by exactly A19's quant states, a dense gated-MLP config at TP 1: one QuantState a checkpoint
    matrix of SGLang's default bitsandbytes targets (q, k, v, o, gate, up, down projections; the config's
    llm_int8_skip_modules name none of them), n weights each: n ÷ 64 absmax (uint8; fp32 without double
    quantization), 4 B per 256 of them, and 4 × (16 + 256 + 1) B of codes and offset (4 × 16 without)."""
    quant = config_value(check.config, "quantization_config") or {}
    delta = weights_delta(text)
    if quant.get("quant_method") != "bitsandbytes" or not quant.get("load_in_4bit") or delta is None:
        return False
    value = functools.partial(config_value, check.config)
    if tp_of(check) != 1 or value("num_local_experts") or value("num_experts"):
        return False
    h, inter, hd = value("hidden_size"), value("intermediate_size"), value("head_dim")
    heads, kv = value("num_attention_heads"), value("num_key_value_heads")
    hd = hd or h // heads
    double = bool(quant.get("bnb_4bit_use_double_quant"))

    def state(n: int) -> int:
        blocks = n // 64
        if not double:
            return blocks * 4 + 16 * 4
        return blocks + -(-blocks // 256) * 4 + (16 + 256 + 1) * 4

    sizes = (heads * hd * h, kv * hd * h, kv * hd * h, h * heads * hd, inter * h, inter * h, h * inter)
    return delta == (check.layers[1] - check.layers[0]) * sum(state(n) for n in sizes)
