"""The towers issue 26 added last: llava over Pixtral (mistral-community/pixtral-12b), Kimi-VL's MoonViT and
Phi-3.5-vision's CLIP (kvtop.domain.architectures.towers, towers_vit, towers_moon, towers_phi).

Oracles, neither kvtop's: the parameter count of transformers 5.24.0's own classes built on the meta device
(`tower_params` in tests/data/configs/towers/ and heldout/transformers_params.json), and where transformers has
no class (Phi-3-vision is remote code only) the arithmetic of vLLM 0.33.0's modules written out here.
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang import architectures as sglang_architectures
from kvtop.domain.engines.vllm import architectures as vllm_architectures
from kvtop.domain.errors import InputError
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model_config import model_from_config
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS

TOWERS = CONFIGS / "towers"
HELDOUT = CONFIGS / "heldout"
TOWER_PARAMS = json.loads((TOWERS / "transformers_params.json").read_text())
HELDOUT_PARAMS = json.loads((HELDOUT / "transformers_params.json").read_text())


def _vision_row(model, tp: int):  # type: ignore[no-untyped-def]
    book = weights_book(model, ParallelLayout(tp=tp), range(0, 1), first_stage=True, last_stage=False)
    (row,) = [row for row in book.rows if row.component == "vision"]
    return row


def test_llava_over_pixtral_equals_transformers_classes() -> None:
    """pixtral-12b as transformers' convert_pixtral_weights_to_hf.py writes it (LlavaConfig over
    PixtralVisionConfig's defaults: 24 layers of width 1024, MLP 4096, patch 16; Mistral-Nemo's 5120-wide text):
    transformers' LlavaForConditionalGeneration holds 434,957,312 tower parameters. vLLM llava.py builds every
    layer (vision_feature_layer −1) of PixtralHFVisionModel (no post-norm either), so the book counts the same;
    at TP 2 the blocks' q/k/v/o and gate/up/down and the projector's linear_1 (with its bias) and linear_2 halve."""
    w, m, d, t = 1024, 4096, 24, 5120
    whole = 3 * 16 * 16 * w + w + d * 2 * w + t  # patch (no bias), ln_pre, two RMSNorms a block, linear_2's bias
    split = d * (4 * w * w + 3 * w * m) + (w * t + t) + t * t
    name = "mistral-community--pixtral-12b-as-converted"
    assert whole + split == TOWER_PARAMS[name]["tower_params"] == 434_957_312
    model = model_from_config(json.loads((TOWERS / f"{name}.json").read_text()))
    assert model.tower is not None and (model.tower.params, model.tower.tp_split_params) == (whole + split, split)
    assert model.tower.config_class == "PixtralVisionConfig"
    assert not any("vision tower" in note for note in model.not_modelled)
    assert _vision_row(model, 2).bytes == 2 * (whole + split // 2)


def test_llava_over_pixtral_reads_feature_layer_and_bias() -> None:
    """vision_feature_layer −2 drops the last block (4 × 1024² + 3 × 1024 × 4096 + 2 × 1024); no projector bias
    drops linear_1's and linear_2's (2 × 5120)."""
    config = json.loads((TOWERS / "mistral-community--pixtral-12b-as-converted.json").read_text())
    config["vision_feature_layer"], config["multimodal_projector_bias"] = -2, False
    model = model_from_config(config)
    assert model.tower is not None
    assert 434_957_312 - model.tower.params == 4 * 1024**2 + 3 * 1024 * 4096 + 2 * 1024 + 2 * 5120


def _kimi_vl(text_config: dict | None = None) -> dict:  # type: ignore[type-arg]
    """Kimi-K2.5's real config (its DeepSeek-V3 text, 7168 wide) wrapped as KimiVLConfig with MoonViTConfig's
    class defaults (Kimi-VL remote code configuration_kimi_vl.py, vLLM's copy: patch 14, a 64 × 64 table, 16 heads,
    27 layers of 1152, MLP 4304, merge 2 × 2): no real Kimi-VL config.json was reachable here."""
    config = json.loads((HELDOUT / "moonshotai--Kimi-K2.5.json").read_text())
    config["model_type"], config["architectures"] = "kimi_vl", ["KimiVLForConditionalGeneration"]
    config["vision_config"] = {"model_type": "moonvit", "patch_size": 14, "init_pos_emb_height": 64,
                               "init_pos_emb_width": 64, "num_attention_heads": 16, "num_hidden_layers": 27,
                               "hidden_size": 1152, "intermediate_size": 4304, "merge_kernel_size": [2, 2]}  # fmt: skip
    if text_config is not None:
        config["text_config"] = {**config["text_config"], **text_config}
    return config


def test_kimi_vl_moonvit_equals_moonvit3d_of_transformers() -> None:
    """Kimi-VL's MoonViT (vLLM moonvit.py) holds the parameters of Kimi-K2.5's MoonViT3d (the time table is a
    buffer) and the same projector (KimiVLMultiModalProjector: LayerNorm 1152, 4608 → 4608 → text, biased): over
    the same 7,168-wide text, transformers' Kimi_K25 classes' 471,143,920 (`tower_params`)."""
    model = model_from_config(_kimi_vl())
    oracle = HELDOUT_PARAMS["moonshotai--Kimi-K2.5"]["tower_params"]
    assert model.tower is not None and model.tower.params == oracle == 471_143_920
    assert model.tower.config_class == "MoonViTConfig"
    assert not any("vision tower" in note for note in model.not_modelled)


def test_kimi_vl_tower_by_hand_at_moonlight_width() -> None:
    """At Kimi-VL-A3B's 2,048-wide language model the projector's linear_2 is 4,608 × 2,048 + 2,048. vLLM splits
    the blocks (wqkv/fc0 with their biases, wo/fc1) over TP (QKVParallelLinear, MLP2 Column/Row), and so does
    SGLang 0.5.23's kimi_vl_moonvit.py (VisionAttention; MLP2 with use_tensor_parallel: Column/Row, unlike its
    kimi_k25.py's whole MLP2); the projector is whole in both."""
    w, m, d, t = 1152, 4304, 27, 2048
    blocks = d * (4 * w * w + 3 * w + 2 * w * m + m)
    whole = 3 * 14 * 14 * w + w + 64 * 64 * w + d * (2 * 2 * w + 2 * w) + 2 * w
    whole += 2 * w + (4 * w) ** 2 + 4 * w + 4 * w * t + t
    model = model_from_config(_kimi_vl({"hidden_size": t}))
    assert model.tower is not None and model.tower.params == whole + blocks == 447_545_840
    assert model.tower.params_per_rank(4) == whole + blocks / 4
    assert model.tower.params_per_rank(4, sglang_architectures.TOWER_SPLIT) == whole + blocks / 4


