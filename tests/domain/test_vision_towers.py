"""Vision tower and projector weights (kvtop.domain.architectures.towers): the weights book counts them per
rank as the engines shard them.

Two oracles, neither kvtop's: the parameter count of transformers' own classes built on the meta device
(`tower_params`, tests/data/configs/heldout/transformers_params.json, transformers 5.24.0), and the bytes vLLM
0.33.0's own model holds per rank in its `visual` child, built on meta by the differential harness
(tests/data/engine_diff/vllm-0.33.0.flags.json, each stage's `param_bytes`).
"""

from __future__ import annotations

import json

import pytest

from kvtop.domain.engines.sglang import architectures as sglang_architectures
from kvtop.domain.engines.vllm import architectures as vllm_architectures
from kvtop.domain.launch import parse_flags
from kvtop.domain.layout import ParallelLayout
from kvtop.domain.model import ModelSpec
from kvtop.domain.model_config import model_from_config
from kvtop.domain.tower_spec import TowerSplit
from kvtop.domain.weights import weights_book
from tests.conftest import CONFIGS
from tests.data_paths import DATA

HELDOUT = CONFIGS / "heldout"
PARAMS = json.loads((HELDOUT / "transformers_params.json").read_text())
WITH_TOWER = ("Qwen--Qwen2.5-VL-7B-Instruct", "Qwen--Qwen3-VL-235B-A22B-Instruct", "Qwen--Qwen3-VL-2B-Instruct",
              "Qwen--Qwen3-VL-30B-A3B-Instruct", "Qwen--Qwen3-VL-32B-Instruct", "Qwen--Qwen3-VL-32B-Thinking",
              "Qwen--Qwen3-VL-4B-Instruct", "Qwen--Qwen3-VL-8B-Instruct", "mistralai--Mistral-Small-3.1-24B-Instruct-2503",
              "google--gemma-4-26B-A4B", "nvidia--Gemma-4-26B-A4B-NVFP4", "nvidia--Gemma-4-31B-IT-NVFP4",
              "OpenGVLab--InternVL3-1B-Pretrained", "moonshotai--Kimi-K2.5", "nvidia--Kimi-K2.5-NVFP4",
              "nvidia--Kimi-K2.6-NVFP4", "nvidia--Kimi-K2.7-Code-NVFP4", "nvidia--MiniMax-M3-NVFP4",
              "Qwen--Qwen3.5-27B", "Qwen--Qwen3.5-35B-A3B", "Qwen--Qwen3.5-122B-A10B", "Qwen--Qwen3.5-397B-A17B",
              "nvidia--Qwen3.6-27B-NVFP4", "nvidia--Qwen3.6-35B-A3B-NVFP4")  # fmt: skip


def _model(path) -> ModelSpec:
    return model_from_config(json.loads(path.read_text()), source=str(path))


@pytest.mark.parametrize("name", WITH_TOWER)
def test_tower_parameters_equal_transformers_classes(name: str) -> None:
    model = _model(HELDOUT / f"{name}.json")
    assert model.tower is not None and model.tower.params == PARAMS[name]["tower_params"]
    assert not any("vision tower" in note for note in model.not_modelled)


TOWER_CHILDREN = ("visual", "vision_tower", "multi_modal_projector", "vision_model", "embed_vision",
                  "mlp1")  # InternVL's projector (vLLM / SGLang internvl.py `self.mlp1`)


def _tower_rows(run: str) -> list[tuple[str, int, int, int, TowerSplit]]:
    """(config, tp, pp, the tower and projector bytes of stage 0, the engine's tower split as the row's flags set
    it: a data-parallel encoder) for every distinct layout the engine built."""
    engine = run.split("-", 1)[0]
    split = (vllm_architectures if engine == "vllm" else sglang_architectures).TOWER_SPLIT
    recorded = json.loads((DATA / "engine_diff" / f"{run}.flags.json").read_text())
    rows = set()
    for result in recorded["results"]:
        held = (result.get("stages") or [{}])[0].get("param_bytes") or {}
        tower = sum(nbytes for child, nbytes in held.items() if child in TOWER_CHILDREN)
        if tower:
            flags = parse_flags(engine, [str(token) for token in result.get("flags", ())]).flags
            rows.add((result["config"], result["tp"], result.get("pp", 1), tower, split.for_launch(flags)))
    return sorted(rows, key=lambda row: row[:4])


