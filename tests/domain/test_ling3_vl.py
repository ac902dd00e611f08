"""Ling-3-VL (BailingMoeV3VLForConditionalGeneration, outer model_type bailing_moe_v3_vl): Ling-3's language model
over text_config (kvtop's bailing_moe_v3 entry) and the Qwen3 ViT without its merger MLP under the wrapper's
linear_proj (kvtop.domain.architectures.towers_bailing), both engines (issue 26).

Config: tests/data/configs/recon/recon--inclusionAI--Ling-3-VL-class.json (RECONSTRUCTED: Ling-3.0-tiny's text
config and the vision section of vLLM's own Ling-3-VL config test; SOURCES.md). Expected bytes by hand from the
engines' code, bf16; the engines' meta builds (tests/data/engine_diff/registry/, the rows of that config) agree.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kvtop.domain.engines.base import MeasuredInputs
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.errors import InputError
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.wording import GIB
from tests.conftest import CONFIGS
from tests.data_paths import DATA

NAME = "recon--inclusionAI--Ling-3-VL-class"
CONFIG = CONFIGS / "recon" / f"{NAME}.json"
INT_BOUND = f"{NAME}-int-bound"  # kda_lower_bound -5 as Ling-3.0-tiny's config states it (an int)
BUDGET = MeasuredInputs(free_before_load_bytes=80 * GIB, free_after_load_bytes=60 * GIB)
W, MLP, DEPTH, H = 1152, 4304, 27, 1536  # the ViT's width, MLP, blocks; the text model's hidden size
MERGED = W * 2**2  # spatial_merge_size 2: the merger's output, linear_proj's input
# Ling-3.0-tiny's language model (model + lm_head), by hand in tests/domain/test_ling3_entry.py (head_dim 128: vLLM's
# BailingMoeV3TextConfig keeps the stated head_dim, as SGLang's BailingHybridConfig does)
TEXT = {1: 15_796_794_496, 2: 7_915_196_992}


def vit() -> tuple[int, int]:
    """(whole, split at TP) parameters of the ViT with the merger's norm only. vLLM 0.33.0 qwen3_vl.py
    Qwen3_VisionTransformer / SGLang 0.5.23 qwen3_vl.py Qwen3VLMoeVisionModel: a biased Conv3d patch 3 × 2 × 16² →
    1,152 and a 2,304-row position table (whole here; SGLang splits its rows, below); per block two LayerNorms, qkv
    [3 × 1,152] and fc1 [4,304] with biases (split), proj and fc2 (weights split, biases whole). The merger: vLLM
    bailing_moe_v3_vl.py:184-199 BailingMoeV3VisionPatchMerger, SGLang qwen3_vl.py:316-319 with
    disable_merger_proj: one LayerNorm over 1,152, no MLP."""
    whole = 3 * 2 * 16 * 16 * W + W + 2304 * W + DEPTH * (2 * 2 * W + W + W) + 2 * W
    split = DEPTH * (W * 3 * W + 3 * W + W * W + W * MLP + MLP + MLP * W)
    return whole, split


def projector() -> tuple[int, int]:
    """(whole, split) of linear_proj: fc1 [1,536, 4,608] + bias and fc2 [1,536, 1,536] split, fc2's bias whole
    (vLLM bailing_moe_v3_vl.py:242-276 Column/RowParallelLinear). SGLang bailing_mm_v3.py:122 builds both as
    nn.Linear: all of it whole."""
    return H, MERGED * H + H + H * H


def test_the_tower_by_hand() -> None:
    """TP 1: 831,787,488 B of visual and 18,880,512 B of linear_proj (both engines' meta builds)."""
    (vit_whole, vit_split), (proj_whole, proj_split) = vit(), projector()
    assert 2 * (vit_whole + vit_split) == 831_787_488 and 2 * (proj_whole + proj_split) == 18_880_512
    tower = model_from_config(json.loads(CONFIG.read_text())).tower
    assert tower is not None and tower.params == vit_whole + vit_split + proj_whole + proj_split
    assert tower.projector_params == proj_split


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_per_rank_as_each_engine_splits_it(tp: int) -> None:
    """vLLM: the ViT's and linear_proj's split parts ÷ TP. SGLang: linear_proj whole, the position table split by rows
    (VocabParallelEmbedding, qwen3_vl.py:404: 2,304 rows, a multiple of 64, 1,152 a rank at TP 2)."""
    (vit_whole, vit_split), (proj_whole, proj_split) = vit(), projector()
    table = 2304 * W
    vllm = 2 * (vit_whole + vit_split // tp + proj_whole + proj_split // tp)
    sglang = 2 * (vit_whole - table + table // tp + vit_split // tp + proj_whole + proj_split)
    assert (vllm, sglang) == {1: (850_668_000, 850_668_000), 2: (429_949_296, 436_733_808)}[tp]
    tower = model_from_config(json.loads(CONFIG.read_text())).tower
    assert tower is not None
    assert 2 * tower.params_per_rank(tp, VLLM_SPLIT) == vllm and 2 * tower.params_per_rank(tp, SGLANG_SPLIT) == sglang


def rows(engine: str, version: str, name: str = NAME) -> dict[int, dict[str, Any]]:
    fixture = json.loads((DATA / "engine_diff" / "registry" / f"{engine}-{version}.json").read_text())
    return {int(row["tp"]): row for row in fixture["rows"] if row["config"] == name}


def plan(engine: str, version: str, tp: int, name: str = NAME) -> Any:
    settings = parse_flags(engine, ["--tp", str(tp), "--engine-version", version, "--max-model-len", "8192"])
    model = model_from_config(json.loads((CONFIGS / "recon" / f"{name}.json").read_text()), source=name)
    return predict(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)


@pytest.mark.parametrize(("engine", "version"), [("vllm", "0.33.0"), ("sglang", "0.5.23")])
@pytest.mark.parametrize("tp", [1, 2])
def test_weights_and_kv_equal_the_meta_builds(engine: str, version: str, tp: int) -> None:
    """Per rank: the language model (Ling-3.0-tiny's), the tower as above; 6 MLA layers' latent (576 × 2 B a token)
    and 18 KDA layers' state (conv (3, 3 × 2,048 ÷ TP) bf16, recurrent (16 ÷ TP, 128, 128) fp32)."""
    tower = {("vllm", 1): 850_668_000, ("vllm", 2): 429_949_296, ("sglang", 1): 850_668_000,
             ("sglang", 2): 436_733_808}[engine, tp]  # fmt: skip
    built = rows(engine, version)[tp]
    assert sum(built["stages"][0]["param_bytes"].values()) == TEXT[tp] + tower
    rank = plan(engine, version, tp).ranks[0]
    assert rank.weights.total_bytes == TEXT[tp] + tower
    assert rank.kv.full_bytes_per_token == 6 * 576 * 2
    assert rank.kv.state_bytes_per_request == 18 * (3 * 3 * 2048 * 2 + 16 * 128 * 128 * 4) // tp


@pytest.mark.parametrize("section", [{"disable_merger_proj": False}, {"deepstack_visual_indexes": [8, 16, 24]}])
def test_a_tower_the_engines_build_apart_is_not_read(section: dict[str, Any]) -> None:
    """A merger MLP (disable_merger_proj false or absent) or deepstack mergers: SGLang builds them (qwen3_vl.py:319,
    bailing_mm_v3.py:109-118), vLLM never does (bailing_moe_v3_vl.py:219-238): no tower row, the note stays."""
    data = json.loads(CONFIG.read_text())
    data["vision_config"].update(section)
    model = model_from_config(data)
    assert model.tower is None and any("vision" in note for note in model.not_modelled)


@pytest.mark.parametrize("tp", [1, 2])
def test_vllm_0_33_0_builds_an_integer_kda_bound_under_the_wrapper(tp: int) -> None:
    """The text-only class is refused with kda_lower_bound -5 (transformers' @strict BailingHybridConfig:
    test_ling3_entry.py); the wrapper's own BailingMoeV3TextConfig (vLLM 0.33.0 transformers_utils/configs/
    bailing_moe_v3_vl.py) does not check it, and the meta build is the float file's, byte for byte."""
    assert rows("vllm", "0.33.0", INT_BOUND)[tp]["stages"] == rows("vllm", "0.33.0")[tp]["stages"]
    float_plan, int_plan = plan("vllm", "0.33.0", tp), plan("vllm", "0.33.0", tp, INT_BOUND)
    assert int_plan.ranks[0].weights.total_bytes == float_plan.ranks[0].weights.total_bytes == TEXT[tp] + {
        1: 850_668_000, 2: 429_949_296}[tp]  # fmt: skip


def test_low_rank_kda_gates_under_the_wrapper() -> None:
    """no_kda_lora false: vLLM 0.33.0's wrapper builds BailingMoeV3ForCausalLM, whose KDA raises (bailing_moe_v3.py
    :686-687; the sweep's rows: refused at TP 1 and 2); SGLang 0.5.23 builds the low-rank gates: 15,603,332,224 B of
    language model at TP 1 (by hand in test_ling3_entry.py) beside the same tower."""
    lora = f"{NAME}-kda-lora"
    with pytest.raises(InputError) as refused:
        plan("vllm", "0.33.0", 1, lora)
    assert refused.value.field == "no_kda_lora"
    assert {row["status"] for row in rows("vllm", "0.33.0", lora).values()} == {"refused"}
    built = rows("sglang", "0.5.23", lora)[1]["stages"][0]["param_bytes"]
    assert built["model"] == 15_603_332_224 and built["visual"] + built["linear_proj"] == 850_668_000
    assert plan("sglang", "0.5.23", 1, lora).ranks[0].weights.total_bytes == 15_603_332_224 + 850_668_000


def test_sglang_data_parallel_encoder_builds_the_tower_whole() -> None:
    """--mm-enable-dp-encoder: SGLang 0.5.23 bailing_mm_v3.py passes use_data_parallel to Qwen3VLMoeVisionModel
    (qwen3_vl.py: blocks and merger replicated, pos_embed enable_tp=False), linear_proj nn.Linear: at TP 2 each rank
    holds the TP-1 build's visual + linear_proj (the registry row: 831,787,488 + 18,880,512 B)."""
    built = rows("sglang", "0.5.23")[1]["stages"][0]["param_bytes"]
    settings = parse_flags("sglang", ["--tp", "2", "--engine-version", "0.5.23", "--mm-enable-dp-encoder"])
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    ledger = predict(model, settings, gpu_total_bytes=gpu_total_bytes("H100"), gpu_name="H100", measured=BUDGET)
    (row,) = [r for r in ledger.ranks[0].weights.rows if r.component == "vision"]
    assert row.bytes == built["visual"] + built["linear_proj"] == 850_668_000