# moonshotai/Kimi-VL-A3B-Instruct (held-out wave 2), its vision_tower and multi_modal_projector as the engines build
# them on the meta device (registry rows in tests/data/engine_diff/registry/, registry_sweep.py: bf16 bytes per
# rank of TP rank 0): vLLM 0.33.0 and SGLang 0.5.23 alike, 833,732,064 + 61,359,616 B at TP 1 and
# 422,452,080 + 61,359,616 B at TP 2 (SGLang's kimi_vl_moonvit.py splits MLP2 as vLLM's moonvit.py does)
KIMI_VL_A3B_TOWER_BYTES = {1: 833_732_064 + 61_359_616, 2: 422_452_080 + 61_359_616}


@pytest.mark.parametrize("tp", [1, 2])
def test_kimi_vl_a3b_tower_is_the_engines_meta_build(tp: int) -> None:
    path = HELDOUT / "wave2" / "moonshotai--Kimi-VL-A3B-Instruct.json"
    model = model_from_config(json.loads(path.read_text()))
    assert model.tower is not None
    for split in (sglang_architectures.TOWER_SPLIT, vllm_architectures.TOWER_SPLIT):
        assert model.tower.params_per_rank(tp, split) * 2 == KIMI_VL_A3B_TOWER_BYTES[tp]


def test_kimi_vl_other_vision_model_keeps_the_note() -> None:
    config = _kimi_vl()
    config["vision_config"]["model_type"] = "moonvit3d"
    model = model_from_config(config)
    assert model.tower is None and any("vision tower" in note for note in model.not_modelled)


