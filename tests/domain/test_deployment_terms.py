"""The deployment beside the model as ledger terms (issue 30): each figure against the engine code's own
arithmetic, written out by hand here (the sources are the engines' files named in each test)."""

from __future__ import annotations

import json

import pytest

from kvtop.domain.deployment import Basis, Charge, Feature, SpecKind, TermState
from kvtop.domain.engines.registry import engine_rules
from kvtop.domain.engines.versions import from_flag
from kvtop.domain.errors import InputError
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import Ledger, predict
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from tests.conftest import CONFIGS

MIB, GIB = 1 << 20, 1 << 30
H100 = 81559 * MIB  # nvidia-smi's total (tests/data/samples/nvidia_smi)


def load(name: str) -> ModelSpec:
    return model_from_config(json.loads((CONFIGS / name).read_text()), source=name)


LLAMA8B = load("meta-llama--Llama-3.1-8B-Instruct.json")
LLAMA70B = load("meta-llama--Llama-3.1-70B-Instruct.json")
DSV3 = load("deepseek-ai--DeepSeek-V3.json")
EAGLE3_70B = load("drafts/sgl-project--SpecForge-llama3-70B-eagle3.json")


def plan(model: ModelSpec, engine: str, flags: list[str], **kw: object) -> Ledger:
    settings = parse_flags(engine, flags, strict=True)
    return predict(model, settings, gpu_total_bytes=H100, gpu_name="H100", **kw)  # type: ignore[arg-type]


def term(ledger: Ledger, feature: Feature, charge: Charge):  # type: ignore[no-untyped-def]
    found = [t for t in ledger.terms if t.feature is feature and t.charge is charge]
    assert len(found) == 1, ledger.terms
    return found[0]


# --- LoRA slots: lora/mem_pool.py (SGLang), lora/layers/*.py (vLLM) -------------------------------------------


def test_sglang_lora_slots_are_the_pools_a_and_b_buffers_and_come_off_the_kv_budget() -> None:
    # Llama-3.1-8B: h 4096, 32 heads / 8 KV heads × 128, intermediate 14336, 32 layers, bf16; TP1, rank 64, 8 slots
    r = 64
    qkv = 3 * r * 4096 + (4096 + 2 * 8 * 128) * r  # A (3r × h) + B ((heads + 2 KV heads) × d × r)
    o = r * 4096 + 4096 * r
    gate_up = 2 * r * 4096 + 2 * 14336 * r
    down = r * 14336 + 4096 * r
    expected = 8 * 2 * 32 * (qkv + o + gate_up + down)
    assert expected == 2_684_354_560  # 2.50 GiB
    flags = ["--mem-fraction-static", "0.85", "--enable-lora", "--max-lora-rank", "64"]
    with_lora = plan(LLAMA8B, "sglang", flags)
    lora = term(with_lora, Feature.LORA, Charge.RESIDENT)
    assert lora.bytes == expected and lora.basis is Basis.ASSUMED  # the module set was not given
    without = plan(LLAMA8B, "sglang", flags[:2])
    # resident before the pool (ModelRunner.initialize → init_lora_manager before alloc_memory_pool): the KV
    # budget loses exactly the slots' bytes (1 byte of float rounding at most)
    assert abs(without.engine.kv_budget_bytes - with_lora.engine.kv_budget_bytes - expected) <= 1
    assert any(step.label == "− LoRA slots: 8 × rank 64" and step.bytes == -expected for step in with_lora.engine.steps)


def test_sglang_lora_with_named_modules_is_computed_and_without_a_rank_is_not_modelled() -> None:
    named = plan(LLAMA8B, "sglang", ["--enable-lora", "--max-lora-rank", "8", "--lora-target-modules", "q_proj,v_proj"])
    lora = term(named, Feature.LORA, Charge.RESIDENT)
    assert lora.basis is Basis.COMPUTED
    assert lora.bytes == 8 * 2 * 32 * (3 * 8 * 4096 + (4096 + 2 * 8 * 128) * 8)  # only qkv_proj's buffers
    unranked = term(plan(LLAMA8B, "sglang", ["--lora-paths", "a=/adapters/a"]), Feature.LORA, Charge.RESIDENT)
    assert unranked.state is TermState.NOT_MODELLED and "--max-lora-rank" in unranked.detail
    assert unranked.bytes == 0


