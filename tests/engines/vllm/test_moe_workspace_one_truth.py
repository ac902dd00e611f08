"""One count of the fused MoE's workspace (moe_workspace.py), read by the sampler's count (sampler_peak.py), the
charged workspace and the v0.27+ read-back (startup_split.py); the experts' chunk by release; the budget a v0.27+ log's
figures leave (benchmarks/calibration/evaluate.py `_kv_truth`).

Expected bytes are TritonExperts' arithmetic by hand (fused_moe/experts/triton_moe.py:197-212 at v0.27.1); the chunk's
releases are vLLM's own code: `min(M, VLLM_FUSED_MOE_CHUNK_SIZE)` in modular_kernel.py:1042-1050 at v0.17.0 with its
default 16 * 1024 (envs.py:824-825), M_full passed as M_chunk at v0.18.0 (modular_kernel.py:1189-1193), the default
"32768" up to v0.11.2 (envs.py:779) and 16 * 1024 from v0.12.0 (envs.py:790). The sql-agent-rl start (search-index id
70929996093) prints 36.33 GiB of budget, 3.31 consumed, 0.79 peak activation, 0.2 of CUDAGraph pool, 32.23 of KV.
"""

from __future__ import annotations

import dataclasses

from benchmarks.calibration.corpus import load
from benchmarks.calibration.evaluate import _kv_truth
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.moe_workspace import CHUNK_ERAS, fused_moe_workspace, kept_workspace
from kvtop.domain.engines.vllm.profile_run import batch_limits
from kvtop.domain.engines.vllm.sampler_peak import moe_workspace_bytes
from kvtop.domain.engines.vllm.startup_split import logged_terms
from kvtop.domain.model import NO_QUANT
from kvtop.units import GIB

RECORDS = {record.id: record for record in load("vllm")}
MINIMAX = RECORDS["file58113078588-minimax-m2.5-fp8-4xh100-tp4-v0190"]  # FP8 128 × 128 block, H100, TP 4
QWEN3_CODER = RECORDS["autoscientists-qwen3-coder-30b-a3b-a100-80gb-v0261"]  # bf16 MoE, TP 1
TP4 = RECORDS["kubesimplify-qwen3-235b-a22b-2507-fp8-4xrtxpro6000-tp4-v0271"]
SQL = RECORDS["sql-agent-rl-qwen2.5-coder-1.5b-a100-40gb-v0310"]
# Qwen3-Coder-30B-A3B: top-8, expert intermediate 768, hidden 2,048, bf16: per token 8 × (max(768, 2,048) +
# max(1,536, 2,048)) × 2 B = 65,536 B
QWEN3_CODER_PER_TOKEN = 8 * (2048 + 2048) * 2


def _version(label: str) -> ResolvedVersion:
    return ResolvedVersion(text=label)


def test_the_sampler_and_the_charged_workspace_count_the_same_buffers() -> None:
    """MiniMax-M2.5 at TP 4 (hidden 3,072, gate-up 2 × 1,536 ÷ 4): the FP8 path charges 2 × 8,192 × 8 × 3,072 × 2 B;
    the same shape unquantized, as the sampler counts it, is the same bytes."""
    inputs = MINIMAX.inputs()
    assert inputs.model is not None
    charged = fused_moe_workspace(inputs)
    tokens = batch_limits(inputs)[0]
    unquantized = inputs.model.model_copy(update={"quant": NO_QUANT})
    counted = moe_workspace_bytes(unquantized, inputs.layout, tokens, CHUNK_ERAS.at(inputs.version))
    assert charged.modelled and charged.bytes == counted == 2 * 8192 * 8 * 3072 * 2 == 805_306_368


def test_an_unquantized_moe_s_kept_workspace_is_the_sampler_s() -> None:
    inputs = QWEN3_CODER.inputs()
    assert inputs.model is not None
    tokens = batch_limits(inputs)[0]
    kept = kept_workspace(inputs)
    assert kept.modelled and kept.unquantized and not fused_moe_workspace(inputs).modelled
    counted = moe_workspace_bytes(inputs.model, inputs.layout, tokens, CHUNK_ERAS.at(inputs.version))
    assert kept.bytes == counted == min(tokens, 16 * 1024) * QWEN3_CODER_PER_TOKEN


def test_the_experts_chunk_by_release() -> None:
    assert CHUNK_ERAS.at(_version("0.11.2")) == 32768
    assert CHUNK_ERAS.at(_version("0.12.0")) == CHUNK_ERAS.at(_version("0.17.0")) == 16384
    assert CHUNK_ERAS.at(_version("0.18.0")) is None and CHUNK_ERAS.at(_version("0.27.0")) is None
    model = QWEN3_CODER.inputs().model
    assert model is not None
    layout = QWEN3_CODER.inputs().layout
    before = moe_workspace_bytes(model, layout, 32768, CHUNK_ERAS.at(_version("0.17.0")))
    after = moe_workspace_bytes(model, layout, 32768, CHUNK_ERAS.at(_version("0.18.0")))
    assert (before, after) == (16384 * QWEN3_CODER_PER_TOKEN, 32768 * QWEN3_CODER_PER_TOKEN)


def test_a_v0_27_moe_whose_workspace_is_not_sized_is_not_read_back_apart() -> None:
    """The kubesimplify TP 4 start on an A100 instead: FP8 block experts off the Triton path, their workspace not
    sized, so its consumed figure's share is unknown: non-torch and activation not measured (None), not moved by 0."""
    inputs = TP4.inputs().model_copy(update={"gpu_name": "A100"})
    assert not kept_workspace(inputs).modelled
    found = logged_terms(inputs, TP4.figures)
    assert found == {"activation": None, "non_torch": None, "cuda_graphs": None}


def test_the_budget_a_v0_27_log_leaves_charges_the_graph_estimate_once() -> None:
    """sql-agent-rl without its KV line: 36.33 − 3.31 − 0.79 = 32.23 GiB, the KV memory it printed; the printed 0.2 GiB
    of CUDAGraph pool is not charged again (32.03). The record keeps no utilization: the log's 0.92 is given."""
    figures = {name: value for name, value in SQL.figures.items() if name != "kv"}
    settings = SQL.settings.model_copy(update={"gpu_memory_utilization": 0.92})  # its printed utilization
    found = _kv_truth(dataclasses.replace(SQL, figures=figures, settings=settings))
    assert found is not None
    assert abs(found[0] / GIB - 32.23) <= 0.02, found[0] / GIB