def test_phi3_5_vision_tower_by_hand() -> None:
    """Phi-3.5-vision (mlc--phi-3_5-vision, the Hub config as MLC vendored it): vLLM phi3v.py builds its own
    CLIP ViT-L/14-336 up to img_processor.layer_idx −2 (23 of 24 blocks, no post-LayerNorm), glb_GN and sub_GN
    (4 × 1024 each) and img_projection 4096 → 3072 → 3072 with biases (nn.Linear, whole); clip.py splits qkv and
    fc1 (with biases), out_proj and fc2 over TP."""
    w, i, t = 1024, 4096, 3072
    embeddings = w + 3 * 14 * 14 * w + 577 * w + 2 * w  # class embedding, patches, positions, pre-LayerNorm
    block_whole, block_split = 2 * 2 * w + 2 * w, 4 * w * w + 3 * w + 2 * w * i + i
    projection = 2 * 4 * w + 4 * w * t + t + t * t + t
    model = model_from_config(json.loads((HELDOUT / "mlc--phi-3_5-vision.json").read_text()))
    assert model.tower is not None
    assert model.tower.params == embeddings + 23 * (block_whole + block_split) + projection == 312_943_616
    assert model.tower.tp_split_params == 23 * block_split
    assert not any("vision tower" in note for note in model.not_modelled)
    assert _vision_row(model, 2).params == embeddings + 23 * (block_whole + block_split / 2) + projection


def test_phi3_5_vision_img_processor_is_read() -> None:
    """layer_idx −1 builds the 24th block and the post-LayerNorm (clip.py: every layer built); an `image_dim_out` other than the CLIP's width is not vLLM's tower
    (the note stays); a layer outside the CLIP's 24 is named."""
    config = json.loads((HELDOUT / "mlc--phi-3_5-vision.json").read_text())
    config["img_processor"]["layer_idx"] = -1
    deeper = model_from_config(config).tower
    block = 4 * 1024**2 + 4 * 1024 + 2 * 1024 * 4096 + 4096 + 1024 + 2 * 2 * 1024
    assert deeper is not None and deeper.params - 312_943_616 == block + 2 * 1024
    config["img_processor"]["image_dim_out"] = 1152
    model = model_from_config(config)
    assert model.tower is None and any("vision tower" in note for note in model.not_modelled)
    config["img_processor"].update(image_dim_out=1024, layer_idx=-30)
    with pytest.raises(InputError, match="^img_processor.layer_idx: must name a layer"):
        model_from_config(config)
    config["img_processor"] = None  # no image section: nothing to size, the note stays
    model = model_from_config(config)
    assert model.tower is None and any("vision tower" in note for note in model.not_modelled)


def test_phi3_5_vision_checkpoint_total() -> None:
    """The checkpoint's own count: TIGER-Lab/VLM2Vec-Full (a full fine-tune of microsoft/Phi-3.5-vision-instruct,
    the same tensors) holds 4,146,621,440 parameters, 98,500,608 of them the embedding (its Hub safetensors
    metadata as MTEB records it: GitHub embeddings-benchmark/mteb at 0012c86c8a489b677d8548ffeddf2c028d00154c,
    mteb/models/model_implementations/vlm2vec_models.py). The checkpoint keeps all 24 CLIP blocks and the
    post-LayerNorm; vLLM builds 23 and none, which the book holds: the book's rows at TP 1 plus that block and
    norm are the checkpoint."""
    w, i = 1024, 4096
    model = model_from_config(json.loads((HELDOUT / "mlc--phi-3_5-vision.json").read_text()))
    book = weights_book(model, ParallelLayout(tp=1), range(0, 32), first_stage=True, last_stage=True)
    rows = {row.component: row.params for row in book.rows}
    assert rows["embedding"] == 98_500_608
    dropped = 4 * w * w + 4 * w + 2 * w * i + i + w + 2 * 2 * w + 2 * w  # the 24th block and the post-LayerNorm
    assert sum(rows.values()) + dropped == 4_146_621_440
