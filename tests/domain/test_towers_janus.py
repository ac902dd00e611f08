"""Janus-Pro's towers (kvtop.domain.architectures.towers_janus) and its language model, against SGLang's build.

Oracle: SGLang 0.5.23's meta build of the Janus-Pro-7B reconstruction (tests/data/configs/recon, sources in
SOURCES.md there), listed by `benchmarks/engine_diff/registry_sweep.py --engine sglang --params
recon--deepseek-ai--Janus-Pro-7B --tps 1|2` and kept as its registry rows (tests/data/engine_diff/registry/
sglang-0.5.23.json): vision_model 632,567,808 B at TP 1 and 531,830,784 B at TP 2 (VisionAttention's qkv and proj
weight split), the rest the same at both: aligner 41,959,424, gen_aligner 33,636,352, gen_vision_model 143,897,878,
gen_head 167,813,120, gen_embed 262,144 B; language_model 13,820,731,392 / 6,910,615,552 B; cell 491,520 / 245,760 B.
vLLM registers no MultiModalityCausalLM.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.towers_coverage import tower_verdict
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "recon--deepseek-ai--Janus-Pro-7B"
CONFIG = DATA / "configs" / "recon" / f"{NAME}.json"
WHOLE = {"aligner": 41_959_424, "gen_aligner": 33_636_352, "gen_vision_model": 143_897_878,
         "gen_head": 167_813_120, "gen_embed": 262_144}  # fmt: skip
VISION = {1: 632_567_808, 2: 531_830_784}
BF16 = 2


def test_the_engines_bytes_are_the_towers_arithmetic() -> None:
    """SigLIP-L/16 at 384 (SGLang's SigLIP_MODEL_CONFIG siglip_large_patch16_384: width 1024, 24 layers, mlp_ratio 4):
    576 × 1024 positions, patch 3·16² → 1024 with bias, 24 blocks (two LayerNorms 4w, qkv 3w² + 3w, proj w² + w,
    MLP 2·w·4096 + 4096 + w), final LayerNorm 2w, the map head (latent w, q w² + w, kv 2w² + 2w, proj w² + w,
    LayerNorm 2w, MLP 2·w·4096 + 4096 + w); TP 2 halves each block's qkv (weight, bias) and proj weight.
    aligner mlp_gelu 1024 → 4096 → 4096, gen_aligner 8 → 4096 → 4096 (biased), gen_head 4096 → 4096 → 16384
    (biased), gen_embed 16384 × 8."""
    w, f = 1024, 4096
    block = 4 * w + 3 * w * w + 3 * w + w * w + w + 2 * w * f + f + w
    head = w + w * w + w + 2 * w * w + 2 * w + w * w + w + 2 * w + 2 * w * f + f + w
    vision = 576 * w + 3 * 256 * w + w + 24 * block + 2 * w + head
    split = 24 * (3 * w * w + 3 * w + w * w)
    assert (BF16 * vision, BF16 * (vision - split // 2)) == (VISION[1], VISION[2])
    assert WHOLE["aligner"] == BF16 * (1024 * 4096 + 4096 + 4096 * 4096 + 4096)
    assert WHOLE["gen_aligner"] == BF16 * (8 * 4096 + 4096 + 4096 * 4096 + 4096)
    assert WHOLE["gen_head"] == BF16 * (4096 * 4096 + 4096 + 4096 * 16384 + 16384)
    assert WHOLE["gen_embed"] == BF16 * 16384 * 8


@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_sglangs_meta_build(tp: int) -> None:
    row = row_of("sglang", "0.5.23", NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert {key: parts[key] for key in WHOLE} == WHOLE and parts["vision_model"] == VISION[tp]
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 30), first_stage=True, last_stage=True,
                        tower_split=SGLANG_SPLIT)  # fmt: skip
    (vision,) = [r for r in book.rows if r.component == "vision"]
    assert int(vision.bytes) == sum(WHOLE.values()) + VISION[tp]
    assert not any("vision" in note for note in model.not_modelled)


def test_language_model_is_deepseek_llm_7b_as_llama() -> None:
    """SGLang builds LlamaForCausalLM from LlamaConfig(**language_config): 30 layers of 4 × 4096² attention and
    3 × 4096 × 11008 MLP, two norms of 4096, embedding and head 102,400 × 4096, a final norm: 6,910,365,696
    parameters (13,820,731,392 B, the engine's TP 1 row); KV 30 × 2 × 32 × 128 × 2 B = 491,520 B a token."""
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    assert (model.num_layers, model.hidden_size, model.vocab_size) == (30, 4096, 102_400)
    params = 30 * (4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096) + 2 * 102_400 * 4096 + 4096
    assert BF16 * params == 13_820_731_392
    assert (model.num_kv_heads, model.head_dim) == (32, 128) and 30 * 2 * 32 * 128 * BF16 == 491_520


def test_the_class_is_a_wrapper_with_its_tower() -> None:
    assert verdict("MultiModalityCausalLM")[0] == "wrapper"
    assert tower_verdict("MultiModalityCausalLM")[0] == "tower"
