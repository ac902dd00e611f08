"""What vLLM's classes build on each layer beside the checkpoint's tensors, and the fp8_e5m2 launch it refuses
(kvtop.domain.engines.vllm.layer_build / kv_scales). Expected bytes are vLLM 0.33.0's own model classes built on the
meta device (each stage's `named_parameters()` bytes, tests/data/engine_diff/vllm-0.33.0.flags.json) and its refusal
message from the same run; the 0.13.0 differences are that release's code arithmetic (the wheel's deepseek_v2.py
and modelopt.py, docs/engines/vllm.md §3.8)."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import CONFIGS
from tests.domain.vllm_engine_cases import UNLIMITED, engine_figures, figures, flag_plan, flag_row

LANGUAGE = ("model", "lm_head", "language_model", "transformer", "backbone", "embed_tokens", "layers", "norm")


def engine_stages(variant: str, config: str) -> list[int]:
    """The language model's parameter bytes of each stage's first rank, as vLLM built them."""
    return [sum(b for child, b in stage["param_bytes"].items() if child in LANGUAGE)
            for stage in flag_row(variant, config)["stages"]]  # fmt: skip


def kvtop_stages(ledger: Ledger) -> list[int]:
    ranks = sorted((r for r in ledger.ranks if r.tp_rank == 0 and r.dp_rank == 0), key=lambda r: r.pp_rank)
    return [r.weights.total_bytes for r in ranks]


# FP8, ModelOpt FP8 and NVFP4 checkpoints: each attention layer holds q/k/v/prob scale scalars (8 B in bf16);
# ModelOpt's MLA layers too (DeepSeek-V3-0324-NVFP4, whose checkpoint names no KV algorithm)
@pytest.mark.parametrize(
    ("variant", "config"),
    [("pp2", "Qwen--Qwen3-32B-FP8"), ("pp4", "Qwen--Qwen3-32B-FP8"), ("ep", "Qwen--Qwen3-235B-A22B-FP8"),
     ("pp2", "nvidia--Llama-3.1-70B-Instruct-FP8"), ("pp4", "MiniMaxAI--MiniMax-M2.5"),
     ("ep", "nvidia--Qwen3-235B-A22B-NVFP4"), ("pp2", "nvidia--DeepSeek-V3-0324-NVFP4"),
     ("ep", "nvidia--DeepSeek-V3.2-NVFP4")],
)  # fmt: skip
def test_the_kv_scale_scalars_of_a_quantized_checkpoint_are_in_the_weights(variant: str, config: str) -> None:
    assert kvtop_stages(flag_plan(variant, config)) == engine_stages(variant, config)


def test_an_fp8_checkpoints_mla_layers_hold_no_scales_and_a_16_bit_one_none() -> None:
    """Fp8Config gives `Attention` a KV-cache method, not MLAAttention (DeepSeek-V3's fp8 blocks)."""
    for variant, config in (("pp2", "deepseek-ai--DeepSeek-V3"), ("pp2", "Qwen--Qwen3-32B")):
        assert kvtop_stages(flag_plan(variant, config)) == engine_stages(variant, config)


def test_the_dsa_indexer_wk_is_bf16_in_vllm_0_33_and_fp8_blocks_in_0_13() -> None:
    """v0.33.0 fuses wk with weights_proj unquantized: DeepSeek-V3.2 TP2+EP holds 338,080,333,408 B (meta build);
    v0.13.0 keeps wk in the checkpoint's 128 × 128 FP8 blocks: 128 × 7,168 × 2 B − (128 × 7,168 B + 1 × 56 × 4 B)
    = 917,280 B less on each of the 61 indexed layers."""
    config = "deepseek-ai--DeepSeek-V3.2"
    data = json.loads((CONFIGS / f"{config}.json").read_text())
    index, hidden, layers = data["index_head_dim"], data["hidden_size"], data["num_hidden_layers"]
    assert kvtop_stages(flag_plan("ep", config)) == engine_stages("ep", config) == [338_080_333_408]
    fp8_blocks = index * hidden + -(-index // 128) * -(-hidden // 128) * 4
    per_layer = index * hidden * 2 - fp8_blocks
    assert per_layer == 917_280
    older = kvtop_stages(flag_plan("ep", config, "0.13.0"))
    assert older == [338_080_333_408 - layers * per_layer]


def test_modelopt_mla_scales_are_not_built_by_vllm_0_13() -> None:
    """v0.13.0's ModelOptQuantConfigBase.get_quant_method tests `Attention` only: 8 B a layer less over 61 layers."""
    config = "nvidia--DeepSeek-V3-0324-NVFP4"
    newer, older = kvtop_stages(flag_plan("ep", config)), kvtop_stages(flag_plan("ep", config, "0.13.0"))
    assert newer == engine_stages("ep", config)
    assert [a - b for a, b in zip(newer, older, strict=True)] == [61 * 8]


@pytest.mark.parametrize(
    "config",
    ["Qwen--Qwen3-32B-FP8", "Qwen--Qwen3-30B-A3B-FP8", "Qwen--Qwen3-235B-A22B-FP8", "MiniMaxAI--MiniMax-M2.5",
     "nvidia--Llama-3.1-70B-Instruct-FP8", "nvidia--Qwen3-235B-A22B-NVFP4"],
)  # fmt: skip
def test_fp8_e5m2_kv_on_a_checkpoint_with_kv_scales_is_refused_naming_the_flag(config: str) -> None:
    row = flag_row("fp8_e5m2", config)
    assert row["status"] == "refused" and row["message"] == "fp8_e5m2 kv-cache is not supported with fp8 checkpoints."
    (refusal,) = launch_refusals(flag_plan("fp8_e5m2", config))
    assert refusal.field == "--kv-cache-dtype"
    assert "'fp8_e5m2 kv-cache is not supported with fp8 checkpoints.'" in refusal.message


def test_fp8_e5m2_kv_on_an_unquantized_checkpoint_runs() -> None:
    config = "Qwen--Qwen3-32B"
    assert flag_row("fp8_e5m2", config)["status"] == "ok"
    assert launch_refusals(flag_plan("fp8_e5m2", config)) == ()


@pytest.mark.parametrize("variant", ["page64", "ep", "pp2", "pp4", "ctx128k"])
def test_the_checkpoints_fp8_kv_of_deepseek_v3_2_is_plain_fp8_on_hopper(variant: str) -> None:
    """`auto` takes the checkpoint's FP8 KV spelled fp8_e4m3, which FLASHMLA_SPARSE does not list: plain fp8, 576 B
    latent + 132 B index key a layer (61 × 64 × 708 = 2,764,032 B a 64-token block at PP 1), not fp8_ds_mla's 656."""
    config = "nvidia--DeepSeek-V3.2-NVFP4"
    ledger = flag_plan(variant, config)
    assert figures(ledger) == engine_figures(flag_row(variant, config))
    assert flag_row(variant, config)["cache_dtype"] == "fp8_e4m3"
    if variant == "page64":
        assert figures(ledger)[3] == 61 * 64 * (576 + 132) == 2_764_032


def _compressed_tensors_llama(kv_scheme: bool) -> ModelSpec:
    """Llama-3.1-8B's config with a compressed-tensors W8A8 FP8 block (and a KV-cache scheme where asked)."""
    data = json.loads((CONFIGS / "meta-llama--Llama-3.1-8B.json").read_text())
    weights = {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True}
    block: dict[str, object] = {"quant_method": "compressed-tensors", "config_groups": {"group_0": {"weights": weights}}}
    if kv_scheme:
        block["kv_cache_scheme"] = {"num_bits": 8, "type": "float", "dynamic": False}
    return model_from_config({**data, "quantization_config": block}, source="ct-llama")


@pytest.mark.parametrize(("kv_scheme", "version", "refused"),
                         [(True, "0.33.0", True), (False, "0.33.0", False), (False, "0.13.0", True)])  # fmt: skip
def test_compressed_tensors_refuses_fp8_e5m2_where_vllm_does(kv_scheme: bool, version: str, refused: bool) -> None:
    """v0.33.0 `_init_kv_cache_quant`: a CompressedTensorsKVCacheMethod without a kv_cache_scheme keeps fp8_e5m2;
    v0.13.0 refuses any BaseKVCacheMethod. The 32 attention layers hold their scale scalars either way: v0.33.0's
    CompressedTensorsKVCacheMethod q/k/v_scale float32 [1] and q/k/v_zero_point bfloat16 [1] (18 B a layer: the
    recon Llama-3.1-8B CT FP8 meta build lists them, 576 B); v0.13.0 the base method's four bf16 scalars (not checked
    against its build: the book's count)."""
    model = _compressed_tensors_llama(kv_scheme)
    settings = parse_flags("vllm", ["--kv-cache-dtype", "fp8_e5m2", "--engine-version", version])
    ledger = predict(model, settings, gpu_total_bytes=80 << 30, gpu_name="H100", measured=UNLIMITED)
    assert any(r.field == "--kv-cache-dtype" for r in launch_refusals(ledger)) is refused
    parts = engine_rules("vllm").stage_parts(model, 0, 1, ledger.version)
    layout, layers = ParallelLayout(), range(model.num_layers)
    built = weights_book(model, layout, layers, first_stage=True, last_stage=True, parts=parts)
    stored = weights_book(model, layout, layers, first_stage=True, last_stage=True)
    assert built.total_bytes - stored.total_bytes == 32 * (3 * 4 + 3 * 2 if version == "0.33.0" else 4 * 2)
    assert ledger.weights_bytes == built.total_bytes
