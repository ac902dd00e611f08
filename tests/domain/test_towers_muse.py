"""Muse-Glimmer's vision encoder, adapter and projection (kvtop.domain.architectures.towers_muse).

Oracle: the engines' meta builds of the held-out wave-3 config meta-models--Muse-Glimmer-30B (vision width 1536,
MLP 8960, 50 blocks, patch 14 × 14 × 2, a 32 × 32 position grid; adapter 6144 -> 4096 -> 4096, projection to the
text width 6656, bf16), listed by `benchmarks/engine_diff/registry_sweep.py --engine <e> --params
meta-models--Muse-Glimmer-30B` and kept as the registry rows (tests/data/engine_diff/registry/<engine>-<version>.json,
`param_bytes` by top-level child):
  vLLM 0.33.0   TP 1: vision_encoder 3,705,279,488 B, vision_adapter 83,886,080 B, vision_projection 54,525,952 B
                TP 2: vision_encoder 3,233,189,888 B (qkv_proj and o_proj split), the adapter and projection whole
  SGLang 0.5.23 TP 1: vision_tower 3,705,279,488 B, vision_adapter 83,886,080 B, vision_projection 54,525,952 B
                TP 2: vision_tower 1,856,485,888 B and vision_adapter 41,943,040 B (the block MLP and the adapter
                split too), vision_projection 54,525,952 B
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.errors import InputError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

CONFIG = DATA / "configs" / "heldout" / "wave3" / "meta-models--Muse-Glimmer-30B.json"
ENGINE_TOWER_BYTES = {
    ("vllm", 1): 3_705_279_488 + 83_886_080 + 54_525_952,
    ("vllm", 2): 3_233_189_888 + 83_886_080 + 54_525_952,
    ("sglang", 1): 3_705_279_488 + 83_886_080 + 54_525_952,
    ("sglang", 2): 1_856_485_888 + 41_943_040 + 54_525_952,
}
SPLITS = {"vllm": VLLM_SPLIT, "sglang": SGLANG_SPLIT}


def _config() -> dict:  # type: ignore[type-arg]
    return json.loads(CONFIG.read_text())


@pytest.mark.parametrize(("engine", "tp"), sorted(ENGINE_TOWER_BYTES))
def test_tower_bytes_equal_the_engines_meta_build(engine: str, tp: int) -> None:
    model = model_from_config(_config())
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 1), first_stage=True, last_stage=False,
                        tower_split=SPLITS[engine])  # fmt: skip
    (row,) = [row for row in book.rows if row.component == "vision"]
    assert int(row.bytes) == ENGINE_TOWER_BYTES[(engine, tp)]
    assert model.tower is not None and model.tower.config_class == "MuseGlimmerVisionConfig"
    assert not any("vision tower" in note for note in model.not_modelled)


def test_vllm_tp2_splits_only_the_attention() -> None:
    # the encoder's drop at TP 2 in vLLM's build, 3,705,279,488 - 3,233,189,888 = 472,089,600 B, is half the bf16
    # bytes of what it splits: 50 blocks' qkv_proj [4608, 1536] + [4608] and o_proj [1536, 1536] (its bias whole),
    # 236,044,800 parameters; the adapter's and the block MLPs' nn.Linear stay whole
    tower = model_from_config(_config()).tower
    assert tower is not None
    assert (
        tower.tp_split_params
        == 3_705_279_488 - 3_233_189_888
        == 50 * (4608 * 1536 + 4608 + 1536 * 1536) * 2 // 2
    )


def test_out_hidden_size_other_than_the_pixel_shuffle_is_refused() -> None:
    # vLLM 0.33.0 MuseGlimmerVisionEncoder.__init__ raises ValueError where out_hidden_size != width × merge_size²
    config = {**_config(), "out_hidden_size": 6000}
    with pytest.raises(InputError) as err:
        model_from_config(config)
    assert err.value.field == "out_hidden_size"