def test_vllm_lora_defaults_one_slot_of_rank_16_on_the_ranks_own_shards() -> None:
    # TP2: heads 16 and KV heads 4 per rank, intermediate 7168 per rank; --max-loras 1, --max-lora-rank 16 (defaults)
    r = 16
    qkv = 3 * r * 4096 + (2048 + 2 * 4 * 128) * r
    o = r * 2048 + 4096 * r
    gate_up = 2 * r * 4096 + 2 * 7168 * r
    down = r * 7168 + 4096 * r
    ledger = plan(LLAMA8B, "vllm", ["--tensor-parallel-size", "2", "--enable-lora"])
    lora = term(ledger, Feature.LORA, Charge.RESIDENT)
    assert lora.bytes == 1 * 2 * 32 * (qkv + o + gate_up + down) == 56_623_104
    assert lora.setting == "--enable-lora --max-loras 1 --max-lora-rank 16"


def test_lora_on_an_moe_model_is_not_modelled_and_says_why() -> None:
    lora = term(plan(DSV3, "vllm", ["-tp", "8", "--enable-lora"]), Feature.LORA, Charge.RESIDENT)
    assert lora.state is TermState.NOT_MODELLED and "MLA" in lora.detail


# --- speculative decoding ---------------------------------------------------------------------------------------


def _auto_fraction(reserved_mib: float) -> float:
    return round((81559 - reserved_mib) / 81559, 3)


def test_sglang_automatic_fraction_keeps_the_speculative_reserve_of_its_release() -> None:
    # server_args.py _handle_gpu_memory_settings at v0.5.9, H100 (81559 MiB < 90 GiB: chunked prefill 8192, graph
    # max bs 256 at tp < 4), no piecewise graphs before v0.5.10rc0:
    base = 512 + 1.5 * 8192 + 1 * 1 / 8 * 1024 + 2 * 256  # 13440 MiB, above the 10 GiB floor
    spec = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/d/eagle3"]
    at = ["--engine-version", "0.5.9"]
    assert plan(LLAMA8B, "sglang", at).engine.memory_fraction == _auto_fraction(base) == 0.835
    eagle = plan(LLAMA8B, "sglang", at + spec)
    assert eagle.engine.memory_fraction == _auto_fraction(base + 2048) == 0.81
    assert term(eagle, Feature.SPECULATIVE, Charge.RESERVE).bytes == 2048 * MIB
    ngram = plan(LLAMA8B, "sglang", at + ["--speculative-algorithm", "NGRAM"])
    assert ngram.engine.memory_fraction == 0.835  # NGRAM keeps none from v0.5.3rc2
    standalone = plan(LLAMA8B, "sglang", at + ["--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", "/d/s"])
    assert standalone.engine.memory_fraction == _auto_fraction(base + 6144)
    # v0.5.10: EAGLE-style drafts keep 4 GiB; piecewise graphs (8 MiB × 58 sizes up to 8192) are on by default, but
    # speculative decoding turns them off before the reserve is sized (0.5.10 server_args.py:778
    # `_handle_piecewise_cuda_graph` → :1089, then the reserve's `if not self.disable_piecewise_cuda_graph` :1305),
    # so the speculative launch reserves none of them (from 0.5.11 that rule is gone: v0.5.14 below keeps them)
    pcg = 8 * 58
    assert plan(LLAMA8B, "sglang", ["--engine-version", "0.5.10"] + spec).engine.memory_fraction == _auto_fraction(
        base + 4096
    ) == 0.785
    # v0.5.14 dropped the speculative reserve (arg_groups/memory_hook.py)
    latest = plan(LLAMA8B, "sglang", ["--engine-version", "0.5.14"] + spec)
    assert latest.engine.memory_fraction == _auto_fraction(base + pcg)
    assert not [t for t in latest.terms if t.charge is Charge.RESERVE]
    # v0.5.2's GPU-class table: (9.5 + tp × pp / 2) GiB below 90 GiB, + 2 GiB for any algorithm, NGRAM too
    old = plan(LLAMA8B, "sglang", ["--engine-version", "0.5.2", "--speculative-algorithm", "NGRAM"])
    assert old.engine.memory_fraction == _auto_fraction((9.5 + 0.5) * 1024 + 2048) == 0.849


