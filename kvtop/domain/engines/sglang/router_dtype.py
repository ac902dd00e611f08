"""Routers SGLang's classes build in the model dtype where the family keeps them in fp32 (docs/engines/sglang.md §20).

SGLang's ERNIE-4.5 MoE (models/ernie4.py MoEGate, read in 0.5.6.post2 and 0.5.23) holds its gate weight
[experts, hidden] and e_score_correction_bias [1, experts] as plain nn.Parameters, so in the model dtype; vLLM's
class keeps both in fp32 (the architecture entry's rule). The meta build of Ernie4_5_MoeForCausalLM's class defaults:
gate.weight [64, 2560] and e_score_correction_bias [1, 64] bfloat16 on 27 layers.
"""

from __future__ import annotations

from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.layout import StageParts
from kvtop.domain.model import ModelSpec

MODEL_DTYPE_ROUTERS = frozenset({"Ernie4_5_MoeForCausalLM"})
# SGLang 0.5.23's Laguna (models/laguna.py LagunaMoEGate, absent from 0.5.6.post2) holds its gate weight [experts,
# hidden] in torch.float32, where vLLM 0.33.0 (models/laguna.py GateLinear) and the entry keep it in the model
# dtype: meta-built, Laguna-XS.2's 39 MoE layers hold 39 × 256 × 2048 × 2 B = 40,894,464 B more in SGLang
FP32_ROUTERS = frozenset({"LagunaForCausalLM"})
# SGLang's Kimi-Linear (models/kimi_linear.py KimiMoE, read in 0.5.6.post2 and 0.5.23) sets
# `gate.e_score_correction_bias = nn.Parameter(torch.empty(num_experts))`, built under the model dtype, where the
# entry keeps DeepSeek's fp32 correction bias: the 0.5.23 meta build of transformers' default KimiLinearConfig holds
# e_score_correction_bias [256] bfloat16 on its 26 MoE layers, 26 × 256 × 2 B = 13,312 B (the book's fp32: 26,624)
MODEL_DTYPE_ROUTER_BIASES = frozenset({"KimiLinearForCausalLM"})
# SGLang 0.5.23's AFMoE (models/afmoe.py, absent from 0.5.6.post2) builds its gate as a ReplicatedLinear in the model
# dtype and keeps expert_bias fp32, where vLLM 0.33.0's afmoe.py (and the entry) hold the gate in fp32: the meta
# build of transformers' default AfmoeConfig, gate.weight [64, 2048] bfloat16 and expert_bias [64] float32 on 31
# MoE layers (31 × 64 × 2,048 × 2 B = 8,126,464 B, half the book's fp32 gate)
# SGLang 0.5.23's Step-3.5 (models/step3p5.py Step3p5MoEMLP; Step3p7ForConditionalGeneration's language model is
# that class, models/step3p7.py) builds its gate as a ReplicatedLinear in the model dtype (need_fp32_gate casts at
# run time) beside an fp32 router_bias, where vLLM 0.33.0's step3p5.py (and the entry) hold the gate in fp32: the
# meta build of default--Step3p5ForCausalLM, moe.gate.weight [288, 4096] bfloat16 and router_bias [288] float32 on 42
# MoE layers (99,090,432 B, half vLLM's 198,180,864)
MODEL_DTYPE_ROUTER_WEIGHTS = frozenset({"AfmoeForCausalLM", "Step3p5ForCausalLM", "Step3p7ForConditionalGeneration"})


def with_router_dtype(parts: StageParts, model: ModelSpec, version: ResolvedVersion) -> StageParts:
    """`parts` with the router in the model dtype, or in fp32, where SGLang's class builds it so."""
    if model.moe is None:
        return parts
    if model.architecture in FP32_ROUTERS:
        return parts.model_copy(update={"router_fp32": True})
    if model.architecture in MODEL_DTYPE_ROUTER_WEIGHTS:
        return parts.model_copy(update={"router_model_dtype": True})
    if model.architecture in MODEL_DTYPE_ROUTER_BIASES:
        return parts.model_copy(update={"router_bias_model_dtype": True})
    if model.architecture not in MODEL_DTYPE_ROUTERS:
        return parts
    return parts.model_copy(update={"router_model_dtype": True, "router_bias_model_dtype": True})
