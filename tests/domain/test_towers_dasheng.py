"""MiDashengLM's Dasheng audio transformer and projector (kvtop.domain.architectures.towers_dasheng) against the engines'
builds of the reconstructed midashenglm-7b config (tests/data/configs/recon, sources in SOURCES.md there), kept as its
registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json, sglang-0.5.23.json).
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
from kvtop.domain.tower_spec import TowerSplit
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "recon--mispeech--midashenglm-7b"
CONFIG = DATA / "configs" / "recon" / f"{NAME}.json"
BF16 = 2
ENCODER = {1: 1_260_667_136, 2: 631_234_816}
PROJECTOR = {("vllm", 1): 71_579_648, ("vllm", 2): 35_793_408, ("sglang", 1): 71_565_312, ("sglang", 2): 35_782_656}
SPLITS: dict[str, TowerSplit] = {"vllm": VLLM_SPLIT, "sglang": SGLANG_SPLIT}


def test_the_engines_bytes_are_the_modules_arithmetic() -> None:
    """midashenglm.py (vLLM 0.33.0 and SGLang 0.5.23 alike, DashengAudioTransformer.__init__): Dasheng-0.6B, d 1280,
    32 blocks, mlp_ratio 4 (fc 5120), 64 mel bins, patches 64 × 4 over a 1008-frame target. Whole: init_bn 2 · 64;
    patch_embed.proj 1 · 64 · 4 · d + d; time_pos_embed d · (1008 ÷ 4); freq_pos_embed d · (64 ÷ 64); per block
    norm1, norm2 4d, proj's and fc2's biases 2d; the final norm 2d. Split over TP (QKVParallelLinear /
    VisionAttention qkv, Column fc1, Row weights): qkv 3d² + 3d, proj d², fc1 d · 5120 + 5120, fc2 5120 · d.
    AudioProjectorSubsample: net.0 (d · 5 → 3584) and net.2 (3584 → 3584), split; vLLM's Column/RowParallelLinear
    default bias=True adds 3584 split and 3584 whole, SGLang's bias=False none."""
    d, f, t = 1280, 5120, 3584
    whole = 2 * 64 + (64 * 4 * d + d) + d * (1008 // 4) + d * (64 // 64) + 32 * (4 * d + 2 * d) + 2 * d
    split = 32 * (3 * d * d + 3 * d + d * d + d * f + f + f * d)
    assert BF16 * (whole + split) == ENCODER[1]
    assert BF16 * (whole + split // 2) == ENCODER[2]
    projector = d * 5 * t + t * t
    assert BF16 * projector == PROJECTOR[("sglang", 1)]
    assert BF16 * projector // 2 == PROJECTOR[("sglang", 2)]
    assert BF16 * (projector + t + t) == PROJECTOR[("vllm", 1)]
    assert BF16 * ((projector + t) // 2 + t) == PROJECTOR[("vllm", 2)]


@pytest.mark.parametrize("engine,version", [("vllm", "0.33.0"), ("sglang", "0.5.23")])
@pytest.mark.parametrize("tp", [1, 2])
def test_tower_bytes_equal_the_engines_meta_build(engine: str, version: str, tp: int) -> None:
    row = row_of(engine, version, NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert (parts["audio_encoder"], parts["audio_projector"]) == (ENCODER[tp], PROJECTOR[(engine, tp)])
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 28), first_stage=True, last_stage=True,
                        tower_split=SPLITS[engine])  # fmt: skip
    (tower,) = [r for r in book.rows if r.component == "audio"]
    assert int(tower.bytes) == ENCODER[tp] + PROJECTOR[(engine, tp)]
    assert not model.not_modelled


def test_the_class_is_a_wrapper_with_its_tower() -> None:
    assert verdict("MiDashengLMModel")[0] == "wrapper"
    assert tower_verdict("MiDashengLMModel")[0] == "tower"