def test_sglang_deepep_reserve_from_v0_5_15() -> None:
    qwen = load("Qwen--Qwen3-235B-A22B.json")
    flags = ["--tp-size", "8", "--ep-size", "8", "--moe-a2a-backend", "deepep"]
    before = plan(qwen, "sglang", flags + ["--engine-version", "0.5.14"])
    after = plan(qwen, "sglang", flags + ["--engine-version", "0.5.15"])
    plain = plan(qwen, "sglang", flags[:4] + ["--engine-version", "0.5.15"])
    # an MoE A2A backend turns the piecewise prefill graphs off before the reserve is sized (0.5.13 server_args.py:1369,
    # taken for 0.5.14; 0.5.15.post1 :3364-3372 for the breakable default), so the DeepEP launch reserves none of
    # their 8 MiB × 58 sizes that the plain TP8 launch keeps (prefill_graphs_off.py)
    pcg = 8 * 58
    plain_0_5_14 = plan(qwen, "sglang", flags[:4] + ["--engine-version", "0.5.14"]).engine.memory_fraction
    assert round(before.engine.memory_fraction - plain_0_5_14, 3) == round(pcg / 81559, 3) == 0.006
    # memory_hook.py reserve_for_deepep_a2a_mb: 2 GiB on top of the floor, less the prefill graphs it no longer keeps
    assert round(after.engine.memory_fraction - plain.engine.memory_fraction, 3) == -round((2048 - pcg) / 81559, 3)
    assert term(after, Feature.EXPERT_PARALLEL, Charge.RESERVE).bytes == 2048 * MIB
    assert not [t for t in after.terms if t.charge is Charge.AFTER_POOL]  # the reserve counts them
    # before v0.5.15 nothing reserved them: they come after the pool, out of the runtime reserve
    late = term(before, Feature.EXPERT_PARALLEL, Charge.AFTER_POOL)
    assert (late.bytes, late.basis) == (2048 * MIB, Basis.CALIBRATED)
    graphs_off = plan(qwen, "sglang", flags + ["--engine-version", "0.5.15", "--disable-cuda-graph"])
    # no graphs: neither the DeepEP reserve nor (A2A backend) the prefill graphs' share, nor (from 0.5.15, the decode
    # backend disabled: 0.5.15 server_args.py:3638-3643, decode_graphs_off.py) the decode graphs' 2 × 512 MiB that
    # 0.5.14 keeps: 512 + 1.5 × 8,192 + 8/8 × 1,024 = 13,824 MiB → round((81,559 − 13,824) / 81,559, 3) = 0.831
    assert graphs_off.engine.memory_fraction == 0.831
    assert before.engine.memory_fraction == 0.818  # the same with the 1,024 MiB: 14,848 → round(0.81795, 3)


