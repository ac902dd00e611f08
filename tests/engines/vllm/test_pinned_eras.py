"""vLLM rules whose first release was pinned from the released wheels (eras.py; issue #27): a plan at the release
just before each boundary and at the one that has the rule.

Each era's source names the file:line of the first wheel that has it and the release before that lacks it (read
with `unzip -p vllm-X-cp38-abi3-manylinux*.whl`). Expected figures are the engine code's arithmetic, worked in the
comments; the configs are the engine-diff harness's (tests/data/configs, SOURCES.md there).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.kvtop_side import kvtop_plan
from benchmarks.engine_diff.registry_judge import kvtop_answer
from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.versions import ResolvedVersion
from kvtop.domain.engines.vllm.batching import concurrent_batches
from kvtop.domain.engines.vllm.eras import (
    BLOCK_FP8_SHARD_ERAS,
    HYBRID_CACHE_MODE_ERAS,
    MLA_HYBRID_ALIGNMENT_ERAS,
    NEMOTRON_H_SSM_DTYPE_ERAS,
    PREFILL_CHECKPOINT_ERAS,
    TRITON_ATTN_FP8_SM89_ERAS,
    TRITON_MLA_FP8_ERAS,
    chunked_local_hybrid,
)
from kvtop.domain.engines.vllm.hybrid import HYBRID_PREFIX_CACHING_DEFAULT_ERAS
from kvtop.domain.engines.vllm.kernels import check_weights
from kvtop.domain.engines.vllm.runner_eras import MODEL_RUNNER_ERAS
from kvtop.domain.errors import KvtopError
from kvtop.domain.launch import LaunchSettings, parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from kvtop.sources.hub import load_model
from tests.data_paths import CONFIGS


def _case(config: str, tp: int, gpu: str, kv: str = "auto", flags: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"config": config, "tp": tp, "kv_dtype": kv, "gpu": gpu, "max_model_len": 4096, "flags": list(flags),
            "budget_bytes": 40 * GIB}  # fmt: skip


def _sinces(eras: Any) -> list[str]:
    return [era.since for era in eras]


def test_each_pinned_era_starts_where_the_wheels_put_it() -> None:
    """The first releases read from the wheels (the release before each lacks the code)."""
    assert _sinces(MODEL_RUNNER_ERAS) == ["", "0.22.0", "0.25.0", "0.29.0"]
    assert _sinces(BLOCK_FP8_SHARD_ERAS) == ["", "0.29.0"]
    assert _sinces(NEMOTRON_H_SSM_DTYPE_ERAS) == ["", "0.20.0"]
    assert _sinces(MLA_HYBRID_ALIGNMENT_ERAS) == ["", "0.27.0"]
    assert _sinces(HYBRID_CACHE_MODE_ERAS) == ["", "0.15.0", "0.26.0", "0.28.0"]
    assert [era.value for era in HYBRID_PREFIX_CACHING_DEFAULT_ERAS] == [False, False, True]
    assert _sinces(HYBRID_PREFIX_CACHING_DEFAULT_ERAS) == ["", "0.26.0", "0.28.0"]
    assert _sinces(TRITON_MLA_FP8_ERAS) == ["", "0.18.0", "0.26.0"]
    assert _sinces(TRITON_ATTN_FP8_SM89_ERAS) == ["", "0.24.0"]
    assert _sinces(PREFILL_CHECKPOINT_ERAS) == ["", "0.32.0", "0.33.0"]
    assert [chunked_local_hybrid(ResolvedVersion(text=v)) for v in ("0.13.0", "0.14.0")] == [False, True]


# Nemotron-H-56B at TP 1, KV auto, on an A100: one Mamba layer's conv (4 − 1) × (256 × 64 + 2 × 8 groups × 256) × 2 B
# = 122,880 B; its SSM 256 heads × 64 × 256 state in the default dtype; one attention layer's token 8 KV heads × 128
# × 2 (K, V) × 2 B = 4,096 B; hybrids without prefix caching (before v0.26.0): block 16 × cdiv(state, 16 × 4,096).
NEMOTRON_H = "nvidia--Nemotron-H-56B-Base-8K"
CONV = 3 * (256 * 64 + 2 * 8 * 256) * 2


@pytest.mark.parametrize(
    ("version", "ssm_bytes", "block"),
    [
        ("0.19.1", 2, 2080),  # float16: 8,388,608 + 122,880 = 8,511,488 B → 16 × 130
        ("0.20.0", 4, 4128),  # float32 (models/config.py:410): 16,777,216 + 122,880 = 16,900,096 B → 16 × 258
    ],
)
def test_nemotron_h_ssm_state_turns_float32_in_v0_20(version: str, ssm_bytes: int, block: int) -> None:
    state = 256 * 64 * 256 * ssm_bytes + CONV
    assert 16 * -(-state // (16 * 4096)) == block
    plan = kvtop_plan("vllm", version, _case(NEMOTRON_H, 1, "sm80"))
    assert (plan["status"], plan["block_size"]) == ("ok", block)


def test_nemotron_h_all_mode_is_refused_only_with_prefix_caching_asked_in_v0_26_and_v0_27() -> None:
    """v0.26.0-v0.27.1 models/config.py:559-561: a class that supports Mamba prefix caching (NemotronH) gets
    mamba_cache_mode 'all' when prefix caching is on, which is not modelled: refused where the launch asks for it;
    by default it is off for hybrids in those releases (engine/arg_utils.py:2602-2606 at v0.27.1, opt-in), so
    'none': the state page alone sets the block, 16 × cdiv(16,900,096, 16 × 4,096) = 4,128 in float32; from
    v0.28.0 ('align', every class's default) planned too; v0.25.1 keeps prefix caching off for hybrids."""
    refused = kvtop_plan("vllm", "0.27.1", _case(NEMOTRON_H, 1, "sm80", flags=("--enable-prefix-caching",)))
    assert refused["status"] == "refused" and "'all'" in refused["message"]
    default = kvtop_plan("vllm", "0.27.1", _case(NEMOTRON_H, 1, "sm80"))
    off = kvtop_plan("vllm", "0.27.1", _case(NEMOTRON_H, 1, "sm80", flags=("--no-enable-prefix-caching",)))
    later = kvtop_plan("vllm", "0.28.0", _case(NEMOTRON_H, 1, "sm80"))
    before = kvtop_plan("vllm", "0.25.1", _case(NEMOTRON_H, 1, "sm80"))
    assert (default["status"], off["status"], later["status"], before["status"]) == ("ok", "ok", "ok", "ok")
    assert (default["block_size"], off["block_size"], before["block_size"]) == (4128, 4128, 4128)


@pytest.mark.parametrize(("version", "status"), [("0.26.0", "refused"), ("0.27.0", "ok")])
def test_kimi_linear_mla_hybrid_is_aligned_to_128_from_v0_27(version: str, status: str) -> None:
    """platforms/interface.py:883-889 (v0.27.0; absent from v0.26.0): an MLA hybrid's block is a multiple of 128.
    Kimi-Linear's default at TP 1: a KDA layer's state 3 × 4,096 × 3 × 2 B + 32 × 128 × 128 × 4 B = 2,170,880 B, an
    MLA token 576 × 2 B = 1,152 B: block 128 × cdiv(2,170,880, 128 × 1,152) = 128 × 15 = 1,920 (v0.33.0's meta build
    gives the same, tests/engines/vllm/test_registry_harness_builds.py); before, kvtop refuses it by name."""
    state = 3 * 4096 * 3 * 2 + 32 * 128 * 128 * 4
    assert 128 * -(-state // (128 * 1152)) == 1920
    plan = kvtop_answer("vllm", version, row_of("vllm", "0.33.0", "default--KimiLinearForCausalLM", 1))
    assert plan["status"] == status
    if status == "ok":
        assert plan["block_size"] == 1920
    else:
        assert "MLA from 0.27.0" in plan["message"]


QWEN3_30B_FP8 = "Qwen--Qwen3-30B-A3B-FP8"  # moe_intermediate_size 768, hidden 2,048, weight_block_size [128, 128]


@pytest.mark.parametrize(
    ("version", "gpu", "status", "words"),
    [
        # 768 / TP 4 = 192, not a multiple of 128: v0.28.0 fp8.py:534-547 raises on every GPU
        ("0.28.0", "sm90", "refused", "not divisible by weight quantization block_n"),
        # v0.29.0 refines to gcd(128, 128, 192, 2,048) = 64 ≥ 32 (fused_moe/oracle/fp8.py:272-302): Triton on sm90
        ("0.29.0", "sm90", "ok", ""),
        # ... which takes the refined key only under supports_fp8 (sm89+): no backend on an A100
        ("0.29.0", "sm80", "refused", "No FP8 MoE backend"),
    ],
)
def test_block_fp8_expert_shards_run_from_v0_29(version: str, gpu: str, status: str, words: str) -> None:
    plan = kvtop_plan("vllm", version, _case(QWEN3_30B_FP8, 4, gpu))
    assert plan["status"] == status
    assert words in plan.get("message", "")


def test_a_block_fp8_shard_no_block_of_32_divides_is_refused_on_every_gpu() -> None:
    """TP 4 × DP 4 flattens the experts over 16 ranks: 768 / 16 = 48, gcd(128, 128, 48, 2,048) = 16 < 32, so
    refine_fp8_moe_block_shape returns None and create_weights raises (v0.29.0 fp8.py:566-572) on a Hopper too."""
    plan = kvtop_plan("vllm", "0.29.0", _case(QWEN3_30B_FP8, 4, "sm90", flags=("--data-parallel-size", "4")))
    assert plan["status"] == "refused" and "gcd 16" in plan["message"]


DEEPSEEK_V3 = "deepseek-ai--DeepSeek-V3"


@pytest.mark.parametrize(
    ("version", "status"),
    # TRITON_MLA (the MLA backend below Hopper): supported_kv_cache_dtypes auto / bfloat16 only in v0.17.1, adds
    # fp8 in v0.18.0 (triton_mla.py:32-36) and refuses it below sm89 from v0.26.0 (triton_mla.py:187-196)
    [("0.17.1", "refused"), ("0.18.0", "ok"), ("0.25.1", "ok"), ("0.26.0", "refused")],
)
def test_fp8_kv_on_triton_mla_on_an_a100_by_release(version: str, status: str) -> None:
    plan = kvtop_plan("vllm", version, _case(DEEPSEEK_V3, 8, "sm80", kv="fp8"))
    assert plan["status"] == status, plan.get("message")
    assert status == "ok" or "TRITON_MLA" in plan["message"]


@pytest.mark.parametrize(("version", "status"), [("0.23.0", "ok"), ("0.24.0", "refused")])
def test_fp8_kv_on_triton_attention_on_an_a100_from_v0_24(version: str, status: str) -> None:
    """Gemma-3 (an mm-prefix LM: FLASHINFER declines it) runs TRITON_ATTN on sm80, whose __init__ refuses FP8 KV
    below sm89 from v0.24.0 (triton_attn.py:471-481; absent from v0.23.0)."""
    plan = kvtop_plan("vllm", version, _case("google--gemma-3-27b-it", 2, "sm80", kv="fp8"))
    assert plan["status"] == status, plan.get("message")
    assert status == "ok" or "TRITON_ATTN" in plan["message"]


@pytest.mark.parametrize(("version", "batches"), [("0.28.0", 2), ("0.29.0", 3)])
def test_a_moe_model_at_pp_2_runs_the_v2_runner_from_v0_29(version: str, batches: int) -> None:
    """VllmConfig.max_concurrent_batches (config/vllm.py:559-569): async scheduling on by default, at pp 2 the V2
    runner keeps pp + 1 = 3 batches in flight, the V1 runner pp = 2. v0.28.0 (:691-712) still runs V1 for a MoE
    model outside its list; v0.29.0 (:645) V2 for every model."""
    version_ = ResolvedVersion(text=version)
    moe = load_model(str(CONFIGS / "openai--gpt-oss-20b.json"))  # GptOssForCausalLM: experts, not listed
    dense = load_model(str(CONFIGS / "mistralai--Mistral-7B-v0.1.json"))
    assert concurrent_batches(parse_flags("vllm", []), 2, version_, moe)[0] == batches
    assert concurrent_batches(parse_flags("vllm", []), 2, version_, dense)[0] == 3  # dense: V2 from v0.25.0


@pytest.mark.parametrize(("version", "per_mamba_group", "tokens"), [("0.31.0", 2, 80_029), ("0.32.0", 3, 54_757)])
def test_mamba2_layers_hold_a_prefill_checkpoint_block_from_v0_32(version: str, per_mamba_group: int, tokens: int) -> None:
    """mamba_mixer2.py:1107 (v0.32.0; absent from v0.31.0): in 'align' mode a Mamba2 group holds 2 + 1 checkpoint
    blocks a request (MambaSpec.max_memory_usage_bytes). Nemotron-H-56B TP 1 on an A100 (float32 SSM, block 4,128):
    40 GiB ÷ (10 layers × 4,128 × 4,096 B) = 254 blocks; a request takes 1 attention block (4,096 ≤ 4,128) + 6 Mamba
    groups × 2 or 3: int(254 ÷ 13 × 4,096) = 80,029, int(254 ÷ 19 × 4,096) = 54,757."""
    assert int(254 / (1 + 6 * per_mamba_group) * 4096) == tokens
    plan = kvtop_plan("vllm", version, _case(NEMOTRON_H, 1, "sm80"))
    assert (plan["block_size"], plan["num_blocks"], plan["tokens"]) == (4128, 254, tokens)


@pytest.mark.parametrize(("version", "block"), [("0.32.0", 144), ("0.33.0", 192)])
def test_gdn_blocks_align_to_flashinfer_checkpoints_from_v0_33(version: str, block: int) -> None:
    """Qwen3-Next TP 8 on an H100: a GDN layer's state 1,024 × 3 × 2 B + 4 × 128 × 128 × 2 B = 137,216 B, an
    attention token 1 KV head × 256 × 2 × 2 B = 1,024 B. v0.32.0: 16 × cdiv(137,216, 16 × 1,024) = 144; v0.33.0
    (gdn/qwen_gdn_linear_attn.py:748, platforms/interface.py:1089-1094) aligns to lcm(16, 64) = 64: 64 × 3 = 192."""
    state = 1024 * 3 * 2 + 4 * 128 * 128 * 2
    assert {144: 16 * -(-state // (16 * 1024)), 192: 64 * -(-state // (64 * 1024))}[block] == block
    plan = kvtop_plan("vllm", version, _case("Qwen--Qwen3-Next-80B-A3B-Thinking", 8, "sm90"))
    assert plan["block_size"] == block


def _llama_with(quantization_config: dict[str, Any]) -> Any:
    cfg = json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text())
    return model_from_config({**cfg, "quantization_config": quantization_config}, source="llama")


def _weights_refusal(model: Any, version: str, gpu: str = "H100") -> str | None:
    try:
        check_weights(model, LaunchSettings(engine="vllm"), ParallelLayout(tp=1), gpu, ResolvedVersion(text=version))
    except KvtopError as err:
        return str(err)
    return None


@pytest.mark.parametrize(("version", "refused"), [("0.27.1", False), ("0.28.0", True)])
def test_bitsandbytes_is_gone_from_v0_28(version: str, refused: bool) -> None:
    """v0.27.1 quantization/__init__.py:28, :156 name bitsandbytes (BitsAndBytesConfig); v0.28.0's list does not."""
    model = _llama_with({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"})
    assert (_weights_refusal(model, version) is not None) == refused


@pytest.mark.parametrize(("version", "refused"), [("0.29.0", False), ("0.30.0", True)])
def test_gptq_activation_order_is_refused_from_v0_30(version: str, refused: bool) -> None:
    """v0.30.0 quantization/utils/gptq_utils.py:23-37: desc_act with groups raises (absent from v0.29.0)."""
    model = _llama_with({"bits": 4, "group_size": 128, "desc_act": True, "sym": True, "quant_method": "gptq"})
    assert (_weights_refusal(model, version) is not None) == refused


@pytest.mark.parametrize(("version", "refused"), [("0.23.0", True), ("0.24.0", False)])
def test_an_mxfp8_checkpoint_loads_from_v0_24(version: str, refused: bool) -> None:
    """v0.24.0 quantization/__init__.py:166-169 maps a checkpoint's `quant_method: mxfp8` to ModelOptMxFp8Config;
    v0.19.0-v0.23.0 name mxfp8 only for online MXFP8 (Mxfp8Config, not serialized), read as refused."""
    path = CONFIGS / "heldout" / "wave5" / "MiniMaxAI--MiniMax-M3-MXFP8.json"
    model = model_from_config(json.loads(path.read_text()), source=path.stem)
    assert (_weights_refusal(model, version) is not None) == refused


def test_the_layer_and_format_eras_start_where_the_wheels_put_them() -> None:
    """The first release whose wheel has each (file:line in each era's source; the release before lacks it)."""
    from kvtop.domain.engines.vllm import kv_scales, layer_build, moe_split, tower_heads, transformers_backend

    assert _sinces(kv_scales.MODELOPT_MLA_SCALES_ERAS) == ["", "0.17.0"]  # modelopt.py:176
    assert _sinces(kv_scales.CT_E5M2_UNSTATED_REFUSED_ERAS) == ["", "0.24.0"]  # attention.py:170-182
    assert _sinces(kv_scales.CT_KV_SCALARS_ERAS) == ["", "0.15.0"]  # compressed_tensors.py:1000
    assert _sinces(layer_build.INDEXER_WK_UNQUANTIZED_ERAS) == ["", "0.20.0"]  # deepseek_v2.py:641-645
    assert _sinces(layer_build.GPTQ_EXPERT_ZEROS_ERAS) == ["", "0.13.0", "0.27.0"]  # auto_gptq.py:585-594
    assert _sinces(layer_build.FUSED_QKV_PAD_ERAS) == ["", "0.33.0"]  # mimo_v2.py:264, absent from v0.32.0
    assert _sinces(moe_split.SPLIT_ASSERT_ERAS) == ["", "0.24.0"]  # fused_moe/config.py:1306
    assert _sinces(moe_split.CT_GROUPS_CHECKED_ERAS) == ["", "0.24.0"]  # compressed_tensors_moe_wna16.py:100-114
    assert _sinces(transformers_backend.REPLICATED_MLP_ERAS) == ["", "0.25.0"]  # registry.py:643
    assert _sinces(tower_heads.DIVIDED_HEADS_CHECKED_ERAS) == ["", "0.21.0"]  # mimo_v2_omni.py:156-157
