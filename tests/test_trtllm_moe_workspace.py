"""The CUTLASS fused-MoE workspace TensorRT-LLM's PyTorch backend keeps in torch after its warm-up
(docs/engines/trtllm.md §26).

Expected values: `getWorkspaceDeviceBufferSizes`' arithmetic (cutlass_kernels/moe_gemm/moe_kernels.cu at 000dea27,
search-index id 19518198733; id 3775219850 for the FP8 block-scale branch; the int maps ids 40164402724, 66379864172)
hand-computed in each docstring, and zufayu/ClaudeSkillsE2EPerf's 1.3.0rc10 starts' 'Memory used after loading model
weights (inside torch)' lines (tests/data/calibration/trtllm.jsonl).
"""

from __future__ import annotations

from benchmarks.calibration.corpus import load_all, resolve
from kvtop.domain.calibration.linear import LinearTerm
from kvtop.domain.calibration.terms import Term
from kvtop.domain.calibration.weights import ERROR_FEATURES, LOADED_ERROR_KEY, with_fitted_error
from kvtop.domain.engines.trtllm.calibration import terms
from kvtop.domain.engines.trtllm.moe_workspace import (
    attention_dp_bound_bytes,
    cutlass_workspace_bytes,
    held_in_torch,
)
from kvtop.domain.wording import GIB

CORPUS = load_all()
TRTLLM = {record.id: record for record in CORPUS["trtllm"]}
VLLM = {record.id: record for record in CORPUS["vllm"]}
B300_TP2 = "zufayu-e2eperf-dsr1-0528-nvfp4-b300-tp2-trtllm-130rc10"
B300_OSS = "zufayu-e2eperf-gpt-oss-120b-b300-tp1-trtllm-130rc10"
TP4_EP4 = "zufayu-e2eperf-dsr1-0528-nvfp4-b200-tp4-ep4-trtllm-130rc10"
QWEN3_235B_FP8 = "case-trtllm-5872-qwen3-235b-fp8-h200-tp8"  # Qwen3-235B-A22B-FP8, 128 × 128 block scales
QWEN3_30B_PER_TENSOR = "nnamdiodozi-mlops-qwen3-30b-a3b-2507-fp8-h100-v0221"  # a vLLM record: its model, FP8 per tensor


def _inputs(  # type: ignore[no-untyped-def]
    record_id: str, backend: str | None = None, version: str | None = None, extra: tuple[str, ...] = ()
):
    raw = dict(TRTLLM[record_id].raw)
    if backend is not None:
        flags = [f for f in raw["flags"] if f not in ("--moe_config.backend", "TRTLLM", "CUTLASS")]
        raw["flags"] = flags + ["--moe_config.backend", backend]
    raw["flags"] = list(raw["flags"]) + list(extra)
    if version is not None:
        raw["version"] = version
    return resolve(raw).inputs()


def test_deepseek_r1_nvfp4_at_tp2_holds_its_workspace_for_8192_tokens() -> None:
    """DeepSeek-R1-0528-NVFP4 at TP 2 / EP 1, max_num_tokens 8,192, top-8 of 256 experts, H = 7,168, I = 2,048 ÷ 2
    = 1,024, NVFP4 activations (0.5 B): M = 65,536 routed rows.
    inputs = max(M·H·0.5 = 234,881,024; M·H·2 = 939,524,096; M·I·0.5 = 33,554,432) = 939,524,096;
    outputs = max(2·M·I·2 = 268,435,456; M·H·2 = 939,524,096; 33,554,432) = 939,524,096;
    int maps 4 × M × 4 = 1,048,576 + 256 × 8,192 × 4 = 8,388,608. In all 1,888,485,376 B (1.76 GiB)."""
    inputs = _inputs(B300_TP2)
    assert inputs.model is not None
    assert cutlass_workspace_bytes(inputs.model, 8192, 2, 1) == 1_888_485_376
    found = held_in_torch(inputs.model, inputs)
    assert found is not None and found[0] == 1_888_485_376 and "as the launch states" in found[1]


def test_gpt_oss_120b_workspace_at_its_padded_widths() -> None:
    """gpt-oss-120b at TP 1, top-4 of 128 experts, I = H = 2,880 padded to 2,944 (CUTLASS's 128, §24), 16-bit
    activations: M = 32,768. inputs = M·H·2 = 192,937,984; outputs = max(2·M·I·2 = 385,875,968, M·H·2) =
    385,875,968; int maps 4 × M × 4 = 524,288 + 128 × 8,192 × 4 = 4,194,304. In all 583,532,544 B (0.54 GiB)."""
    inputs = _inputs(B300_OSS)
    assert inputs.model is not None
    assert cutlass_workspace_bytes(inputs.model, 8192, 1, 1) == 583_532_544


def test_fp8_block_scales_with_experts_per_rank_under_ep() -> None:
    """Qwen3-235B-A22B-FP8 (128 × 128 block scales) at TP 8 / EP 8: MoE TP 1, I = 1,536, H = 4,096, top-8 of 128
    experts, 16 a rank; max_num_tokens 8,192: M = 65,536. The block-scale branch (`use_fp8_block_scaling`, bf16
    activations, id 3775219850): inputs = max(M·H·2 = 536,870,912; M·I·2 = 201,326,592) = 536,870,912; outputs =
    2·M·I·2 = 402,653,184; int maps 4 × M × 4 = 1,048,576 + 16 × 8,192 × 4 = 524,288. In all 941,096,960 B. The
    per-tensor branch would give outputs max(2·M·I·2, M·H·2) = 536,870,912 instead."""
    model = TRTLLM[QWEN3_235B_FP8].inputs().model
    assert model is not None and model.quant.block == (128, 128)
    assert cutlass_workspace_bytes(model, 8192, 8, 8) == 941_096_960


