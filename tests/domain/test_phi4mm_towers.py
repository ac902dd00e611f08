"""Phi-4-multimodal-instruct (Phi4MMForCausalLM, model_type phi4mm; issue 26) against the engines' meta builds: its
language model, SigLIP image encoder and conformer audio encoder (towers_phi4mm, towers_phi4mm_audio).

The config: tests/data/configs/heldout/wave6d (SOURCES.md there). Oracles, independent of kvtop: the shapes each
engine module builds, by hand in each test's docstring, and the registry sweep's rows
(tests/data/engine_diff/registry/<engine>-<version>.json, `registry_sweep.py --engine vllm|sglang --set real --only
microsoft--Phi-4-multimodal-instruct`): vLLM 0.33.0 model 7,672,043,520 / 3,836,221,440 B (TP 1 / 2),
vision_encoder 822,139,712 / 426,092,320 B, embed_tokens_extend 932,832,832 B at both.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchmarks.engine_diff.registry_sweep import row_of
from kvtop.domain.engines.sglang.architectures import TOWER_SPLIT as SGLANG_SPLIT
from kvtop.domain.engines.vllm.architectures import TOWER_SPLIT as VLLM_SPLIT
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TOWER_KINDS, TowerSplit
from kvtop.domain.weights import weights_book
from tests.data_paths import DATA

NAME = "microsoft--Phi-4-multimodal-instruct"
CONFIG = DATA / "configs" / "heldout" / "wave6d" / f"{NAME}.json"
BF16 = 2
ENGINES = {"vllm": ("0.33.0", VLLM_SPLIT), "sglang": ("0.5.23", SGLANG_SPLIT)}

# SigLIP-so400m-patch14-448 to layer -2 (26 of 27 blocks), no post-LayerNorm: a Conv2d 3 → 1152 of 14 × 14 with its
# bias and a (448 ÷ 14)² = 1,024-row position table (whole); per block two LayerNorms (2 × 2 × 1152), qkv
# 3 × (1152² + 1152), out 1152² + 1152, fc1 1152 × 4304 + 4304, fc2 4304 × 1152 + 1152; glb_GN and sub_GN (1152
# each); img_projection 1152 × 3072 + 3072 and 3072² + 3072 (nn.Linear, whole)
WIDTH, MLP, TEXT = 1152, 4304, 3072
EMBED = 3 * 14 * 14 * WIDTH + WIDTH + 1024 * WIDTH  # 678,528 + 1,179,648
BLOCK_WHOLE = 2 * 2 * WIDTH + WIDTH + WIDTH  # the norms, out's and fc2's biases (row-parallel: whole)
BLOCK_SPLIT = 3 * (WIDTH * WIDTH + WIDTH) + WIDTH * WIDTH + WIDTH * MLP + MLP + MLP * WIDTH
PROJECTION = WIDTH * TEXT + TEXT + TEXT * TEXT + TEXT + 2 * WIDTH  # with the two separators
VISION_WHOLE = EMBED + 26 * BLOCK_WHOLE + PROJECTION
VISION_SPLIT = 26 * BLOCK_SPLIT


def _config() -> dict[str, Any]:
    return dict(json.loads(CONFIG.read_text()))


def _book(config: dict[str, Any], tp: int, split: TowerSplit) -> tuple[int, int]:
    """(the language model's bytes, the towers' row) of the first rank at TP `tp`, as `split` shards the tower."""
    model = model_from_config(config)
    book = weights_book(model, ParallelLayout(tp=tp), range(model.num_layers), first_stage=True, last_stage=True,
                        tower_split=split)  # fmt: skip
    tower = sum(int(row.bytes) for row in book.rows if row.component in TOWER_KINDS)
    return int(book.total_bytes) - tower, tower


def _engine(engine: str, tp: int) -> dict[str, int]:
    row = row_of(engine, ENGINES[engine][0], NAME, tp)
    assert row["status"] == "ok", row.get("message")
    return dict(row["stages"][0]["param_bytes"])


def test_audio_encoder_is_the_conformer_by_hand() -> None:
    """ConformerEncoder (attention_dim 1024, linear_units 1536, 24 blocks, 16 heads, conv 1024, kernel 3): per block
    two FeedForwards (LayerNorm 2 × 1024; GLULinear 1024 → 3072 biased; Linear 1536 → 1024 biased), attention
    (q, k, v, out 1024² + 1024 each), the ConvModule (LayerNorm; ext_pw_conv_1d 1024 → 1024 kernel 1 biased; the
    GLU's Conv1d 1024 → 2048 biased and b1, b2 of 1024; depthwise Conv1d 1024 × 3 + 1024; pointwise 1024² + 1024)
    and two LayerNorms. NemoConvSubsampling (dw_striding, 1024 channels, 3 halvings of 80 mel bins: 40, 20, 10):
    Conv2d(1, 1024, 3) 9 × 1024 + 1024, twice a depthwise 9 × 1024 + 1024 and a 1 × 1 1024² + 1024, `out`
    10,240 → 1024 biased. T5 bias: 2 × 500 rows × 16 heads; MeanVarianceNorm 2 × 80. Two projections
    1024 → 3072 → 3072, biased."""
    d = 1024
    feed_forward = 2 * d + (d * 3072 + 3072) + (1536 * d + d)
    conv = 2 * d + (d * d + d) + (d * 2 * d + 2 * d) + 2 * d + (3 * d + d) + (d * d + d)
    block = 2 * feed_forward + 4 * (d * d + d) + conv + 2 * 2 * d
    subsampling = (9 * d + d) + 2 * ((9 * d + d) + (d * d + d)) + (d * 10 * d + d)
    encoder = 24 * block + subsampling + 1000 * 16 + 2 * 80
    projections = 2 * (d * TEXT + TEXT + TEXT * TEXT + TEXT)
    assert (encoder + projections) * BF16 == _engine("vllm", 1)["embed_tokens_extend"] == 932_832_832


@pytest.mark.parametrize("tp", [1, 2])
def test_vision_encoder_is_siglip_and_its_projection_by_hand(tp: int) -> None:
    """The image encoder's bytes a rank holds: the whole parts, and the blocks' split part divided by TP."""
    expected = (VISION_WHOLE + VISION_SPLIT // tp) * BF16
    assert expected == _engine("vllm", tp)["vision_encoder"] == {1: 822_139_712, 2: 426_092_320}[tp]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("tp", [1, 2])
def test_the_book_holds_each_engines_build(engine: str, tp: int) -> None:
    """Language model: LlamaModel of Phi-4-mini (32 layers: qkv 3072 × (24 + 2 × 8) × 128, o 3072², gate_up
    2 × 3072 × 8192, down 8192 × 3072, two RMSNorms; the 200,064-row embedding, tied; the final norm); towers: the
    vision encoder and the audio encoder with their projections, in one row."""
    built = _engine(engine, tp)
    language, towers = _book(_config(), tp, ENGINES[engine][1])
    layer = TEXT * 40 * 128 + TEXT * TEXT + 2 * TEXT * 8192 + 8192 * TEXT + 2 * TEXT
    assert (32 * layer + 200_064 * TEXT + TEXT) * BF16 == 7_672_043_520
    assert language == sum(v for k, v in built.items() if k not in ("vision_encoder", "embed_tokens_extend"))
    assert towers == built["vision_encoder"] + built["embed_tokens_extend"]


def test_the_towers_row_is_named_for_both_encoders_it_holds() -> None:
    """The row counts vLLM's `vision_encoder` and the conformer beside it (the test above: both in one row), so it is
    named `vision_audio`, as Gemma-3n's MobileNet-v5 + USM row is; an operator trial read `audio` for it."""
    model = model_from_config(_config())
    assert model.tower is not None and model.tower.kind == "vision_audio"
    assert model.tower.label == "the vision tower, the audio encoder and their projectors"
    book = weights_book(model, ParallelLayout(tp=1), range(model.num_layers), first_stage=True, last_stage=True,
                        tower_split=VLLM_SPLIT)  # fmt: skip
    assert [row.component for row in book.rows if row.component in TOWER_KINDS] == ["vision_audio"]


def test_sglang_serves_it_multimodal_with_its_filled_in_siglip() -> None:
    """SGLang 0.5.23 hf_transformers/config.py gives Phi4MMForCausalLM a SiglipVisionConfig of 26 layers of 1152, which
    its VLM memory factor reads; the audio encoder is named for vLLM's encoder-cache term."""
    model = model_from_config(_config())
    assert model.multimodal and model.audio_tower and model.not_modelled == ()
    assert model.vision is not None and (model.vision.num_layers, model.vision.hidden_size) == (26, 1152)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"img_processor": {"layer_idx": -1}}, "vLLM builds 27 layers, SGLang 26"),
        ({"embd_layer": {"audio_embd_layer": {"projection_cls": "mlp", "use_qformer": True}}}, "a Q-Former"),
        ({"audio_processor": {"name": "other"}}, "another audio encoder"),
    ],
)
def test_towers_the_engines_build_otherwise_are_named_not_modelled(change: dict[str, Any], why: str) -> None:
    model = model_from_config({**_config(), **change})
    assert model.tower is None, why
    assert any(note.startswith("vision tower") for note in model.not_modelled)
    assert any(note.startswith("audio encoder") for note in model.not_modelled)
