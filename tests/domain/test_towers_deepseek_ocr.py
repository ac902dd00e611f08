"""DeepSeek-OCR's SAM ViT-B, CLIP-L and projector (kvtop.domain.architectures.towers_deepseek_ocr).

Oracle: SGLang 0.5.23's meta build of deepseek-ai/DeepSeek-OCR's real config (held-out wave 5), listed by
`benchmarks/engine_diff/registry_sweep.py --engine sglang --params deepseek-ai--DeepSeek-OCR --tps 1` and kept as
its registry rows (tests/data/engine_diff/registry/sglang-0.5.23.json), the same at TP 1 and 2 (nn.Linear only):
  sam_model 191,138,304 B, vision_model 606,355,456 B, projector 5,245,440 B, image_newline and view_seperator
  2,560 B each: 802,744,320 B.
vLLM 0.33.0's rows of this config are "could not build" (the harness), so vLLM's split of CLIP-L is read from its
code (clip.py's parallel linears) and checked here by arithmetic only.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.towers_coverage import tower_verdict
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "deepseek-ai--DeepSeek-OCR"
CONFIG = DATA / "configs" / "heldout" / "wave5" / f"{NAME}.json"
ENGINE_PARTS = {"sam_model": 191_138_304, "vision_model": 606_355_456, "projector": 5_245_440,
                "image_newline": 2_560, "view_seperator": 2_560}  # fmt: skip
BF16 = 2


def test_the_engines_bytes_are_the_encoders_arithmetic() -> None:
    """SAM ViT-B: patch 3·16² → 768 with bias, 64² × 768 positions, 12 blocks (two LayerNorms, qkv and proj with
    biases, rel-pos tables 2 × (2·14 − 1) × 64, 2 × 127 × 64 in the four global blocks, MLP 768 ↔ 3072 with biases),
    neck 768 → 256 and 3×3 256 → 256 with two LayerNorm2d, 3×3 convs 256 → 512 → 1024; CLIP-L: class embedding,
    patch 3·14² → 1024, 257 positions, pre-LayerNorm, 24 blocks (two LayerNorms, 4 × 1024² + 4 × 1024 attention,
    MLP 1024 ↔ 4096 with biases); the linear projector 2048 → 1280 with bias."""
    w, m = 768, 3072
    block = 4 * w + 4 * w * w + 4 * w + 2 * w * m + m + w
    sam = 3 * 256 * w + w + 64 * 64 * w + 12 * block + 2 * 27 * 64 * 8 + 2 * 127 * 64 * 4
    sam += w * 256 + 256 * 256 * 9 + 4 * 256 + 256 * 512 * 9 + 512 * 1024 * 9
    c, f = 1024, 4096
    clip = c + 3 * 196 * c + 257 * c + 2 * c + 24 * (4 * c + 4 * c * c + 4 * c + 2 * c * f + f + c)
    assert (BF16 * sam, BF16 * clip) == (ENGINE_PARTS["sam_model"], ENGINE_PARTS["vision_model"])
    assert ENGINE_PARTS["projector"] == BF16 * (2048 * 1280 + 1280)


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_sglangs_meta_build(tp: int) -> None:
    row = row_of("sglang", "0.5.23", NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert {key: parts[key] for key in ENGINE_PARTS} == ENGINE_PARTS
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 12), first_stage=True, last_stage=True,
                        tower_split=SGLANG_SPLIT)  # fmt: skip
    (vision,) = [r for r in book.rows if r.component == "vision"]
    assert int(vision.bytes) == sum(ENGINE_PARTS.values()) == 802_744_320
    assert not any("vision" in note for note in model.not_modelled)


def test_vllm_splits_clip_blocks_with_their_heads() -> None:
    """vLLM 0.33.0 deepencoder.py builds CLIP-L's blocks from clip.py's CLIPEncoder: qkv (with bias), out_proj's
    weight, fc1 (with bias) and fc2's weight split over TP 2 (16 heads); SAM and the projector are nn.Linear."""
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    book = weights_book(model, ParallelLayout(tp=2), range(0, 12), first_stage=True, last_stage=True,
                        tower_split=VLLM_SPLIT)  # fmt: skip
    (vision,) = [r for r in book.rows if r.component == "vision"]
    c, f = 1024, 4096
    split = 24 * (4 * c * c + 3 * c + 2 * c * f + f)
    assert int(vision.bytes) == sum(ENGINE_PARTS.values()) - BF16 * split // 2


def test_the_class_is_a_wrapper_with_its_tower() -> None:
    assert verdict("DeepseekOCRForCausalLM")[0] == "wrapper"
    assert tower_verdict("DeepseekOCRForCausalLM")[0] == "tower"


def test_deepseek_vl2_reads_its_siglip_not_these_encoders() -> None:
    """The same outer model_type deepseek_vl_v2 under DeepseekVL2ForCausalLM builds timm's SigLIP so400m
    (428,225,600 parameters: tests/domain/test_towers_deepseek_vl2.py) and this file's linear projector 2048 → 1280
    with its bias and two 1280 separators (SGLang 0.5.23 deepseek_vl2.py), not SAM and CLIP."""
    config = {**json.loads(CONFIG.read_text()), "architectures": ["DeepseekVL2ForCausalLM"]}
    model = model_from_config(config, source=NAME)
    assert model.tower is not None
    assert model.tower.params == 428_225_600 + 2048 * 1280 + 1280 + 2 * 1280
    assert not any("vision" in note for note in model.not_modelled)