def test_vllm_tower_bytes_per_rank_are_the_books_vision_row() -> None:
    compared = set()
    for config, tp, pp, tower, split in _tower_rows("vllm-0.33.0"):
        path = DATA / "engine_diff" / "configs" / f"{config}.json"
        model = _model(path if path.exists() else CONFIGS / f"{config}.json")
        if model.tower is None:  # a tower kvtop does not read yet: said, where the config has a vision_config
            assert not model.multimodal or any("vision tower" in note for note in model.not_modelled), config
            continue
        book = weights_book(model, ParallelLayout(tp=tp, pp=pp), range(0, 1), first_stage=True, last_stage=False,
                            tower_split=split)  # fmt: skip
        (row,) = [row for row in book.rows if row.component == "vision"]
        assert (config, tp, pp, row.bytes) == (config, tp, pp, tower)
        whole = split.builds_whole(model.architecture) or not model.tower.tp_split_params
        assert row.shards == (1 if whole else tp)  # Gemma-4's is whole on every rank
        compared.add(config)
    assert compared == {
        "Qwen--Qwen2.5-VL-7B-Instruct", "Qwen--Qwen3-VL-8B-Instruct", "Qwen--Qwen3.5-27B", "Qwen--Qwen3.5-35B-A3B",
        "google--gemma-3-27b-it", "mistralai--Mistral-Small-3.1-24B-Instruct-2503", "google--gemma-4-26B-A4B",
        "meta-llama--Llama-4-Scout-17B-16E-Instruct",
        # AIC's Maverick config has no vision_config: vLLM builds Llama4VisionConfig's defaults' tower (its row)
        "meta-llama--Llama-4-Maverick-17B-128E-Instruct",
        # InternViT-6B's 25 heads at TP 2: vLLM keeps the attention whole (its pp4 row: the TP 1 tower)
        "OpenGVLab--InternVL3-1B-InternViT-6B.RECONSTRUCTED",
    }  # fmt: skip


def test_sglang_tower_bytes_per_rank_follow_its_own_split() -> None:
    """SGLang 0.5.23's own tower code (sglang/architectures.py TOWER_SPLIT): position tables split by rows,
    Gemma-4's block linears split, Mistral-3's projector whole; its harness's stage-0 tower bytes, built on meta
    (tests/data/engine_diff/sglang-0.5.23.flags.json), equal the book's vision row at TP 1 × PP 4 and TP 2."""
    compared = set()
    for config, tp, pp, tower, split in _tower_rows("sglang-0.5.23"):
        path = DATA / "engine_diff" / "configs" / f"{config}.json"
        model = _model(path if path.exists() else CONFIGS / f"{config}.json")
        assert model.tower is not None, config
        book = weights_book(model, ParallelLayout(tp=tp, pp=pp), range(0, 1), first_stage=True, last_stage=False,
                            tower_split=split)  # fmt: skip
        (row,) = [row for row in book.rows if row.component == "vision"]
        assert (config, tp, pp, row.bytes) == (config, tp, pp, tower)
        compared.add(config)
    assert compared == {
        "Qwen--Qwen2.5-VL-7B-Instruct", "Qwen--Qwen3-VL-8B-Instruct", "Qwen--Qwen3.5-27B", "Qwen--Qwen3.5-35B-A3B",
        "google--gemma-3-27b-it", "mistralai--Mistral-Small-3.1-24B-Instruct-2503", "google--gemma-4-26B-A4B",
        "OpenGVLab--InternVL3-1B-InternViT-6B.RECONSTRUCTED",  # 25 heads padded to 26 at TP 2 (dummy heads)
    }  # fmt: skip