def test_sglang_eagle3_draft_weights_and_kv_from_its_config() -> None:
    # Llama-3.1-70B TP8: 1 KV head × 128 per rank, K and V, bf16: 512 B per layer, 80 layers = 40,960 B per token;
    # kv_cache_configurator: cell = int(cell × (1 + draft layers / layers)) with the draft's 1 layer
    flags = ["--tp-size", "8", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/d/eagle3"]
    ledger = plan(LLAMA70B, "sglang", flags, draft=EAGLE3_70B)
    assert ledger.kv_bytes_per_token == int(40_960 * (1 + 1 / 80)) == 41_472
    cell = term(ledger, Feature.SPECULATIVE, Charge.KV_CELL)
    assert cell.bytes_per_token == 512 and cell.basis is Basis.COMPUTED
    assert cell.bytes == 512 * (ledger.token_capacity + ledger.engine.page_size)
    # the Eagle-3 head as SGLang's llama_eagle3.py builds it at TP8: embedding 128256/8 rows × 8192; layer 0's
    # qkv_proj over 2 × 8192 inputs, 1024 q + 2 × 128 k/v rows; o 8192 × 1024; MLP 3 × 8192 × 3584; input,
    # post-attention and hidden norms and the final norm of 8192; the fc 8192 × (3 × 8192), whole; the LM head of
    # draft_vocab_size 32000/8 rows × 8192; fp16 (2 B)
    params = (128256 // 8 * 8192 + (1024 + 2 * 128) * 2 * 8192 + 8192 * 1024 + 3 * 8192 * 3584 + 4 * 8192
              + 3 * 8192 * 8192 + 32000 // 8 * 8192)  # fmt: skip
    weights = term(ledger, Feature.SPECULATIVE, Charge.RESIDENT)
    assert weights.bytes == 2 * params == 965_804_032
    assert weights.basis is Basis.COMPUTED and "Eagle-3" in weights.detail
    without_config = term(plan(LLAMA70B, "sglang", flags), Feature.SPECULATIVE, Charge.RESIDENT)
    assert without_config.state is TermState.NOT_MODELLED and "--draft-model" in without_config.detail


def test_measured_draft_weights_win_over_the_config() -> None:
    # tests/data/cases/sglang/C24: the draft's own "Load weight end … mem usage=2.80 GB" (GiB)
    measured = round(2.80 * GIB)
    flags = ["--tp-size", "8", "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "/d/e"]
    from kvtop.domain.engines.base import MeasuredInputs

    ledger = plan(LLAMA70B, "sglang", flags, measured=MeasuredInputs(draft_weights_bytes=measured), draft=EAGLE3_70B)
    weights = term(ledger, Feature.SPECULATIVE, Charge.RESIDENT)
    assert (weights.bytes, weights.basis) == (measured, Basis.MEASURED)


def test_vllm_mtp_draft_joins_the_kv_specs_as_a_layer_and_loads_with_the_weights() -> None:
    # DeepSeek-V3 TP8, bf16 KV: the MLA latent 512 + 64 = 576 × 2 B per layer; 61 layers + 1 MTP layer
    flags = ["-tp", "8", "--speculative-config", '{"method": "deepseek_mtp", "num_speculative_tokens": 1}']
    ledger = plan(DSV3, "vllm", flags)
    assert ledger.setup.spec_kind is SpecKind.MTP
    assert ledger.kv_bytes_per_token == 62 * 576 * 2
    assert term(ledger, Feature.SPECULATIVE, Charge.KV_CELL).bytes_per_token == 576 * 2
    mtp_row = next(row for row in ledger.ranks[0].weights.rows if row.component == "mtp")
    assert mtp_row.bytes > 0
    assert term(ledger, Feature.SPECULATIVE, Charge.WEIGHTS).bytes == mtp_row.bytes


def test_vllm_ngram_has_no_draft() -> None:
    ledger = plan(LLAMA8B, "vllm", ["--speculative-config", '{"method": "ngram", "num_speculative_tokens": 4}'])
    assert ledger.kv_bytes_per_token == plan(LLAMA8B, "vllm", []).kv_bytes_per_token
    assert [t.bytes for t in ledger.terms] == [0]


# --- expert parallelism -----------------------------------------------------------------------------------------


def test_redundant_experts_add_their_share_of_routed_expert_bytes() -> None:
    # DeepSeek-V3, EP8: 256 + 32 physical experts, 4 more per rank; each routed expert is 3 FP8 matrices of
    # 2048 × 7168 with a float32 scale per 128 × 128 block, in 58 MoE layers (3 dense of 61)
    per_expert = 58 * 3 * (2048 * 7168 + (2048 // 128) * (7168 // 128) * 4)
    ledger = plan(DSV3, "sglang", ["--tp-size", "8", "--ep-size", "8", "--ep-num-redundant-experts", "32"])
    assert term(ledger, Feature.EXPERT_PARALLEL, Charge.RESIDENT).bytes == 4 * per_expert
    vllm = plan(DSV3, "vllm", ["-tp", "8", "--enable-expert-parallel", "--enable-eplb",
                                "--eplb-config", '{"num_redundant_experts": 32}'])  # fmt: skip
    assert term(vllm, Feature.EXPERT_PARALLEL, Charge.RESIDENT).bytes == 4 * per_expert


def test_redundant_experts_that_do_not_split_name_the_flag() -> None:
    with pytest.raises(InputError, match="--ep-num-redundant-experts"):
        plan(DSV3, "sglang", ["--tp-size", "8", "--ep-size", "8", "--ep-num-redundant-experts", "3"])


@pytest.mark.parametrize(
    ("engine", "flags", "field"),
    [
        ("sglang", ["--speculative-algorithm", "MEDUSA9"], "--speculative-algorithm"),
        ("sglang", ["--max-lora-rank", "x", "--enable-lora"], "--max-lora-rank"),
        ("sglang", ["--enable-hierarchical-cache", "--hicache-ratio", "-2"], "--hicache-ratio"),
        ("vllm", ["--speculative-config", "{not json"], "--speculative-config"),
        ("vllm", ["--eplb-config", '{"num_redundant_experts": 8}'], "--eplb-config"),
        ("vllm", ["--kv-offloading-size", "lots"], "--kv-offloading-size"),
    ],
)
def test_bad_deployment_values_name_the_flag(engine: str, flags: list[str], field: str) -> None:
    with pytest.raises(InputError) as err:
        plan(LLAMA8B, engine, flags)
    assert err.value.field == field


def test_every_engine_reads_only_flags_it_lets_through() -> None:
    from kvtop.domain.engines.registry import ENGINE_IDS, engine_flags

    for engine in ENGINE_IDS:
        assert engine_rules(engine).deployment.flags <= engine_flags(engine).passthrough, engine


def test_version_flag_picks_the_era() -> None:
    assert from_flag("0.5.9", engine_rules("sglang").calendar).release is not None


def test_sglang_multimodal_reserve_is_the_encoder_term() -> None:
    # mm_runtime_reservation_gb (v0.5.18 on): SGLANG_VLM_CACHE_SIZE_MB, 100 MiB by default, off the KV budget
    gemma = load("google--gemma-3-27b-it.json")
    ledger = plan(gemma, "sglang", ["--enable-multimodal"])
    encoder = term(ledger, Feature.ENCODER, Charge.RESERVE)
    assert encoder.bytes == 100 * MIB and encoder.basis is Basis.ASSUMED
    assert any(step.label == "− multimodal reserve" and step.bytes == -100 * MIB for step in ledger.engine.steps)
    assert not plan(gemma, "sglang", ["--enable-multimodal", "--engine-version", "0.5.17"]).terms
