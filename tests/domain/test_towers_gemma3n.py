"""Gemma-3n's towers (kvtop.domain.architectures.towers_gemma3n) against vLLM's and SGLang's builds of gemma-3n-E2B.

Oracle: the engines' meta builds of google/gemma-3n-E2B's config.json (tests/data/configs/heldout/wave6c, source in SOURCES.md
there), kept as its registry rows (tests/data/engine_diff/registry/vllm-0.33.0.json, sglang-0.5.23.json; the harness
venvs lack timm, so these rows were built by the sweep's runner with timm 1.0.31 beside it: SOURCES.md). Both engines:
vision_tower 588,253,824 B at TP 1 and 2 (timm's MobileNetV5Encoder: conv_stem 1,856, blocks 278,880,000, msfa
15,245,056 parameters). vLLM: audio_tower 1,362,697,280 B at TP 1 and 2, embed_vision 8,921,088 / 4,464,640 B,
embed_audio 6,690,816 / 3,348,480 B. SGLang: audio_tower 1,362,697,280 / 681,647,168 B, embed_vision 8,921,088 /
8,658,944 B, embed_audio 6,690,816 / 6,494,208 B.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.architectures.coverage import verdict
from kvtop.domain.architectures.towers_coverage import tower_verdict
from kvtop.domain.architectures.towers_gemma3n import Gemma3nAudioFields, audio_encoder
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TOWER_KINDS, TowerSplit
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "google--gemma-3n-E2B"
CONFIG = DATA / "configs" / "heldout" / "wave6c" / f"{NAME}.json"
BF16 = 2
TOWERS = ("vision_tower", "embed_vision", "audio_tower", "embed_audio")
# the engines' meta builds (module docstring), by engine and TP
BUILT = {
    ("vllm", 1): {"vision_tower": 588_253_824, "embed_vision": 8_921_088, "audio_tower": 1_362_697_280,
                  "embed_audio": 6_690_816},
    ("vllm", 2): {"vision_tower": 588_253_824, "embed_vision": 4_464_640, "audio_tower": 1_362_697_280,
                  "embed_audio": 3_348_480},
    ("sglang", 1): {"vision_tower": 588_253_824, "embed_vision": 8_921_088, "audio_tower": 1_362_697_280,
                    "embed_audio": 6_690_816},
    ("sglang", 2): {"vision_tower": 588_253_824, "embed_vision": 8_658_944, "audio_tower": 681_647_168,
                    "embed_audio": 6_494_208},
}  # fmt: skip
SPLITS: dict[str, TowerSplit] = {"vllm": VLLM_SPLIT, "sglang": SGLANG_SPLIT}


def test_the_engines_bytes_are_the_modules_arithmetic() -> None:
    """By hand from gemma3n_audio.py / transformers' Gemma3nAudioEncoder at E2B's audio_config (h 1536, 8 heads of
    192, 12 layers, kernel 5, channels 128 and 32 over 128 mel bins): the stem 1·128·9 + 128 + 128·32·9 + 32, its
    input_proj 32 × 32 bins (128 + 2 − 3) // 2 + 1 = 64, (64 + 2 − 3) // 2 + 1 = 32) × 1536; per layer 24·h² of
    linears (two feed-forwards 2·(4h² + 4h²), q k v 3h², pos_proj h², post h², linear_start 2h², linear_end h²) and
    9h of norms, per_dim_scale 192 and the depthwise conv 5h. SGLang splits the 24h² and input_proj at TP 2.
    Embedders: 128 rows × width split by rows, two norms of the width, the projection width × 2048 (vLLM Row-split,
    SGLang replicated)."""
    h = 1536
    stem = 128 * 9 + 128 + 128 * 32 * 9 + 32
    split = 12 * 24 * h * h + 32 * 32 * h
    audio = stem + split + 12 * (9 * h + 192 + 5 * h)
    assert BF16 * audio == BUILT["vllm", 1]["audio_tower"] == BUILT["vllm", 2]["audio_tower"]
    assert BF16 * (audio - split // 2) == BUILT["sglang", 2]["audio_tower"]
    assert audio_encoder(Gemma3nAudioFields()) == (
        audio,
        split,
        12 * 16 * h * h,
    )  # the class defaults are E2B's
    for width, key in ((2048, "embed_vision"), (1536, "embed_audio")):
        rows, norms, projection = 128 * width, 2 * width, width * 2048
        assert BF16 * (rows + norms + projection) == BUILT["vllm", 1][key] == BUILT["sglang", 1][key]
        assert BF16 * (rows // 2 + norms + projection // 2) == BUILT["vllm", 2][key]
        assert BF16 * (rows // 2 + norms + projection) == BUILT["sglang", 2][key]


@pytest.mark.parametrize(("engine", "tp"), sorted(BUILT))
def test_tower_bytes_equal_the_engines_meta_build(engine: str, tp: int) -> None:
    version = {"vllm": "0.33.0", "sglang": "0.5.23"}[engine]
    row = row_of(engine, version, NAME, tp)
    parts = row["stages"][0]["param_bytes"]
    assert {key: parts[key] for key in TOWERS} == BUILT[engine, tp]
    model = model_from_config(json.loads(CONFIG.read_text()), source=NAME)
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 30), first_stage=True, last_stage=True,
                        tower_split=SPLITS[engine])  # fmt: skip
    (towers,) = [r for r in book.rows if r.component in TOWER_KINDS]
    assert int(towers.bytes) == sum(BUILT[engine, tp].values())
    assert not any("vision" in note or "audio" in note for note in model.not_modelled)


def test_another_timm_architecture_stays_not_modelled() -> None:
    config = json.loads(CONFIG.read_text())
    config["vision_config"]["architecture"] = "mobilenetv5_base"
    model = model_from_config(config, source=NAME)
    assert model.tower is None and any("vision" in note for note in model.not_modelled)


def test_the_class_is_a_wrapper_with_its_towers() -> None:
    assert verdict("Gemma3nForConditionalGeneration")[0] == "wrapper"
    assert tower_verdict("Gemma3nForConditionalGeneration")[0] == "tower"