def test_per_tensor_fp8_sizes_as_the_gated_code_does() -> None:
    """Qwen3-Coder-30B-A3B quantized per tensor (a = 1), TP 1: H = 2,048, I = 768, top-8 of 128, 8,192 rows: M =
    65,536. inputs = max(M·H·1 = 134,217,728; M·H·2 = 268,435,456; M·I·1 = 50,331,648) = 268,435,456; outputs =
    max(2·M·I·2 = 201,326,592; M·H·2 = 268,435,456; M·I·1) = 268,435,456; int maps 4 × M × 4 = 1,048,576 + 128 ×
    8,192 × 4 = 4,194,304. In all 542,113,792 B (a never binds for a gated activation)."""
    model = VLLM[QWEN3_30B_PER_TENSOR].inputs().model
    assert model is not None and model.quant.method == "fp8" and model.quant.block is None
    assert cutlass_workspace_bytes(model, 8192, 1, 1) == 542_113_792


def test_cutlass_at_ep4_holds_the_experts_per_rank_map() -> None:
    """DeepSeek-R1 NVFP4 at TP 4 / EP 4 with CUTLASS: MoE TP 1, I = 2,048, H = 7,168, 64 experts a rank, 8,192 rows:
    M = 65,536. inputs = max(M·H·0.5 = 234,881,024; M·H·2 = 939,524,096; M·I·0.5 = 67,108,864) = 939,524,096;
    outputs = max(2·M·I·2 = 536,870,912; M·H·2) = 939,524,096; int maps 1,048,576 + 64 × 8,192 × 4 = 2,097,152.
    In all 1,882,193,920 B (TP 2 / EP 1: 256 experts a rank, 1,888,485,376)."""
    cutlass = _inputs(TP4_EP4, backend="CUTLASS")
    found = held_in_torch(cutlass.model, cutlass)
    assert found is not None and found[0] == 1_882_193_920


def test_trtllm_gen_and_older_releases_keep_none() -> None:
    """TRTLLM-Gen allocates its MoE buffers per call (fp4BlockScaleMoe.cpp) and frees them. A release before the
    cached workspace sized it per call (id 5820830985); where the caching began is NOT read in a release tree:
    `CACHED_WORKSPACE_ERAS` assumes 1.1.0rc0 (the gpt-oss era), so the 1.0.0 case below asserts that assumption,
    not a read release."""
    inputs = _inputs(TP4_EP4)
    assert held_in_torch(inputs.model, inputs) is None
    old = _inputs(B300_TP2, version="1.0.0")
    assert held_in_torch(old.model, old) is None


def test_attention_dp_is_named_not_modelled() -> None:
    """Under attention DP the CUTLASS MoE sees the DP ranks' gathered tokens (CutlassFusedMoE: `moe_max_num_tokens`
    = max_num_tokens × dp_size, allgather or all-to-all; id 865441512): kvtop adds no workspace, names it in the
    weights basis and widens the error by the workspace for 2 × 8,192 rows at TP 2: M = 131,072, inputs = outputs =
    M·H·2 = 1,879,048,192 each, int maps 4 × M × 4 = 2,097,152 + 256 × 16,384 × 4 = 16,777,216: 3,776,970,752 B."""
    inputs = _inputs(B300_TP2, extra=("--enable_attention_dp", "true"))
    assert inputs.layout.dp_attention
    assert held_in_torch(inputs.model, inputs) is None
    assert attention_dp_bound_bytes(inputs.model, inputs) == 3_776_970_752
    plain = next(t for t in terms(TRTLLM[B300_TP2].inputs()) if t.term is Term.WEIGHTS)
    weights = next(t for t in terms(inputs) if t.term is Term.WEIGHTS)
    assert weights.bytes == plain.bytes - 1_888_485_376  # the workspace held without attention DP, not added
    assert "under attention DP is not modelled" in weights.basis and weights.error_bytes > 3_776_970_752


def test_a_judged_plan_keeps_the_attention_dp_bound() -> None:
    """A plan judged blind re-reads the weights' fitted error (`with_fitted_error`, the fits that left its source out):
    the 3,776,970,752 B attention-DP bound above is the engine's rule, not the fit's, so it stays in the error: at a
    fitted 1 % of the term's bytes e, the error is √(e² + 3,776,970,752²), at least the bound."""
    inputs = _inputs(B300_TP2, extra=("--enable_attention_dp", "true"))
    weights = next(t for t in terms(inputs) if t.term is Term.WEIGHTS)
    assert weights.beside_error_bytes == 3_776_970_752
    fit = LinearTerm(key=LOADED_ERROR_KEY, features=ERROR_FEATURES, coefficients=(0.01,), error_bytes=0, records=1)
    judged = with_fitted_error(weights, {LOADED_ERROR_KEY: fit}, built_ahead=False)
    fitted = round(weights.bytes * 0.01)
    assert judged.error_bytes == round((fitted**2 + 3_776_970_752**2) ** 0.5)


def test_the_weights_term_nears_the_logged_torch_memory() -> None:
    """The B300 TP 2 start: 'Model weights (torch): 185.48 GiB'; the book 180.88 + §25's 1.34 GiB left 3.26 GiB
    short, with the workspace 1.50 GiB (the attention workspace and the decode graphs' pool stay unmodelled). The
    gpt-oss-120b B300 start: 64.12 GiB; the padded book 63.32 was 0.80 short, now 0.26."""
    for record_id, logged, short in ((B300_TP2, 185.48, 1.51), (B300_OSS, 64.12, 0.27)):
        weights = next(t for t in terms(TRTLLM[record_id].inputs()) if t.term is Term.WEIGHTS)
        assert 0 < logged - weights.bytes / GIB < short, record_id