def test_sglang_split_by_hand() -> None:
    """At TP 2, SGLang's split takes half of Qwen3-VL-8B's 2,304 × 1,152 position table (2,654,208 B), of
    Gemma-4-26B's 27 blocks of q/k/v/o (4 × 1152²) and gate/up/down (3 × 1152 × 4304) (544,942,080 B), gives
    back half of Mistral-Small-3.1's projector 1024 × 5120 + 5120² (15,728,640 params, 31,457,280 B), and pads
    Qwen2.5-VL-7B's vision MLP 3420 → 3424 over 32 blocks of width 1280 (gate and up with biases, down)."""
    cases = (("Qwen--Qwen3-VL-8B-Instruct", -2304 * 1152), ("google--gemma-4-26B-A4B", -27 * (4 * 1152**2 + 3 * 1152 * 4304)),
             ("mistralai--Mistral-Small-3.1-24B-Instruct-2503", 1024 * 5120 + 5120 * 5120),
             ("Qwen--Qwen2.5-VL-7B-Instruct", 4 * 32 * (2 * 1281 + 1280)))  # fmt: skip
    for config, change in cases:
        path = DATA / "engine_diff" / "configs" / f"{config}.json"
        model = _model(path if path.exists() else CONFIGS / f"{config}.json")
        assert model.tower is not None
        ours = model.tower.params_per_rank(2, sglang_architectures.TOWER_SPLIT)
        assert ours - model.tower.params_per_rank(2, vllm_architectures.TOWER_SPLIT) == change // 2


