"""Readings of the engine-diff comparison for quantized checkpoints whose engine build differs from what the engine
holds when serving (arch_readings.ARCH_RULES A18, A19, A20, A22): each matches kvtop's weights difference to the byte, from
the config's shapes and the engine's code, never from kvtop.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from benchmarks.engine_diff.cases import config_path
from benchmarks.engine_diff.stage_check import StageCheck, config_value, tp_of, weights_delta


def _symmetric_gptq(check: StageCheck) -> dict[str, object] | None:
    quant = config_value(check.config, "quantization_config") or {}
    return quant if quant.get("quant_method") == "gptq" and quant.get("sym") is True else None


def _group(check: StageCheck) -> int:
    return int(str((_symmetric_gptq(check) or {})["group_size"]))


# (name, input rows of the rank's partition, output columns, whole input, input split over TP) of one layer's
# linear modules as vLLM fuses them (QKVParallelLinear, RowParallelLinear, MergedColumnParallelLinear)
LinearModule = tuple[str, int, int, int, bool]


def _linear_modules(check: StageCheck, mlp_width: int) -> list[LinearModule]:
    """One layer's GPTQ linear modules on one rank: qkv_proj [hidden → rank's q+k+v, KV heads replicated past TP],
    o_proj [rank's heads × head_dim → hidden], and with a dense MLP of `mlp_width` gate_up_proj [hidden → 2 × width
    ÷ TP] and down_proj [width ÷ TP → hidden]."""
    value = functools.partial(config_value, check.config)
    tp, h = tp_of(check), value("hidden_size")
    heads, kv = value("num_attention_heads"), value("num_key_value_heads")
    hd = value("head_dim") or h // heads
    modules = [("qkv_proj", h, (heads // tp + 2 * max(kv // tp, 1)) * hd, h, False),
               ("o_proj", heads * hd // tp, h, heads * hd, tp > 1)]  # fmt: skip
    if mlp_width:
        modules += [("gate_up_proj", h, 2 * mlp_width // tp, h, False),
                    ("down_proj", mlp_width // tp, h, mlp_width, tp > 1)]  # fmt: skip
    return modules


def _qzeros(module: LinearModule, group: int) -> int:
    """What AutoGPTQLinearMethod.create_weights registers as qzeros, int32 [input per partition // group, output ÷ 8]
    (v0.33.0 auto_gptq.py:373, :389-429: whole groups of the rank's partition)."""
    groups = module[1] // group if group > 0 else 1  # channelwise (-1): one group
    return groups * (module[2] // 8) * 4


def _module_kernel(check: StageCheck, module: LinearModule) -> str:
    """The kernel vLLM gives the module on the run's GPU, by kvtop's reading of choose_mp_linear_kernel
    (kvtop/domain/engines/vllm/gptq_kernels.py): the fixture's log keeps no per-module kernel line to read instead."""
    from kvtop.domain.engines.versions import ResolvedVersion, VersionSource
    from kvtop.domain.engines.vllm.gptq_kernels import GPTQ_KERNEL_ERAS, GptqModule, kernel_for

    rule = GPTQ_KERNEL_ERAS.at(ResolvedVersion(text=check.version, source=VersionSource.FLAG))
    capability = CAPABILITY.get(check.gpu)
    if rule is None or capability is None:
        return "?"  # a GPU generation the run does not name: no kernel, no reading
    fmt = _quant_format(check.config)
    _, rows_in, cols_out, full_in, split = module
    return kernel_for(GptqModule(fmt, rows_in, cols_out, full_in, split, False), rule, capability).value


@functools.cache
def _quant_format(config: str) -> Any:
    """kvtop's QuantSpec of the run's config (what kernel_for reads: scheme, bits, group)."""
    from kvtop.domain.model_config import model_from_config

    return model_from_config(json.loads(config_path(config).read_text()), source=config).quant


CAPABILITY = {"sm80": (8, 0), "sm90": (9, 0), "sm100": (10, 0)}  # the harness's GPU generations
EMPTYING = ("Marlin", "Marlin, tile-padded")  # marlin.py:172 marlin_make_empty (v0.33.0)


def marlin_emptied_qzeros(check: StageCheck, mlp_width: int) -> tuple[int, list[str]]:
    """One layer's qzeros on one rank that Marlin empties on loading (a meta build keeps them all; Machete keeps
    them, Exllama replaces them by a tensor of the same shape, exllama.py:72-103), and the modules emptied."""
    group = _group(check)
    emptied = [m for m in _linear_modules(check, mlp_width) if _module_kernel(check, m) in EMPTYING]
    return sum(_qzeros(m, group) for m in emptied), [m[0] for m in emptied]


def vllm_gptq_dense_unloaded(check: StageCheck, text: str) -> bool:
    """kvtop short by exactly A20's zeros: a symmetric GPTQ checkpoint of a dense Llama/Qwen2-shaped config, the
    qzeros of the modules whose kernel is Marlin, which empties them on loading, which the meta build never does."""
    delta = weights_delta(text)
    if _symmetric_gptq(check) is None or delta is None or not delta:
        return False
    value = functools.partial(config_value, check.config)
    if value("num_experts") or value("num_local_experts") or not value("intermediate_size"):
        return False
    emptied, _ = marlin_emptied_qzeros(check, value("intermediate_size"))
    return -delta == (check.layers[1] - check.layers[0]) * emptied


def _awq(check: StageCheck) -> dict[str, object] | None:
    quant = config_value(check.config, "quantization_config") or {}
    return quant if quant.get("quant_method") == "awq" and quant.get("zero_point", True) else None


def machete_awq_zeros(check: StageCheck, mlp_width: int) -> int:
    """One layer's AWQ zero points on one rank that Machete (compute capability 9.0 only) rewrites on loading as
    `-scales × zeros` in the scales' 16-bit dtype, one per group and output (v0.33.0 kernels/linear/mixed_precision/
    machete.py:33 and :87-88; group sizes -1, 64, 128 and input % 64, output % 128: utils/machete_utils.py:32, :37-52),
    less the packed int32 qzeros [input per partition // group, output ÷ 8] the meta build registers (auto_awq.py
    :469-475)."""
    quant = _awq(check)
    if check.gpu != "sm90" or quant is None:
        return 0
    group = int(str(quant.get("group_size") or -1))
    total = 0
    for _, rows_in, cols_out, _, _ in _linear_modules(check, mlp_width):
        if group not in (-1, 64, 128) or rows_in % 64 or cols_out % 128:
            continue
        groups = rows_in // group if group > 0 else 1
        total += groups * cols_out * 2 - groups * (cols_out // 8) * 4
    return total


def vllm_awq_dense_unloaded(check: StageCheck, text: str) -> bool:
    """kvtop over by exactly A22's zeros: an AWQ checkpoint of a dense Llama/Qwen2/Qwen3-shaped config on sm90,
    the Machete modules' 16-bit zeros less the packed qzeros, which the meta build never converts."""
    delta = weights_delta(text)
    if _awq(check) is None or not delta:
        return False
    value = functools.partial(config_value, check.config)
    if value("num_experts") or value("num_local_experts") or not value("intermediate_size"):
        return False
    return delta == (check.layers[1] - check.layers[0]) * machete_awq_zeros(check, value("intermediate_size"))


def fused_marlin_moe_takes(check: StageCheck) -> bool:
    """The experts are fused Marlin MoE's (AutoGPTQMoEMethod, which registers w13_bias/w2_bias) where the group is
    one Marlin takes, the rank's expert rows are whole groups and the hidden size whole 128s
    (check_moe_marlin_supports_config); else vLLM falls back to MoE WNA16 ("Falling back to Moe WNA16 kernels"),
    which registers no biases."""
    group = _group(check)
    width = config_value(check.config, "moe_intermediate_size") // tp_of(check)
    hidden = config_value(check.config, "hidden_size")
    return group in (-1, 32, 64, 128) and (group == -1 or width % group == 0) and hidden % 128 == 0


def _moe_terms(check: StageCheck) -> tuple[int, int, int]:
    """Per layer and rank: the linear qzeros Marlin empties, the experts' biases (model dtype: w13 [E, 2 × I ÷ TP],
    w2 [E, hidden]; fused Marlin MoE only) and the quantized gate (qweight [hidden ÷ 8, E] and qzeros
    [hidden ÷ g, E ÷ 8] int32, scales [hidden ÷ g, E]) less the fp16 gate [E, hidden]."""
    value = functools.partial(config_value, check.config)
    tp, g, h, experts = tp_of(check), _group(check), value("hidden_size"), value("num_experts")
    width = 2  # the config's float16
    qzeros, _ = marlin_emptied_qzeros(check, 0)
    bias = (experts * 2 * value("moe_intermediate_size") // tp + experts * h) * width
    bias = bias if fused_marlin_moe_takes(check) else 0
    gate = h // 8 * experts * 4 + h // g * experts // 8 * 4 + h // g * experts * width - experts * h * width
    return qzeros, bias, gate


def vllm_gptq_moe_unloaded(check: StageCheck, text: str) -> bool:
    """kvtop's difference is exactly what A18 names, a symmetric GPTQ checkpoint of a Qwen3-MoE-shaped config
    (every layer MoE, no shared expert): `_moe_terms` on each layer of the stage."""
    delta = weights_delta(text)
    if _symmetric_gptq(check) is None or delta is None:
        return False
    value = functools.partial(config_value, check.config)
    if (
        not value("num_experts")
        or value("mlp_only_layers")
        or value("decoder_sparse_step") != 1
        or value("shared_expert_intermediate_size")
    ):
        return False
    return -delta == (check.layers[1] - check.layers[0]) * sum(_moe_terms(check))


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
