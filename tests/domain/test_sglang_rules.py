"""SGLang budget rules for VLMs (docs/engines/sglang.md §4 multimodal reserve, §5 VLM fraction) and hybrid SWA under PP (§6.2).

Gemma-3 and Llama-4 are text-only to SGLang unless launched with --enable-multimodal (§4.4), so the VLM
rules are exercised with that flag; without it neither the factor nor the reserve applies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvtop.domain.engines.sglang.eras import vit_size_factor
from kvtop.domain.explain import explain
from kvtop.domain.explain_request import ExplainRequest
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model import ModelSpec, VisionSpec
from kvtop.domain.model_config import model_from_config
from kvtop.sources.engine_logs import read_engine_log
from tests.conftest import CONFIGS

H100 = 81559 << 20
GEMMA3 = "google--gemma-3-27b-it.json"
SCOUT = "meta-llama--Llama-4-Scout-17B-16E-Instruct.json"
GPT_OSS = "openai--gpt-oss-120b.json"


def load(name: str) -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / name).read_text()), source=name)


def test_vision_config_sizes_are_read() -> None:
    gemma3, scout = load(GEMMA3).vision, load(SCOUT).vision
    assert gemma3 is not None and (gemma3.num_layers, gemma3.hidden_size) == (27, 1152)
    assert scout is not None and (scout.num_layers, scout.hidden_size) == (34, 1408)
    assert (gemma3.field("num_hidden_layers"), gemma3.field("hidden_size")) == (27, 1152)  # under the keys SGLang reads
    assert load(GPT_OSS).vision is None


def test_vision_config_without_sizes_takes_sglangs_defaults() -> None:
    cfg = json.loads((CONFIGS / GEMMA3).read_text())
    cfg["vision_config"] = {"model_type": "siglip_vision_model"}
    vision = model_from_config(cfg, source=GEMMA3).vision
    assert vision == VisionSpec(num_layers=24, hidden_size=1024, stated=())
    assert vision is not None and vit_size_factor(vision) == 1.0  # 24·1024² / (24·1024²) = 1


MM = "--enable-multimodal"


def test_gemma3_is_text_only_without_enable_multimodal() -> None:
    ledger = predict(load(GEMMA3), parse_flags("sglang", []), gpu_total_bytes=H100)
    # §5: round((81,559 − 13,904) / 81,559, 3) = 0.830, no tower factor; no 100 MiB reserve (§4.4)
    assert ledger.engine.memory_fraction == 0.830
    # weights 54,018,692,608 B of language model (Gemma3DecoderLayer's four norms a layer: 62 × 4 × 5,376 × 2 B
    # of them) + 846,120,672 B of SigLIP tower and projector (gemma3_mm.py builds them text-only too) =
    # 54,864,813,280: (84,447,068,160 − 54,864,813,280) − 84,447,068,160 × 0.17 = 15,226,253,292 B ÷ 507,904
    # = 29,978.6
    assert ledger.weights_bytes == 54_018_692_608 + 846_120_672
    assert ledger.engine.kv_budget_bytes == 15_226_253_292
    assert ledger.token_capacity == 29_978
    assert not any(step.label == "− multimodal reserve" for step in ledger.engine.steps)


def test_gemma3_auto_fraction_and_reserve() -> None:
    ledger = predict(load(GEMMA3), parse_flags("sglang", [MM]), gpu_total_bytes=H100)
    # §5 (latest): 512 + 1.5 × 8,192 + 2 × 256 + 1/8 × 1,024 = 13,440 MiB, no piecewise prefill sizes (SGLang turns
    # the prefill graphs off for a multimodal model before the reserve: 0.5.23 arg_groups/cuda_graph_hook.py:231,
    # Gemma3ForConditionalGeneration on neither allowlist) → round((81,559 − 13,440) / 81,559, 3) = 0.835;
    # tower 1 − 0.1·(27·1152²/(24·1024²) − 1) = 0.9576171875
    assert ledger.engine.memory_fraction == pytest.approx(0.835 * 0.95 * 0.9576171875, abs=1e-12)
    # pre 84,447,068,160 (H100 − 1 GiB), weights 54,864,813,280 (tower included): rest = (pre − w)/2³⁰ −
    # pre/2³⁰·(1 − 0.75963) − 100/1024 GiB (§4) → 9,178,841,486 B ÷ 507,904 B per token = 18,072.0
    assert ledger.engine.kv_budget_bytes == 9_178_841_486
    assert ledger.token_capacity == 18_072


def test_explicit_fraction_skips_the_vlm_factor_but_not_the_reserve() -> None:
    flags = parse_flags("sglang", ["--mem-fraction-static", "0.85", MM])
    ledger = predict(load(GEMMA3), flags, gpu_total_bytes=H100)
    assert ledger.engine.memory_fraction == 0.85
    # 29,582,254,880 after load − 84,447,068,160 × 0.15 − 104,857,600 = 16,810,337,056 ÷ 507,904 = 33,097.5
    assert ledger.engine.kv_budget_bytes == 16_810_337_055  # 16,810,337,056 less the reserve's rounding
    assert ledger.token_capacity == 33_097  # 33,303 without the 100 MiB reserve


def test_feature_transport_pool_adds_to_the_reserve() -> None:
    plain = predict(load(GEMMA3), parse_flags("sglang", [MM]), gpu_total_bytes=H100)
    ipc = predict(
        load(GEMMA3), parse_flags("sglang", [MM, "--mm-feature-transport", "cuda_ipc"]), gpu_total_bytes=H100
    )
    assert (
        plain.engine.kv_budget_bytes - ipc.engine.kv_budget_bytes == 1024 << 20
    )  # SGLANG_MM_FEATURE_CACHE_MB


def test_llama4_scout_tp4_auto_fraction() -> None:
    ledger = predict(load(SCOUT), parse_flags("sglang", ["--tp", "4", MM]), gpu_total_bytes=H100)
    # (81,559 − (512 + 12,288 + 2 × 512 + 4/8 × 1,024)) / 81,559 = 0.824 (no piecewise prefill sizes: off for a
    # multimodal model, prefill_graphs_off.py); × 0.95 × (1 − 0.1·(34·1408²/(24·1024²) − 1) = 0.83216…) = 0.65142
    assert ledger.engine.memory_fraction == pytest.approx(0.65142, abs=1e-5)


def test_text_only_model_keeps_the_rounded_auto_fraction() -> None:
    ledger = predict(load(GPT_OSS), parse_flags("sglang", []), gpu_total_bytes=H100)
    assert ledger.engine.memory_fraction == 0.830  # (81,559 − 13,904) / 81,559, as Gemma-3's before its factor
    assert ledger.engine.reserve_bytes == 14_356_001_587  # pre × 0.170; no multimodal reserve


def test_gpt_oss_swa_cell_counts_whole_model_layers_under_pp_before_0_5_23() -> None:
    settings = parse_flags("sglang", ["--pp", "2"]).model_copy(update={"engine_version": "0.5.22"})
    ledger = predict(load(GPT_OSS), settings, gpu_total_bytes=H100)
    cell = next(step for step in ledger.engine.steps if step.label.startswith("cell:"))
    # 8 KV heads × (64 + 64) × 2 B = 2,048 B per layer; 18 full + 0.8 × 18 sliding layers of the
    # whole model (not the stage's 9 + 9): 36,864 + 29,491.2 = 66,355.2 (§6.2's reading, kept before 0.5.23)
    assert cell.value == pytest.approx(66_355.2)
    # mfs (81,559 − (512 + 12,288 + 512 + 2/8 × 1,024)) / 81,559 = 0.834 (no prefill graphs: PP > 1 turns the
    # breakable backend off from 0.5.19, arg_groups/cuda_graph_hook.py 0.5.22:118); weights 32,624,410,752 per stage
    # (o_proj's bias included: GptOssAttention's o_proj has bias=True; the router bias bf16, as SGLang builds it:
    # mlp.router.bias [128] bfloat16): (84,447,068,160 − 32,624,410,752) − 84,447,068,160 × 0.166 = 37,804,444,093
    assert ledger.engine.kv_budget_bytes == 37_804_444_093
    assert ledger.token_capacity == 569_728  # 37,804,444,093 // 66,355.2; about twice that with the stage's cell
    assert ledger.engine.swa_token_capacity == 455_782  # int(569,728 × 0.8)


def test_gpt_oss_swa_cell_counts_the_stages_layers_under_pp() -> None:
    settings = parse_flags("sglang", ["--pp", "2"]).model_copy(update={"engine_version": "0.5.23"})
    ledger = predict(load(GPT_OSS), settings, gpu_total_bytes=H100)
    cell = next(step for step in ledger.engine.steps if step.label.startswith("cell:"))
    # 0.5.23's own runs (sglang-0.5.23.flags.json, gpt-oss PP 2/4: S20): the stage's 9 full + 0.8 × 9 sliding
    # layers: 18,432 + 14,745.6 = 33,177.6
    assert cell.value == pytest.approx(33_177.6)
    # stage 0 holds the embedding, 18 layers and the LM head GptOssForCausalLM builds on every stage (A5:
    # 201,088 × 2,880 × 2 B = 1,158,266,880 B on each stage of the engine's PP 4 build), the router bias bf16 as
    # SGLang builds it (mlp.router.bias [128] bfloat16: 18 × 128 × 2 B fewer than fp32 on each stage):
    # 32,624,404,992 + 1,158,266,880 = 33,782,671,872; stage 1 32,624,415,360 − 4,608 = 32,624,410,752;
    # mfs: 0.5.23 turns the breakable prefill graphs off by default under PP > 1 (arg_groups/cuda_graph_hook.py:150,
    # before memory_hook.py:381 sizes the reserve; prefill_graphs_off.py), so no 464 MiB of 58 sizes:
    # (81,559 − (512 + 12,288 + 512 + 2/8 × 1,024)) / 81,559 = 67,991 / 81,559 = 0.8336 → 0.834;
    # (84,447,068,160 − 33,782,671,872) − 84,447,068,160 × 0.166 = 36,646,182,973
    assert [rank.weights.total_bytes for rank in ledger.ranks] == [33_782_671_872, 32_624_410_752]
    assert ledger.engine.memory_fraction == 0.834
    assert ledger.engine.kv_budget_bytes == 36_646_182_973
    assert ledger.token_capacity == 1_104_545  # 36,646,182,973 // 33,177.6
    assert ledger.engine.swa_token_capacity == 883_636  # int(1,104,545 × 0.8)


def test_gpt_oss_swa_cell_without_pp_is_unchanged() -> None:
    ledger = predict(load(GPT_OSS), parse_flags("sglang", []), gpu_total_bytes=H100)
    assert ledger.token_capacity == 72_974  # (84,447,068,160 − 65,248,824,960) − pre × 0.17 = 4,842,241,612 // 66,355.2


def test_explain_matches_a_gemma3_log_with_the_multimodal_reserve(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    log.write_text(
        "[2026-09-01 00:00:00 TP0] Load weight begin. avail mem=70.00 GB\n"
        "[2026-09-01 00:00:10 TP0] Load weight end. elapsed=10.00 s, type=Gemma3ForConditionalGeneration,"
        " avail mem=15.00 GB, mem usage=55.00 GB.\n"
        "[2026-09-01 00:00:10 TP0] KV Cache is allocated. #tokens: 9306, K size: 2.20 GB, V size: 2.20 GB\n"
    )
    result = explain(ExplainRequest(
        log=read_engine_log(log), model=load(GEMMA3),
        settings=parse_flags("sglang", ["--mem-fraction-static", "0.85", MM]),
    ))
    # (15 − 70 × 0.15 − 100/1024) GiB = 4.40234375 GiB = 4,726,979,379 B ÷ 507,904 = 9,306.8
    assert result.token_capacity == 9_306
    assert result.verdict == "match"