def test_gemma3_siglip_tower_by_hand() -> None:
    """Gemma-3-27B's vision_config: SigLIP of 27 layers, width 1152, MLP 4304, patch 14 of a 896 image (4,096
    positions), and the projector 1152 × 5376 with its norm; vLLM 0.33.0 holds 833,732,064 B of tower and
    12,388,608 B of projector at TP 1, 422,452,080 B of tower at TP 2 (the projector whole)."""
    w, i, d, t = 1152, 4304, 27, 5376
    whole = 3 * 14 * 14 * w + w + 4096 * w + d * (4 * w + 2 * w) + 2 * w
    split = d * (4 * w * w + 3 * w + 2 * w * i + i)
    assert 2 * (whole + split) == 833_732_064 and 2 * (whole + split // 2) == 422_452_080
    assert 2 * (w * t + w) == 12_388_608


def test_qwen3_vl_8b_tower_by_hand() -> None:
    """Qwen3-VL-8B's vision_config: depth 27, width 1152, MLP 4304, patch 16 × 16 × 2 frames × 3 channels,
    2,304 positions, merge 2 (4,608 wide), out 4096, deepstack at 8, 16, 24 (transformers' Qwen3VLVisionModel):
    whole 576,388,336; at TP 2 the qkv, fc1, merger fc1 (with their biases), proj, fc2 and merger fc2 halve."""
    w, i, d, h, out = 1152, 4304, 27, 4608, 4096
    whole = 3 * 2 * 16 * 16 * w + w + 2304 * w + d * (2 * 2 * w + w + w) + (2 * w + out) + 3 * (2 * h + out)
    split = d * (3 * w * w + 3 * w + w * w + w * i + i + i * w) + 4 * (h * h + h + h * out)
    assert whole + split == 576_388_336
    model = _model(DATA / "engine_diff" / "configs" / "Qwen--Qwen3-VL-8B-Instruct.json")
    assert model.tower is not None and model.tower.tp_split_params == split
    assert 2 * (whole + split // 2) == 581_046_128  # vLLM's `visual` bytes per rank at TP 2 (bf16)


def test_the_tower_is_on_the_first_stage_only() -> None:
    model = _model(DATA / "engine_diff" / "configs" / "Qwen--Qwen3-VL-8B-Instruct.json")
    later = weights_book(model, ParallelLayout(tp=1, pp=2), range(18, 36), first_stage=False, last_stage=True)
    assert "vision" not in {row.component for row in later.rows}


def test_a_bad_vision_field_is_named() -> None:
    from kvtop.domain.errors import InputError

    config = json.loads((HELDOUT / "Qwen--Qwen3-VL-8B-Instruct.json").read_text())
    config["vision_config"]["depth"] = "27"
    with pytest.raises(InputError, match="vision_config.depth"):
        model_from_config(config)


def test_llava_clip_tower_by_hand() -> None:
    """llava-1.5-7b's vision_config (mlc--llava): CLIP of 24 layers, width 1024, MLP 4096, patch 14 of a 336
    image (576 + 1 positions), and the projector 1024 → 4096 → 4096 (LlamaConfig's width) with biases.
    transformers builds every layer and the post-LayerNorm (its `tower_params`, 324,487,168); vLLM llava.py
    builds the layers up to `vision_feature_layer` −2 (23) and no post-LayerNorm, which the book counts."""
    w, i, t = 1024, 4096, 4096
    block = 4 * w * w + 4 * w + 2 * w * i + i + w + 2 * 2 * w  # qkv+out with biases, fc1/fc2 with biases, 2 LN
    embeddings = w + 3 * 14 * 14 * w + 577 * w + 2 * w  # class embedding, patches, positions, pre-LayerNorm
    projector = w * t + t + t * t + t
    assert embeddings + 24 * block + 2 * w + projector == PARAMS["mlc--llava"]["tower_params"]
    model = _model(HELDOUT / "mlc--llava.json")
    assert model.tower is not None and model.tower.params == embeddings + 23 * block + projector
    # split over TP: qkv (with bias), out, fc1 (with bias), fc2; the projector's linear_1 (with bias), linear_2
    split = 23 * (3 * w * w + 3 * w + w * w + w * i + i + i * w) + w * t + t + t * t
    assert model.tower.tp_split_params == split
    assert not any("vision tower" in note for note in model.not_modelled)


def test_llava_feature_layer_and_bias_are_read() -> None:
    config = json.loads((HELDOUT / "mlc--llava.json").read_text())
    whole = _model(HELDOUT / "mlc--llava.json").tower
    config["vision_feature_layer"], config["multimodal_projector_bias"] = -1, False
    last = model_from_config(config).tower
    assert whole is not None and last is not None
    block = 4 * 1024 * 1024 + 4 * 1024 + 2 * 1024 * 4096 + 4096 + 1024 + 4 * 1024
    assert last.params - whole.params == block - 2 * 4096  # one more layer, no projector biases


def test_llava_over_siglip_and_another_vision_model() -> None:
    """SigLIP under llava (vLLM siglip.py): no class embedding nor pre-LayerNorm, a patch bias, (336 ÷ 14)² = 576
    positions: 3 × 1024 fewer than CLIP's; a vision model neither CLIP, SigLIP nor Pixtral keeps the note."""
    config = json.loads((HELDOUT / "mlc--llava.json").read_text())
    clip = model_from_config(config).tower
    config["vision_config"]["model_type"] = "siglip_vision_model"
    siglip = model_from_config(config).tower
    assert clip is not None and siglip is not None and clip.params - siglip.params == 3 * 1024
    assert siglip.config_class == "SiglipVisionConfig"
    config["vision_config"]["model_type"] = "hiera"
    model = model_from_config(config)
    assert model.tower is None and any("vision tower" in note for note in model.not_modelled)


def test_llava_next_tower_by_hand() -> None:
    """llava-v1.6-mistral-7b's vision_config: llava-1.5's CLIP ViT-L/14-336 (24 layers of 1024, MLP 4096), the
    projector 1024 → 4096 → 4096 with biases, and `image_newline` (4096): transformers' classes hold 324,491,264
    (`tower_params`: every layer and the post-LayerNorm); vLLM llava_next.py builds 23 layers (vision_feature_layer
    −2), no post-LayerNorm, and splits the blocks' qkv/out/fc1/fc2 and linear_1/linear_2 as llava.py does."""
    w, i, t = 1024, 4096, 4096
    block = 4 * w * w + 4 * w + 2 * w * i + i + w + 2 * 2 * w
    embeddings, projector = w + 3 * 14 * 14 * w + 577 * w + 2 * w, w * t + t + t * t + t
    name = "llava-hf--llava-v1.6-mistral-7b-hf"
    assert embeddings + 24 * block + 2 * w + projector + t == PARAMS[name]["tower_params"]
    model = _model(HELDOUT / f"{name}.json")
    assert model.tower is not None and model.tower.params == embeddings + 23 * block + projector + t
    split = 23 * (4 * w * w + 3 * w + 2 * w * i + i) + w * t + t + t * t
    assert model.tower.tp_split_params == split
    book = weights_book(model, ParallelLayout(tp=2), range(0, 1), first_stage=True, last_stage=False)
    (row,) = [row for row in book.rows if row.component == "vision"]
    assert row.bytes == 2 * (model.tower.params - split // 2)


def test_llava_onevision_tower_by_hand() -> None:
    """transformers' LlavaOnevisionConfig defaults (tests/data/configs/towers): SigLIP-so400m (26 layers of 1152,
    MLP 4304, patch 14 of 384: 729 positions, no head), the projector 1152 → 4096 → 4096 with biases and
    `image_newline`: transformers holds 419,255,840 (its `tower_params`, with the post-LayerNorm vLLM does not
    build: `require_post_norm=False`). vLLM llava_onevision.py builds every layer (vision_feature_layer −1),
    splits the blocks' linears, and keeps the projector's nn.Linear whole."""
    w, i, t = 1152, 4304, 4096
    path = CONFIGS / "towers" / "transformers--LlavaOnevisionConfig-defaults.json"
    oracle = json.loads((CONFIGS / "towers" / "transformers_params.json").read_text())[path.stem]["tower_params"]
    blocks = 26 * (4 * w * w + 4 * w + 2 * w * i + i + w + 2 * 2 * w)
    whole = 3 * 14 * 14 * w + w + 729 * w + 26 * (2 * 2 * w + 2 * w) + t + w * t + t + t * t + t
    assert 3 * 14 * 14 * w + w + 729 * w + blocks + 2 * w + w * t + t + t * t + t + t == oracle
    model = _model(path)
    assert model.tower is not None and model.tower.params == oracle - 2 * w
    assert model.tower.params - model.tower.tp_split_params == whole


def test_llama4_scout_tower_by_hand() -> None:
    """Llama-4-Scout's vision_config: 34 layers of width 1408, MLP 5632, patch 14 of a 336 image (577 positions
    with the class token), the pixel-shuffle adapter 5632 → 4096 → 4096 (no biases) and the projector 4096 →
    5120 (no bias). vLLM mllama4.py splits the patch linear, qkv (with bias), o_proj, fc1 (with bias), fc2, the
    adapter's fc1 and fc2 and the projector; vLLM 0.33.0 holds 1,701,921,792 B of `vision_model` and
    41,943,040 B of projector at TP 1, 852,067,584 B and 20,971,520 B at TP 2 (bf16)."""
    w, i, d, t = 1408, 5632, 34, 5120
    split = 3 * 14 * 14 * w + d * (4 * w * w + 3 * w + 2 * w * i + i) + i * 4096 + 4096 * 4096
    whole = w + 577 * w + 2 * 2 * w + d * (2 * w + 2 * 2 * w)
    assert 2 * (whole + split) == 1_701_921_792 and 2 * (whole + split // 2) == 852_067_584
    assert 2 * 4096 * t == 41_943_040
    model = _model(CONFIGS / "meta-llama--Llama-4-Scout-17B-16E-Instruct.json")
    assert model.tower is not None
    assert (model.tower.params, model.tower.tp_split_params) == (whole + split + 4096 * t, split + 4096 * t)


def test_gemma4_tower_by_hand() -> None:
    """Gemma-4-26B-A4B's vision_config: 27 layers of width 1152 (16 heads of 72, as many KV heads), MLP 4304,
    patch 16, a 2 × 10,240 position table, and the embedder 1152 → 2816; vLLM gemma4_mm.py builds the tower
    with transformers and makes every linear a ReplicatedLinear: 1,139,096,160 B of `vision_tower` and
    6,488,064 B of `embed_vision` on every rank at TP 1 and 2 (bf16)."""
    w, i, d, t = 1152, 4304, 27, 2816
    block = 4 * w * w + 2 * 72 + 4 * w + 3 * w * i  # q, k, v, o; q/k norms; four RMSNorms; gate, up, down
    tower = 3 * 16 * 16 * w + 2 * 10240 * w + d * block
    assert 2 * tower == 1_139_096_160 and 2 * w * t == 6_488_064
    model = _model(HELDOUT / "google--gemma-4-26B-A4B.json")
    assert model.tower is not None and (model.tower.params, model.tower.tp_split_params) == (tower + w * t, 0)
    book = weights_book(model, ParallelLayout(tp=2), range(0, 1), first_stage=True, last_stage=False)
    (row,) = [row for row in book.rows if row.component == "vision"]
    assert (row.bytes, row.shards) == (2 * (tower + w * t), 1)


def test_an_audio_tower_joins_the_gemma4_vision_row() -> None:
    """An `audio_config` (Gemma4AudioConfig's defaults: hidden 1,024, 12 layers, 8 heads, channels 128/32, kernel
    5, output 1,536) adds transformers' Gemma4AudioModel and its embedder, as vLLM gemma4_mm.py (v0.30.0
    :1130-1136) and SGLang gemma4_mm.py (0.5.23 :213-223) build them: per layer 24h² of linears (two
    feed-forwards 2·8h², q k v post relative_k 5h², the light conv 3h²), 14h of norms and conv, per_dim_scale 128
    and 40 clip bounds; the stem's convs and LayerNorms, input_proj 32·32 → h, output_proj h → 1,536 with its
    bias, embed_audio 1,536 → 2,816 (the 26B's text width); split over TP in SGLang only: the encoder's linears and
    the light conv's depthwise conv and conv_norm (5h + h a layer: hidden ÷ TP channels, gemma4_audio.py 0.5.23
    :660-671), not embed_audio's ReplicatedLinear (gemma4_mm.py)."""
    config = json.loads((HELDOUT / "google--gemma-4-26B-A4B.json").read_text())
    vision = model_from_config(config).tower
    config["audio_config"] = {"model_type": "gemma4_audio"}
    model = model_from_config(config)
    h, t = 1024, 2816
    split = 32 * 32 * h + 12 * (24 * h * h + 6 * h) + h * 1536
    whole = 128 * 9 + 128 + 128 * 32 * 9 + 32 + 12 * (8 * h + 128 + 40) + 1536 + 1536 * t
    assert model.tower is not None and vision is not None and not any("audio" in n for n in model.not_modelled)
    assert model.tower.params - vision.params == whole + split
    assert model.tower.replicated_params - vision.replicated_params == split


@pytest.mark.parametrize(
    ("name", "section", "field", "value"),
    [("mlc--llava", None, "vision_feature_layer", "x"), ("mlc--llava", None, "vision_feature_layer", [-2, True]),
     ("google--gemma-4-26B-A4B", "vision_config", "head_dim", "72"),
     ("mlc--llava", None, "vision_feature_layer", -25), ("mlc--llava", None, "vision_feature_layer", [3, 30]),
     ("google--gemma-4-26B-A4B", "vision_config", "position_embedding_size", 0),
     ("OpenGVLab--InternVL3-1B-Pretrained", None, "select_layer", -30),
     ("OpenGVLab--InternVL3-1B-Pretrained", None, "downsample_ratio", 0.3),
     ("OpenGVLab--InternVL3-1B-Pretrained", "vision_config", "norm_type", "batch_norm"),
     ("OpenGVLab--InternVL3-1B-Pretrained", "vision_config", "num_attention_heads", 15),
     ("moonshotai--Kimi-K2.5", "vision_config", "merge_kernel_size", [2]),
     ("moonshotai--Kimi-K2.5", "vision_config", "vt_hidden_size", "1152"),
     ("nvidia--MiniMax-M3-NVFP4", None, "projector_hidden_size", -1),
     ("llava-hf--llava-v1.6-mistral-7b-hf", None, "vision_feature_layer", -30)],
)  # fmt: skip
def test_a_bad_tower_field_is_named(name: str, section: str | None, field: str, value: object) -> None:
    from kvtop.domain.errors import InputError

    config = json.loads((HELDOUT / f"{name}.json").read_text())
    (config[section] if section else config)[field] = value
    with pytest.raises(InputError, match=f"^{section + '.' if section else ''}{field}: must (be|name|divide|have)"):
        model_from_config(config)


def test_internvl_tower_by_hand() -> None:
    """InternVL3-1B's vision_config (InternViT-300M: 24 layers of width 1024, 16 heads, MLP 4096, LayerNorms,
    qkv with bias, patch 14 of a 448 image: 1,024 + 1 positions) and mlp1 (LayerNorm over 1024 × 2², 4096 → 896,
    896 → 896, with biases): transformers' InternVL classes hold 308,495,104 (`tower_params`, the remote-code
    config converted as transformers' conversion script maps it). vLLM intern_vit.py splits fc1 (with its bias)
    and fc2 over TP always, qkv (with its bias) and proj only where the 16 heads divide by TP; mlp1 is whole."""
    w, i, d, t = 1024, 4096, 24, 896
    whole = w + 3 * 14 * 14 * w + w + 1025 * w + d * (2 * 2 * w + w + 2 * w + w)
    whole += 2 * 4 * w + 4 * w * t + t + t * t + t  # mlp1
    mlp, attention = d * (w * i + i + i * w), d * (4 * w * w + 3 * w)
    assert whole + mlp + attention == PARAMS["OpenGVLab--InternVL3-1B-Pretrained"]["tower_params"]
    model = _model(HELDOUT / "OpenGVLab--InternVL3-1B-Pretrained.json")
    assert model.tower is not None and model.tower.params == whole + mlp + attention
    for tp, per_rank in ((2, whole + (mlp + attention) // 2), (3, whole + attention + mlp / 3)):
        book = weights_book(model, ParallelLayout(tp=tp), range(0, 1), first_stage=True, last_stage=False)
        (row,) = [row for row in book.rows if row.component == "vision"]
        assert (row.params, row.shards) == (per_rank, tp)
    assert not any("vision tower" in note for note in model.not_modelled)


def test_kimi_k25_tower_by_hand() -> None:
    """Kimi-K2.5's vision_config (MoonViT3d: 27 layers of width 1152, 16 heads, MLP 4304, patch 14, a 64 × 64
    position table) and its patch merger (LayerNorm 1152, 4608 → 4608, 4608 → 7168, with biases): transformers'
    Kimi_K25 classes hold 471,143,920 (`tower_params`). vLLM kimi_k25_vit.py splits the blocks' wqkv/fc0 (with
    biases) and wo/fc1 only where the 16 heads divide by TP (else data-parallel: whole), the projector whole."""
    w, m, d, t = 1152, 4304, 27, 7168
    blocks = d * (4 * w * w + 3 * w + 2 * w * m + m)
    whole = 3 * 14 * 14 * w + w + 64 * 64 * w + d * (2 * 2 * w + 2 * w) + 2 * w
    whole += 2 * w + (4 * w) ** 2 + 4 * w + 4 * w * t + t
    for name in ("moonshotai--Kimi-K2.5", "nvidia--Kimi-K2.5-NVFP4", "nvidia--Kimi-K2.6-NVFP4"):
        assert whole + blocks == PARAMS[name]["tower_params"]
        model = _model(HELDOUT / f"{name}.json")
        assert model.tower is not None and model.tower.params == whole + blocks
        assert not any("vision tower" in note for note in model.not_modelled)
    for tp, per_rank in ((8, whole + blocks / 8), (3, whole + blocks)):
        assert model.tower.params_per_rank(tp) == per_rank
    # SGLang 0.5.23 kimi_k25.py: the attention split (VisionAttention), the MLP2 nn.Linear whole on every rank
    mlps = d * (2 * w * m + m)  # fc0 with its bias and fc1 (whose bias is whole already)
    assert model.tower.params_per_rank(8, sglang_architectures.TOWER_SPLIT) == whole + mlps + (blocks - mlps) / 8


def test_kimi_k3_tower_is_read() -> None:
    """Kimi-K3's MoonViT variant (RMSNorms, no biases, qkv 1536 wide, patchmergerv2) is its own kind now: the
    engines' meta builds are the oracle (tests/domain/test_towers_kimi_k3.py); the note is gone."""
    model = _model(HELDOUT / "moonshotai--Kimi-K3.json")
    assert model.tower is not None and not any("vision tower" in note for note in model.not_modelled)


def test_minimax_m3_tower_by_hand() -> None:
    """MiniMax-M3's vision_config (CLIP-like: 32 layers of width 1280, MLP 5120, a Conv3d patch of 2 × 14 × 14 ×
    3 without bias, a pre-LayerNorm), the projector 1280 → 6144 → 6144 and the patch merger 4 × 6144 → 6144 →
    6144, all with biases: transformers' MiniMaxM3 classes hold 865,567,232 (`tower_params`). vLLM
    minimax_m3/common/vision_tower.py builds no post-LayerNorm and splits qkv/fc1/linear_1 (with biases) and
    out_proj/fc2/linear_2 over TP."""
    w, m, d, t = 1280, 5120, 32, 6144
    split = d * (4 * w * w + 3 * w + 2 * w * m + m) + (w * t + t + t * t) + (4 * t * t + t + t * t)
    whole = 3 * 2 * 14 * 14 * w + 2 * w + d * (2 * 2 * w + 2 * w) + 2 * t
    assert whole + split == PARAMS["nvidia--MiniMax-M3-NVFP4"]["tower_params"]
    model = _model(HELDOUT / "nvidia--MiniMax-M3-NVFP4.json")
    assert model.tower is not None and (model.tower.params, model.tower.tp_split_params) == (whole + split, split)
    assert model.tower.params_per_rank(4) == whole + split / 4


def test_internvl_transformers_format_by_hand() -> None:
    """The same InternVL3-1B in transformers' `internvl` format (tests/data/configs/towers): the same 308,495,104
    parameters (transformers' `tower_params`); vLLM interns1.py / interns1_vit.py keep q/k/v and the output
    projection nn.Linear (whole) and the projector nn.Linear: only fc1 (with its bias) and fc2 split over TP."""
    w, i, d = 1024, 4096, 24
    path = CONFIGS / "towers" / "OpenGVLab--InternVL3-1B-Pretrained-as-internvl.json"
    oracle = json.loads((CONFIGS / "towers" / "transformers_params.json").read_text())[path.stem]["tower_params"]
    model = _model(path)
    assert model.tower is not None and model.tower.params == oracle == 308_495_104
    mlp = d * (w * i + i + i * w)
    vllm = vllm_architectures.TOWER_SPLIT
    assert model.tower.tp_split_params == mlp and model.tower.params_per_rank(2, vllm) == oracle - mlp // 2


def test_internvl_transformers_format_sglang_splits_the_attention() -> None:
    """SGLang 0.5.23 interns1.py builds internvl.py's InternVisionModel over the same config: InternAttention's qkv
    (with its bias: attention_bias true) and proj split over TP with the 16 heads (VisionAttention; zero heads padded
    where they do not divide), fc1 / fc2 as vLLM. At TP 2 a rank holds half of 24 × (4 · 1024² + 3 · 1024) fewer.
    The registry default (transformers' InternVLConfig, attention_bias false) meta-built by SGLang at TP 2: 372,930,560
    B of vision_model and mlp1, kvtop's figure (docs/fidelity_registry.md)."""
    w, i, d = 1024, 4096, 24
    model = _model(CONFIGS / "towers" / "OpenGVLab--InternVL3-1B-Pretrained-as-internvl.json")
    assert model.tower is not None
    mlp, attention = d * (w * i + i + i * w), d * (4 * w * w + 3 * w)
    sglang = sglang_architectures.TOWER_SPLIT
    assert model.tower.params_per_rank(2, sglang) == 308_495_104 - mlp // 2 - attention // 2
