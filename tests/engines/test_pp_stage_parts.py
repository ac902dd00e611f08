"""Which pipeline stages hold the embedding, the final norm and the LM head (engines' `pp_parts.py`; A1, A5, S20).

Expected figures are the engines' own model classes built on the meta device, each stage in its own process
(benchmarks/engine_diff; tests/data/engine_diff/{vllm-0.33.0,sglang-0.5.23}.flags.json, variants pp2/pp4):
each stage's parameter bytes (`lm_head` + `model`/`language_model`), and SGLang's cell and token count.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.kvtop_side import kvtop_plan
from tests.data_paths import DATA


def _row(engine: str, version: str, config: str, variant: str) -> dict[str, Any]:
    rows = json.loads((DATA / "engine_diff" / f"{engine}-{version}.flags.json").read_text())["results"]
    return next(r for r in rows if r["config"] == config and r.get("variant") == variant and r["kv_dtype"] == "auto")


def _engine_stages(row: dict[str, Any]) -> list[int]:
    """Each stage's language-model bytes (towers left out: kvtop's vision row is compared elsewhere)."""
    return [sum(b for child, b in s["param_bytes"].items() if child in ("model", "lm_head", "language_model"))
            for s in row["stages"]]  # fmt: skip


def _kvtop_stages(plan: dict[str, Any]) -> list[int]:
    return [s["weights_bytes"] - s["vision_bytes"] for s in sorted(plan["stages"], key=lambda s: s["pp_rank"])]


@pytest.mark.parametrize(
    ("engine", "version", "config", "variant", "stages"),
    [
        # vLLM's MixtralForCausalLM builds embed_tokens, norm and lm_head on every stage (mixtral.py, no guard):
        # 8 layers + 2 × 32,000 × 4,096 × 2 B + a 4,096 × 2 B norm on each of the four
        ("vllm", "0.33.0", "mistralai--Mixtral-8x7B-v0.1", "pp4", [262_144_000 + 23_482_474_496] * 4),
        # vLLM's Qwen3MoeForCausalLM likewise (qwen3_moe.py): 12 layers + embedding + norm + lm_head each
        ("vllm", "0.33.0", "Qwen--Qwen3-30B-A3B", "pp4", [622_329_856 + 15_577_229_312] * 4),
        # vLLM's Gemma3 (gemma3.py): embed_tokens and norm on every stage, the head tied to the embedding;
        # 62 layers split 16, 16, 15, 15 (vLLM's remainder before the last stage)
        ("vllm", "0.33.0", "google--gemma-3-27b-it", "pp4",
         [15_206_227_968, 16_032_025_088, 16_032_025_088, 15_206_227_968]),
        # vLLM's GraniteMoeHybridModel (granitemoehybrid.py): embed_tokens and norm on every stage, the head tied;
        # 40 layers 10 a stage, each stage the same bytes (a guarded split's middle stages: 822,091,776 B less)
        ("vllm", "0.33.0", "ibm-granite--granite-4.0-h-small.RECONSTRUCTED", "pp4", [16_720_240_128] * 4),
        ("vllm", "0.33.0", "ibm-granite--granite-4.0-h-small.RECONSTRUCTED", "pp2", [16_334_157_824] * 2),
        # SGLang's LlamaForCausalLM builds lm_head on every stage (llama.py): 128,256 × 4,096 × 2 B on each;
        # embed_tokens on stage 0 only, the final norm (8,192 B) on stage 3 only
        ("sglang", "0.5.23", "meta-llama--Llama-3.1-8B", "pp4",
         [1_050_673_152 + 4_540_465_152, 1_050_673_152 + 3_489_792_000, 1_050_673_152 + 3_489_792_000,
          1_050_673_152 + 3_489_800_192]),
        # ... and, tied (Phi-4-mini), `lm_head = model.embed_tokens`: no head past stage 0 at all
        ("sglang", "0.5.23", "microsoft--Phi-4-mini-instruct", "pp4",
         [2_839_904_256, 1_610_711_040, 1_610_711_040, 1_610_717_184]),
        # SGLang's Qwen3MoeForCausalLM (qwen3_moe.py) at TP 2 × PP 2: a 151,936 × 4,096 × 2 B ÷ 2 head on both
        ("sglang", "0.5.23", "Qwen--Qwen3-235B-A22B", "pp2", [622_329_856 + 117_571_853_824, 622_329_856 + 116_949_532_160]),
    ],
)  # fmt: skip
def test_each_stage_holds_what_the_engines_class_builds(
    engine: str, version: str, config: str, variant: str, stages: list[int]
) -> None:
    row = _row(engine, version, config, variant)
    assert _engine_stages(row) == stages  # the committed engine run says so
    assert _kvtop_stages(kvtop_plan(engine, version, row)) == stages


def test_sglang_hybrid_swa_cell_is_the_stages_own_layers() -> None:
    """S20: gpt-oss-120b at TP 2 × PP 2: each stage's 9 full + 9 sliding layers, 4 KV heads × (64 + 64) × 2 B =
    1,024 B per layer: 9,216 + 0.8 × 9,216 = 16,588.8 B; the rest 40 GiB (64 GiB free after the load − 80 GiB × 0.3)
    ÷ 16,588.8 = 2,589,076 tokens (the whole model's cell, 33,177.6 B, gives half)."""
    row = _row("sglang", "0.5.23", "openai--gpt-oss-120b", "pp2")
    assert (row["cell_size"], row["max_total_num_tokens"]) == (16_588, 2_589_076)
    plan = kvtop_plan("sglang", "0.5.23", row)
    assert (plan["cell_bytes"], plan["tokens"]) == (16_588, 2_589_076)


@pytest.mark.parametrize(
    ("engine", "config", "variant", "towers"),
    [
        # SGLang builds the vision tower on every stage (qwen3_vl.py), its pos_embed (2,304 × 1,152 × 2 B =
        # 5,308,416 B) on stage 0 only
        ("sglang", "Qwen--Qwen3-VL-8B-Instruct", "pp4", [1_152_776_672] + [1_147_468_256] * 3),
        # ... at TP 2 the table's rows split over the two ranks: 2,654,208 B less past stage 0
        ("sglang", "Qwen--Qwen3-VL-8B-Instruct", "pp2", [578_391_920, 575_737_712]),
        ("sglang", "Qwen--Qwen2.5-VL-7B-Instruct", "pp4", [1_354_083_840] * 4),  # no position table
        ("sglang", "mistralai--Mistral-Small-3.1-24B-Instruct-2503", "pp2", [475_262_976] * 2),  # tower + projector
        # vLLM builds it on the first stage only (qwen3_vl.py: the language model alone past stage 0)
        ("vllm", "Qwen--Qwen3-VL-8B-Instruct", "pp4", [1_152_776_672, 0, 0, 0]),
    ],
)
def test_each_stage_holds_the_towers_the_engine_builds(engine: str, config: str, variant: str, towers: list[int]) -> None:
    version = {"vllm": "0.33.0", "sglang": "0.5.23"}[engine]
    row = _row(engine, version, config, variant)
    assert [sum(b for child, b in s["param_bytes"].items() if child not in ("model", "lm_head", "language_model"))
            for s in row["stages"]] == towers  # fmt: skip
    plan = kvtop_plan(engine, version, row)
    assert [s["vision_bytes"] for s in sorted(plan["stages"], key=lambda s: s["pp_rank"])] == towers


@pytest.mark.parametrize(
    ("variant", "bytes_per_block", "num_blocks", "tokens"),
    [
        # V23: vLLM groups Gemma-3-27B's 10 full + 52 sliding layers on every stage's specs (1 + 6 groups of 10,
        # sliding layers dealt by position mod 6) and projects them per worker. TP1×PP4 stage 0 (layers 0–14):
        # sliding positions 0–12 → 3, 2, 2, 2, 2, 2 a group, full 2: 3 slots × 16 × 16 heads × 128 × 2 × 2 B =
        # 393,216 B a block (its own 13 + 2 would group by 2: 262,144 B); 40 GiB ÷ 393,216 = 109,226 blocks
        ("pp4", 393_216, 109_226, 249_554),
        ("pp2", 327_680, 131_072, 368_540),  # TP2×PP2 stage 0: sliding 5, 5, 4, 4, 4, 4, full 5 → 5 × 65,536 B
    ],
)
def test_vllm_groups_a_sliding_window_hybrid_over_every_stage(
    variant: str, bytes_per_block: int, num_blocks: int, tokens: int
) -> None:
    row = _row("vllm", "0.33.0", "google--gemma-3-27b-it", variant)
    assert (row["bytes_per_block"], row["num_blocks"], row["kv_cache_size_tokens"]) == (bytes_per_block, num_blocks, tokens)
    plan = kvtop_plan("vllm", "0.33.0", row)
    assert (plan["num_blocks"], plan["tokens"]) == (num_blocks, tokens)
    assert plan["kv_pool_bytes"] == num_blocks * bytes_per_block


def test_releases_not_checked_keep_the_guarded_split() -> None:
    """Before the releases whose classes were read (vLLM 0.6.3.post1's source, SGLang 0.5.23's meta build) kvtop keeps
    the guarded split: Mixtral-8x7B TP1×PP4 stage 1 under vLLM 0.6.2 is the engine's 0.33.0 stage less the embedding,
    the head (2 × 262,144,000 B) and the final norm (8,192 B); Llama-3.1-8B under SGLang 0.5.22 stage 1 less its
    head. From 0.6.3.post1 (mixtral.py there builds all three with no PP guard) every stage holds them."""
    mixtral = _row("vllm", "0.33.0", "mistralai--Mixtral-8x7B-v0.1", "pp4")
    # 0.6.2 has no --kv-cache-memory-bytes (from v0.10.2, refused before it): the stages' weights need no fixed pool
    assert _kvtop_stages(kvtop_plan("vllm", "0.6.2", mixtral, fixed_pool=False))[1] == 23_744_618_496 - 2 * 262_144_000 - 8_192
    assert _kvtop_stages(kvtop_plan("vllm", "0.13.0", mixtral)) == [23_744_618_496] * 4
    llama = _row("sglang", "0.5.23", "meta-llama--Llama-3.1-8B", "pp4")
    assert _kvtop_stages(kvtop_plan("sglang", "0.5.22", llama))[1] == 4_540_465_152 - 1_050_673_152


@pytest.mark.parametrize(
    ("config", "variant", "num_blocks", "tokens"),
    [
        # V25: vLLM sizes hybrid Mamba models under PP with the groups of every stage projected per worker
        # (attention and Mamba layers grouped over the whole model); kvtop refused them before
        ("Qwen--Qwen3-Next-80B-A3B-Thinking", "pp2", 12_136, 6_025_340),
        ("ai21labs--AI21-Jamba-1.5-Mini", "pp4", 131_072, 10_129_639),
        ("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "pp4", 10_005, 11_708_708),
        ("Qwen--Qwen3.5-35B-A3B", "pp4", 6_425, 5_263_360),
    ],
)
def test_vllm_plans_hybrid_mamba_under_pp(config: str, variant: str, num_blocks: int, tokens: int) -> None:
    row = _row("vllm", "0.33.0", config, variant)
    assert (row["num_blocks"], row["kv_cache_size_tokens"]) == (num_blocks, tokens)
    plan = kvtop_plan("vllm", "0.33.0", row)
    assert (plan["num_blocks"], plan["tokens"]) == (num_blocks, tokens)


def test_vllm_qwen3_5_builds_its_embedding_on_every_stage() -> None:
    """qwen3_5.py: the language model's embed_tokens on every stage (248,320 × 5,120 × 2 B = 2,542,796,800 B),
    norm and head on the last; every stage equal to the engine's meta build (the gated delta net's A_log in
    float32, as qwen3_next.py holds it, closed the 1,152 B a stage the book was short)."""
    row = _row("vllm", "0.33.0", "Qwen--Qwen3.5-27B", "pp4")
    engine = _engine_stages(row)
    assert engine == [14_719_396_224] * 3 + [14_719_396_224 + 2_542_796_800 + 10_240]
    assert _kvtop_stages(kvtop_plan("vllm", "0.33.0", row)) == engine
