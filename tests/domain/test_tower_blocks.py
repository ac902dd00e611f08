"""How each engine divides a tower's encoder blocks over TP (kvtop.domain.tower_blocks, each engine's
`architectures.TOWER_SPLIT.blocks`): Qwen3-Omni's audio encoder above TP 4, GLM-ASR's encoder, GLM-4.5V's vision
attention at TP 8, InternViT-6B's 25 heads at TP 2, EXAONE-4.5's vision MLP at TP 8.

Oracle: the engines' meta builds kept as the registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json,
sglang-0.5.23.json, `param_bytes` by top-level child; registry_sweep.py --tps 1,2,4,8, session 43):
  Qwen3-Omni (tests/data/configs/recon/Qwen--Qwen3-Omni-30B-A3B-Instruct.RECONSTRUCTED.json: the class default
  with the 30B-A3B text sizes, so TP 8 builds): vLLM audio_tower 1,295,854,336 B at TP 1 and at TP 8 (whole),
  351,705,856 B at TP 4, visual 142,794,652 B at TP 8; SGLang the same at TP 1 / 2 / 4 and refused at TP 8
  ("AssertionError: 20 is not divisible by 8", VisionAttention's dist_utils.divide).
  GLM-ASR (tests/data/engine_diff/registry/configs/GlmAsrForConditionalGeneration.json): vLLM audio_tower
  1,270,179,840 / 640,747,520 B at TP 1 / 2, multi_modal_projector 58,732,544 / 29,368,320 B, refused at TP 8
  ("20 is not divisible by 8", QKVParallelLinear); SGLang audio_tower 1,270,097,920 B and projector 58,732,544 B
  at TP 1, 2, 4 and 8 alike.
By hand, bf16 (2 B a parameter):
  Qwen3-Omni audio (d 1280, 32 layers, ffn 5120, 20 heads, stem 480, 128 mel bins → 16, output_dim 2048): convs
  480 × 9 + 480 + 2 × (480² × 9 + 480) + 480 × 16 × 1280 = 13,983,360; per layer out_proj / fc2 biases and two
  LayerNorms 7,680 (× 32 = 245,760); ln_post 2,560, proj1 1280² + 1280, proj2 1280 × 2048 + 2048: whole
  18,494,848. Blocks a layer: qkv 3 × 1280² + 3 × 1280, out_proj 1280², fc1 1280 × 5120 + 5120, fc2 5120 × 1280:
  19,669,760 (× 32 = 629,432,320; of it the MLPs 419,594,240). TP 8 whole: 647,927,168 × 2 = 1,295,854,336 B;
  TP 4: (18,494,848 + 629,432,320 ÷ 4) × 2 = 351,705,856 B.
  GLM-ASR audio (hidden 1280, 32 layers, ffn 5120, 20 heads and K/V heads of 64): conv1 128 × 1280 × 3 + 1280,
  conv2 1280² × 3 + 1280, per layer two LayerNorms and o_proj / fc2 biases 7,680, the final LayerNorm 2,560: whole
  5,657,600; blocks a layer q 1280² + 1280, k 1280², v 1280² + 1280, o 1280², fc1 1280 × 5120 + 5120, fc2
  5120 × 1280: 19,668,480 (× 32 = 629,391,360). SGLang (whole, no K bias): 635,048,960 × 2 = 1,270,097,920 B.
  vLLM's K bias 32 × 1280 = 40,960 more, split: TP 2 (5,657,600 + 629,432,320 ÷ 2) × 2 = 640,747,520 B.
  Projector (text 2048): linear_1 5120 × 4096 + 4096, linear_2 4096 × 2048 + 2048: 29,366,272 × 2 = 58,732,544 B;
  vLLM at TP 2 splits all but linear_2's bias: (29,364,224 ÷ 2 + 2048) × 2 = 29,368,320 B.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import load_rows
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.gpus import gpu_total_bytes
from kvtop.domain.launch import parse_flags
from kvtop.domain.launch_check import launch_refusals
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.ledger import predict
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TOWER_KINDS, TowerSplit
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

OMNI = DATA / "configs" / "recon" / "Qwen--Qwen3-Omni-30B-A3B-Instruct.RECONSTRUCTED.json"
GLM_ASR = DATA / "engine_diff" / "registry" / "configs" / "GlmAsrForConditionalGeneration.json"
OMNI_AUDIO_WHOLE = 1_295_854_336
OMNI_VISUAL_TP8 = 142_794_652


def _config(path: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _tower_bytes(config: dict[str, Any], tp: int, split: TowerSplit) -> int:
    model = model_from_config(config)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 1), first_stage=True, last_stage=False,
                        tower_split=split)  # fmt: skip
    (row,) = [row for row in book.rows if row.component in TOWER_KINDS]
    return int(row.bytes)


def _refused_fields(config: dict[str, Any], engine: str, tp: int) -> tuple[str, ...]:
    model = model_from_config(config)
    ledger = predict(model, parse_flags(engine, ["--tp", str(tp)]), gpu_total_bytes=gpu_total_bytes("H200"),
                     gpu_name="H200")  # fmt: skip
    return tuple(refusal.field for refusal in launch_refusals(ledger))


def _row(engine: str, version: str, config: str, tp: int) -> dict[str, Any]:
    (row,) = [r for r in load_rows(engine, version) if r["config"] == config and r["tp"] == tp]
    return row


def test_qwen3_omni_audio_whole_on_every_vllm_rank_at_tp8() -> None:
    row = _row("vllm", "0.33.0", OMNI.stem, 8)["stages"][0]["param_bytes"]
    assert (row["audio_tower"], row["visual"]) == (OMNI_AUDIO_WHOLE, OMNI_VISUAL_TP8)
    assert _tower_bytes(_config(OMNI), 8, VLLM_SPLIT) == OMNI_AUDIO_WHOLE + OMNI_VISUAL_TP8
    assert "--tensor-parallel-size" not in _refused_fields(_config(OMNI), "vllm", 8)


def test_qwen3_omni_sglang_refuses_tp8_and_splits_at_tp4() -> None:
    assert "20 is not divisible by 8" in _row("sglang", "0.5.23", OMNI.stem, 8)["message"]
    assert "--tp-size" in _refused_fields(_config(OMNI), "sglang", 8)
    assert "--tp-size" not in _refused_fields(_config(OMNI), "sglang", 4)
    tower = model_from_config(_config(OMNI)).tower
    assert tower is not None and tower.not_built(8, SGLANG_SPLIT) and tower.not_built(8, VLLM_SPLIT) is None
    assert tower.head_split_params == 629_432_320 and tower.head_split_mlp_params == 419_594_240
    audio_tp4 = 351_705_856
    for engine, version, split in (("vllm", "0.33.0", VLLM_SPLIT), ("sglang", "0.5.23", SGLANG_SPLIT)):
        row = _row(engine, version, OMNI.stem, 4)["stages"][0]["param_bytes"]
        visual = row.get("visual", row.get("thinker.visual"))
        assert row.get("audio_tower", row.get("thinker.audio_tower")) == audio_tp4
        assert _tower_bytes(_config(OMNI), 4, split) == audio_tp4 + visual


def test_sglang_replicates_the_mlp_where_the_width_does_not_divide() -> None:
    """SGLang's `use_replicated = encoder_ffn_dim % tp_size != 0`: a 5,002-wide MLP at TP 4 (the 20 heads divide)
    keeps fc1 / fc2 whole on every rank, where vLLM splits them with the heads: 3/4 of the MLPs' parameters more a
    rank (the vision rows' own differences, as at the published 5,120, taken out)."""
    config = _config(OMNI)
    thinker = config["thinker_config"]

    def gap(ffn: int) -> float:
        audio = {**thinker["audio_config"], "encoder_ffn_dim": ffn}
        tower = model_from_config({**config, "thinker_config": {**thinker, "audio_config": audio}}).tower
        assert tower is not None and tower.head_split_mlp_params == 32 * (1280 * ffn + ffn + ffn * 1280)
        return tower.params_per_rank(4, SGLANG_SPLIT) - tower.params_per_rank(4, VLLM_SPLIT)

    assert gap(5002) - gap(5120) == 32 * (1280 * 5002 + 5002 + 5002 * 1280) * 3 / 4


GLM45V = DATA / "configs" / "heldout" / "wave5" / "zai-org--GLM-4.5V.json"


def test_glm4v_vision_heads_padded_by_sglang_refused_by_vllm_at_tp8() -> None:
    """zai-org/GLM-4.5V's vision transformer (24 blocks of width 1536, 12 heads of 128) at TP 8: SGLang pads to 16
    heads, 4 zero heads of 24 × 4 × 128 × 1536 = 18,874,368 parameters each, split: 4 × 18,874,368 ÷ 8 × 2 B =
    18,874,368 B a rank above the 12 heads' split; vLLM's Glm4vVisionAttention asserts the heads divide."""
    row = _row("sglang", "0.5.23", GLM45V.stem, 8)["stages"][0]["param_bytes"]
    assert row["visual"] == 311_829_504
    assert _tower_bytes(_config(GLM45V), 8, SGLANG_SPLIT) == 311_829_504
    tower = model_from_config(_config(GLM45V)).tower
    assert tower is not None and tower.heads == 12 and tower.head_params == 18_874_368
    assert "12 is not divisible by 8" in _row("vllm", "0.33.0", GLM45V.stem, 8)["message"]
    assert "--tensor-parallel-size" in _refused_fields(_config(GLM45V), "vllm", 8)
    assert "--tp-size" not in _refused_fields(_config(GLM45V), "sglang", 8)
    for engine, version, split in (("vllm", "0.33.0", VLLM_SPLIT), ("sglang", "0.5.23", SGLANG_SPLIT)):
        visual = _row(engine, version, GLM45V.stem, 4)["stages"][0]["param_bytes"]["visual"]
        assert _tower_bytes(_config(GLM45V), 4, split) == visual  # 12 heads divide: no padding


EXAONE = DATA / "engine_diff" / "registry" / "configs" / "Exaone4_5_ForConditionalGeneration.json"


def test_vllm_refuses_an_unpadded_vision_mlp_that_does_not_divide() -> None:
    """EXAONE-4.5's Qwen2.5-VL-style tower (gated MLP 3,420 wide): vLLM 0.33.0's MergedColumnParallelLinear asserts
    3,420 % 8 == 0 (meta build at TP 8: AssertionError, linear.py), SGLang pads the width to 3,424; at TP 4 it
    divides (855) and both plan."""
    assert _row("vllm", "0.33.0", "default--Exaone4_5_ForConditionalGeneration", 8)["status"] == "refused"
    assert "--tensor-parallel-size" in _refused_fields(_config(EXAONE), "vllm", 8)
    assert "--tensor-parallel-size" not in _refused_fields(_config(EXAONE), "vllm", 4)
    data_parallel = predict(model_from_config(_config(EXAONE)),
                            parse_flags("vllm", ["--tp", "8", "--mm-encoder-tp-mode", "data"]),
                            gpu_total_bytes=gpu_total_bytes("H200"), gpu_name="H200")  # fmt: skip
    assert not launch_refusals(data_parallel)  # the encoder built at TP 1 (is_vit_use_data_parallel)
    tower = model_from_config(_config(EXAONE)).tower
    assert tower is not None and tower.mlp_width == 3420 and tower.not_built(8, SGLANG_SPLIT) is None


INTERN = DATA / "engine_diff" / "configs" / "OpenGVLab--InternVL3-1B-InternViT-6B.RECONSTRUCTED.json"


def test_internvit_6b_heads_padded_by_sglang_whole_in_vllm_at_tp2() -> None:
    """InternViT-6B (45 blocks, width 3200, 25 heads of 128, no qkv bias, q/k RMSNorms) at TP 2. Its attention
    (qkv 3 × 3200² and proj 3200², × 45 = 1,843,200,000 parameters): vLLM whole (25 heads do not divide), so
    vision_model + mlp1 = 7,410,614,016 B a rank as kvtop had it; SGLang pads to 26 heads, one zero head of
    45 × 4 × 128 × 3200 = 73,728,000 parameters split and 45 × 2 × 128 = 11,520 of q/k norm whole: (1,843,200,000 +
    73,728,000) ÷ 2 + 11,520 a rank, 884,724,480 parameters (1,769,448,960 B) less than whole, 5,641,165,056 B."""
    for engine, version, split, expected in (("vllm", "0.33.0", VLLM_SPLIT, 7_410_614_016),
                                             ("sglang", "0.5.23", SGLANG_SPLIT, 5_641_165_056)):  # fmt: skip
        row = _row(engine, version, INTERN.stem, 2)["stages"][0]["param_bytes"]
        assert row["vision_model"] + row["mlp1"] == expected
        assert _tower_bytes(_config(INTERN), 2, split) == expected
    tower = model_from_config(_config(INTERN)).tower
    assert tower is not None and (tower.head_params, tower.head_norm_params) == (73_728_000, 11_520)


@pytest.mark.parametrize("tp", [1, 2])
def test_glm_asr_vllm_splits_with_a_k_bias(tp: int) -> None:
    row = _row("vllm", "0.33.0", "default--GlmAsrForConditionalGeneration", tp)["stages"][0]["param_bytes"]
    expected = {1: 1_270_179_840 + 58_732_544, 2: 640_747_520 + 29_368_320}[tp]
    assert row["audio_tower"] + row["multi_modal_projector"] == expected
    assert _tower_bytes(_config(GLM_ASR), tp, VLLM_SPLIT) == expected


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_glm_asr_sglang_whole_without_a_k_bias(tp: int) -> None:
    row = _row("sglang", "0.5.23", "default--GlmAsrForConditionalGeneration", tp)["stages"][0]["param_bytes"]
    assert row["audio_tower"] + row["multi_modal_projector"] == 1_270_097_920 + 58_732_544
    assert _tower_bytes(_config(GLM_ASR), tp, SGLANG_SPLIT) == 1_270_097_920 + 58_732_544
    assert "--tp-size" not in _refused_fields(_config(GLM_ASR), "sglang", tp)


def test_glm_asr_planned_and_vllm_refuses_tp8() -> None:
    model = model_from_config(_config(GLM_ASR))
    assert verdict("GlmAsrForConditionalGeneration")[0] == "wrapper" and model.not_modelled == ()
    message = _row("vllm", "0.33.0", "default--GlmAsrForConditionalGeneration", 8)["message"]
    assert "20 is not divisible by 8" in message
    assert "--tensor-parallel-size" in _refused_fields(_config(GLM_ASR), "vllm", 8)
